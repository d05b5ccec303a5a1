// Typed reading of a JsonTape into graphscope's structs: every reader of a
// JSON document (graphs, profile reports, rules, check results, diffs, attach
// indexes) goes through it, so every error is one line that names the input
// and the JSON path at fault ("p.json (nodes[3].delay_us: is a string,
// expected a number)").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "json_tape.h"

namespace graphscope {

/// The value index JsonTape::find returns for an absent key.
inline constexpr uint32_t kJsonAbsent = UINT32_MAX;

/// A JSON path built on the stack and turned into text only for a message
/// ("nodes[3].kernel.grid[1]"), so reading allocates nothing for it. A path
/// refers to its parent and key: it lives no longer than they do.
struct JsonPath {
  const JsonPath* parent = nullptr;
  std::string_view key;
  int64_t index = -1;
  JsonPath(const char* k) : key(k) {}
  JsonPath(std::string_view k) : key(k) {}
  JsonPath(const std::string& k) : key(k) {}
  JsonPath(const JsonPath& p, std::string_view k) : parent(&p), key(k) {}
  JsonPath(const JsonPath& p, const char* k) : parent(&p), key(k) {}
  JsonPath(const JsonPath& p, uint32_t i) : parent(&p), index(i) {}
  std::string str() const;
};

/// Typed access to a tape. Every method checks the value's kind and range
/// and throws Error(bad_input) "origin (path: why)" when it is wrong.
class JsonRead {
 public:
  using Kind = JsonTape::Kind;
  JsonRead(const JsonTape& t, std::string origin) : t_(t), origin_(std::move(origin)) {}

  const JsonTape& tape() const { return t_; }
  const std::string& origin() const { return origin_; }
  Kind kind(uint32_t v) const { return t_.at(v).kind; }
  bool is_null(uint32_t v) const { return t_.at(v).kind == Kind::null; }

  [[noreturn]] void fail(const JsonPath& path, const std::string& why) const;
  /// "path: is <kind>, expected <want>".
  [[noreturn]] void wrong(uint32_t v, const JsonPath& path, const char* want) const;
  /// Throws wrong() unless v is of kind k.
  void expect(uint32_t v, Kind k, const JsonPath& path, const char* want) const {
    if (t_.at(v).kind != k) wrong(v, path, want);
  }

  /// A string of at most max bytes (no name in a document comes near 1 MiB;
  /// a longer one is hostile).
  std::string_view string(uint32_t v, const JsonPath& path, size_t max = size_t(1) << 20) const;
  /// A non-negative integer ("is negative (-1)", "is not an integer or too
  /// large for 64 bits").
  uint64_t u64(uint32_t v, const JsonPath& path) const;
  uint32_t u32(uint32_t v, const JsonPath& path) const;
  /// u64/u32, or nullopt for null.
  std::optional<uint64_t> opt_u64(uint32_t v, const JsonPath& path) const;
  std::optional<uint32_t> opt_u32(uint32_t v, const JsonPath& path) const;
  /// A non-negative integer that counts something: errors say what was
  /// expected ("is negative (-1), expected a count of nodes", "is 2.5,
  /// expected ...").
  uint64_t count(uint32_t v, const JsonPath& path, const char* want) const;
  /// Any finite number (the tape refuses infinities).
  double number(uint32_t v, const JsonPath& path) const;
  /// A number, or nullopt for null.
  std::optional<double> opt_number(uint32_t v, const JsonPath& path) const;
  double non_negative(uint32_t v, const JsonPath& path) const;
  bool boolean(uint32_t v, const JsonPath& path) const;
  /// v itself, after checking it is an object (want: what was expected).
  uint32_t object(uint32_t v, const JsonPath& path, const char* want = "an object") const;
  /// v itself, after checking it is an array; its element count in *count.
  uint32_t array(uint32_t v, const JsonPath& path, const char* want = "an array",
                 uint32_t* count = nullptr) const;
  /// The value of key in object obj; fails "base.key: missing" when absent.
  uint32_t required(uint32_t obj, std::string_view key, const JsonPath& base) const;
  /// The value of key in object obj, or kJsonAbsent.
  uint32_t find(uint32_t obj, std::string_view key) const { return t_.find(obj, key); }
  /// Checks the document's "schema": "<expected prefix>/<major>[.minor]" with
  /// major 1. what names the document kind ("a profile report"), example how
  /// it starts (for the message when the key is missing).
  void schema(uint32_t root, std::string_view expected, const char* what, const char* example) const;
  /// The root of a graphscope document: an object ("the document is an
  /// array, not <what>") whose schema is `expected` (see schema()).
  uint32_t document(std::string_view expected, const char* what) const;

 private:
  const JsonTape& t_;
  std::string origin_;  // a copy: readers are made from literals too
};

}  // namespace graphscope
