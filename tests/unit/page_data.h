// The data a report page carries: the JSON inside its
// <script type="application/json" id="gs-data">, for the tests of the
// pages (html_report_test, run_page_test).
#pragma once

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace graphscope::test {

inline nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"gs-data\">";
  const size_t a = html.find(open);
  REQUIRE(a != std::string::npos);
  const size_t b = html.find("</script>", a);
  REQUIRE(b != std::string::npos);
  return nlohmann::json::parse(html.substr(a + open.size(), b - a - open.size()));
}

}  // namespace graphscope::test
