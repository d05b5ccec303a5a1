// libFuzzer target: Chrome trace JSON (read_chrome_trace). Two oracles:
// - the same text padded with blanks to 1 MiB takes the batched reader
//   (events split by brackets, parsed in batches, possibly on several
//   threads) and must come to the same result as the whole-document reader;
// - what write_chrome_trace writes reads back to the same activities.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "fuzz_common.h"
#include "inspect/chrome_trace.h"

using namespace graphscope;
using namespace graphscope::fuzz;

namespace {

// The size from which read_chrome_trace reads the events in batches.
constexpr size_t kBatchedFrom = size_t(1) << 20;

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

// Whether a parse error is at the end of text ("line L, column C: ..."):
// there, a padded text has its error at another column.
bool at_end(const std::string& text, const std::string& message) {
  size_t nl = text.rfind('\n');
  size_t column = text.size() - (nl == std::string::npos ? 0 : nl + 1) + 1;
  return message.find("column " + std::to_string(column) + ":") != std::string::npos;
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
  }
  return std::string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = text_of(data, size);
  Trace trace;
  std::string why;
  const bool read = accepts([&] { trace = read_chrome_trace(text, "fuzz"); }, &why);

  // Trailing blanks change nothing but the reader's strategy. Reading 1 MiB
  // costs some 30 ms here: every accepted input, one refused in 16.
  if (text.size() < kBatchedFrom && (read || std::hash<std::string>()(text) % 16 == 0)) {
    std::string padded = text;
    padded.resize(kBatchedFrom, ' ');
    Trace big;
    std::string big_why;
    const bool big_read = accepts([&] { big = read_chrome_trace(padded, "fuzz"); }, &big_why);
    check(read == big_read, read ? "refused once padded to 1 MiB: " + big_why
                                 : "accepted once padded to 1 MiB, refused as is: " + why);
    if (read) {
      check(trace.source == big.source, "source " + trace.source + " vs " + big.source + " once padded");
      std::string diff = activity_difference(trace, big, true);
      check(diff.empty(), "the batched reader (padded to 1 MiB) reads other activities: " + diff);
    } else if (!at_end(padded, big_why) && why.find("unterminated string") == std::string::npos) {
      // (A string open at the end takes in the blanks, and ends elsewhere.)
      check(why == big_why, "another message once padded to 1 MiB: \"" + why + "\" vs \"" + big_why + "\"");
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
