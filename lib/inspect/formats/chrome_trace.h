// Chrome trace event JSON for device activity traces: the format Perfetto UI
// and chrome://tracing open, and the one PyTorch's profiler (Kineto) exports.
// Device activities carry Kineto's argument keys ("device", "stream",
// "correlation", "graph node id", "graph id", "channel", "channel_type"), so
// one reader serves graphscope's own traces and PyTorch profiler traces.
#pragma once

#include <string>
#include <string_view>

#include "../model/graph.h"
#include "../analysis/join.h"
#include "../analysis/profile.h"
#include "../model/trace.h"

namespace graphscope {

inline constexpr std::string_view kTraceSchema = "graphscope.trace/1";

/// Reads the device activities of a Chrome trace: the object form
/// {"traceEvents": [...], ...} or the bare array form [...]. Takes complete
/// ("ph": "X") events of cat "kernel", "gpu_memcpy" and "gpu_memset" (and,
/// in graphscope's own traces, "graph_host" and "gpu_other"); ts and dur are
/// microseconds, read to the nanosecond. Everything else (CPU ops, flows,
/// metadata) is skipped. Trace::source is "graphscope" for a document with
/// graphscope metadata, "pytorch-profiler" for a Kineto export
/// ("schemaVersion" or "deviceProperties"), else "chrome-trace". Throws
/// Error(bad_input) "origin (traceEvents[12].dur: why)" on any malformed
/// value of an event it reads.
Trace read_chrome_trace(std::string_view text, const std::string& origin);

/// Writes the trace as Chrome trace event JSON: one "X" event per activity
/// (pid: device, tid: one lane per hardware channel, else per stream, named
/// by metadata events), times in microseconds from the first activity, and
/// a "graphscope" metadata object ("schema": "graphscope.trace/1") holding
/// the time base, so read_chrome_trace gives the activities back exactly.
/// With doc: each activity's node ("node index", "node type"), and flow
/// arrows (cat "graph edge") along the graph's edges within each replay
/// (activities of one graph launch: same correlation id). With report (and
/// doc): verdicts on nodes ("verdict", and for fake ones the observed
/// dependency, blocking, delay and cause) and flow arrows (cat "fake
/// dependency") from the observed activity to the fake-dependent one.
/// The join of activities to nodes is `join` when given (the one the
/// report was made of), else made here (join.h). Deterministic.
namespace detail {
/// read_chrome_trace with the events array read in `threads` byte ranges at
/// once (0: by the text's size and the machine's cores). The result is the
/// same for any count; tests split small texts with it.
Trace read_chrome_trace_split(std::string_view text, const std::string& origin, unsigned threads);
/// The strict reader alone, the whole text as one tape: the reference the
/// fast path must agree with (the fuzz target compares them).
Trace read_chrome_trace_strict(std::string_view text, const std::string& origin);
}  // namespace detail

std::string write_chrome_trace(const Trace& trace, const GraphDocument* doc = nullptr,
                               const ProfileReport* report = nullptr, const TraceJoin* join = nullptr);

}  // namespace graphscope
