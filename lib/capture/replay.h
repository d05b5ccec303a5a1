// `graphscope profile WORKLOAD.so`: capture each graph of a workload exactly
// as `graphscope capture` does (same child process, same document), then
// replay it under CUPTI activity tracing and return the trace.
#pragma once

#include <cstdint>
#include <vector>

#include "capture.h"
#include "inspect/model/graph.h"
#include "inspect/model/trace.h"

namespace graphscope::capture {

struct ProfileRunOptions {
  /// The capture, as for capture_workload. capture.replays steady replays
  /// are still run and timed for the document (set 0 to skip them);
  /// capture.instantiate must not be never; capture.timeout_s covers the
  /// whole child, traced replays included.
  CaptureOptions capture;
  int warmup = 3;    // untraced replays before tracing starts
  int replays = 20;  // traced replays
  /// CUDA_DEVICE_MAX_CONNECTIONS for the child (1..32), set before CUDA
  /// initializes; 0 leaves the environment alone.
  int connections = 0;
  /// "replay i/N" on stderr, rewritten in place, when stderr is a terminal.
  bool progress = false;
};

struct ProfiledGraph {
  GraphDocument doc;  // as capture_workload returns it (exec ids assigned)
  Trace trace;        // the traced replays' activities, by start time, source "cupti"
  double replay_ms_total = 0;  // wall time of the traced replays: first launch to the synchronize after the last
  uint64_t dropped_records = 0;  // records CUPTI dropped: non-zero means the trace is incomplete
  uint64_t untimed_records = 0;  // kernel records without timestamps (kept in the trace, start = end = 0)
};

/// Captures, instantiates and replays each graph in a child process (see
/// capture_workload), then per graph: `warmup` untraced replays, then
/// `replays` launches under CUPTI activity tracing (CONCURRENT_KERNEL,
/// MEMCPY, MEMSET), one synchronize, a forced flush. Graphs are traced one
/// after the other, each in its own session.
/// Throws Error as capture_workload does, plus: usage (bad counts,
/// instantiate never), device (CUPTI unusable: another profiler holds it;
/// or CUPTI delivered no record for a graph with kernel nodes).
std::vector<ProfiledGraph> profile_workload(const ProfileRunOptions& options);

}  // namespace graphscope::capture
