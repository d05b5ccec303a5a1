// The resolver of a run directory's names (run_dir.h): on copies of the
// recorded two-rank run tests/data/ranks/r_prof, names that stay inside are
// followed (subdirectories, symlinks, a run directory reached through one),
// names that leave it or name something other than a regular file are
// refused naming the entry, nothing blocks on a FIFO, and a trace named by
// many entries is read once.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include "inspect/formats/attach_json.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/runs/run_dir.h"
#include "test_data.h"

using namespace graphscope;
namespace fs = std::filesystem;

namespace {

// A copy of the recorded run in a fresh directory: TOP/run, with TOP/secret.json beside it.
struct Copy {
  fs::path top, run;
  Copy() {
    char tmpl[] = "/tmp/gs_run_dir_test.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    top = tmpl;
    run = top / "run";
    fs::copy(test::data_path("ranks/r_prof"), run, fs::copy_options::recursive);
    write_output((top / "secret.json").string(), test::read_data("ranks/r_prof/rank-0/graph-2.json"));
  }
  ~Copy() { fs::remove_all(top); }
  AttachRun index() const { return RunDirectory(run.string()).read_index(); }
  // The run index with edit applied, written back.
  void edit(const std::function<void(AttachRun&)>& change) const {
    AttachRun r = index();
    change(r);
    write_output((run / "index.json").string(), write_attach_run(r));
  }
};

// The message of the Error that f throws ("" when it throws none).
std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  return "";
}

// Runs f in a child process that an alarm ends after 10 s: a call that
// blocks fails the test instead of hanging it. The child's exit code: f's
// result, or 99 when the alarm went off.
int in_child(const std::function<int()>& f) {
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(10);
    ::_exit(f());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGALRM ? 99 : 100 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("every name of the recorded run resolves inside it to a regular file that reads whole") {
  Copy c;
  RunDirectory d(c.run.string());
  AttachRun r = d.read_index();
  REQUIRE(r.processes.size() == 3);
  for (size_t p = 0; p < 2; ++p)
    for (RunName n : {RunName::file, RunName::profile, RunName::trace}) {
      RunFile f = d.resolve(r, p, 0, n);
      CHECK(f.real.rfind(fs::canonical(c.run).string() + "/", 0) == 0);
      CHECK(d.read(f) == read_file(f.path));
    }
  RunFile f = d.resolve(r, 1, 0, RunName::trace);
  CHECK(f.path == (c.run / "rank-1" / "trace-2.json").string());
  CHECK(f.entry == "processes[1].graphs[0].trace");
}

TEST_CASE("names may hold subdirectories and symlinks that stay inside, and RUN_DIR may be a symlink") {
  Copy c;
  fs::create_directories(c.run / "rank-0" / "sub");
  fs::rename(c.run / "rank-0" / "graph-2.json", c.run / "rank-0" / "sub" / "graph.json");
  fs::create_symlink("../rank-0/trace-2.json", c.run / "rank-1" / "shared-trace.json");
  c.edit([](AttachRun& r) {
    r.processes[0].index.graphs[0].file = "sub/graph.json";
    r.processes[1].index.graphs[0].trace_file = "shared-trace.json";
  });
  fs::create_directory_symlink(c.run, c.top / "link");
  RunDirectory d((c.top / "link").string());
  AttachRun r = d.read_index();
  CHECK(d.read(d.resolve(r, 0, 0, RunName::file)) == test::read_data("ranks/r_prof/rank-0/graph-2.json"));
  RunFile t0 = d.resolve(r, 0, 0, RunName::trace), t1 = d.resolve(r, 1, 0, RunName::trace);
  CHECK(t0.real == t1.real);
  CHECK(t1.path == (c.top / "link" / "rank-1" / "shared-trace.json").string());
}

TEST_CASE("a name that leaves the run directory is refused, naming the index and the entry") {
  Copy c;
  const std::string index = (c.run / "index.json").string();
  auto refused = [&](const std::function<void(AttachRun&)>& change, size_t p, RunName n) {
    c.edit(change);
    RunDirectory d(c.run.string());
    AttachRun r = d.read_index();
    return refusal([&] { d.resolve(r, p, 0, n); });
  };
  CHECK(refused([](AttachRun& r) { r.processes[0].index.graphs[0].file = "../../secret.json"; }, 0, RunName::file) ==
        index + " (processes[0].graphs[0].file: \"../../secret.json\" resolves outside the run directory)");
  // Lexically outside though nothing is there: refused all the same.
  CHECK(refused([](AttachRun& r) { r.processes[0].index.graphs[0].file = "../../nothing.json"; }, 0, RunName::file) ==
        index + " (processes[0].graphs[0].file: \"../../nothing.json\" resolves outside the run directory)");
  const std::string secret = (c.top / "secret.json").string();
  CHECK(refused([&](AttachRun& r) { r.processes[0].index.graphs[0].file = secret; }, 0, RunName::file) ==
        index + " (processes[0].graphs[0].file: \"" + secret +
            "\" is an absolute path; the index names files inside the run directory)");
  CHECK(refused([](AttachRun& r) { r.processes[1].dir = "../.."; }, 1, RunName::file) ==
        index + " (processes[1].dir: \"../..\" resolves outside the run directory)");
  CHECK(refused([](AttachRun& r) { r.processes[1].dir = "rank-1"; }, 1, RunName::file).empty());
  fs::create_symlink("../../secret.json", c.run / "rank-0" / "out.json");
  CHECK(refused([](AttachRun& r) { r.processes[0].index.graphs[0].trace_file = "out.json"; }, 0, RunName::trace) ==
        index + " (processes[0].graphs[0].trace: \"out.json\" resolves outside the run directory)");
  fs::create_directory_symlink(c.top, c.run / "up");
  CHECK(refused([](AttachRun& r) { r.processes[0].dir = "up"; }, 0, RunName::profile) ==
        index + " (processes[0].dir: \"up\" resolves outside the run directory)");
}

TEST_CASE("an empty name, a NUL byte, a directory or a missing file is refused, naming the entry") {
  Copy c;
  const std::string index = (c.run / "index.json").string();
  auto refused = [&](const std::string& name) {
    c.edit([&](AttachRun& r) { r.processes[0].index.graphs[0].file = name; });
    RunDirectory d(c.run.string());
    AttachRun r = d.read_index();
    return refusal([&] { d.resolve(r, 0, 0, RunName::file); });
  };
  CHECK(refused("") == index + " (processes[0].graphs[0].file: \"\" is empty)");
  CHECK(refused(std::string("graph-2.json\0.evil", 18)) ==
        index + " (processes[0].graphs[0].file: \"graph-2.json\\u0000.evil\" holds a NUL byte)");
  CHECK(refused(".") == index + " (processes[0].graphs[0].file: \".\" is a directory, not a regular file)");
  CHECK(refused("gone.json") == index + " (processes[0].graphs[0].file: \"gone.json\" does not exist (" +
                                    (c.run / "rank-0" / "gone.json").string() + "))");
  CHECK(refusal([] { RunDirectory d("/nonexistent/run"); }) ==
        "/nonexistent/run (not a directory; give the --out-dir of capture --exec or profile --exec)");
}

TEST_CASE("a FIFO as a graph file or as index.json is refused without blocking") {
  Copy c;
  const std::string index = (c.run / "index.json").string();
  REQUIRE(::mkfifo((c.run / "rank-0" / "graph-3.json").c_str(), 0600) == 0);
  c.edit([](AttachRun& r) { r.processes[0].index.graphs[0].file = "graph-3.json"; });
  CHECK(in_child([&] {
          RunDirectory d(c.run.string());
          AttachRun r = d.read_index();
          std::string why = refusal([&] { d.resolve(r, 0, 0, RunName::file); });
          return why == index + " (processes[0].graphs[0].file: \"graph-3.json\" is a FIFO, not a regular file)" ? 0
                                                                                                                   : 1;
        }) == 0);
  fs::remove(c.run / "index.json");
  REQUIRE(::mkfifo(index.c_str(), 0600) == 0);
  CHECK(in_child([&] {
          std::string why = refusal([&] { RunDirectory(c.run.string()).read_index(); });
          return why == index + " (is a FIFO, not a regular file)" ? 0 : 1;
        }) == 0);
  fs::remove(index);
  // Without index.json the processes' own indexes make the run (a killed
  // job's directory); a FIFO among them is said, never opened.
  CHECK(RunDirectory(c.run.string()).read_index().recovered);
  const fs::path process_index = c.run / "rank-0" / "index.json";
  fs::remove(process_index);
  REQUIRE(::mkfifo(process_index.c_str(), 0600) == 0);
  CHECK(in_child([&] {
          std::string said;
          try {
            for (const std::string& n : RunDirectory(c.run.string()).read_index().recovery_notes) said += n + "\n";
          } catch (const Error& e) {
            said = e.what();
          }
          return said.find("rank-0/index.json is a FIFO, not a regular file") != std::string::npos ||
                         said.find("no process index") != std::string::npos
                     ? 0
                     : 1;
        }) == 0);
  // No process directory either: not a run.
  for (const auto& e : fs::directory_iterator(c.run))
    if (e.is_directory() || e.is_fifo()) fs::remove_all(e.path());
  CHECK(refusal([&] { RunDirectory(c.run.string()).read_index(); }) ==
        c.run.string() + " (not an --exec output directory: it has no index.json)");
}

TEST_CASE("a file replaced after it was resolved is refused when read, a FIFO without blocking") {
  Copy c;
  RunDirectory d(c.run.string());
  AttachRun r = d.read_index();
  RunFile f = d.resolve(r, 0, 0, RunName::file);
  const fs::path path = c.run / "rank-0" / "graph-2.json";
  fs::copy_file(path, c.top / "other.json");
  fs::rename(c.top / "other.json", path);
  CHECK(refusal([&] { d.read(f); }) == f.path + " (replaced while being read)");
  f = d.resolve(r, 0, 0, RunName::file);
  fs::remove(path);
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  CHECK(in_child([&] { return refusal([&] { d.read(f); }) == f.path + " (is a FIFO, not a regular file)" ? 0 : 1; }) ==
        0);
}

TEST_CASE("a trace named by many entries, under any name, is read and parsed once") {
  Copy c;
  fs::create_symlink("trace-2.json", c.run / "rank-0" / "alias.json");
  c.edit([](AttachRun& r) {
    auto& graphs = r.processes[0].index.graphs;
    const AttachedGraph one = graphs[0];
    graphs.resize(200, one);
    graphs[199].trace_file = "alias.json";
    r.processes[1].index.graphs[0].trace_file = "journal.txt";  // no trace: fails, once
  });
  RunDirectory d(c.run.string());
  AttachRun r = d.read_index();
  RunTraces traces(d);
  auto first = traces.get(d.resolve(r, 0, 0, RunName::trace));
  for (size_t g = 1; g < 200; ++g) CHECK(traces.get(d.resolve(r, 0, g, RunName::trace)) == first);
  CHECK(first->activities.size() > 0);
  CHECK(traces.files_read() == 1);
  const RunFile bad = d.resolve(r, 1, 0, RunName::trace);
  const std::string why = refusal([&] { traces.get(bad); });
  CHECK(!why.empty());
  CHECK(refusal([&] { traces.get(bad); }) == why);
  CHECK(traces.files_read() == 2);
}
