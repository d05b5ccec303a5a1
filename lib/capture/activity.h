// The activity source: CUPTI activity tracing of a process's device work,
// converted into lib/inspect's plain Trace model. Kernels are traced with
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (KIND_KERNEL would serialize them),
// plus memcpy and memset records; never GRAPH_TRACE, which replaces the
// per-node records of graph replays by one record per launch.
//
// CUPTI 13.0 (the toolkit graphscope builds with) has no activity record for
// graph host nodes (CUPTI 13.1 adds one): host nodes leave no trace here.
#pragma once

#include <cupti_activity.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "inspect/model/trace.h"

namespace graphscope::capture {

/// Converts one raw CUPTI activity record and appends it to `out`, interning
/// its name. Handles CONCURRENT_KERNEL and KERNEL (CUpti_ActivityKernel10),
/// MEMCPY (CUpti_ActivityMemcpy6), MEMCPY2 (peer copies,
/// CUpti_ActivityMemcpyPtoP4) and MEMSET (CUpti_ActivityMemset4); records of
/// any other kind, and null, are ignored. graph_id and graph_node_id are set
/// only when the record's are non-zero (zero: not from a graph replay).
/// Pure: needs no GPU and no CUPTI initialization.
void append_record(const CUpti_Activity* rec, Trace& out);

/// Process-wide CUPTI activity tracing, one session at a time:
///
///     ActivityCollector c;
///     c.start();                 // enable tracing
///     ... launch, then synchronize the device ...
///     c.stop();                  // forced flush, tracing disabled
///     Trace t = c.take();
///
/// CUPTI's buffer callbacks are process-global, so only one collector may be
/// started at a time in a process. Buffers (8-byte aligned, 4 MiB each) are
/// recycled between callbacks and collectors. A started collector has a
/// thread of its own that converts each buffer CUPTI completes and hands it
/// back; stop() converts what the flush returns.
class ActivityCollector {
 public:
  ActivityCollector();
  ~ActivityCollector();  // stops a running session; never throws
  ActivityCollector(const ActivityCollector&) = delete;
  ActivityCollector& operator=(const ActivityCollector&) = delete;

  /// Registers the buffer callbacks and enables the activity kinds. Throws
  /// Error(ExitCode::device, "CUPTI activity tracing", why) when CUPTI cannot
  /// be used: another profiler holds it (Nsight Systems or Compute,
  /// compute-sanitizer, an injection library), it cannot be initialized, the
  /// device or environment is not supported, or another collector of this
  /// process is running. Nothing stays enabled after a failure.
  void start();

  /// Disables the kinds and flushes every buffer
  /// (cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)). Synchronize
  /// the device first: records of unfinished work may come back incomplete.
  /// Sorts the activities by start time. No-op when not started. Throws
  /// Error(ExitCode::device) when CUPTI fails to flush.
  void stop();

  bool running() const { return running_; }

  /// On (before start()): the converter thread runs only where a CPU is
  /// idle (SCHED_IDLE), so that converting records never takes a CPU from
  /// the traced application's threads; stop() waits for it either way.
  void set_background(bool on) { background_ = on; }

  /// On (before start()): CUPTI's graph trace too, one record per graph
  /// replay (kind other, named "graph", with its graph id) instead of one
  /// per node: a run's GPU work at the cost of its eager launches alone.
  void set_graph_trace(bool on) { graph_trace_ = on; }

  /// The activities collected so far (complete after stop()).
  const Trace& trace() const { return trace_; }
  /// Moves the trace out (source "cupti"); the collector is empty after.
  Trace take();

  /// Records CUPTI dropped for lack of buffer space during this collector's
  /// sessions (cuptiActivityGetNumDroppedRecords). Non-zero means the trace
  /// is incomplete.
  uint64_t dropped_records() const { return dropped_; }
  /// Kernel records with no timing (start and end 0), which CUPTI delivers
  /// when it lacks device memory for timestamps; they are kept in the trace.
  uint64_t untimed_records() const { return untimed_; }

  /// Where the last stop() spent its time (milliseconds): CUPTI's flush,
  /// the converter finishing (the flush's buffers), joining its records to
  /// the trace, sorting (for bench/bench_replay.cu).
  struct StopTimes {
    double flush = 0, drain = 0, join = 0, sort = 0;
  };
  const StopTimes& stop_times() const { return stop_times_; }

 private:
  friend struct CollectorAccess;
  void convert_buffers();  // the converter thread
  Trace trace_;
  // Completed buffers waiting for the converter; it and finishing_ are
  // guarded by the process-wide lock of the buffer callbacks.
  std::deque<std::pair<uint8_t*, size_t>> pending_;
  bool finishing_ = false;
  std::condition_variable wake_;
  std::thread converter_;
  Trace converted_;  // the converter's, until stop() joins it
  std::exception_ptr convert_error_;
  uint64_t dropped_ = 0;
  uint64_t untimed_ = 0;
  bool graph_trace_ = false;
  bool running_ = false;
  bool background_ = false;
  StopTimes stop_times_;
};

}  // namespace graphscope::capture
