#include "run_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "../formats/chrome_trace.h"
#include "../core/error.h"
#include "../core/io.h"
#include "../core/parallel.h"
#include "../core/text.h"

namespace graphscope {
namespace fs = std::filesystem;

namespace {

std::string sys_error(int e) { return std::strerror(e); }

// "a FIFO", "a directory", ...: what a name turned out to be.
// The path without a trailing slash (lexically_normal keeps one after "a/.").
std::string trimmed(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// Whether path (absolute, normal) is root or below it.
bool within(const std::string& root, const std::string& path, bool or_root) {
  if (path == root) return or_root;
  if (root == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

// What resolving a name found: the file, or why not (without the name).
struct Resolved {
  RunFile file;
  std::string why;
};

// name under base (a real directory inside root, or root), as the index
// names it; shown: the same path as the user's RUN_DIR spells it.
// directory: it must be a directory (inside or root itself), else a
// regular file inside root. Never opens anything.
Resolved resolve_in(const std::string& root, const std::string& base, const std::string& name, const fs::path& shown,
                    bool directory) {
  Resolved r;
  r.file.path = shown.string();
  auto no = [&r](std::string why) {
    r.why = std::move(why);
    return r;
  };
  if (name.empty()) return no("is empty");
  if (name.find('\0') != std::string::npos) return no("holds a NUL byte");
  if (name[0] == '/') return no("is an absolute path; the index names files inside the run directory");
  const fs::path joined = fs::path(base) / name;
  // Refused as written, whatever is on disk ("../../x.json" names no file
  // of the run however the disk looks), then as the disk resolves it.
  if (!within(root, trimmed(joined.lexically_normal().string()), directory))
    return no("resolves outside the run directory");
  // realpath() lstat()s each component and reads symlinks: it never opens
  // the file, so a FIFO cannot block it.
  char* real = ::realpath(joined.c_str(), nullptr);
  if (!real) {
    const int e = errno;
    return no((e == ENOENT ? std::string("does not exist") : sys_error(e)) + " (" + r.file.path + ")");
  }
  r.file.real = real;
  std::free(real);
  if (!within(root, r.file.real, directory)) return no("resolves outside the run directory");
  struct stat st {};
  if (::stat(r.file.real.c_str(), &st) != 0) return no(sys_error(errno) + " (" + r.file.path + ")");
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return no("is " + file_type_name(st.st_mode) + ", not a " + (directory ? "directory" : "regular file"));
  r.file.device = uint64_t(st.st_dev);
  r.file.inode = uint64_t(st.st_ino);
  return r;
}

const char* key_of(RunName n) {
  switch (n) {
    case RunName::file: return "file";
    case RunName::profile: return "profile";
    case RunName::trace: return "trace";
  }
  return "file";
}

const std::string& name_of(const AttachedGraph& g, RunName n) {
  switch (n) {
    case RunName::profile: return g.profile_file;
    case RunName::trace: return g.trace_file;
    case RunName::file: break;
  }
  return g.file;
}

}  // namespace

RunDirectory::RunDirectory(std::string dir) : dir_(std::move(dir)) {
  index_path_ = (fs::path(dir_) / "index.json").string();
  struct stat st {};
  char* real = nullptr;
  if (dir_.empty() || dir_.find('\0') != std::string::npos || ::stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      !(real = ::realpath(dir_.c_str(), nullptr)))
    throw Error(ExitCode::bad_input, dir_, "not a directory; give the --out-dir of capture --exec or profile --exec");
  real_ = real;
  std::free(real);
}

AttachRun RunDirectory::read_index() const {
  Resolved r = resolve_in(real_, real_, "index.json", index_path_, false);
  if (r.why.rfind("does not exist", 0) == 0)
    throw Error(ExitCode::bad_input, dir_, "not an --exec output directory: it has no index.json");
  if (!r.why.empty()) throw Error(ExitCode::bad_input, index_path_, r.why);
  r.file.entry = "index.json";
  return read_attach_run(read(r.file), index_path_);
}

void RunDirectory::refuse(const std::string& entry, const std::string& name, const std::string& why) const {
  throw Error(ExitCode::bad_input, index_path_, entry + ": " + quoted(name, 200) + " " + why);
}

RunFile RunDirectory::resolve_name(const std::string& base, const std::string& shown_base, const std::string& name,
                                   const std::string& entry, bool directory) const {
  Resolved r = resolve_in(real_, base, name, fs::path(dir_) / shown_base / name, directory);
  if (!r.why.empty()) refuse(entry, name, r.why);
  r.file.entry = entry;
  return r.file;
}

RunFile RunDirectory::resolve(const AttachRun& run, size_t process, size_t graph, RunName name) const {
  if (process >= run.processes.size() || graph >= run.processes[process].index.graphs.size())
    throw Error(ExitCode::bad_input, index_path_, "no such entry");
  const AttachedGraph& g = run.processes[process].index.graphs[graph];
  return resolve_in_process(run, process, name_of(g, name), "graphs[" + std::to_string(graph) + "]." + key_of(name));
}

RunFile RunDirectory::resolve_in_process(const AttachRun& run, size_t process, const std::string& name,
                                         const std::string& key) const {
  if (process >= run.processes.size()) throw Error(ExitCode::bad_input, index_path_, "no such entry");
  const AttachRun::Process& p = run.processes[process];
  const std::string at = "processes[" + std::to_string(process) + "]";
  // The process's directory first, so that an escape there is named there
  // (resolved once per command: each of its files names it again).
  auto [known, fresh] = dirs_.try_emplace(p.dir);
  if (fresh) {
    try {
      known->second = resolve_name(real_, "", p.dir, at + ".dir", true);
    } catch (...) {
      dirs_.erase(known);
      throw;
    }
  }
  const RunFile& dir = known->second;
  return resolve_name(dir.real, p.dir, name, at + "." + key, false);
}

std::string RunDirectory::read(const RunFile& f) const {
  const FileId id{f.device, f.inode};
  return read_regular_file(f.real, f.path, &id);
}

RunTraces::Entry RunTraces::load(const RunFile& f) const {
  Entry e;
  try {
    // Kept for the whole command (a run may name thousands): no room held
    // beyond its records, so that the next trace's reading reuses it.
    Trace t = read_chrome_trace(dir_.read(f), f.path);
    t.activities.shrink_to_fit();
    t.launches.shrink_to_fit();
    e.trace = std::make_shared<const Trace>(std::move(t));
  } catch (...) {
    e.error = std::current_exception();
  }
  return e;
}

std::shared_ptr<const Trace> RunTraces::get(const RunFile& f) {
  auto [it, fresh] = cache_.try_emplace(f.real);
  if (fresh) it->second = load(f);
  if (it->second.error) std::rethrow_exception(it->second.error);
  return it->second.trace;
}

void RunTraces::prefetch(const std::vector<RunFile>& files) {
  std::vector<const RunFile*> todo;
  std::set<std::string> named;
  for (const RunFile& f : files)
    if (!cache_.count(f.real) && named.insert(f.real).second) todo.push_back(&f);
  std::vector<Entry> got(todo.size());
  parallel_slices(todo.size(), worker_count(todo.size(), 4), [&](unsigned, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) got[i] = load(*todo[i]);
  });
  for (size_t i = 0; i < todo.size(); ++i) cache_.emplace(todo[i]->real, std::move(got[i]));
}

}  // namespace graphscope
