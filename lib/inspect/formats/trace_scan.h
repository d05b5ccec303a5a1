// The fast path of read_chrome_trace: one trace event read straight from the
// text, without building a tape. It takes the plain events that make up
// almost every trace (ASCII strings without escapes, plain numbers, no
// repeated keys) and gives up ("bail") on anything else, which the strict
// tape reader then decides (it refuses a repeated key anywhere, as every
// reader does), so both paths always agree: a test of the two
// on the same events keeps it so (tests/unit/chrome_trace_test.cc, and
// fuzz/fuzz_trace_json.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "../model/trace.h"

namespace graphscope::detail {

// Times are kept below 4e18 ns (127 years) each, so that a time base, a
// start and a duration add up without overflow.
inline constexpr double kMaxUs = 4e15;
inline constexpr uint64_t kMaxNs = 4'000'000'000'000'000'000ull;

// Event categories: Kineto's for device activities, ours for the kinds
// Kineto has no category for (read only from graphscope's own traces).
inline constexpr std::string_view kCatKernel = "kernel";
inline constexpr std::string_view kCatMemcpy = "gpu_memcpy";
inline constexpr std::string_view kCatMemset = "gpu_memset";
inline constexpr std::string_view kCatHost = "graph_host";
inline constexpr std::string_view kCatOther = "gpu_other";
// Host API calls: graph launches among them are read (GraphLaunch).
inline constexpr std::string_view kCatRuntime = "cuda_runtime";
inline constexpr std::string_view kCatDriver = "cuda_driver";

/// CUPTI's memcpy kind spellings (memcpyKindString: "HtoD", ...), its enum
/// values, and Kineto's event names ("Memcpy HtoD (Pinned -> Device)").
CopyKind copy_kind_from_word(std::string_view w);
CopyKind copy_kind_from_enum(uint64_t v);
CopyKind copy_kind_from_name(std::string_view name);

/// Microseconds as written in a trace, a JSON real with an integral part of
/// at most 12 digits and at most 3 decimals ("1234.567"), to nanoseconds:
/// exactly what reading it as a double and rounding gives (below 2^40 us a
/// double cannot move such a value by half a nanosecond). False for any
/// other spelling.
bool exact_micros(const char* b, const char* e, uint64_t& ns);

enum class EventScan : uint8_t { activity, launch, skipped, bail };

/// Reads the event object at p (< end). activity: `a` is the device activity
/// it describes (a.name unset; its name is `name`, a view into the text);
/// skipped: a valid event that is not a device activity (metadata, CPU ops,
/// flows); either way `next` is one past its closing brace. bail: the
/// event is malformed, or uses something this path does not read (escapes,
/// non-ASCII text, a key twice in any object of the event, exponents,
/// values out of range, ...).
/// `ours`: the trace is graphscope's own (host and other kinds are read);
/// base_ns is added to every time.
/// launch: the event is a graph launch API call, in `launch`.
EventScan scan_event(const char* p, const char* end, bool ours, uint64_t base_ns, Activity& a,
                     std::string_view& name, const char*& next, GraphLaunch* launch = nullptr);

}  // namespace graphscope::detail
