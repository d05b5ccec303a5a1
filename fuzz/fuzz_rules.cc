// libFuzzer target: rules files of `graphscope check` (parse_check_rules),
// then the parsed rules run on a small fixed graph, profile and baseline and
// written as text, JSON (which must parse) and JUnit XML.
#include <cstddef>
#include <cstdint>

#include "fuzz_check_common.h"

using namespace graphscope;
using namespace graphscope::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = text_of(data, size);
  CheckRules rules;
  if (!accepts([&] { rules = parse_check_rules(text, "ci/rules.json"); })) return 0;
  try {
    check_rules_usable(rules, true);
  } catch (const Error& e) {
    check(e.code() == ExitCode::usage, std::string("check_rules_usable: not a usage error: ") + e.what());
  }
  static const GraphDocument doc = check_graph_fixture();
  static const ProfileDocument profile = check_profile_fixture();
  static const GraphDocument empty;
  run_and_report(doc, &profile, &doc, rules);
  run_and_report(doc, nullptr, &empty, rules);
  // Flags override the file: the file's rules over an empty set are the same.
  CheckRules flags;
  override_rules(flags, rules);
  run_and_report(empty, &profile, nullptr, flags);
  return 0;
}
