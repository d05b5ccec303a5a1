// A compact, read-only JSON value tree ("tape") filled by our own strict
// parser: flat arrays of values (a kind byte and an 8-byte payload each),
// children stored contiguously, strings where the text has them (escaped
// ones unescaped into one arena). Much faster and smaller than a DOM of maps
// for large documents, and every lookup error can name the JSON path at
// fault.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graphscope {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "JsonTape::at reads halves of its payload in place");

class JsonTape {
 public:
  enum class Kind : uint8_t { null, boolean, integer, unsigned_integer, real, string, array, object };
  /// One value as the tape's two arrays hold it, put together by at().
  struct Value {
    Kind kind = Kind::null;
    uint32_t count = 0;  // array: elements; object: members
    union {
      bool b;
      int64_t i;
      uint64_t u;
      double d;
      struct {
        uint32_t off, len;
      } s;            // string: offset (in the text, or in the arena when escaped) and length
      uint32_t first;  // array/object: index into children (objects: key, value index pairs)
    };
    Value() : u(0) {}
  };

  /// Parses text; throws Error(bad_input) "origin (line L, column C: why)"
  /// on bad JSON or nesting deeper than max_depth, and "origin (path: appears
  /// twice)" for an object with a key twice ("nodes[3].kernel_name: appears
  /// twice"; keys compare unescaped), as every reader refuses it. The tape's
  /// strings point into text, which must outlive it.
  static JsonTape parse(std::string_view text, const std::string& origin, int max_depth = 256);
  /// The same into this tape, keeping its storage: parsing many documents
  /// one after another (events the trace scanner leaves to it) allocates once.
  void reparse(std::string_view text, const std::string& origin, int max_depth = 256);

  uint32_t root() const { return root_; }
  Value at(uint32_t v) const {
    Value x;
    x.kind = Kind(uint8_t(kinds_[v]) & ~kInArena);
    x.u = data_[v];  // little-endian: s.off and first are the low half
    if (x.kind == Kind::array || x.kind == Kind::object) x.count = uint32_t(data_[v] >> 32);
    return x;
  }
  std::string_view str(uint32_t v) const {
    const uint64_t d = data_[v];
    const std::string_view from = uint8_t(kinds_[v]) & kInArena ? std::string_view(arena_) : text_;
    return from.substr(uint32_t(d), uint32_t(d >> 32));
  }
  /// Array element i of array value v.
  uint32_t element(uint32_t v, uint32_t i) const { return children_[uint32_t(data_[v]) + i]; }
  /// Object member i of object value v: key (string view) and value index.
  std::string_view member_key(uint32_t v, uint32_t i) const {
    return str(children_[uint32_t(data_[v]) + 2 * i]);
  }
  uint32_t member_value(uint32_t v, uint32_t i) const { return children_[uint32_t(data_[v]) + 2 * i + 1]; }
  /// The value of key k in object v, or UINT32_MAX when absent (a parsed
  /// object has each key once).
  uint32_t find(uint32_t v, std::string_view k) const;
  /// Serializes value v back to compact JSON text.
  std::string to_json(uint32_t v) const;

  static const char* kind_name(Kind k);

 private:
  friend struct TapeBuilder;
  // A value is a kind and 8 bytes (9 bytes, against 16 for a Value: a 100k-
  // node graph document has about 4 million values, and on the development
  // machine the fresh pages they fill cost more than the parse): a number's
  // bits; a string's offset (low half) and length; a container's first child
  // index (low half) and count. A string without escapes is where the text
  // has it; one with escapes is unescaped into the arena, and its kind byte
  // carries kInArena.
  static constexpr uint8_t kInArena = 0x80;
  std::string_view text_;
  std::vector<Kind> kinds_;
  std::vector<uint64_t> data_;
  std::vector<uint32_t> children_;
  std::string arena_;
  uint32_t root_ = 0;
};

/// A hash of the key of n bytes at b, from its length and its first and
/// last bytes: cheap, for the readers hash every key of a document to find
/// a key given twice, and compare keys in full only when hashes meet. The
/// key is in JSON text, between quotes: for an empty key, b[-1] and b[0]
/// are the quotes.
inline uint64_t json_key_hash(const char* b, uint32_t n) {
  const uint64_t w = uint64_t(n) << 16 | uint64_t(static_cast<unsigned char>(b[0])) << 8 |
                     static_cast<unsigned char>(b[int64_t(n) - 1]);
  return w * 0x9E3779B97F4A7C15ull;  // the high bits depend on every bit of w
}

}  // namespace graphscope
