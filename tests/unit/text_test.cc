// text.h: the formatting and escaping every report shares; json_read.h: the
// typed reading every JSON document reader shares.
#include <doctest/doctest.h>

#include <string>

#include "inspect/error.h"
#include "inspect/json_read.h"
#include "inspect/json_tape.h"
#include "inspect/text.h"

using namespace graphscope;

TEST_CASE("numbers are written short, counts with their noun") {
  CHECK(fmt("%.2f", 1.005) == "1.00");
  CHECK(num(5) == "5");
  CHECK(num(0.25) == "0.25");
  CHECK(num2(6.449) == "6.45");
  CHECK(num2(5.0) == "5");
  CHECK(num2(-0.001) == "0");
  CHECK(plural(1, "node", "nodes") == "1 node");
  CHECK(plural(0, "node", "nodes") == "0 nodes");
  CHECK(display_name("-") == "standard input");
  CHECK(display_name("a.json") == "a.json");
}

TEST_CASE("names from hostile input stay on one line") {
  CHECK(quoted("a\nb") == "\"a\\nb\"");
  CHECK(quoted("abcdef", 3) == "\"abc...\"");
  CHECK(quoted("\xC3\xA9\xC3\xA9", 3) == "\"\xC3\xA9...\"");  // whole UTF-8 characters only
  CHECK(printable("a\tb\x7f") == "a?b?");
}

TEST_CASE("xml_escape escapes markup and replaces what XML cannot hold") {
  CHECK(xml_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
  CHECK(xml_escape("l1\nl2\tx\r") == "l1&#10;l2&#9;x&#13;");
  CHECK(xml_escape(std::string("a\0b\x01", 4)) ==
        "a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD");
  CHECK(xml_escape("caf\xC3\xA9 \xE2\x82\xAC") == "caf\xC3\xA9 \xE2\x82\xAC");  // valid UTF-8 kept
  CHECK(xml_escape("\xFF\xC3") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // invalid bytes replaced
  CHECK(xml_escape("\xED\xA0\x80") ==
        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate is not a character
  CHECK(xml_escape("\xEF\xBF\xBE") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // nor U+FFFE
}


namespace {
std::string read_error(const char* json, void (*f)(const JsonRead&, uint32_t)) {
  JsonTape t = JsonTape::parse(json, "x.json");
  JsonRead r(t, "x.json");
  try {
    f(r, t.root());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("typed reading names the input and the JSON path at fault") {
  auto count = [](const JsonRead& r, uint32_t root) {
    r.count(r.required(root, "n", ""), "n", "a count of nodes");
  };
  CHECK(read_error(R"({"n": -1})", count) == "x.json (n: is negative (-1), expected a count of nodes)");
  CHECK(read_error(R"({"n": 2.5})", count) == "x.json (n: is 2.5, expected a count of nodes)");
  CHECK(read_error(R"({})", count) == "x.json (n: missing)");
  auto nested = [](const JsonRead& r, uint32_t root) {
    JsonPath nodes("nodes");
    uint32_t n = 0, a = r.array(r.required(root, "nodes", ""), nodes, "an array", &n);
    JsonPath p0(nodes, uint32_t(0));
    r.u32(r.required(r.tape().element(a, 0), "id", p0), JsonPath(p0, "id"));
  };
  CHECK(read_error(R"({"nodes": [{"id": 4294967296}]})", nested) ==
        "x.json (nodes[0].id: 4294967296 is larger than 32 bits)");
  CHECK(read_error(R"({"nodes": [{"id": "7"}]})", nested) ==
        "x.json (nodes[0].id: is a string, expected an integer)");
  CHECK(read_error(R"({"nodes": [{}]})", nested) == "x.json (nodes[0].id: missing)");
  auto schema = [](const JsonRead& r, uint32_t root) {
    r.schema(root, "graphscope.profile/1", "a profile report", "{\"schema\": \"graphscope.profile/1\"");
  };
  CHECK(read_error(R"({"schema": "graphscope.profile/1.3"})", schema) == "");
  CHECK(read_error(R"({"schema": "graphscope.profile/2"})", schema) ==
        "x.json (schema: unknown major version \"2\" (this graphscope reads graphscope.profile/1))");
  CHECK(read_error(R"({"schema": "graphscope.graph/1"})", schema) ==
        "x.json (schema: \"graphscope.graph/1\" is not a profile report (expected graphscope.profile/1))");
}
