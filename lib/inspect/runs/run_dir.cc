#include "run_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

// A process directory's name: rank-R, rank-R.pid-PID or pid-PID; the rank
// (-1 none) and pid, for the order the run index keeps.
bool process_dir(const std::string& n, int64_t& rank, int64_t& pid) {
  auto digits = [&](size_t at, size_t& end) {
    end = at;
    while (end < n.size() && end - at < 18 && n[end] >= '0' && n[end] <= '9') ++end;
    return end > at ? std::stoll(n.substr(at, end - at)) : -1;
  };
  size_t end = 0;
  rank = -1, pid = -1;
  if (n.rfind("rank-", 0) == 0) {
    rank = digits(5, end);
    if (rank < 0) return false;
    if (end == n.size()) return true;
    if (n.compare(end, 5, ".pid-") != 0) return false;
    pid = digits(end + 5, end);
    return pid >= 0 && end == n.size();
  }
  if (n.rfind("pid-", 0) != 0) return false;
  pid = digits(4, end);
  return pid >= 0 && end == n.size();
}

}  // namespace

AttachRun RunDirectory::read_index() const {
  Resolved r = resolve_in(real_, real_, "index.json", index_path_, false);
  if (r.why.rfind("does not exist", 0) == 0) return recover_index();
  if (!r.why.empty()) throw Error(ExitCode::bad_input, index_path_, r.why);
  r.file.entry = "index.json";
  return read_attach_run(read(r.file), index_path_);
}

AttachRun RunDirectory::recover_index() const {
  struct Found {
    int64_t rank, pid;
    std::string name;
  };
  std::vector<Found> dirs;
  std::error_code ec;
  size_t seen = 0;
  for (fs::directory_iterator it(real_, ec), end; !ec && it != end && seen < 100000; it.increment(ec), ++seen) {
    const std::string n = it->path().filename().string();
    Found f{-1, -1, n};
    if (process_dir(n, f.rank, f.pid)) dirs.push_back(std::move(f));
  }
  std::sort(dirs.begin(), dirs.end(), [](const Found& a, const Found& b) {
    if ((a.rank < 0) != (b.rank < 0)) return a.rank >= 0;
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.name < b.name;
  });
  AttachRun run;
  run.recovered = true;
  run.exit_code = -1;
  for (const Found& f : dirs) {
    const Resolved x = resolve_in(real_, real_, f.name + "/index.json", fs::path(dir_) / f.name / "index.json", false);
    if (!x.why.empty()) {
      run.recovery_notes.push_back(f.name + "/index.json " + x.why);
      continue;
    }
    try {
      AttachRun::Process p;
      p.dir = f.name;
      p.index = read_attach_index(read(x.file), x.file.path);
      if (!p.index.complete)
        run.recovery_notes.push_back(f.name + " did not finish (its index was last written before its exit handlers "
                                              "ran: graphs made later are not in it)");
      run.profile = run.profile || p.index.profiling;
      if (run.command.empty()) run.command = p.index.command_line;
      run.processes.push_back(std::move(p));
    } catch (const Error& e) {
      run.recovery_notes.push_back(std::string("unreadable: ") + e.what());
    }
  }
  if (run.processes.empty())
    throw Error(ExitCode::bad_input, dir_,
                "not an --exec output directory: it has no index.json" +
                    std::string(dirs.empty() ? "" : ", and no process index of its " + std::to_string(dirs.size()) +
                                                         " process directories could be read"));
  run.recovery_notes.insert(run.recovery_notes.begin(),
                            "no index.json: graphscope's launcher did not finish (the job was killed?); read from " +
                                std::to_string(run.processes.size()) + " process " +
                                (run.processes.size() == 1 ? "index" : "indexes"));
  return run;
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
