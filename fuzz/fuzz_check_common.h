// For the rules file and profile report targets: a small fixed graph, profile
// and baseline to run the parsed rules on, and the three reports of a check.
#pragma once

#include "fuzz_common.h"
#include "inspect/analysis/check.h"
#include "inspect/formats/check_json.h"
#include "inspect/render/check_report.h"
#include "inspect/formats/rules_json.h"
#include "inspect/core/json_tape.h"
#include "inspect/formats/profile_json.h"

namespace graphscope::fuzz {

// kernel -> memcpy -> host, and a second kernel beside them.
inline GraphDocument check_graph_fixture() {
  GraphDocument doc;
  doc.exec_graph_id = 7;
  NodeType types[] = {NodeType::kernel, NodeType::memcpy, NodeType::host, NodeType::kernel};
  for (uint32_t i = 0; i < 4; ++i) {
    Node n;
    n.index = i;
    n.node_id = i;
    n.type = types[i];
    n.graph_id = 7;
    n.tools_id = (uint64_t(7) << 32) | i;
    if (n.type == NodeType::kernel) n.kernel_name = "_Z6kernelPf";
    if (i == 1 || i == 2) n.dependencies.push_back(Dependency{i - 1});
    doc.root.nodes.push_back(std::move(n));
  }
  link_dependents(doc.root);
  return doc;
}

inline ProfileDocument check_profile_fixture() {
  ProfileDocument d;
  ProfileReport& p = d.report;
  p.exec_graph_id = 7;
  p.replays = 3;
  p.makespan_us = 10;
  p.critical_path_us = 7.5;
  for (uint32_t i = 0; i < 4; ++i) {
    NodeProfile f;
    f.index = i;
    f.replays = 3;
    f.delay_us = 2.0 * i;
    f.verdict = i == 3 ? Verdict::fake : Verdict::real;
    if (i == 3) f.blocking = true, f.blocker = 0, f.cause = "same channel";
    p.nodes.push_back(f);
    ProfileDocument::NodeIdentity id;
    id.tools_id = (uint64_t(7) << 32) | i;
    d.nodes.push_back(id);
  }
  return d;
}

/// Runs the rules and writes every report; the JSON report must be JSON.
inline void run_and_report(const GraphDocument& doc, const ProfileDocument* profile,
                           const GraphDocument* baseline, const CheckRules& rules) {
  CheckResult r = run_checks(doc, profile, baseline, rules);
  r.graph = "graph.json";
  size_t failed = 0;
  for (const auto& x : r.results) failed += !x.passed;
  check(failed == r.failed, "CheckResult::failed disagrees with the results");
  check(!format_check(r).empty(), "empty check text");
  const std::string json = write_check_json(r);
  try {
    JsonTape::parse(json, "check json");
  } catch (const Error& e) {
    finding(std::string("write_check_json wrote invalid JSON: ") + e.what());
  }
  // The result document reads back to the same result.
  try {
    check(write_check_json(read_check_json(json, "check json")) == json,
          "write_check_json(read_check_json(x)) differs from x");
  } catch (const Error& e) {
    finding(std::string("read_check_json refused what write_check_json wrote: ") + e.what());
  }
  check(!write_check_junit(r).empty(), "empty JUnit XML");
}

}  // namespace graphscope::fuzz
