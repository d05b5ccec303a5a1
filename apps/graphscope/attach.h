// `graphscope capture --exec` and `graphscope profile --exec`: run an
// unmodified command with the injection library (lib/inject) attached
// through CUDA_INJECTION64_PATH, then gather what each of its processes
// wrote.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphscope {
class OutputSet;
}

namespace graphscope::cli {

struct AttachOptions {
  std::vector<std::string> command;  // argv of the application
  std::string out_dir = "graphscope-out";
  size_t min_nodes = 0;
  std::vector<uint32_t> exec_ids;  // empty: all
  size_t max_graphs = 0;           // 0: no limit
  double let_go_after_s = 0;       // --let-go-after; 0: by default only where nothing is lost
  bool stay_attached = false;      // --stay-attached: never let go
  bool profile = false;
  bool no_origins = false;  // --no-origins (workloads too)
  bool eager = false;       // --eager: the run's GPU work outside graphs (capture --exec)
  std::string liveness = "report";  // --liveness: off, report, error
  uint32_t skip_replays = 1, replays = 20;
  double threshold_us = 5, tolerance_us = 2;
  std::string report = "-";  // profile: where the reports of all processes go
};

/// Runs the command with graphscope attached, waits for it, writes
/// OUT/index.json (graphscope.attach-run/1: the command, its exit status and
/// every process's index) and prints a summary (capture) or the reports
/// (profile). Returns the application's exit code (128 + signal when a
/// signal ended it), which the CLI passes through. Throws Error(usage) for a
/// missing command, Error(device) when the injection library is not found.
/// With `outputs`, the reports (profile) and the summary (capture) are added
/// there for the caller to publish with its own outputs; without, they are
/// published before it returns. OUT/index.json is the run's own record:
/// written in any case.
int run_attached(const AttachOptions& options, OutputSet* outputs = nullptr);

}  // namespace graphscope::cli
