// A compact, read-only JSON value tree ("tape") filled by our own strict
// parser: one flat array of values, children stored contiguously, strings in
// one arena. Much faster and smaller than a DOM of maps for large documents,
// and every lookup error can name the JSON path at fault.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graphscope {

class JsonTape {
 public:
  enum class Kind : uint8_t { null, boolean, integer, unsigned_integer, real, string, array, object };
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
      } s;            // string: arena slice
      uint32_t first;  // array/object: index into children (objects: key, value index pairs)
    };
    Value() : u(0) {}
  };

  /// Parses text; throws Error(bad_input) "origin (line L: why)" on bad JSON
  /// or nesting deeper than max_depth.
  static JsonTape parse(std::string_view text, const std::string& origin, int max_depth = 256);
  /// The same into this tape, keeping its storage: parsing many documents
  /// one after another (events the trace scanner leaves to it) allocates once.
  void reparse(std::string_view text, const std::string& origin, int max_depth = 256);

  uint32_t root() const { return root_; }
  const Value& at(uint32_t v) const { return values_[v]; }
  std::string_view str(uint32_t v) const {
    const auto& x = values_[v];
    return std::string_view(arena_).substr(x.s.off, x.s.len);
  }
  /// Array element i of array value v.
  uint32_t element(uint32_t v, uint32_t i) const { return children_[values_[v].first + i]; }
  /// Object member i of object value v: key (string view) and value index.
  std::string_view member_key(uint32_t v, uint32_t i) const {
    return str(children_[values_[v].first + 2 * i]);
  }
  uint32_t member_value(uint32_t v, uint32_t i) const { return children_[values_[v].first + 2 * i + 1]; }
  /// The value of key k in object v, or UINT32_MAX when absent.
  uint32_t find(uint32_t v, std::string_view k) const;
  /// Serializes value v back to compact JSON text.
  std::string to_json(uint32_t v) const;

  static const char* kind_name(Kind k);

 private:
  friend struct TapeBuilder;
  std::vector<Value> values_;
  std::vector<uint32_t> children_;
  std::string arena_;
  uint32_t root_ = 0;
};

}  // namespace graphscope
