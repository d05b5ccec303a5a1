#include "check_report.h"

#include "../core/text.h"

namespace graphscope {

std::string format_check(const CheckResult& c) {
  std::string out;
  // Rule names come from someone's rules file and messages name kernels:
  // both escaped for the terminal, and whole.
  for (const auto& r : c.results)
    out += std::string(r.passed ? "PASS" : "FAIL") + "  " + padded(printable(r.rule), 29) + " " +
           printable(r.message) + "\n";
  std::string inputs = printable(c.graph);
  if (!c.profile.empty()) inputs += ", profile " + printable(c.profile);
  if (!c.baseline.empty()) inputs += ", baseline " + printable(c.baseline);
  if (c.passed())
    out += "check passed: " + plural(c.results.size(), "rule", "rules") + " (" + inputs + ")\n";
  else
    out += "check failed: " + std::to_string(c.failed) + " of " + plural(c.results.size(), "rule", "rules") +
           " failed (" + inputs + ")\n";
  return out;
}

std::string write_check_junit(const CheckResult& c) {
  std::string tests = std::to_string(c.results.size()), failures = std::to_string(c.failed);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"graphscope check\" tests=\"" + tests + "\" failures=\"" + failures +
         "\" errors=\"0\">\n";
  out += "  <testsuite name=\"" + xml_escape("graphscope check " + c.graph) + "\" tests=\"" + tests +
         "\" failures=\"" + failures + "\" errors=\"0\" skipped=\"0\" time=\"0\">\n";
  out += "    <properties>\n";
  auto property = [&](const char* name, const std::string& value) {
    if (!value.empty())
      out += "      <property name=\"" + std::string(name) + "\" value=\"" + xml_escape(value) + "\"/>\n";
  };
  property("graph", c.graph);
  property("profile", c.profile);
  property("baseline", c.baseline);
  out += "    </properties>\n";
  for (const auto& r : c.results) {
    out += "    <testcase classname=\"graphscope.check\" name=\"" + xml_escape(r.rule) + "\" time=\"0\">\n";
    if (r.passed) {
      out += "      <system-out>" + xml_escape(r.message) + "</system-out>\n";
    } else {
      // The message attribute is what CI lists; the body names every offender
      // kept, one per line.
      std::string body = r.summary;
      if (!r.note.empty()) body += " (" + r.note + ")";
      body = xml_escape(body);
      for (const auto& o : r.offenders) body += "\n" + xml_escape(describe(o));
      if (r.offender_count > r.offenders.size())
        body += "\n... and " + std::to_string(r.offender_count - r.offenders.size()) + " more";
      out += "      <failure type=\"" + xml_escape(r.rule) + "\" message=\"" + xml_escape(r.summary) + "\">" +
             body + "</failure>\n";
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace graphscope
