#include "json_read.h"

#include <charconv>
#include <limits>

#include "error.h"
#include "text.h"

namespace graphscope {

std::string JsonPath::str() const {
  std::string s = parent ? parent->str() : std::string();
  if (index >= 0) return s + "[" + std::to_string(index) + "]";
  if (!s.empty() && !key.empty()) s += ".";
  return s.append(key);
}

void JsonRead::fail(const JsonPath& path, const std::string& why) const {
  std::string where = path.str();
  throw_input(origin_, where.empty() ? why : where + ": " + why);
}

void JsonRead::wrong(uint32_t v, const JsonPath& path, const char* want) const {
  fail(path, std::string("is ") + JsonTape::kind_name(t_.at(v).kind) + ", expected " + want);
}

std::string_view JsonRead::string(uint32_t v, const JsonPath& path, size_t max) const {
  if (kind(v) != Kind::string) wrong(v, path, "a string");
  std::string_view s = t_.str(v);
  if (s.size() > max) {
    std::string limit = max == size_t(1) << 20 ? "1 MiB" : std::to_string(max);
    fail(path, "string of " + std::to_string(s.size()) + " bytes (limit " + limit + ")");
  }
  return s;
}

uint64_t JsonRead::u64(uint32_t v, const JsonPath& path) const {
  const auto& x = t_.at(v);
  if (x.kind == Kind::unsigned_integer) return x.u;
  if (x.kind == Kind::integer) {
    if (x.i < 0) fail(path, "is negative (" + std::to_string(x.i) + ")");
    return uint64_t(x.i);
  }
  if (x.kind == Kind::real) fail(path, "is not an integer or too large for 64 bits");
  wrong(v, path, "an integer");
}

uint32_t JsonRead::u32(uint32_t v, const JsonPath& path) const {
  uint64_t x = u64(v, path);
  if (x > std::numeric_limits<uint32_t>::max()) fail(path, std::to_string(x) + " is larger than 32 bits");
  return uint32_t(x);
}

std::optional<uint64_t> JsonRead::opt_u64(uint32_t v, const JsonPath& path) const {
  if (is_null(v)) return std::nullopt;
  return u64(v, path);
}

std::optional<uint32_t> JsonRead::opt_u32(uint32_t v, const JsonPath& path) const {
  if (is_null(v)) return std::nullopt;
  return u32(v, path);
}

uint64_t JsonRead::count(uint32_t v, const JsonPath& path, const char* want) const {
  const auto& x = t_.at(v);
  if (x.kind == Kind::unsigned_integer) return x.u;
  if (x.kind == Kind::integer) fail(path, "is negative (" + std::to_string(x.i) + "), expected " + want);
  if (x.kind == Kind::real) fail(path, "is " + num(x.d) + ", expected " + want);
  wrong(v, path, want);
}

double JsonRead::number(uint32_t v, const JsonPath& path) const {
  const auto& x = t_.at(v);
  if (x.kind == Kind::unsigned_integer) return double(x.u);
  if (x.kind == Kind::integer) return double(x.i);
  // The tape refuses infinities; a negative zero (-0.0, or -1e-400) is zero,
  // which the writers write as 0, so that documents round-trip.
  if (x.kind == Kind::real) return x.d == 0 ? 0.0 : x.d;
  wrong(v, path, "a number");
}

std::optional<double> JsonRead::opt_number(uint32_t v, const JsonPath& path) const {
  if (is_null(v)) return std::nullopt;
  return number(v, path);
}

double JsonRead::non_negative(uint32_t v, const JsonPath& path) const {
  double d = number(v, path);
  if (d < 0) fail(path, "is negative (" + num(d) + ")");
  return d;
}

bool JsonRead::boolean(uint32_t v, const JsonPath& path) const {
  if (kind(v) != Kind::boolean) wrong(v, path, "true or false");
  return t_.at(v).b;
}

uint32_t JsonRead::object(uint32_t v, const JsonPath& path, const char* want) const {
  if (kind(v) != Kind::object) wrong(v, path, want);
  return v;
}

uint32_t JsonRead::array(uint32_t v, const JsonPath& path, const char* want, uint32_t* count) const {
  if (kind(v) != Kind::array) wrong(v, path, want);
  if (count) *count = t_.at(v).count;
  return v;
}

uint32_t JsonRead::required(uint32_t obj, std::string_view key, const JsonPath& base) const {
  uint32_t v = t_.find(obj, key);
  if (v == kJsonAbsent) fail(JsonPath(base, key), "missing");
  return v;
}

void JsonRead::schema(uint32_t root, std::string_view expected, const char* what, const char* example) const {
  uint32_t v = t_.find(root, "schema");
  if (v == kJsonAbsent) fail("schema", std::string("missing (") + what + " starts " + example + ")");
  std::string_view s = string(v, "schema");
  std::string_view prefix = expected.substr(0, expected.rfind('/') + 1);
  if (s.substr(0, prefix.size()) != prefix)
    fail("schema", quoted(s, 64) + " is not " + what + " (expected " + std::string(expected) + ")");
  std::string_view major = s.substr(prefix.size());
  major = major.substr(0, major.find('.'));
  unsigned m = 0;
  auto r = std::from_chars(major.data(), major.data() + major.size(), m);
  if (major.empty() || r.ec != std::errc() || r.ptr != major.data() + major.size())
    fail("schema", "bad version in " + quoted(s, 64));
  if (m != 1)
    fail("schema", "unknown major version " + quoted(major, 64) + " (this graphscope reads " +
                       std::string(expected) + ")");
}

uint32_t JsonRead::document(std::string_view expected, const char* what) const {
  const uint32_t root = t_.root();
  if (kind(root) != Kind::object)
    fail("", std::string("the document is ") + JsonTape::kind_name(kind(root)) + ", not " + what);
  const std::string example = "{\"schema\": \"" + std::string(expected) + "\", ...}";
  schema(root, expected, what, example.c_str());
  return root;
}

}  // namespace graphscope
