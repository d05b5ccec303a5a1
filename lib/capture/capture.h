// `graphscope capture`: load a workload shared object in a child process,
// capture each of its graphs with the template kept alive, instantiate and
// replay it as asked, walk it, and hand the documents back to the parent.
//
// This header and replay.h are the CLI's whole view of lib/capture, and free
// of CUDA headers. In the CLI and the C API these entry points are
// live_loader.cc's: it loads lib/capture as a module (live_abi.h) on first
// use, or says that this build has no CUDA (the one CUDA seam).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "inspect/model/graph.h"
#include "walk_options.h"

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
  /// Record where each node came from (NVTX ranges, the native frame that
  /// made it): origin.h, in the child.
  bool origins = true;
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

/// Throws Error(device) "<what> is not available (this graphscope was built
/// without CUDA)" in a build without CUDA; returns in one with it. For live
/// commands that reach CUDA another way (--exec attaches a library).
void require_cuda(const char* what);

/// Walks a CUDA graph of this process, given as its handle (a cudaGraph_t
/// as a number: the C API's gs_walk_cuda_graph), as capture does. With the
/// handle of its instantiation (a cudaGraphExec_t, else 0), the ids are the
/// exec graph's, as PyTorch's get_graph_data gives them and CUPTI's records
/// carry; a warning in the document says when that id cannot be had.
GraphDocument walk_cuda_graph(uintptr_t graph, uintptr_t exec = 0, const WalkOptions& options = {});

}  // namespace graphscope::capture
