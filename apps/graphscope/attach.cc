#include "attach.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unordered_set>

#include "capture/cupti_locate.h"
#include "commands.h"
#include "inspect/formats/attach_json.h"
#include "inspect/runs/attach_session.h"
#include "inspect/core/error.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/io.h"
#include "inspect/core/json_writer.h"
#include "inspect/runs/ledger.h"
#include "inspect/runs/ranks.h"
#include "inspect/core/text.h"

namespace graphscope::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kLibrary = "libgraphscope_inject.so";

// Beside the binary (a copied tool), in the install tree, in the build tree;
// GRAPHSCOPE_INJECTION_LIBRARY overrides.
std::string find_injection_library() {
  if (const char* e = std::getenv("GRAPHSCOPE_INJECTION_LIBRARY"); e && *e) {
    if (access(e, R_OK) != 0)
      throw Error(ExitCode::device, std::string("GRAPHSCOPE_INJECTION_LIBRARY=") + e, std::strerror(errno));
    return fs::absolute(e).string();
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  fs::path dir = exe.parent_path();
  const fs::path candidates[] = {dir / kLibrary, dir / ".." / GRAPHSCOPE_INSTALL_LIBDIR / "graphscope" / kLibrary,
                                 dir / ".." / "lib" / "inject" / kLibrary};
  for (const auto& c : candidates)
    if (!ec && fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
  throw Error(ExitCode::device, "the injection library " + std::string(kLibrary),
              "not found beside " + exe.string() + " nor in its install or build tree; set GRAPHSCOPE_INJECTION_LIBRARY");
}

// pid-PID, or rank-R and rank-R.pid-PID (attach_dir_names).
bool is_process_dir(const std::string& name) { return name.rfind("pid-", 0) == 0 || name.rfind("rank-", 0) == 0; }

// A previous run's results in the same directory would be mixed with this
// one's: remove them (only what graphscope writes there).
void prepare_out_dir(const std::string& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw Error(ExitCode::bad_input, out, "cannot create the output directory: " + ec.message());
  for (const auto& e : fs::directory_iterator(out, ec)) {
    std::string name = e.path().filename().string();
    if (is_process_dir(name) && e.is_directory()) fs::remove_all(e.path(), ec);
  }
  fs::remove(fs::path(out) / "index.json", ec);
}

// The injection library, and beside it the preload library that lets it
// take CUPTI back after --let-go-after (lib/inject/preload.cc), where it is.
// CUPTI before them, by its path, when the application's loader would not
// find it by its soname (no ld.so.conf.d entry for the toolkit).
std::string preload(const std::string& library) {
  const std::string cupti = capture::locate_cupti();
  std::string libs = cupti.empty() ? library : cupti + ":" + library;
  std::error_code ec;
  const fs::path beside = fs::path(library).parent_path() / "libgraphscope_preload.so";
  if (fs::exists(beside, ec)) libs += ":" + beside.string();
  const char* old = std::getenv("LD_PRELOAD");
  return old && *old ? libs + ":" + old : libs;
}

// The folder of graphscope's Python hook (lib/inject/python-hook: PyTorch's
// cudagraph records for the ledger), beside the injection library, first on
// PYTHONPATH; the old value after it. "" when the folder is not there.
std::string python_path(const std::string& library) {
  std::error_code ec;
  const fs::path hook = fs::path(library).parent_path() / "python-hook";
  if (!fs::exists(hook / "sitecustomize.py", ec)) return {};
  const char* old = std::getenv("PYTHONPATH");
  return old && *old ? hook.string() + ":" + old : hook.string();
}

// The words of a command line on one line, each made printable (an
// argument may hold a line feed or a terminal's control sequence).
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + printable(a);
  return s;
}

int run_child(const AttachOptions& o, const std::string& library) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"CUDA_INJECTION64_PATH", library},
      // Preloaded too, so that its cuptiSubscribe comes first: an
      // application that starts its own profiler finds graphscope out of
      // its way (lib/inject).
      {"LD_PRELOAD", preload(library)},
  };
  AttachConfig c;
  c.out = fs::absolute(o.out_dir).string();
  c.min_nodes = o.min_nodes;
  c.exec_ids = o.exec_ids;
  c.max_graphs = o.max_graphs;
  c.let_go_after_s = o.let_go_after_s;
  if (o.stay_attached) c.rest_after_s = 0;
  c.profile = o.profile;
  c.origins = !o.no_origins;
  c.eager = o.eager;
  c.liveness = o.liveness;
  c.skip_replays = o.skip_replays;
  c.replays = o.replays;
  c.threshold_us = o.threshold_us;
  c.tolerance_us = o.tolerance_us;
  for (auto& kv : attach_environment(c)) env.push_back(std::move(kv));
  if (std::string p = python_path(library); !p.empty()) env.emplace_back("PYTHONPATH", std::move(p));
  if (const char* old = std::getenv("CUDA_INJECTION64_PATH"); old && *old && library != old)
    std::fprintf(stderr, "graphscope: replacing CUDA_INJECTION64_PATH=%s for this run\n", old);

  std::fflush(nullptr);
  // Like system(): the terminal's interrupt goes to the application, which
  // decides; graphscope waits for it and still gathers what it wrote.
  struct sigaction ignore{}, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  pid_t pid = fork();
  if (pid < 0) throw Error(ExitCode::device, "fork", std::strerror(errno));
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "graphscope: %s (cannot run it: %s)\n", o.command[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

// A process that ended without its exit handlers may have queued documents
// its last index snapshot does not list: journal.txt (a line per document,
// written as it was queued) says which; each is said written (the file is
// there and reads) or lost.
static void reconcile_journal(const fs::path& dir, AttachIndex& x) {
  std::error_code ec;
  const fs::path journal = dir / "journal.txt";
  if (!fs::exists(journal, ec)) return;
  std::string text;
  try {
    text = read_regular_file(journal.string());
  } catch (const std::exception&) {
    return;
  }
  std::unordered_set<std::string> listed;
  for (const auto& g : x.graphs) listed.insert(g.file);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) break;  // a line cut short: the process died writing it
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.rfind("queued ", 0) != 0) continue;
    std::string file = line.substr(7);
    if (file.empty() || file.find('/') != std::string::npos || !listed.insert(file).second) continue;
    bool written = false;
    try {
      read_graph_json(read_regular_file((dir / file).string()), file);
      written = true;
    } catch (const std::exception&) {
    }
    x.unindexed.push_back(file + (written ? " (written after the last index: the process ended first)"
                                          : " (lost: still queued for writing when the process ended)"));
  }
}

int run_attached(const AttachOptions& o, OutputSet* given) {
  OutputSet own;
  OutputSet& outputs = given ? *given : own;
  if (o.command.empty())
    throw Error(ExitCode::usage, "--exec", "give the command to run after --, e.g. --exec -- python train.py");
  std::string library = find_injection_library();
  prepare_out_dir(o.out_dir);
  int code = run_child(o, library);

  // Every process the command started under the library wrote its own
  // pid-PID/index.json, rank-R/ when a launcher gave it a rank (children of
  // torchrun or multiprocessing included: they inherit the environment).
  AttachRun run;
  run.command = o.command;
  run.exit_code = code;
  run.profile = o.profile;
  std::vector<std::string> unreadable;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.out_dir, ec)) {
    std::string name = e.path().filename().string();
    if (!is_process_dir(name) || !e.is_directory()) continue;
    fs::path index = e.path() / "index.json";
    try {
      run.processes.push_back({name, read_attach_index(read_regular_file(index.string()), index.string())});
      if (!run.processes.back().index.complete) reconcile_journal(e.path(), run.processes.back().index);
    } catch (const std::exception& x) {
      unreadable.push_back(index.string());
    }
  }
  // Ranked processes first, by rank; then the others by pid.
  std::sort(run.processes.begin(), run.processes.end(), [](const auto& a, const auto& b) {
    const auto& x = a.index.rank;
    const auto& y = b.index.rank;
    if (x.has_value() != y.has_value()) return x.has_value();
    if (x && x->rank != y->rank) return x->rank < y->rank;
    return a.index.pid < b.index.pid;
  });
  write_output((fs::path(o.out_dir) / "index.json").string(), write_attach_run(run));
  // The run's ledger (what every graph cost, the GPU work outside graphs),
  // from the directory just written, as `graphscope ledger OUT` makes it.
  std::string ledger_text;
  if (!run.processes.empty()) {
    try {
      const Ledger ledger = make_ledger(o.out_dir);
      write_output((fs::path(o.out_dir) / "ledger.json").string(), write_ledger_json(ledger));
      ledger_text = format_ledger_summary(ledger);
    } catch (const std::exception& e) {
      ledger_text = std::string("graphscope: the run's ledger was not written (") + e.what() + ")\n";
    }
  }

  // What the user reads: a line per graph (capture), or the reports.
  std::string text;
  size_t graphs = 0;
  for (const auto& [dir, x] : run.processes) {
    const auto& g = x.graphs;
    text += (x.rank ? "rank " + std::to_string(x.rank->rank) + ", " : std::string()) + "pid " + std::to_string(x.pid) +
            " (" + joined(x.command_line) + "): " + std::to_string(g.size()) +
            " graph" + (g.size() == 1 ? "" : "s") +
            (x.skipped.empty() ? "" : ", " + std::to_string(x.skipped.size()) + " skipped");
    if (x.let_go_count)
      text += "; let go of CUPTI " + std::to_string(x.let_go_count) + " time" +
              (x.let_go_count == 1 ? "" : "s") + " when idle, took it back " +
              std::to_string(x.taken_back_count) + " time" + (x.taken_back_count == 1 ? "" : "s");
    if (!x.let_go.empty()) text += "; " + x.let_go;
    else if (!x.stays_attached.empty())
      text += "; " + x.stays_attached;
    else if (!x.attached) text += "; not attached: " + (x.attach_error.empty() ? std::string("?") : x.attach_error);
    if (!x.complete) text += "; incomplete: the process ended without exit handlers";
    text += "\n";
    for (const auto& a : g) {
      std::string first;
      for (const auto& k : a.first_kernels) first += (first.empty() ? "" : ", ") + printable(k);
      std::string version;
      if (a.version > 1) {
        std::string by;
        for (const auto& c : a.updated_by) by += (by.empty() ? "" : ", ") + printable(c);
        version = " version " + std::to_string(a.version) + " (updated by " + by + ")";
      }
      text += "  exec graph " + std::to_string(a.exec_graph_id) + version + ": " + std::to_string(a.nodes) +
              " nodes" + (first.empty() ? "" : " (" + first + ")") + " -> " +
              (fs::path(o.out_dir) / dir / a.file).string() + "\n";
      if (a.unchanged_updates)
        text += "    " + std::to_string(a.unchanged_updates) + " update call" + (a.unchanged_updates == 1 ? "" : "s") +
                " changed nothing it records (kernel arguments, say)\n";
      for (const auto& n : a.not_recorded) text += "    not recorded: " + printable(n) + "\n";
      ++graphs;
    }
    for (const auto& e : x.errors) text += "  error: " + printable(e) + "\n";
    for (const auto& u : x.unindexed) text += "  not in its index: " + printable(u) + "\n";
  }
  for (const auto& u : unreadable) text += "unreadable: " + u + "\n";
  if (run.processes.empty())
    text += "no process of `" + joined(o.command) +
            "` initialized CUDA under graphscope (nothing to dump: it never called cuInit)\n";
  text = terminal_safe(text) + ledger_text;  // what is left: paths and the let-go lines (the ledger's are its own)
  if (!o.profile) outputs.add("-", text);
  if (o.profile) {
    std::fprintf(stderr, "%s", text.c_str());
    std::string reports;
    for (const auto& p : run.processes) {
      fs::path r = fs::path(o.out_dir) / p.dir / "report.txt";
      if (fs::exists(r, ec)) reports += read_regular_file(r.string());
    }
    outputs.add(o.report, reports);
  }
  if (!given) own.commit();
  // A multi-rank job: the cross-rank verdict in one line (the exit code
  // stays the application's).
  if (std::string line = ranks_summary_line(run, o.out_dir); !line.empty())
    std::fprintf(stderr, "graphscope: %s\n", line.c_str());
  if (!graphs && !run.processes.empty())
    std::fprintf(stderr, "graphscope: no graph was instantiated%s\n",
                 o.min_nodes || !o.exec_ids.empty() || o.max_graphs ? " that passed the filters" : "");
  return code;
}

void add_attach_options(CLI::App& sub, bool& exec, AttachOptions& o, bool idle_options) {
  sub.add_flag("--exec", exec,
               "Run the command after -- (unmodified: python, torchrun, ...) with graphscope attached through "
               "CUDA_INJECTION64_PATH, and dump every graph its processes instantiate");
  sub.add_option("--out-dir", o.out_dir, "--exec: output directory (default graphscope-out): index.json, and "
                                         "pid-PID/graph-ID.json per graph (rank-R/ for a launcher's ranks)");
  sub.add_option("--min-nodes", o.min_nodes, "--exec: skip graphs with fewer root nodes")->check(whole_in(0, UINT32_MAX));
  sub.add_option("--max-graphs", o.max_graphs,
                 "--exec: dump at most this many graphs per process (then, without profiling, let go of "
                 "CUPTI, which slows replays)")
      ->check(whole_in(0, UINT32_MAX));
  const char* let_go =
      "capture --exec: once a process has gone this many seconds without a new graph or update "
      "(after its first), let go of CUPTI, which slows every graph launch, and take it back when the "
      "process begins, instantiates or updates another graph through the shared CUDA runtime "
      "(libcudart.so, as PyTorch) or libcuda's own functions; graphs made otherwise meanwhile are not "
      "recorded. Without it, graphscope lets go after 2 s where nothing would be lost (every graph "
      "and update so far came through those calls)";
  auto* let_go_opt =
      sub.add_option("--let-go-after", o.let_go_after_s, let_go)->check(finite_in(0.001, 1e7, "a number of seconds"));
  auto* stay_opt = sub.add_flag("--stay-attached", o.stay_attached,
                                "capture --exec: never let go of CUPTI when idle (replays stay slowed by CUPTI's launch cost)")
                       ->excludes(let_go_opt);
  // Where letting go has no meaning (profile --exec traces until the
  // application exits), the two stay out of --help; given anyway, the
  // command says why they do not apply.
  if (!idle_options) let_go_opt->group(""), stay_opt->group("");
  auto* eager_opt = sub.add_flag("--eager", o.eager,
                                 "capture --exec: also record the run's GPU work outside graphs for the ledger "
                                 "(a record per graph replay and per eager kernel or copy; graphscope then stays "
                                 "attached); profile --exec records it always");
  if (!idle_options) eager_opt->group("");
  sub.add_option("--liveness", o.liveness,
                 "--exec: check each replay's inputs for memory freed since its graph was captured (the "
                 "driver's frees and PyTorch's caching allocator's): off, report (the default: in the ledger) "
                 "or error (such a launch fails with cudaErrorIllegalState, where the preload library sees it)")
      ->check(CLI::IsMember({"off", "report", "error"}));
  sub.add_flag("--no-origins", o.no_origins,
               "Do not record where each node came from (NVTX ranges, Python file:line and module, native frame)");
}

}  // namespace graphscope::cli
