#include "json_tape.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "error.h"
#include "json_writer.h"
#include "text.h"

namespace graphscope {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

// Whether any of the eight bytes of w (in memory order) ends a run of plain
// string bytes: a quote, a backslash, a control character or a byte of 0x80
// and above. Exact per byte: no borrow crosses bytes, since each test works
// on bytes below 0x80 (the high bit is taken apart).
bool has_special(uint64_t w) {
  constexpr uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  uint64_t low7 = w & ~high;  // each byte below 0x80
  auto is_zero = [&](uint64_t x) { return ~(((x & ~high) + ~high) | x) & high; };  // per byte: x == 0
  uint64_t control = ~(low7 + ones * (0x80 - 0x20)) & high;  // per byte: low7 < 0x20
  return ((w & high) | control | is_zero(w ^ (ones * '"')) | is_zero(w ^ (ones * '\\'))) != 0;
}

// Length of a valid UTF-8 sequence at p (lead byte >= 0x80), 0 if invalid.
size_t utf8_sequence(const char* p, const char* end) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(p[k]); };
  unsigned char c = b(0);
  size_t n;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3;
  else if (c >= 0xF0 && c <= 0xF4) n = 4;
  else return 0;
  if (size_t(end - p) < n) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
  if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
  if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
  if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
  return n;
}

}  // namespace

// A strict RFC 8259 parser writing straight into the tape. Iterative (an
// explicit stack of open containers), so hostile nesting cannot overflow
// the C++ stack; max_depth bounds it anyway.
struct TapeBuilder {
  JsonTape& t;
  std::string_view text;
  const std::string& origin;
  int max_depth;
  const char* p;
  const char* end;
  std::vector<uint32_t> scratch;  // children of open containers
  struct Open {
    uint32_t value;  // the container's value index
    uint32_t start;  // its first child's index in scratch
    uint64_t taken;  // objects: their keys' slots (see run()), while a value inside is open
  };
  std::vector<Open> open;
  std::string buf;
  // An object's keys beyond this many are not compared as they come (see
  // same_slot()) but sorted when it closes, in a vector kept from object to
  // object.
  static constexpr size_t kSlotKeys = 32;
  std::vector<std::pair<std::string_view, uint32_t>> sorted_keys;  // (key, member)
  // The bytes of the key string<true>() read last (unescaped).
  const char* key_at = nullptr;
  uint32_t key_size = 0;

  [[noreturn]] void fail(const char* at, const std::string& why) {
    size_t line = 1, col = 1;
    for (const char* q = text.data(); q < at && q < end; ++q) {
      if (*q == '\n') ++line, col = 1;
      else ++col;
    }
    throw_input(origin, "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + why);
  }

  uint32_t add(JsonTape::Kind kind, uint64_t data) {
    if (t.kinds_.size() >= UINT32_MAX - 1) fail(p, "too many values");
    t.kinds_.push_back(kind);
    t.data_.push_back(data);
    return uint32_t(t.kinds_.size() - 1);
  }
  void place(uint32_t v) {
    if (open.empty()) t.root_ = v;
    else scratch.push_back(v);
  }
  void skip_space() {
    while (p < end && is_space(*p)) ++p;
  }

  // A string; for a key (is_key), its bytes are left in key_at and key_size.
  template <bool is_key = false>
  uint32_t string() {
    const char* start = p;  // at the opening quote
    ++p;
    const char* run = p;
    const size_t off = t.arena_.size();
    bool escaped = false;
    for (;;) {
      // Fast scan of plain ASCII: eight bytes at a time, then byte by byte.
      while (end - p >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        if (has_special(w)) break;
        p += 8;
      }
      while (p < end && static_cast<unsigned char>(*p) >= 0x20 && *p != '"' && *p != '\\' &&
             static_cast<unsigned char>(*p) < 0x80)
        ++p;
      if (p == end) fail(start, "unterminated string");
      unsigned char c = static_cast<unsigned char>(*p);
      if (c == '"') break;
      if (c < 0x20) fail(p, "control character in string");
      if (c >= 0x80) {
        size_t n = utf8_sequence(p, end);
        if (!n) fail(p, "invalid UTF-8 in string");
        p += n;
        continue;
      }
      // A backslash escape: the string is unescaped into the arena.
      escaped = true;
      t.arena_.append(run, size_t(p - run));
      ++p;
      if (p == end) fail(start, "unterminated string");
      switch (*p) {
        case '"': t.arena_.push_back('"'); break;
        case '\\': t.arena_.push_back('\\'); break;
        case '/': t.arena_.push_back('/'); break;
        case 'b': t.arena_.push_back('\b'); break;
        case 'f': t.arena_.push_back('\f'); break;
        case 'n': t.arena_.push_back('\n'); break;
        case 'r': t.arena_.push_back('\r'); break;
        case 't': t.arena_.push_back('\t'); break;
        case 'u': {
          auto hex4 = [&](const char* q) -> int32_t {
            if (end - q < 4) return -1;
            int32_t v = 0;
            for (int k = 0; k < 4; ++k) {
              int h = hex_value(q[k]);
              if (h < 0) return -1;
              v = v * 16 + h;
            }
            return v;
          };
          int32_t cp = hex4(p + 1);
          if (cp < 0) fail(p, "bad \\u escape");
          p += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            int32_t lo = (end - p > 2 && p[1] == '\\' && p[2] == 'u') ? hex4(p + 3) : -1;
            if (lo < 0xDC00 || lo > 0xDFFF) fail(p, "unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail(p, "unpaired surrogate in \\u escape");
          }
          append_utf8(t.arena_, uint32_t(cp));
          break;
        }
        default: fail(p, "bad escape in string");
      }
      run = ++p;
    }
    const size_t at = size_t(run - text.data()), plain = size_t(p - run);
    ++p;  // closing quote
    // Where the text has it, unless escaped or beyond what 32 bits reach.
    if (!escaped && at + plain < UINT32_MAX) {
      if (is_key) key_at = run, key_size = uint32_t(plain);
      return add(JsonTape::Kind::string, uint64_t(at) | uint64_t(plain) << 32);
    }
    t.arena_.append(run, plain);
    const size_t len = t.arena_.size() - off;
    if (t.arena_.size() >= UINT32_MAX) fail(start, "strings larger than 4 GiB in all");
    if (is_key) key_at = t.arena_.data() + off, key_size = uint32_t(len);
    const auto in_arena = JsonTape::Kind(uint8_t(JsonTape::Kind::string) | JsonTape::kInArena);
    return add(in_arena, uint64_t(off) | uint64_t(len) << 32);
  }

  uint32_t number() {
    const char* start = p;
    bool neg = false, integral = true;
    if (*p == '-') neg = true, ++p;
    if (p == end || !is_digit(*p)) fail(start, "bad number");
    const char* digits = p;
    uint64_t magnitude = 0;  // exact for up to 19 digits
    if (*p == '0') {
      ++p;
      if (p < end && is_digit(*p)) fail(start, "leading zero in number");
    } else {
      while (p < end && is_digit(*p)) magnitude = magnitude * 10 + uint64_t(*p++ - '0');
    }
    const bool short_integer = p - digits <= 19;
    if (p < end && *p == '.') {
      integral = false;
      ++p;
      if (p == end || !is_digit(*p)) fail(start, "bad number");
      while (p < end && is_digit(*p)) ++p;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      integral = false;
      ++p;
      if (p < end && (*p == '+' || *p == '-')) ++p;
      if (p == end || !is_digit(*p)) fail(start, "bad number");
      while (p < end && is_digit(*p)) ++p;
    }
    // Most numbers are integers of a few digits: taken as scanned.
    if (integral && short_integer) {
      if (!neg) return add(JsonTape::Kind::unsigned_integer, magnitude);
      // Two's complement: -2^63 included.
      if (magnitude <= uint64_t(1) << 63) return add(JsonTape::Kind::integer, 0 - magnitude);
    }
    if (integral) {
      if (neg) {
        int64_t x;
        auto r = std::from_chars(start, p, x);
        if (r.ec == std::errc() && r.ptr == p) return add(JsonTape::Kind::integer, uint64_t(x));
      } else {
        uint64_t x;
        auto r = std::from_chars(start, p, x);
        if (r.ec == std::errc() && r.ptr == p) return add(JsonTape::Kind::unsigned_integer, x);
      }
      // Out of 64-bit range: kept as a real number, as JSON readers do.
    }
    double d = 0;
    auto r = std::from_chars(start, p, d);
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow reads as zero; overflow is refused, as strict JSON readers do.
      d = std::strtod(std::string(start, p).c_str(), nullptr);
      if (std::isinf(d)) fail(start, "number out of range");
      r.ec = std::errc();
    }
    if (r.ec != std::errc()) fail(start, "bad number");
    if (r.ptr != p) fail(start, "bad number");
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    return add(JsonTape::Kind::real, bits);
  }

  void literal(const char* word, JsonTape::Kind kind, bool b) {
    size_t n = std::strlen(word);
    if (size_t(end - p) < n || std::memcmp(p, word, n) != 0) fail(p, "unexpected character");
    p += n;
    place(add(kind, b ? 1 : 0));
  }

  // A key in a JSON path: as it is when plain and short, else as a JSON
  // string literal cut to 64 bytes (one line whatever the key holds).
  static void append_key(std::string& path, std::string_view key) {
    bool plain = !key.empty() && key.size() <= 64;
    for (char c : key) plain &= static_cast<unsigned char>(c) >= 0x20 && c != 0x7f && c != '"' && c != '\\';
    path += plain ? std::string(key) : quoted(key, 64);
  }

  // The JSON path of key k of the innermost open object ("nodes[3].name"),
  // from the stack of open containers: each one's child is the value placed
  // just before the child's own scratch start.
  std::string path_to(uint32_t k) const {
    std::string path;
    for (size_t level = 1; level <= open.size(); ++level) {
      const Open& parent = open[level - 1];
      if (level == open.size()) {
        if (!path.empty()) path += '.';
        append_key(path, t.str(k));
      } else if (t.kinds_[parent.value] == JsonTape::Kind::object) {
        if (!path.empty()) path += '.';
        append_key(path, t.str(scratch[open[level].start - 2]));
      } else {
        path += '[' + std::to_string(open[level].start - 1 - parent.start) + ']';
      }
    }
    return path;
  }

  [[noreturn]] void duplicate(uint32_t k) { throw_input(origin, path_to(k) + ": appears twice"); }

  // The key just read into the innermost open object, whose slot another
  // key took (see run()): refused when the object has it already (keys
  // compare unescaped: an escape spells the same key). Returns the slots
  // taken; all of them (every later key comes here, and returns at once)
  // when the object has more than kSlotKeys keys, then sorted as it closes.
  [[gnu::noinline]] uint64_t same_slot(uint64_t taken) {
    constexpr uint64_t all = ~uint64_t(0);
    const size_t start = open.back().start, before = (scratch.size() - start - 1) / 2;
    if (taken == all || before >= kSlotKeys) return all;
    const uint32_t* keys = scratch.data() + start;  // key, value, key, ...
    const uint64_t* data = t.data_.data();
    const std::string_view key(key_at, key_size);
    for (size_t j = 0; j < before; ++j)  // lengths first: most differ there
      if (uint32_t(data[keys[2 * j]] >> 32) == key_size && t.str(keys[2 * j]) == key)
        duplicate(scratch.back());
    return taken;
  }

  // The keys of an object about to close, sorted: refused when one is
  // there twice, naming the key whose second appearance comes first.
  void sort_keys(const uint32_t* keys, size_t members) {
    sorted_keys.clear();
    for (uint32_t i = 0; i < members; ++i) sorted_keys.emplace_back(t.str(keys[2 * i]), i);
    std::sort(sorted_keys.begin(), sorted_keys.end());
    uint32_t second = UINT32_MAX;
    for (size_t i = 1; i < sorted_keys.size(); ++i)
      if (sorted_keys[i].first == sorted_keys[i - 1].first && sorted_keys[i].second < second &&
          (i < 2 || sorted_keys[i - 1].first != sorted_keys[i - 2].first))
        second = sorted_keys[i].second;  // a run's second member is its second appearance
    if (second != UINT32_MAX) duplicate(keys[2 * second]);
  }

  void close(bool object) {
    const uint32_t idx = open.back().value, start = open.back().start;
    open.pop_back();
    size_t n = scratch.size() - start;
    t.data_[idx] = uint64_t(uint32_t(t.children_.size())) | uint64_t(uint32_t(object ? n / 2 : n)) << 32;
    t.children_.insert(t.children_.end(), scratch.begin() + start, scratch.end());
    scratch.resize(start);
  }

  void begin(JsonTape::Kind kind) {
    if (int(open.size()) >= max_depth) fail(p, "nested deeper than " + std::to_string(max_depth) + " levels");
    uint32_t idx = add(kind, 0);
    place(idx);
    open.push_back(Open{idx, uint32_t(scratch.size()), 0});
    ++p;
  }

  bool in_object() const { return t.kinds_[open.back().value] == JsonTape::Kind::object; }

  // Parses one value (scalars completely, containers only their opening:
  // then true).
  bool value() {
    skip_space();
    if (p == end) fail(p, "unexpected end of input");
    switch (*p) {
      case '{': begin(JsonTape::Kind::object); return true;
      case '[': begin(JsonTape::Kind::array); return true;
      case '"': place(string()); break;
      case 't': literal("true", JsonTape::Kind::boolean, true); break;
      case 'f': literal("false", JsonTape::Kind::boolean, false); break;
      case 'n': literal("null", JsonTape::Kind::null, false); break;
      default:
        if (*p == '-' || is_digit(*p)) place(number());
        else fail(p, "unexpected character");
    }
    return false;
  }

  void key() {
    skip_space();
    if (p == end) fail(p, "unexpected end of input");
    if (*p != '"') fail(p, "expected a string key");
    scratch.push_back(string<true>());
    skip_space();
    if (p == end || *p != ':') fail(p, "expected ':' after key");
    ++p;
  }

  void run() {
    p = text.data();
    end = p + text.size();
    value();
    // A key given twice in an object is refused where it appears the second
    // time. Each key takes one of 64 slots (by json_key_hash; an escaped
    // key is in the arena, and never empty); those of the innermost open
    // object are kept here, in a register, and in the stack while a value
    // inside is open. A key whose slot is free is no repeat, and is
    // compared with nothing: of a graph's nodes, every key; of a Kineto
    // kernel event, 19 keys of 21. Measured faster than one loop over an
    // object's keys when it closes.
    uint64_t taken = 0;
    while (!open.empty()) {
      skip_space();
      if (p == end) fail(p, "unexpected end of input");
      bool object = in_object();
      const auto& top = open.back();
      bool empty = scratch.size() == top.start;
      char close_char = object ? '}' : ']';
      if (*p == close_char) {
        ++p;
        if (object && taken == ~uint64_t(0))
          sort_keys(scratch.data() + top.start, (scratch.size() - top.start) / 2);
        close(object);
        if (!open.empty()) taken = open.back().taken;
        continue;
      }
      if (!empty) {
        if (*p != ',') fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
        ++p;
      }
      if (object) {
        key();
        const uint64_t slot = uint64_t(1) << (json_key_hash(key_at, key_size) >> 58);
        if (taken & slot) taken = same_slot(taken);
        taken |= slot;
      }
      if (value()) {  // a container opened: its parent's slots wait in the stack
        open[open.size() - 2].taken = taken;
        taken = 0;
      }
    }
    skip_space();
    if (p != end) fail(p, "unexpected text after the JSON value");
  }
};

JsonTape JsonTape::parse(std::string_view text, const std::string& origin, int max_depth) {
  JsonTape t;
  t.reparse(text, origin, max_depth);
  return t;
}

void JsonTape::reparse(std::string_view text, const std::string& origin, int max_depth) {
  text_ = text;
  kinds_.clear();
  data_.clear();
  children_.clear();
  arena_.clear();
  root_ = 0;
  // Graph documents hold about one value per 9 bytes: one per 6 leaves room,
  // so the tape never grows by copying (reserved pages cost nothing until
  // used). Texts over 1 GiB (whole traces) keep the smaller reservation.
  const size_t per_value = text.size() < (size_t(1) << 30) ? 6 : 10;
  kinds_.reserve(text.size() / per_value + 16);
  data_.reserve(text.size() / per_value + 16);
  children_.reserve(text.size() / per_value + 16);
  arena_.reserve(4096);  // only escaped strings
  TapeBuilder b{*this, text, origin, max_depth, nullptr, nullptr, {}, {}, {}, {}};
  b.run();
}

uint32_t JsonTape::find(uint32_t v, std::string_view k) const {
  const uint32_t count = uint32_t(data_[v] >> 32);
  for (uint32_t i = 0; i < count; ++i)
    if (member_key(v, i) == k) return member_value(v, i);
  return UINT32_MAX;
}

const char* JsonTape::kind_name(Kind k) {
  switch (k) {
    case Kind::null: return "null";
    case Kind::boolean: return "a boolean";
    case Kind::integer:
    case Kind::unsigned_integer: return "an integer";
    case Kind::real: return "a real number";
    case Kind::string: return "a string";
    case Kind::array: return "an array";
    case Kind::object: return "an object";
  }
  return "?";
}

std::string JsonTape::to_json(uint32_t v) const {
  JsonWriter w(0);
  struct Rec {
    const JsonTape& t;
    JsonWriter& w;
    // A real stays a real: 100.0 is written "100.0", not "100", which a
    // reader would take for an integer (a typed field then accepts on the
    // second read what it passed through on the first).
    void real(double d) {
      if (!std::isfinite(d)) {
        w.null();
        return;
      }
      char buf[40];
      char* end = std::to_chars(buf, buf + 36, d).ptr;
      if (std::string_view(buf, size_t(end - buf)).find_first_of(".eE") == std::string_view::npos) {
        *end++ = '.';
        *end++ = '0';
      }
      w.raw(std::string_view(buf, size_t(end - buf)));
    }
    void go(uint32_t v) {
      const auto& x = t.at(v);
      switch (x.kind) {
        case Kind::null: w.null(); break;
        case Kind::boolean: w.value(x.b); break;
        case Kind::integer: w.value(x.i); break;
        case Kind::unsigned_integer: w.value(x.u); break;
        case Kind::real: real(x.d); break;
        case Kind::string: w.value(t.str(v)); break;
        case Kind::array:
          w.begin_array();
          for (uint32_t i = 0; i < x.count; ++i) go(t.element(v, i));
          w.end_array();
          break;
        case Kind::object:
          w.begin_object();
          for (uint32_t i = 0; i < x.count; ++i) {
            w.key(t.member_key(v, i));
            go(t.member_value(v, i));
          }
          w.end_object();
          break;
      }
    }
  } rec{*this, w};
  rec.go(v);  // depth is bounded by max_depth at parse time
  std::string s = w.take();
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace graphscope
