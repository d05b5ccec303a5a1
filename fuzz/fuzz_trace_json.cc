// libFuzzer target: Chrome trace JSON (read_chrome_trace). Two oracles:
// - the fast path (the event scanner, the events split over 1 or 3 threads
//   at guessed starts) must come to the same result as the strict
//   whole-document reader;
// - what write_chrome_trace writes reads back to the same activities.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "fuzz_common.h"
#include "inspect/formats/chrome_trace.h"

using namespace graphscope;
using namespace graphscope::fuzz;

namespace {

std::string describe(const Trace& t, size_t i) {
  const Activity& a = t.activities[i];
  return "activity " + std::to_string(i) + " (" + std::string(to_string(a.kind)) + " \"" +
         (a.name < t.names.size() ? t.names[a.name].substr(0, 60) : std::string("?")) + "\" start " +
         std::to_string(a.start_ns) + " end " + std::to_string(a.end_ns) + ")";
}

// The writer writes microseconds with three decimals, read back through a
// double: exact to the nanosecond while the value (from the trace's first
// start) stays below 2^52 ns (52 days); beyond, within the double's precision.
uint64_t tolerance_ns(uint64_t ns) {
  if (ns < (uint64_t(1) << 52)) return 0;
  return uint64_t(std::ldexp(double(ns), -51)) + 2;
}

bool near(uint64_t a, uint64_t b, uint64_t tol) {
  return (a > b ? a - b : b - a) <= tol;
}

// Where traces a and b differ in their activities, or "" when they agree.
// times: 0 exact, else relative to `base` with the writer's precision.
std::string activity_difference(const Trace& a, const Trace& b, bool exact_times) {
  if (a.activities.size() != b.activities.size())
    return "activity count " + std::to_string(a.activities.size()) + " vs " +
           std::to_string(b.activities.size());
  uint64_t base = UINT64_MAX;
  for (const auto& x : a.activities) base = std::min(base, x.start_ns);
  for (const auto& x : a.launches) base = std::min(base, x.start_ns);
  for (size_t i = 0; i < a.activities.size(); ++i) {
    const Activity &x = a.activities[i], &y = b.activities[i];
    std::string w = describe(a, i) + " vs " + describe(b, i) + ": ";
    if (x.kind != y.kind) return w + "kind";
    if (x.copy != y.copy)
      return w + "copy kind " + std::string(to_string(x.copy)) + " vs " + std::string(to_string(y.copy));
    if (a.names.at(x.name) != b.names.at(y.name)) return w + "name";
    if (exact_times) {
      if (x.start_ns != y.start_ns) return w + "start";
      if (x.end_ns != y.end_ns) return w + "end";
    } else {
      uint64_t ts = tolerance_ns(x.start_ns - base), td = tolerance_ns(x.end_ns - x.start_ns);
      if (!near(x.start_ns, y.start_ns, ts)) return w + "start";
      if (!near(x.end_ns, y.end_ns, ts + td)) return w + "end";
    }
    if (x.device != y.device) return w + "device";
    if (x.stream != y.stream) return w + "stream";
    if (x.channel_id != y.channel_id) return w + "channel";
    if (x.channel_type != y.channel_type) return w + "channel_type";
    if (x.correlation != y.correlation) return w + "correlation";
    if (x.graph_id != y.graph_id) return w + "graph id";
    if (x.graph_node_id != y.graph_node_id) return w + "graph node id";
    if (x.bytes != y.bytes) return w + "bytes";
    if (!std::equal(x.grid, x.grid + 3, y.grid)) return w + "grid";
    if (!std::equal(x.block, x.block + 3, y.block)) return w + "block";
    if (x.has_shared != y.has_shared || x.shared_bytes != y.shared_bytes) return w + "shared memory";
    if (x.context != y.context) return w + "context";
  }
  if (a.launches.size() != b.launches.size())
    return "graph launch count " + std::to_string(a.launches.size()) + " vs " + std::to_string(b.launches.size());
  for (size_t i = 0; i < a.launches.size(); ++i) {
    const GraphLaunch &x = a.launches[i], &y = b.launches[i];
    std::string w = "graph launch " + std::to_string(i) + ": ";
    if (x.correlation != y.correlation) return w + "correlation";
    const uint64_t ts = exact_times ? 0 : tolerance_ns(x.start_ns > base ? x.start_ns - base : base - x.start_ns);
    const uint64_t td = exact_times ? 0 : tolerance_ns(x.end_ns - x.start_ns);
    if (!near(x.start_ns, y.start_ns, ts)) return w + "start";
    if (!near(x.end_ns, y.end_ns, ts + td)) return w + "end";
  }
  return std::string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = text_of(data, size);
  Trace trace;
  std::string why;
  const bool read = accepts([&] { trace = read_chrome_trace(text, "fuzz"); }, &why);

  // The fast path (the event scanner, the events split over threads at
  // guessed starts) must agree with the strict reader on everything: what
  // it accepts, the message when it refuses, the activities and names.
  Trace strict;
  std::string strict_why;
  const bool strict_read = accepts([&] { strict = detail::read_chrome_trace_strict(text, "fuzz"); }, &strict_why);
  check(read == strict_read, read ? "the strict reader refuses what the fast path accepts: " + strict_why
                                  : "the strict reader accepts what the fast path refuses: " + why);
  if (read) {
    check(trace.source == strict.source, "source " + trace.source + " vs " + strict.source + " (strict)");
    check(trace.names == strict.names, "the fast path interns other names, or in another order");
    std::string diff = activity_difference(trace, strict, true);
    check(diff.empty(), "the fast path reads other activities than the strict reader: " + diff);
  } else {
    check(why == strict_why, "another message than the strict reader's: \"" + why + "\" vs \"" + strict_why + "\"");
  }
  for (unsigned threads : {1u, 3u}) {
    Trace split;
    std::string split_why;
    const bool split_read = accepts([&] { split = detail::read_chrome_trace_split(text, "fuzz", threads); }, &split_why);
    std::string label = "split over " + std::to_string(threads) + " threads";
    check(read == split_read, label + (read ? " refuses: " + split_why : " accepts"));
    if (read) {
      check(split.names == trace.names, label + ": other names");
      std::string diff = activity_difference(trace, split, true);
      check(diff.empty(), label + ": other activities: " + diff);
    } else {
      check(why == split_why, label + ": another message: \"" + split_why + "\"");
    }
  }
  if (!read) return 0;

  const std::string written = write_chrome_trace(trace);
  Trace back;
  std::string back_why;
  check(accepts([&] { back = read_chrome_trace(written, "written"); }, &back_why),
        "write_chrome_trace's output does not read back: " + back_why);
  check(back.source == "graphscope", "a written trace reads back as " + back.source);
  std::string diff = activity_difference(trace, back, false);
  check(diff.empty(),
        "activities changed on their way through write_chrome_trace and read_chrome_trace: " + diff);
  return 0;
}
