// libFuzzer target: profile reports as `graphscope check --profile` reads
// them (read_profile_json), matched against a small fixed graph, and the
// profile rules run on them and written as text, JSON and JUnit XML.
#include <cstddef>
#include <cstdint>

#include "fuzz_check_common.h"

using namespace graphscope;
using namespace graphscope::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = text_of(data, size);
  ProfileDocument profile;
  if (!accepts([&] { profile = read_profile_json(text, "profile.json"); })) return 0;
  static const GraphDocument doc = check_graph_fixture();
  accepts([&] { check_profile_matches(profile, doc, "profile.json", "graph.json"); });
  CheckRules rules;
  rules.max_blocking_fake_us = 1.5;
  rules.min_critical_path_efficiency = 0.5;
  rules.max_nodes = 3;
  rules.forbid_types = {NodeType::host};
  run_and_report(doc, &profile, nullptr, rules);
  return 0;
}
