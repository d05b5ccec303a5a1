#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <random>

#include "graph_builder.h"
#include "inspect/error.h"
#include "inspect/json_tape.h"
#include "inspect/graph_json.h"
#include "inspect/json_writer.h"

using namespace graphscope;

namespace {

// What nlohmann (strict) thinks of the text: accepted, and as what value.
bool reference_accepts(const std::string& text, nlohmann::json* out) {
  try {
    *out = nlohmann::json::parse(text);
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
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
