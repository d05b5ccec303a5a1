// `graphscope capture`: load a workload shared object in a child process,
// capture each of its graphs with the template kept alive, instantiate and
// replay it as asked, walk it, and hand the documents back to the parent.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "inspect/graph.h"
#include "walk.h"

namespace graphscope::capture {

enum class Instantiate { now, later, never };

struct CaptureOptions {
  std::string workload;           // path of the .so
  std::vector<std::string> args;  // after "--"
  std::string graph;              // one graph by name; empty: all
  std::string capture_mode = "global";  // global, thread_local, relaxed
  Instantiate instantiate = Instantiate::now;
  int replays = 20;        // steady-state replays timed after the first
  double timeout_s = 120;  // the whole child, set-up to tear-down
  bool nvidia_dot = false;           // also return cudaGraphDebugDotPrint text
  unsigned nvidia_dot_flags = 1;     // cudaGraphDebugDotFlags (1: verbose)
  WalkOptions walk;
  int device = 0;
};

struct CapturedGraph {
  GraphDocument doc;
  std::string nvidia_dot;  // when asked for
};

/// Runs the capture in a child process and returns one document per graph.
/// Throws Error: bad_input (not a workload, wrong ABI), device (no GPU, no
/// or too old a driver, CUDA error outside the workload's code), workload
/// (its set-up or enqueue failed, capture was invalidated, it crashed or
/// timed out). Nothing is written to disk but temporary files, removed.
std::vector<CapturedGraph> capture_workload(const CaptureOptions& options);

namespace detail {

/// capture_workload's machinery, shared with profile_workload (replay.h):
/// the same child process, loading, set-up, capture, walk and error
/// classes, with room for more work in the child. Not for other uses.
struct CaptureHooks {
  /// In the child, first thing: before the workload is loaded and before
  /// any CUDA call (e.g. to set CUDA_DEVICE_MAX_CONNECTIONS).
  std::function<void()> before_cuda;
  /// In the child, once per instantiated graph, after it was captured,
  /// walked and replayed as capture does and its document written, before
  /// its exec graph is destroyed. Write results to files in `dir` named
  /// after `index`; throw Error to fail the run with that error.
  std::function<void(const GraphDocument& doc, cudaGraphExec_t exec, cudaStream_t stream, const std::string& dir,
                     int index)>
      after_graph;
  /// In the parent, once per graph read back, with the same dir and index.
  std::function<void(const std::string& dir, int index)> read_back;
};

/// capture_workload with hooks; capture_workload(o) is run_capture(o, {}).
std::vector<CapturedGraph> run_capture(const CaptureOptions& options, const CaptureHooks& hooks);

}  // namespace detail

}  // namespace graphscope::capture
