// capture_workload's machinery, shared by capture.cc and replay.cc (CUDA
// types: not for the CLI).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "capture.h"
#include "walk.h"

namespace graphscope::capture {

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
