// text.h: the formatting and escaping every report shares; json_read.h: the
// typed reading every JSON document reader shares.
#include <doctest/doctest.h>

#include <string>

#include "inspect/core/error.h"
#include "inspect/core/json_read.h"
#include "inspect/core/json_tape.h"
#include "inspect/core/text.h"

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
}

TEST_CASE("printable shows every control character of a name escaped, on one line") {
  CHECK(printable("plain kernel<int>(float*)") == "plain kernel<int>(float*)");
  CHECK(printable("a\tb\x7f") == "a\\tb\\x7f");
  CHECK(printable("\x1b]0;title\x07") == "\\x1b]0;title\\x07");  // a window-title sequence, shown not run
  CHECK(printable("l1\nl2\r") == "l1\\nl2\\r");                  // a newline in a name starts no line
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");         // a NUL does not cut the name short
  CHECK(printable("\xC2\x85\xC2\x9B\xC2\xA0") == "\\u0085\\u009b\xC2\xA0");  // C1 controls; NBSP kept
  CHECK(printable("\x9B\xFF\xC3") == "\\x9b\\xff\\xc3");                     // bytes of invalid UTF-8
  CHECK(printable("\xED\xA0\x80") == "\\xed\\xa0\\x80");                     // a surrogate is not UTF-8
  CHECK(printable("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBE") ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBE");  // printable characters kept
  CHECK(printable("C:\\dir\\x1b") == "C:\\dir\\x1b");               // backslashes are kept as they are...
  const std::string hostile("\x1b[2J\n\0\xC2\x9B\xFF", 9);
  CHECK(printable(printable(hostile)) == printable(hostile));  // ...so escaping twice changes nothing
}

TEST_CASE("terminal_safe keeps a report's lines and tabs and escapes the rest") {
  CHECK(terminal_safe("a\tb\nc\n") == "a\tb\nc\n");
  CHECK(terminal_safe("x\x1b[31m\r\x07y\n") == "x\\x1b[31m\\r\\x07y\n");
  CHECK(terminal_safe(std::string("n\0\xC2\x85\xFE", 5)) == "n\\x00\\u0085\\xfe");
}

TEST_CASE("padded pads to a width in bytes, with whatever the text holds") {
  CHECK(padded("ab", 4) == "ab  ");
  CHECK(padded("abcdef", 4) == "abcdef");
  CHECK(padded(std::string("a\0b", 3), 4) == std::string("a\0b ", 4));
}

TEST_CASE("shortened cuts at a whole UTF-8 character") {
  CHECK(shortened("abcdef", 6) == "abcdef");
  CHECK(shortened("abcdefg", 6) == "abc...");
  CHECK(shortened("ab\xE2\x82\xAC"
                  "defg",
                  6) == "ab...");  // not in the middle of the euro sign
  CHECK(shortened("abc\xE2\x82\xAC"
                  "defg",
                  6) == "abc...");
}

TEST_CASE("utf8_char decodes well-formed UTF-8 only, and xml_char is XML 1.0's Char") {
  CHECK(utf8_char("a", 0).cp == 'a');
  CHECK(utf8_char("a", 0).len == 1);
  CHECK(utf8_char("\xC3\xA9", 0).cp == 0xE9);
  CHECK(utf8_char("\xEF\xBF\xBF", 0).cp == 0xFFFF);
  CHECK(utf8_char("\xF4\x8F\xBF\xBF", 0).cp == 0x10FFFF);
  CHECK(utf8_char("\xF4\x8F\xBF\xBF", 0).len == 4);
  for (const char* bad :
       {"\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\xFF"})
    CHECK(utf8_char(bad, 0).len == 0);
  CHECK(xml_char('\t'));
  CHECK(xml_char('\n'));
  CHECK(xml_char('\r'));
  CHECK(!xml_char(0));
  CHECK(!xml_char(0x1B));
  CHECK(xml_char(0x7F));  // DEL and the C1 controls are XML 1.0 characters
  CHECK(xml_char(0x85));
  CHECK(xml_char(0xD7FF));
  CHECK(!xml_char(0xD800));
  CHECK(xml_char(0xFFFD));
  CHECK(!xml_char(0xFFFE));
  CHECK(!xml_char(0xFFFF));
  CHECK(xml_char(0x10FFFF));
  CHECK(!xml_char(0x110000));
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
  CHECK(xml_escape("a\xEF\xBF\xBE\xEF\xBF\xBF"
                   "b") ==
        "a\xEF\xBF\xBD\xEF\xBF\xBD"
        "b");  // nor U+FFFE, U+FFFF
  CHECK(xml_escape("\x7F\xC2\x85\xEF\xBF\xBD\xF4\x8F\xBF\xBF") ==
        "\x7F\xC2\x85\xEF\xBF\xBD\xF4\x8F\xBF\xBF");  // DEL, C1, U+FFFD, U+10FFFF are XML characters
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
