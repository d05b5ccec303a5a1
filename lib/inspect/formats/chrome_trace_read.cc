#include "chrome_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/error.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"
#include "../model/lane.h"
#include "../core/parallel.h"
#include "trace_scan.h"

namespace graphscope {
namespace {

using Kind = JsonTape::Kind;
constexpr uint32_t kNone = UINT32_MAX;

using namespace detail;

class Reader {
 public:
  Reader(const JsonTape& t, const std::string& origin, std::string_view array_name)
      : t_(t), origin_(origin), array_name_(array_name) {}

  Trace read(uint32_t events, const std::string& source, uint64_t base_ns) {
    Trace trace;
    trace.source = source;
    trace.activities.reserve(t_.at(events).count / 2);
    read_into(trace, events, source == "graphscope", base_ns, 0);
    return trace;
  }

  // Appends the events of array `events`, the first of which is number
  // `first` of the file's array (for messages).
  void read_into(Trace& trace, uint32_t events, bool ours, uint64_t base_ns, uint32_t first) {
    first_ = first;
    const uint32_t n = t_.at(events).count;
    for (event_ = 0; event_ < n; ++event_) {
      uint32_t ev = t_.element(events, event_);
      if (t_.at(ev).kind != Kind::object) fail({}, "is " + shown(ev) + ", expected an object");
      uint32_t ph = kNone, cat = kNone, name = kNone, ts = kNone, dur = kNone, args = kNone, pid = kNone,
               tid = kNone;
      const uint32_t members = t_.at(ev).count;
      for (uint32_t m = 0; m < members; ++m) {
        std::string_view k = t_.member_key(ev, m);
        uint32_t v = t_.member_value(ev, m);
        if (k == "ph") ph = v;
        else if (k == "cat") cat = v;
        else if (k == "name") name = v;
        else if (k == "ts") ts = v;
        else if (k == "dur") dur = v;
        else if (k == "args") args = v;
        else if (k == "pid") pid = v;
        else if (k == "tid") tid = v;
      }
      if (ph == kNone || cat == kNone) continue;
      if (t_.at(ph).kind != Kind::string) fail("ph", "is " + shown(ph) + ", expected a string");
      if (t_.at(cat).kind != Kind::string) fail("cat", "is " + shown(cat) + ", expected a string");
      if (t_.str(ph) != "X") continue;
      std::string_view c = t_.str(cat);
      if (c == kCatRuntime || c == kCatDriver) {
        read_launch(trace, name, ts, dur, args, base_ns);
        continue;
      }
      Activity a;
      if (c == kCatKernel) a.kind = ActivityKind::kernel;
      else if (c == kCatMemcpy) a.kind = ActivityKind::memcpy;
      else if (c == kCatMemset) a.kind = ActivityKind::memset;
      else if (ours && c == kCatHost) a.kind = ActivityKind::host;
      else if (ours && c == kCatOther) a.kind = ActivityKind::other;
      else continue;

      if (name == kNone) fail("name", "is missing");
      if (t_.at(name).kind != Kind::string) fail("name", "is " + shown(name) + ", expected a string");
      std::string_view nm = t_.str(name);
      if (ts == kNone) fail("ts", "is missing");
      if (dur == kNone) fail("dur", "is missing");
      uint64_t start = micros(ts, "ts"), length = micros(dur, "dur");
      a.start_ns = base_ns + start;  // each below 4e18: no overflow
      a.end_ns = a.start_ns + length;

      bool have_device = false, have_args_device = false, have_stream = false, have_copy = false;
      if (args != kNone) {
        if (t_.at(args).kind != Kind::object) fail("args", "is " + shown(args) + ", expected an object");
        const uint32_t count = t_.at(args).count;
        in_args_ = true;
        for (uint32_t m = 0; m < count; ++m) {
          std::string_view k = t_.member_key(args, m);
          uint32_t v = t_.member_value(args, m);
          if (k == "device") {
            a.device = uint32_t(integer(v, k, UINT32_MAX, false));
            have_device = have_args_device = true;
          } else if (k == "inDevice") {  // Kineto's peer copies
            uint32_t d = uint32_t(integer(v, k, UINT32_MAX, false));
            if (!have_args_device) a.device = d;
            have_device = true;
          } else if (k == "stream") {
            a.stream = uint32_t(integer(v, k, UINT32_MAX, false));
            have_stream = true;
          } else if (k == "correlation") {
            a.correlation = uint32_t(integer(v, k, UINT32_MAX, false));
          } else if (k == "graph node id") {
            a.graph_node_id = integer(v, k, UINT64_MAX, true);
          } else if (k == "graph id") {
            a.graph_id = uint32_t(integer(v, k, UINT32_MAX, true));
          } else if (k == "channel") {
            a.channel_id = uint32_t(integer(v, k, UINT32_MAX, false));
          } else if (k == "channel_type") {
            a.channel_type = uint8_t(integer(v, k, UINT8_MAX, false));
          } else if (k == "bytes") {
            a.bytes = integer(v, k, UINT64_MAX, false);
          } else if (k == "grid") {
            dim3(v, k, a.grid);
          } else if (k == "block") {
            dim3(v, k, a.block);
          } else if (k == "shared memory") {
            a.shared_bytes = uint32_t(integer(v, k, UINT32_MAX, false));
            a.has_shared = true;
          } else if (k == "context") {
            a.context = uint32_t(integer(v, k, UINT32_MAX, false));
          } else if (k == "mangled name") {  // graphscope's: "name" is demangled
            if (t_.at(v).kind != Kind::string) fail(k, "is " + shown(v) + ", expected a string");
            nm = t_.str(v);
          } else if (k == "copy kind" && a.kind == ActivityKind::memcpy) {
            if (t_.at(v).kind == Kind::string) a.copy = copy_kind_from_word(t_.str(v));
            else a.copy = copy_kind_from_enum(integer(v, k, UINT8_MAX, false));
            have_copy = true;
          }
        }
        in_args_ = false;
      }
      // Without the args, Kineto's layout: pid is the device, tid the stream.
      if (!have_device && pid != kNone && t_.at(pid).kind == Kind::unsigned_integer &&
          t_.at(pid).u <= UINT32_MAX)
        a.device = uint32_t(t_.at(pid).u);
      if (!have_stream && tid != kNone && t_.at(tid).kind == Kind::unsigned_integer &&
          t_.at(tid).u <= UINT32_MAX)
        a.stream = uint32_t(t_.at(tid).u);
      if (a.kind == ActivityKind::memcpy && !have_copy) a.copy = copy_kind_from_name(nm);

      auto it = names_.find(nm);
      if (it == names_.end()) it = names_.emplace(nm, trace.intern(nm)).first;
      a.name = it->second;
      trace.activities.push_back(a);
    }
  }

  // A graph launch API call (cat cuda_runtime or cuda_driver): its
  // correlation id and times. Other API calls, and launches without a
  // correlation id, are skipped.
  void read_launch(Trace& trace, uint32_t name, uint32_t ts, uint32_t dur, uint32_t args, uint64_t base_ns) {
    if (name == kNone || t_.at(name).kind != Kind::string || !is_graph_launch_api(t_.str(name))) return;
    if (args == kNone || t_.at(args).kind != Kind::object) return;
    uint32_t corr = t_.find(args, "correlation");
    if (corr == kNone) return;
    if (ts == kNone) fail("ts", "is missing");
    if (dur == kNone) fail("dur", "is missing");
    GraphLaunch l;
    l.start_ns = base_ns + micros(ts, "ts");
    l.end_ns = l.start_ns + micros(dur, "dur");
    in_args_ = true;
    l.correlation = uint32_t(integer(corr, "correlation", UINT32_MAX, false));
    in_args_ = false;
    trace.launches.push_back(l);
  }

  // Kineto's "grid" and "block": an array of three integers.
  void dim3(uint32_t v, std::string_view field, uint32_t (&out)[3]) const {
    if (t_.at(v).kind != Kind::array || t_.at(v).count != 3)
      fail(field, "is " + shown(v) + ", expected an array of 3 integers");
    for (uint32_t i = 0; i < 3; ++i) out[i] = uint32_t(integer(t_.element(v, i), field, UINT32_MAX, false));
  }

  // A field of the document outside the events ("graphscope.time_base_ns").
  [[noreturn]] void fail_top(std::string_view path, const std::string& why) const {
    throw_input(origin_, std::string(path) + ": " + why);
  }

  std::string shown(uint32_t v) const {
    const auto& x = t_.at(v);
    switch (x.kind) {
      case Kind::integer:
      case Kind::unsigned_integer:
      case Kind::real: return t_.to_json(v);
      case Kind::string: {
        std::string s = t_.to_json(v);
        if (s.size() > 40) {
          size_t cut = 36;  // not inside a UTF-8 sequence
          while (cut > 1 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
          s = s.substr(0, cut) + "...\"";
        }
        return "the string " + s;
      }
      default: return JsonTape::kind_name(x.kind);
    }
  }

  // A non-negative integer no larger than max. Reals with an integral value
  // are taken too; decimal strings where allow_string (64-bit ids).
  uint64_t integer(uint32_t v, std::string_view field, uint64_t max, bool allow_string) const {
    const auto& x = t_.at(v);
    uint64_t r = 0;
    switch (x.kind) {
      case Kind::unsigned_integer: r = x.u; break;
      case Kind::integer: fail(field, "is " + shown(v) + ", expected a non-negative integer");
      case Kind::real:
        if (!(x.d >= 0 && x.d == std::floor(x.d) && x.d < 18446744073709551616.0))
          fail(field, "is " + shown(v) + ", expected a non-negative integer");
        r = uint64_t(x.d);
        break;
      case Kind::string: {
        std::string_view s = t_.str(v);
        if (!allow_string) fail(field, "is " + shown(v) + ", expected an integer");
        auto res = std::from_chars(s.data(), s.data() + s.size(), r);
        if (s.empty() || res.ec != std::errc() || res.ptr != s.data() + s.size())
          fail(field, "is " + shown(v) + ", expected a decimal integer");
        break;
      }
      default: fail(field, "is " + shown(v) + ", expected an integer");
    }
    if (r > max) fail(field, "is " + shown(v) + ", larger than " + std::to_string(max));
    return r;
  }

  // Microseconds (an integer or a real) to nanoseconds, rounded.
  uint64_t micros(uint32_t v, std::string_view field) const {
    const auto& x = t_.at(v);
    switch (x.kind) {
      case Kind::unsigned_integer:
        if (x.u > uint64_t(kMaxUs)) fail(field, "is " + shown(v) + ", out of range");
        return x.u * 1000;
      case Kind::integer: fail(field, "is negative (" + shown(v) + ")");
      case Kind::real: {
        double d = x.d;
        if (d < 0) fail(field, "is negative (" + shown(v) + ")");
        if (!(d <= kMaxUs)) fail(field, "is " + shown(v) + ", out of range");
        // Integral and fractional microseconds apart, so that large
        // absolute times (Kineto's) keep their nanoseconds.
        double whole = std::floor(d);
        return uint64_t(whole) * 1000 + uint64_t(std::llround((d - whole) * 1000.0));
      }
      default: fail(field, "is " + shown(v) + ", expected a number");
    }
  }

 private:
  [[noreturn]] void fail(std::string_view field, const std::string& why) const {
    std::string path(array_name_);
    path += '[';
    path += std::to_string(uint64_t(first_) + event_);
    path += ']';
    if (!field.empty()) {
      path += in_args_ ? ".args." : ".";
      path += field;
    }
    throw_input(origin_, path + ": " + why);
  }

  const JsonTape& t_;
  const std::string& origin_;
  std::string_view array_name_;
  uint32_t event_ = 0, first_ = 0;
  bool in_args_ = false;
  std::unordered_map<std::string_view, uint32_t> names_;  // views into the tape
};

}  // namespace

// The devices' SM counts: graphscope's "graphscope.devices" ([{device,
// sm_count}], strictly), else Kineto's "deviceProperties" ([{id, numSms,
// ...}]; entries without both are left out: the trace is still usable).
template <class R>
static std::vector<DeviceSms> device_sms(const JsonTape& t, uint32_t root, uint32_t gs, const R& r) {
  using Kind = JsonTape::Kind;
  std::vector<DeviceSms> out;
  auto u32 = [&](uint32_t v) -> std::optional<uint32_t> {
    if (v == kNone || t.at(v).kind != Kind::unsigned_integer || t.at(v).u > UINT32_MAX) return std::nullopt;
    return uint32_t(t.at(v).u);
  };
  if (gs != kNone) {
    const uint32_t devs = t.find(gs, "devices");
    if (devs == kNone) return out;
    if (t.at(devs).kind != Kind::array) r.fail_top("graphscope.devices", "is " + r.shown(devs) + ", expected an array");
    for (uint32_t k = 0; k < t.at(devs).count; ++k) {
      const uint32_t e = t.element(devs, k);
      const std::string field = "graphscope.devices[" + std::to_string(k) + "]";
      if (t.at(e).kind != Kind::object) r.fail_top(field, "is " + r.shown(e) + ", expected an object");
      const auto d = u32(t.find(e, "device")), n = u32(t.find(e, "sm_count"));
      if (!d) r.fail_top(field + ".device", "is missing or not an integer below 2^32");
      if (!n) r.fail_top(field + ".sm_count", "is missing or not an integer below 2^32");
      out.push_back({*d, *n});
    }
    return out;
  }
  const uint32_t props = t.find(root, "deviceProperties");
  if (props == kNone || t.at(props).kind != Kind::array) return out;
  for (uint32_t k = 0; k < t.at(props).count && k < 4096; ++k) {
    const uint32_t e = t.element(props, k);
    if (t.at(e).kind != Kind::object) continue;
    const auto d = u32(t.find(e, "id")), n = u32(t.find(e, "numSms"));
    if (d && n) out.push_back({*d, *n});
  }
  return out;
}

// The strict reader: the whole text as one tape. base_out, when given, gets
// the time base it read ("graphscope.time_base_ns", else 0).
static Trace read_whole(std::string_view text, const std::string& origin, uint64_t* base_out = nullptr) {
  JsonTape t = JsonTape::parse(text, origin);
  uint32_t root = t.root();
  Kind kind = t.at(root).kind;
  if (kind == Kind::array) return Reader(t, origin, "").read(root, "chrome-trace", 0);
  if (kind != Kind::object)
    throw_input(origin, std::string("is ") + JsonTape::kind_name(kind) +
                            ", expected a Chrome trace (an object with \"traceEvents\", or an array of events)");
  Reader r(t, origin, "traceEvents");
  std::string source = "chrome-trace";
  uint64_t base_ns = 0;
  uint32_t events = t.find(root, "traceEvents");
  if (events == kNone) throw_input(origin, "no \"traceEvents\" array: not a Chrome trace");
  if (t.at(events).kind != Kind::array) r.fail_top("traceEvents", "is " + r.shown(events) + ", expected an array");
  uint32_t gs = t.find(root, "graphscope");
  if (gs != kNone) {
    if (t.at(gs).kind != Kind::object) r.fail_top("graphscope", "is " + r.shown(gs) + ", expected an object");
    uint32_t schema = t.find(gs, "schema");
    if (schema == kNone) r.fail_top("graphscope.schema", "is missing");
    if (t.at(schema).kind != Kind::string || t.str(schema) != kTraceSchema)
      r.fail_top("graphscope.schema", "is " + r.shown(schema) + ", expected \"" + std::string(kTraceSchema) + "\"");
    uint32_t base = t.find(gs, "time_base_ns");
    if (base != kNone) {
      const auto& b = t.at(base);
      if (b.kind != Kind::unsigned_integer || b.u > kMaxNs)
        r.fail_top("graphscope.time_base_ns", "is " + r.shown(base) + ", expected an integer below 4e18");
      base_ns = b.u;
    }
    source = "graphscope";
  } else if (t.find(root, "schemaVersion") != kNone || t.find(root, "deviceProperties") != kNone) {
    source = "pytorch-profiler";
  }
  if (base_out) *base_out = base_ns;
  Trace out = r.read(events, source, base_ns);
  out.devices = device_sms(t, root, gs, r);
  return out;
}

namespace {

size_t skip_space(std::string_view t, size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\t' || t[i] == '\r')) ++i;
  return i;
}

// End of the string starting at t[i] == '"', or npos.
size_t skip_string(std::string_view t, size_t i) {
  const char* base = t.data();
  const char* end = base + t.size();
  const char* q = base + i + 1;
  for (;;) {
    const char* hit = static_cast<const char*>(std::memchr(q, '"', size_t(end - q)));
    if (!hit) return std::string_view::npos;
    // Escaped when preceded by an odd number of backslashes.
    size_t slashes = 0;
    for (const char* b = hit; b > q && b[-1] == '\\'; --b) ++slashes;
    if (slashes % 2 == 0) return size_t(hit - base) + 1;
    q = hit + 1;
  }
}

// End of the JSON value starting at t[i], by brackets and strings alone (no
// validation: every byte is parsed strictly afterwards), or npos.
size_t skip_value(std::string_view t, size_t i) {
  int depth = 0;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c == '"') {
      i = skip_string(t, i);
      if (i == std::string_view::npos) return i;
      --i;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth < 0) return i;  // the end of the enclosing container
      if (depth == 0) return i + 1;
    } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r')) {
      return i;
    }
  }
  return depth == 0 ? i : std::string_view::npos;
}

// The first event start at or after `from`, by the look of the text: a '{'
// after a ',' after a '}', blanks between. Only a guess: it may be inside a
// string.
size_t guess_event_start(std::string_view text, size_t from) {
  auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  for (size_t i = from; i < text.size(); ++i) {
    const void* hit = std::memchr(text.data() + i, '{', text.size() - i);
    if (!hit) return std::string_view::npos;
    i = size_t(static_cast<const char*>(hit) - text.data());
    size_t j = i;
    while (j > from && blank(text[j - 1])) --j;
    if (j <= from || text[j - 1] != ',') continue;
    --j;
    while (j > from && blank(text[j - 1])) --j;
    if (j > from && text[j - 1] == '}') return i;
  }
  return std::string_view::npos;
}

// One thread's share of the events array: from `begin` (an event start; a
// guess, except for the first share's) up to the next share's begin, or to
// the array's end for the last.
struct Share {
  size_t begin = 0, until = std::string_view::npos;
  size_t stop = 0;  // the last share: one past the array's ']'
  bool ok = false;
  Trace trace;
};

// Reads a share's events: the fast scanner, else the strict tape reader on
// the event alone. Never throws: a share that meets anything malformed, or
// whose events do not lead exactly to the next share's start (its guess was
// wrong), is not ok.
void read_share(std::string_view text, Share& sh, bool ours, uint64_t base_ns, const std::string& origin) {
  const char* base = text.data();
  const char* end = base + text.size();
  std::unordered_map<std::string_view, uint32_t> names;  // views into the text
  JsonTape tape;
  std::string one;
  Activity a;
  std::string_view name;
  // Device events take some 200-400 bytes each (an estimate; too much only
  // reserves address space).
  size_t span = std::min(sh.until, text.size()) - sh.begin;
  if (sh.trace.activities.capacity() < span / 160) sh.trace.activities.reserve(span / 160);
  size_t i = sh.begin;
  for (;;) {
    if (i == sh.until) {
      sh.ok = true;
      return;
    }
    if (sh.until != std::string_view::npos && i > sh.until) return;
    const char* next = nullptr;
    GraphLaunch launch;
    EventScan r = scan_event(base + i, end, ours, base_ns, a, name, next, &launch);
    size_t e;
    if (r == EventScan::bail) {
      e = skip_value(text, i);
      if (e == std::string_view::npos || e == i) return;
      one.assign("[").append(text.substr(i, e - i)).append("]");
      try {
        tape.reparse(one, origin);
        Reader(tape, origin, "traceEvents").read_into(sh.trace, tape.root(), ours, base_ns, 0);
      } catch (const Error&) {
        // Its path ("[0].args.dur: appears twice") is within the event
        // alone: the whole text is read again, for the path in the document.
        return;
      }
    } else {
      e = size_t(next - base);
      if (r == EventScan::activity) {
        auto [it, added] = names.try_emplace(name, 0);
        if (added) it->second = sh.trace.intern(name);
        a.name = it->second;
        sh.trace.activities.push_back(a);
      } else if (r == EventScan::launch) {
        sh.trace.launches.push_back(launch);
      }
    }
    i = skip_space(text, e);
    if (i >= text.size()) return;
    if (text[i] == ']') {
      if (sh.until != std::string_view::npos) return;  // ended before the next share's start
      sh.stop = i + 1;
      sh.ok = true;
      return;
    }
    if (text[i] != ',') return;
    i = skip_space(text, i + 1);
    if (i >= text.size()) return;
  }
}

// The events of the array at text[arr] == '[', in `threads` shares read at
// once; arr_end: one past its ']'. False when anything is malformed or a
// share's guessed start was wrong.
bool read_events(std::string_view text, size_t arr, bool ours, uint64_t base_ns, unsigned threads,
                 const std::string& origin, Trace& out, size_t& arr_end) {
  size_t first = skip_space(text, arr + 1);
  if (first >= text.size()) return false;
  if (text[first] == ']') {
    arr_end = first + 1;
    out = Trace();
    return true;
  }
  std::vector<Share> shares(1);
  shares[0].begin = first;
  for (unsigned k = 1; k < threads; ++k) {
    size_t g = guess_event_start(text, first + (text.size() - first) * k / threads);
    if (g == std::string_view::npos) break;
    if (g > shares.back().begin) shares.emplace_back().begin = g;
  }
  for (size_t k = 0; k + 1 < shares.size(); ++k) shares[k].until = shares[k + 1].begin;
  // The first share's activities become the trace: room for all, so the
  // others are appended without moving it. Every other share gets room for
  // its own bytes' worth: grown by doubling instead, the second share of a
  // 1M-record trace was reallocated and copied a dozen times, each time
  // into pages the kernel had to zero (reserved room that is not used is
  // never touched).
  shares[0].trace.activities.reserve((text.size() - first) / 160);
  for (size_t k = 1; k < shares.size(); ++k)
    shares[k].trace.activities.reserve(
        ((k + 1 < shares.size() ? shares[k].until : text.size()) - shares[k].begin) / 160);
  parallel_slices(shares.size(), unsigned(shares.size()), [&](unsigned, size_t b, size_t e) {
    for (size_t k = b; k < e; ++k) read_share(text, shares[k], ours, base_ns, origin);
  });
  for (const auto& sh : shares)
    if (!sh.ok) return false;
  arr_end = shares.back().stop;
  // Joined in order, names interned again: the same names in the same order
  // as one pass would give.
  size_t total = 0;
  for (const auto& sh : shares) total += sh.trace.activities.size();
  out = std::move(shares[0].trace);
  out.activities.reserve(total);
  for (size_t k = 1; k < shares.size(); ++k) {
    std::vector<uint32_t> renamed(shares[k].trace.names.size());
    for (size_t n = 0; n < renamed.size(); ++n) renamed[n] = out.intern(shares[k].trace.names[n]);
    for (Activity x : shares[k].trace.activities) {
      x.name = renamed[x.name];
      out.activities.push_back(x);
    }
    out.launches.insert(out.launches.end(), shares[k].trace.launches.begin(), shares[k].trace.launches.end());
    shares[k].trace = Trace();
  }
  return true;
}

// The time base of a graphscope trace's "graphscope" object, 0 without.
uint64_t time_base(const JsonTape& t, uint32_t gs) {
  if (gs == kNone || t.at(gs).kind != JsonTape::Kind::object) return 0;
  uint32_t base = t.find(gs, "time_base_ns");
  if (base == kNone || t.at(base).kind != JsonTape::Kind::unsigned_integer) return 0;
  return t.at(base).u;
}

}  // namespace

// The events array is read straight from the text by the event scanner, in
// byte ranges on every core (a 1M-event trace as one tape would take well
// over a GiB); everything else is read strictly as a document with an empty
// events array. Whatever this cannot place (a malformed file) is read whole
// by the strict reader, for the exact message.
Trace detail::read_chrome_trace_split(std::string_view text, const std::string& origin, unsigned threads) {
  size_t p = skip_space(text, 0);
  if (p >= text.size() || (text[p] != '{' && text[p] != '[')) return read_whole(text, origin);
  size_t arr = std::string_view::npos;
  size_t gs = std::string_view::npos;  // the "graphscope" member's value, when before the events
  if (text[p] == '[') {
    arr = p;
  } else {
    // Members of the top object, up to "traceEvents".
    size_t i = skip_space(text, p + 1);
    while (i < text.size() && text[i] == '"') {
      size_t kend = skip_string(text, i);
      if (kend == std::string_view::npos) return read_whole(text, origin);
      std::string_view key = text.substr(i + 1, kend - i - 2);
      // An escape could spell "traceEvents" (or "graphscope") another way
      // (found by fuzz_trace_json): the strict reader decides.
      if (key.find('\\') != std::string_view::npos) return read_whole(text, origin);
      size_t colon = skip_space(text, kend);
      if (colon >= text.size() || text[colon] != ':') return read_whole(text, origin);
      size_t v = skip_space(text, colon + 1);
      if (key == "traceEvents" && v < text.size() && text[v] == '[') {
        arr = v;
        break;
      }
      if (key == "graphscope" && gs == std::string_view::npos) gs = v;
      size_t vend = skip_value(text, v);
      if (vend == std::string_view::npos) return read_whole(text, origin);
      i = skip_space(text, vend);
      if (i < text.size() && text[i] == ',') i = skip_space(text, i + 1);
      else break;
    }
    if (arr == std::string_view::npos) return read_whole(text, origin);
  }
  if (threads == 0) threads = worker_count(text.size(), size_t(8) << 20);
  // Whether it is graphscope's own trace, and its time base, as the members
  // before the events say (where our writer puts them); checked below.
  bool ours = gs != std::string_view::npos;
  uint64_t base_ns = 0;
  if (ours) {
    size_t e = skip_value(text, gs);
    if (e != std::string_view::npos) {
      try {
        JsonTape t = JsonTape::parse(text.substr(gs, e - gs), origin);
        base_ns = time_base(t, t.root());
      } catch (const Error&) {
      }
    }
  }
  Trace events;
  size_t arr_end = 0;
  auto read = [&] {
    return read_events(text, arr, ours, base_ns, threads, origin, events, arr_end) ||
           (threads > 1 && read_events(text, arr, ours, base_ns, 1, origin, events, arr_end));
  };
  if (!read()) return read_whole(text, origin);
  if (text[p] == '[' && skip_space(text, arr_end) != text.size()) return read_whole(text, origin);
  // Everything but the events, strictly: the source, the time base, and
  // every message about them.
  std::string rest;
  rest.reserve(text.size() - (arr_end - arr) + 2);
  rest.append(text.substr(0, arr)).append("[]").append(text.substr(arr_end));
  Trace trace;
  uint64_t was_base = 0;
  try {
    trace = read_whole(rest, origin, &was_base);
  } catch (const Error&) {
    return read_whole(text, origin);  // the message must point into the real file
  }
  bool was_ours = trace.source == "graphscope";
  if (was_ours != ours || was_base != base_ns) {  // e.g. "graphscope" after the events
    ours = was_ours, base_ns = was_base;
    if (!read()) return read_whole(text, origin);
  }
  events.source = trace.source;
  events.devices = std::move(trace.devices);
  return events;
}

Trace read_chrome_trace(std::string_view text, const std::string& origin) {
  return detail::read_chrome_trace_split(text, origin, 0);
}

Trace detail::read_chrome_trace_strict(std::string_view text, const std::string& origin) {
  return read_whole(text, origin);
}

}  // namespace graphscope
