#include "trace_scan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "../core/json_tape.h"

namespace graphscope::detail {

CopyKind copy_kind_from_word(std::string_view w) {
  if (w == "HtoD" || w == "HtoA") return CopyKind::htod;
  if (w == "DtoH" || w == "AtoH") return CopyKind::dtoh;
  if (w == "DtoD" || w == "AtoA" || w == "AtoD" || w == "DtoA" || w == "PtoP") return CopyKind::dtod;
  if (w == "HtoH") return CopyKind::htoh;
  return CopyKind::other;
}

CopyKind copy_kind_from_enum(uint64_t v) {
  switch (v) {
    case 1: case 3: return CopyKind::htod;             // HTOD, HTOA
    case 2: case 4: return CopyKind::dtoh;             // DTOH, ATOH
    case 5: case 6: case 7: case 8: case 10: return CopyKind::dtod;  // ATOA, ATOD, DTOA, DTOD, PTOP
    case 9: return CopyKind::htoh;
    default: return CopyKind::other;
  }
}

CopyKind copy_kind_from_name(std::string_view name) {
  constexpr std::string_view prefix = "Memcpy ";
  if (name.substr(0, prefix.size()) != prefix) return CopyKind::other;
  name.remove_prefix(prefix.size());
  size_t end = name.find_first_of(" (");
  return copy_kind_from_word(name.substr(0, end));
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool exact_micros(const char* b, const char* e, uint64_t& ns) {
  const char* p = b;
  uint64_t whole = 0;
  while (p < e && is_digit(*p)) whole = whole * 10 + uint64_t(*p++ - '0');
  size_t digits = size_t(p - b);
  if (!digits || digits > 12 || (digits > 1 && *b == '0')) return false;
  uint64_t frac = 0;
  if (p < e) {
    if (*p != '.') return false;
    const char* f = ++p;
    while (p < e && is_digit(*p)) frac = frac * 10 + uint64_t(*p++ - '0');
    size_t n = size_t(p - f);
    if (!n || n > 3 || p != e) return false;
    for (; n < 3; ++n) frac *= 10;
  }
  ns = whole * 1000 + frac;
  return true;
}

namespace {

// A value as the scanner saw it. Strings are plain (no escapes, ASCII);
// numbers are spans of valid JSON number text.
struct Tok {
  enum Type : uint8_t { none, str, uint, real, other } type = none;
  const char* b = nullptr;
  const char* e = nullptr;
  uint64_t u = 0;  // uint: the value
  uint32_t d[3] = {0, 0, 0};  // an array of three integers (grid, block)
  std::string_view view() const { return std::string_view(b, size_t(e - b)); }
};

// The keys of one object met so far (those the scanner does not read; each
// one it reads has its field in the event), to find a key given twice,
// which the strict reader refuses. Each key takes one of 64 slots (by
// json_key_hash): it is compared in full with the keys before it only when
// its slot is taken. An object with more such keys than are kept bails too
// (the strict reader decides); Kineto's events have fewer than 20 keys at
// any level.
class SeenKeys {
 public:
  // False when the key is already here, or there is no room for it.
  bool add(const char* b, const char* e) {
    const uint32_t n = uint32_t(e - b);
    const uint64_t slot = uint64_t(1) << (json_key_hash(b, n) >> 58);
    if (taken_ & slot)
      for (uint32_t i = 0; i < count_; ++i)
        if (length_[i] == n && std::memcmp(key_[i], b, n) == 0) return false;
    taken_ |= slot;
    if (count_ == kMax) return false;
    key_[count_] = b;
    length_[count_++] = n;
    return true;
  }

 private:
  static constexpr uint32_t kMax = 32;
  uint64_t taken_ = 0;  // 64 slots of the keys' hashes
  uint32_t count_ = 0;
  uint32_t length_[kMax];
  const char* key_[kMax];
};

class Scanner {
 public:
  Scanner(const char* p, const char* end) : p_(p), end_(end) {}
  const char* pos() const { return p_; }

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\t' || *p_ == '\r')) ++p_;
  }
  bool eat(char c) {
    if (p_ >= end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  bool at(char c) const { return p_ < end_ && *p_ == c; }

  // A string with no escape and no byte outside printable ASCII; its content.
  bool string(const char*& b, const char*& e) {
    if (!eat('"')) return false;
    b = p_;
    while (p_ < end_) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        e = p_++;
        return true;
      }
      if (c < 0x20 || c >= 0x80 || c == '\\') return false;
      ++p_;
    }
    return false;
  }

  // A number by RFC 8259's grammar, without exponent, at most 40 bytes (so
  // that no reader could find it out of range). Non-negative integers of at
  // most 19 digits are uint, other non-negative ones real.
  bool number(Tok& t) {
    const char* b = p_;
    bool neg = eat('-');
    if (p_ >= end_ || !is_digit(*p_)) return false;
    uint64_t v = 0;
    if (*p_ == '0') {
      ++p_;
      if (p_ < end_ && is_digit(*p_)) return false;
    } else {
      while (p_ < end_ && is_digit(*p_)) v = v * 10 + uint64_t(*p_++ - '0');  // wraps past 19 digits: unused then
    }
    size_t int_digits = size_t(p_ - b) - neg;
    bool integral = true;
    if (at('.')) {
      integral = false;
      ++p_;
      if (p_ >= end_ || !is_digit(*p_)) return false;
      while (p_ < end_ && is_digit(*p_)) ++p_;
    }
    if (at('e') || at('E') || p_ - b > 40) return false;
    t.b = b, t.e = p_;
    if (neg) t.type = Tok::other;
    else if (!integral) t.type = Tok::real;
    else if (int_digits <= 19) t.type = Tok::uint, t.u = v;
    else t.type = Tok::other;
    return true;
  }

  // An array of exactly three integers, each at most UINT32_MAX ("grid",
  // "block"); false for anything else (the strict reader decides).
  bool dim3(Tok& t) {
    if (!eat('[')) return false;
    for (int i = 0; i < 3; ++i) {
      ws();
      if (i > 0) {
        if (!eat(',')) return false;
        ws();
      }
      Tok x;
      if (!number(x) || x.type != Tok::uint || x.u > UINT32_MAX) return false;
      t.d[i] = uint32_t(x.u);
    }
    ws();
    if (!eat(']')) return false;
    t.type = Tok::other;
    return true;
  }

  // Any value, validated; depth bounds nesting well below the strict
  // reader's limit.
  bool value(Tok& t, int depth = 0) {
    if (p_ >= end_) return false;
    switch (*p_) {
      case '"':
        t.type = Tok::str;
        return string(t.b, t.e);
      case '{': {
        if (depth > 32) return false;
        t.type = Tok::other;
        ++p_;
        ws();
        if (eat('}')) return true;
        SeenKeys seen;
        for (;;) {
          const char *kb, *ke;
          if (!string(kb, ke) || !seen.add(kb, ke)) return false;
          ws();
          if (!eat(':')) return false;
          ws();
          Tok skip;
          if (!value(skip, depth + 1)) return false;
          ws();
          if (eat('}')) return true;
          if (!eat(',')) return false;
          ws();
        }
      }
      case '[': {
        if (depth > 32) return false;
        t.type = Tok::other;
        ++p_;
        ws();
        if (eat(']')) return true;
        for (;;) {
          Tok skip;
          if (!value(skip, depth + 1)) return false;
          ws();
          if (eat(']')) return true;
          if (!eat(',')) return false;
          ws();
        }
      }
      case 't': return word("true", t);
      case 'f': return word("false", t);
      case 'n': return word("null", t);
      default: return number(t);
    }
  }

 private:
  bool word(const char* w, Tok& t) {
    size_t n = std::strlen(w);
    if (size_t(end_ - p_) < n || std::memcmp(p_, w, n) != 0) return false;
    p_ += n;
    t.type = Tok::other;
    return true;
  }

  const char* p_;
  const char* end_;
};

bool key_is(const char* b, const char* e, std::string_view k) {
  return size_t(e - b) == k.size() && std::memcmp(b, k.data(), k.size()) == 0;
}

// The event's members the reader uses; everything else is validated and
// skipped.
enum Field { ph, cat, name_f, ts, dur, pid, tid, args, fields };
enum ArgField { device, in_device, stream, correlation, graph_node_id, graph_id, channel, channel_type, bytes,
                copy_kind, grid, block, shared, context, mangled, arg_fields };

int field_of(const char* b, const char* e) {
  switch (e - b) {
    case 2: return key_is(b, e, "ph") ? ph : key_is(b, e, "ts") ? ts : -1;
    case 3: return key_is(b, e, "cat") ? cat : key_is(b, e, "dur") ? dur : key_is(b, e, "pid") ? pid
                                                                           : key_is(b, e, "tid") ? tid : -1;
    case 4: return key_is(b, e, "name") ? name_f : key_is(b, e, "args") ? args : -1;
    default: return -1;
  }
}

int arg_field_of(const char* b, const char* e) {
  static constexpr std::string_view names[arg_fields] = {"device", "inDevice", "stream", "correlation",
                                                         "graph node id", "graph id", "channel", "channel_type",
                                                         "bytes", "copy kind", "grid", "block",
                                                         "shared memory", "context", "mangled name"};
  for (int f = 0; f < arg_fields; ++f)
    if (key_is(b, e, names[f])) return f;
  return -1;
}

// The strict reader's micros(): an integer, or a real read as a double with
// its fraction rounded to the nanosecond.
bool micros(const Tok& t, uint64_t& ns) {
  if (t.type == Tok::uint) {
    if (t.u > uint64_t(kMaxUs)) return false;
    ns = t.u * 1000;
    return true;
  }
  if (t.type != Tok::real) return false;
  if (exact_micros(t.b, t.e, ns)) return true;
  double d = 0;
  auto r = std::from_chars(t.b, t.e, d);
  if (r.ec != std::errc() || r.ptr != t.e || !(d >= 0 && d <= kMaxUs)) return false;
  double whole = std::floor(d);
  ns = uint64_t(whole) * 1000 + uint64_t(std::llround((d - whole) * 1000.0));
  return true;
}

// An argument that must be an integer no larger than max.
bool integer(const Tok& t, uint64_t max, uint64_t& v) {
  if (t.type != Tok::uint || t.u > max) return false;
  v = t.u;
  return true;
}

}  // namespace

EventScan scan_event(const char* p, const char* end, bool ours, uint64_t base_ns, Activity& a,
                     std::string_view& name, const char*& next, GraphLaunch* launch) {
  constexpr auto bail = EventScan::bail;
  Scanner s(p, end);
  Tok f[fields], g[arg_fields];
  bool args_object = false;
  // A key given twice bails (the strict reader refuses it, naming it): the
  // keys read by their fields in f and g, the others in these.
  SeenKeys others, other_args;
  if (!s.eat('{')) return bail;
  s.ws();
  if (!s.eat('}')) {
    for (;;) {
      const char *kb, *ke;
      if (!s.string(kb, ke)) return bail;
      s.ws();
      if (!s.eat(':')) return bail;
      s.ws();
      int k = field_of(kb, ke);
      if (k < 0) {
        Tok skip;
        if (!others.add(kb, ke) || !s.value(skip)) return bail;
      } else if (f[k].type != Tok::none) {
        return bail;  // a repeated key
      } else if (k == args && s.at('{')) {
        f[k].type = Tok::other;
        args_object = true;
        s.eat('{');
        s.ws();
        if (!s.eat('}')) {
          for (;;) {
            if (!s.string(kb, ke)) return bail;
            s.ws();
            if (!s.eat(':')) return bail;
            s.ws();
            int ak = arg_field_of(kb, ke);
            Tok skip;
            Tok& t = ak < 0 ? skip : g[ak];
            if (ak >= 0 ? t.type != Tok::none : !other_args.add(kb, ke)) return bail;
            if (ak == grid || ak == block ? !s.dim3(t) : !s.value(t)) return bail;
            s.ws();
            if (s.eat('}')) break;
            if (!s.eat(',')) return bail;
            s.ws();
          }
        }
      } else if (!s.value(f[k])) {
        return bail;
      }
      s.ws();
      if (s.eat('}')) break;
      if (!s.eat(',')) return bail;
      s.ws();
    }
  }
  next = s.pos();

  // What the strict reader makes of these members, in its order.
  if (f[ph].type == Tok::none || f[cat].type == Tok::none) return EventScan::skipped;
  if (f[ph].type != Tok::str || f[cat].type != Tok::str) return bail;
  if (f[ph].view() != "X") return EventScan::skipped;
  std::string_view c = f[cat].view();
  if (c == kCatRuntime || c == kCatDriver) {
    // As the strict reader's read_launch.
    if (f[name_f].type != Tok::str || !is_graph_launch_api(f[name_f].view())) return EventScan::skipped;
    if (!args_object || g[correlation].type == Tok::none) return EventScan::skipped;
    uint64_t start, length, corr;
    if (!launch || !micros(f[ts], start) || !micros(f[dur], length)) return bail;
    if (!integer(g[correlation], UINT32_MAX, corr)) return bail;
    launch->correlation = uint32_t(corr);
    launch->start_ns = base_ns + start;
    launch->end_ns = launch->start_ns + length;
    return EventScan::launch;
  }
  a = Activity();
  if (c == kCatKernel) a.kind = ActivityKind::kernel;
  else if (c == kCatMemcpy) a.kind = ActivityKind::memcpy;
  else if (c == kCatMemset) a.kind = ActivityKind::memset;
  else if (ours && c == kCatHost) a.kind = ActivityKind::host;
  else if (ours && c == kCatOther) a.kind = ActivityKind::other;
  else return EventScan::skipped;
  if (f[name_f].type != Tok::str) return bail;
  name = f[name_f].view();
  uint64_t start, length;
  if (!micros(f[ts], start) || !micros(f[dur], length)) return bail;
  a.start_ns = base_ns + start;
  a.end_ns = a.start_ns + length;

  bool have_device = false, have_stream = false, have_copy = false;
  if (f[args].type != Tok::none) {
    if (!args_object) return bail;
    uint64_t v;
    auto take = [&](int k, uint64_t max) { return g[k].type == Tok::none || integer(g[k], max, v); };
    // "device" wins over Kineto's "inDevice" for peer copies, wherever each is.
    if (!take(in_device, UINT32_MAX)) return bail;
    if (g[in_device].type != Tok::none) a.device = uint32_t(v), have_device = true;
    if (!take(device, UINT32_MAX)) return bail;
    if (g[device].type != Tok::none) a.device = uint32_t(v), have_device = true;
    if (!take(stream, UINT32_MAX)) return bail;
    if (g[stream].type != Tok::none) a.stream = uint32_t(v), have_stream = true;
    if (!take(correlation, UINT32_MAX)) return bail;
    if (g[correlation].type != Tok::none) a.correlation = uint32_t(v);
    if (!take(graph_node_id, UINT64_MAX)) return bail;
    if (g[graph_node_id].type != Tok::none) a.graph_node_id = v;
    if (!take(graph_id, UINT32_MAX)) return bail;
    if (g[graph_id].type != Tok::none) a.graph_id = uint32_t(v);
    if (!take(channel, UINT32_MAX)) return bail;
    if (g[channel].type != Tok::none) a.channel_id = uint32_t(v);
    if (!take(channel_type, UINT8_MAX)) return bail;
    if (g[channel_type].type != Tok::none) a.channel_type = uint8_t(v);
    if (!take(bytes, UINT64_MAX)) return bail;
    if (g[bytes].type != Tok::none) a.bytes = v;
    if (g[grid].type != Tok::none) std::copy(g[grid].d, g[grid].d + 3, a.grid);
    if (g[block].type != Tok::none) std::copy(g[block].d, g[block].d + 3, a.block);
    if (!take(shared, UINT32_MAX)) return bail;
    if (g[shared].type != Tok::none) a.shared_bytes = uint32_t(v), a.has_shared = true;
    if (!take(context, UINT32_MAX)) return bail;
    if (g[context].type != Tok::none) a.context = uint32_t(v);
    if (g[mangled].type != Tok::none) {
      if (g[mangled].type != Tok::str) return bail;
      name = g[mangled].view();
    }
    if (g[copy_kind].type != Tok::none && a.kind == ActivityKind::memcpy) {
      if (g[copy_kind].type == Tok::str) a.copy = copy_kind_from_word(g[copy_kind].view());
      else if (integer(g[copy_kind], UINT8_MAX, v)) a.copy = copy_kind_from_enum(v);
      else return bail;
      have_copy = true;
    }
  }
  // Without the args, Kineto's layout: pid is the device, tid the stream.
  if (!have_device && f[pid].type == Tok::uint && f[pid].u <= UINT32_MAX) a.device = uint32_t(f[pid].u);
  if (!have_stream && f[tid].type == Tok::uint && f[tid].u <= UINT32_MAX) a.stream = uint32_t(f[tid].u);
  if (a.kind == ActivityKind::memcpy && !have_copy) a.copy = copy_kind_from_name(name);
  return EventScan::activity;
}

}  // namespace graphscope::detail
