#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <random>
#include <set>

#include "graph_builder.h"
#include "inspect/core/error.h"
#include "inspect/core/json_tape.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/json_writer.h"

using namespace graphscope;

namespace {

// Whether an object of the (valid) text has a key twice, as nlohmann
// unescapes keys.
bool has_key_twice(const std::string& text) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<std::set<std::string>> open;
  bool twice = false;
  const nlohmann::json parsed = nlohmann::json::parse(text, [&](int, Event e, nlohmann::json& v) {
    if (e == Event::object_start) open.emplace_back();
    else if (e == Event::object_end) open.pop_back();
    else if (e == Event::key && !open.back().insert(v.get<std::string>()).second) twice = true;
    return true;
  });
  return twice && !parsed.is_discarded();
}

// What nlohmann (strict) thinks of the text: accepted, and as what value.
// nlohmann keeps the last of a key given twice; graphscope's rule refuses
// it, so the reference does too.
bool reference_accepts(const std::string& text, nlohmann::json* out) {
  try {
    *out = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  return !has_key_twice(text);
}

// The message of the tape's refusal of text, or "accepted".
std::string refusal(const std::string& text, const char* origin = "g.json") {
  try {
    JsonTape::parse(text, origin);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  return "accepted";
}

// An object of n keys "k0", "k1", ..., then the extra members given.
std::string many_keys(int n, const std::string& extra = "") {
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
  return s + extra + "}";
}

bool tape_accepts(const std::string& text, nlohmann::json* out) {
  try {
    JsonTape t = JsonTape::parse(text, "t");
    *out = nlohmann::json::parse(t.to_json(t.root()));
    return true;
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return false;
  }
}

void agree(const std::string& text) {
  nlohmann::json a, b;
  bool ra = reference_accepts(text, &a);
  bool rb = tape_accepts(text, &b);
  CAPTURE(text);
  REQUIRE(ra == rb);
  if (ra) CHECK(a == b);
}

}  // namespace

TEST_CASE("the tape parser agrees with nlohmann on valid and invalid JSON") {
  for (const char* s : {
           "{}", "[]", "0", "-0", "1.5e3", "-12", "18446744073709551615", "18446744073709551616",
           "-9223372036854775808", "-9223372036854775809", "1e400", "\"\\u00e9\\ud83d\\ude00\"", "\"\xC3\xA9\"",
           "[1,2,[3,{\"a\":null,\"b\":true,\"c\":false}]]", "  {\"k\" : \"v\" }  ", "{\"a\":1,\"a\":2}",
           "", " ", "{", "}", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "+1", "1e", "tru", "nul", "[1 2]",
           "{\"a\" 1}", "{1:2}", "\"\\x\"", "\"\\ud800\"", "\"\\udc00x\"", "\"a\nb\"", "\"\xFF\"",
           "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "[1] 2", "[\"unterminated", "nan", "Infinity",
       })
    agree(s);
}

TEST_CASE("the tape parser agrees with nlohmann on mutated graph documents") {
  std::string doc = write_graph_json(graphscope::test::fork_join());
  std::mt19937 rng(12345);
  const std::string alphabet = "{}[],:\"\\0123456789-+.eEtrufalsn \n\x01\xC3\xA9\xFF";
  for (int i = 0; i < 3000; ++i) {
    std::string m = doc;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !m.empty(); ++e) {
      size_t at = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: m.erase(at, 1 + rng() % 8); break;
        case 2: m.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    agree(m);
  }
}

TEST_CASE("strings agree with nlohmann wherever a special byte falls in the eight-byte scan") {
  // The scan takes eight bytes at a time: a quote, an escape, a control
  // character or a UTF-8 byte (valid or not) is found at every offset.
  for (const char* special : {"\"", "\\n", "\\u00e9", "\x01", "\x1f", "\x7f", "\xC3\xA9", "\xFF", "\xE2\x82"}) {
    for (size_t len = 0; len < 20; ++len) {
      for (size_t at = 0; at <= len; ++at) {
        std::string body(len, 'a');
        body.insert(at, special);
        agree("\"" + body + "\"");
        agree("[\"" + body + "\", 1]");
      }
    }
  }
}

TEST_CASE("integers keep their kind and value at the edges of 64 bits") {
  using Kind = JsonTape::Kind;
  struct Case {
    const char* text;
    Kind kind;
    const char* as_json;
  };
  for (const Case& c : {
           Case{"0", Kind::unsigned_integer, "0"},
           Case{"-0", Kind::integer, "0"},
           Case{"9999999999999999999", Kind::unsigned_integer, "9999999999999999999"},
           Case{"18446744073709551615", Kind::unsigned_integer, "18446744073709551615"},
           Case{"18446744073709551616", Kind::real, "18446744073709551616.0"},
           Case{"-9223372036854775807", Kind::integer, "-9223372036854775807"},
           Case{"-9223372036854775808", Kind::integer, "-9223372036854775808"},
           Case{"-9223372036854775809", Kind::real, "-9223372036854775808.0"},
           Case{"-9999999999999999999", Kind::real, "-1e+19"},
           Case{"12e0", Kind::real, "12.0"},
           Case{"-7.0", Kind::real, "-7.0"},
       }) {
    CAPTURE(c.text);
    JsonTape t = JsonTape::parse(c.text, "n");
    CHECK(t.at(t.root()).kind == c.kind);
    CHECK(t.to_json(t.root()) == c.as_json);
  }
}

TEST_CASE("errors give line and column") {
  try {
    JsonTape::parse("{\n  \"a\": [1,\n  2,, 3]}", "f.json");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "f.json (line 3, column 5: unexpected character)");
  }
}

TEST_CASE("nesting past the limit is refused") {
  std::string deep(300, '[');
  deep += std::string(300, ']');
  CHECK_THROWS_AS(JsonTape::parse(deep, "d.json"), Error);
  CHECK_NOTHROW(JsonTape::parse(deep, "d.json", 400));
}

TEST_CASE("object lookup finds members and reports absence") {
  JsonTape t = JsonTape::parse(R"({"a": 1, "b": [true, "x"]})", "o");
  uint32_t b = t.find(t.root(), "b");
  REQUIRE(b != UINT32_MAX);
  CHECK(t.at(b).count == 2);
  CHECK(t.str(t.element(b, 1)) == "x");
  CHECK(t.find(t.root(), "c") == UINT32_MAX);
}

TEST_CASE("strings without escapes stay in the text, escaped ones are unescaped apart") {
  const std::string text = R"({"pl\u0061in": "a\tb", "k": ["x", "y\"z", "", "w"], "\\": "end"})";
  JsonTape t = JsonTape::parse(text, "s");
  const uint32_t root = t.root();
  REQUIRE(t.at(root).count == 3);
  CHECK(t.member_key(root, 0) == "plain");
  CHECK(t.str(t.member_value(root, 0)) == "a\tb");
  CHECK(t.at(t.member_value(root, 0)).kind == JsonTape::Kind::string);
  CHECK(t.member_key(root, 2) == "\\");
  const uint32_t k = t.find(root, "k");
  REQUIRE(k != UINT32_MAX);
  std::vector<std::string> got;
  for (uint32_t i = 0; i < t.at(k).count; ++i) {
    CHECK(t.at(t.element(k, i)).kind == JsonTape::Kind::string);
    got.emplace_back(t.str(t.element(k, i)));
  }
  CHECK(got == std::vector<std::string>{"x", "y\"z", "", "w"});
  // A plain string is a view of the text itself.
  const std::string_view x = t.str(t.element(k, 0)), w = t.str(t.element(k, 3));
  CHECK(x.data() == text.data() + text.find("\"x\"") + 1);
  CHECK(w.data() == text.data() + text.find("\"w\"") + 1);
  CHECK(t.str(t.find(root, "\\")) == "end");
  // The same tape again on another text: nothing of the first is left.
  const std::string other = R"(["\n", "b"])";
  t.reparse(other, "o");
  CHECK(t.str(t.element(t.root(), 0)) == "\n");
  CHECK(t.str(t.element(t.root(), 1)) == "b");
  CHECK(t.to_json(t.root()) == R"(["\n", "b"])");
}

TEST_CASE("a key twice at the root is refused, naming the key") {
  CHECK(refusal(R"({"a": 1, "b": 2, "a": 3})") == "g.json (a: appears twice)");
  CHECK(refusal(R"({"nodes": [], "nodes": []})") == "g.json (nodes: appears twice)");
  // The same value twice is still a key twice.
  CHECK(refusal(R"({"a": 1, "a": 1})") == "g.json (a: appears twice)");
}

TEST_CASE("a key twice in an object inside an array is refused with its JSON path") {
  CHECK(refusal(R"({"schema": "s", "nodes": [{"index": 0}, {"index": 1}, {"index": 2}, )"
                R"({"index": 3, "kernel_name": "a", "node_type": "kernel", "kernel_name": "b"}]})") ==
        "g.json (nodes[3].kernel_name: appears twice)");
  CHECK(refusal(R"({"nodes": [{"kernel": {"grid": [1, 1, 1], "block": [32, 1, 1], "grid": [2, 1, 1]}}]})") ==
        "g.json (nodes[0].kernel.grid: appears twice)");
  CHECK(refusal(R"([[], [{"a": 1}, {"x": [null, {"y": true, "y": false}]}]])") ==
        "g.json ([1][1].x[1].y: appears twice)");
  // The first repeat in the text is named.
  CHECK(refusal(R"({"a": 1, "a": {"b": 1, "b": 2}})") == "g.json (a: appears twice)");
  CHECK(refusal(R"({"a": {"b": 1, "b": 2}, "a": 1})") == "g.json (a.b: appears twice)");
  CHECK(refusal(R"({"a": {"b": 1}, "c": 2, "a": 1})") == "g.json (a: appears twice)");
  // A key in another object is no repeat.
  CHECK(refusal(R"({"a": {"a": {"a": 1}}, "b": [{"a": 1}, {"a": 2}]})") == "accepted");
}

TEST_CASE("a key twice in an object too large to compare pairwise is refused") {
  for (int n : {15, 16, 17, 31, 32, 33, 40, 1000}) {
    CAPTURE(n);
    CHECK(refusal(many_keys(n)) == "accepted");
    CHECK(refusal(many_keys(n, R"(, "k7": 0)")) == "g.json (k7: appears twice)");
    CHECK(refusal(R"({"outer": [)" + many_keys(n, R"(, "k0": 0)") + "]}") ==
          "g.json (outer[0].k0: appears twice)");
    // Of several keys given twice, the one whose second appearance comes first.
    CHECK(refusal(many_keys(n, R"(, "k9": 0, "k3": 0, "k9": 1)")) == "g.json (k9: appears twice)");
  }
}

TEST_CASE("a key spelled with an escape is the key it spells") {
  CHECK(refusal(R"({"ab": 1, "a\u0062": 2})") == "g.json (ab: appears twice)");
  CHECK(refusal(R"({"a\u0062": 1, "ab": 2})") == "g.json (ab: appears twice)");
  CHECK(refusal(R"({"\u00e9": 1, "é": 2})") == "g.json (é: appears twice)");
  for (int n : {30, 100})
    CHECK(refusal(many_keys(n, R"(, "k\u0031\u0032": 0)")) == "g.json (k12: appears twice)");
  CHECK(refusal(R"({"k\u0031\u0032": 0, )" + many_keys(100).substr(1)) == "g.json (k12: appears twice)");
  // An escaped string anywhere in an object has its keys sorted: the same rule.
  CHECK(refusal(R"({"a": "x\ny", "b": {"c": "\u00e9"}, "a": 2})") == "g.json (a: appears twice)");
  CHECK(refusal(R"({"a": "x\ny", "b": {"c": "\u00e9"}, "": 2})") == "accepted");
  // Escapes that spell other keys are other keys.
  CHECK(refusal(R"({"ab": 1, "a\u0063": 2, "a\\b": 3, "a\/b": 4, "a/c": 5})") == "accepted");
}

TEST_CASE("keys that are prefixes of each other are different keys") {
  CHECK(refusal(R"({"": 0, "a": 1, "ab": 2, "abc": 3, "abcd": 4, "b": 5, "ba": 6})") == "accepted");
  CHECK(refusal(many_keys(100, R"(, "k": 0, "k1000": 0, "k99x": 0, "": 0)")) == "accepted");
  CHECK(refusal(R"({"a": 1, "ab": 2, "a": 3})") == "g.json (a: appears twice)");
}

TEST_CASE("a key twice is named on one line whatever its bytes") {
  // Keys that are not plain text, and long ones, are written as JSON strings.
  CHECK(refusal(R"({"": 1, "": 2})") == R"(g.json ("": appears twice))");
  CHECK(refusal(R"({"x": {"a\nb": 1, "a\nb": 2}})") == R"(g.json (x."a\nb": appears twice))");
  CHECK(refusal(R"({"say \"hi\"": {"k": 1, "k": 2}})") == R"(g.json ("say \"hi\"".k: appears twice))");
  const std::string long_key(100, 'z');
  const std::string message = refusal("{\"" + long_key + "\": 1, \"" + long_key + "\": 2}");
  CHECK(message == "g.json (\"" + std::string(64, 'z') + "...\": appears twice)");
}

TEST_CASE("the graph readers refuse a key twice with the document's path") {
  std::string doc = write_graph_json(graphscope::test::fork_join());
  const size_t node = doc.find("\"index\": 3,");
  REQUIRE(node != std::string::npos);
  doc.insert(node, "\"kernel_name\": \"x\", ");
  try {
    read_graph_json(doc, "g.json");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(std::string(e.what()) == "g.json (nodes[3].kernel_name: appears twice)");
  }
}
