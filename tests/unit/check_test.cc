#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "graph_builder.h"
#include "inspect/analysis/check.h"
#include "inspect/formats/check_json.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/formats/load.h"
#include "inspect/render/check_report.h"
#include "inspect/formats/rules_json.h"
#include "inspect/core/error.h"
#include "inspect/analysis/profile.h"
#include "inspect/formats/profile_json.h"
#include "test_data.h"

using namespace graphscope;
using graphscope::test::fork_join;
using graphscope::test::make_doc;

namespace {

// The message of the Error that f throws, checking its exit code.
template <typename F>
std::string error_of(F f, ExitCode code = ExitCode::bad_input) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == code);
    std::string m = e.what();
    CHECK(m.find('\n') == std::string::npos);  // one line
    return m;
  }
  FAIL("no error thrown");
  return "";
}

std::string rules_error(const std::string& text) {
  return error_of([&] { parse_check_rules(text, "r.json"); });
}

std::string with_schema(const std::string& members) {
  return "{\"schema\": \"graphscope.rules/1\"" + (members.empty() ? "" : ", " + members) + "}";
}

// n independent kernels: n nodes, depth 1.
GraphDocument kernels(uint32_t n) {
  std::vector<graphscope::test::Spec> specs;
  for (uint32_t i = 0; i < n; ++i) specs.push_back({NodeType::kernel, "_Z1kv", {}});
  return make_doc(specs);
}

// A profile of fork_join() (5 nodes): node 2 blocked by node 1 for `delay` us.
ProfileDocument facts(double delay, double critical_path_us = 8, double makespan_us = 10) {
  ProfileDocument d;
  ProfileReport& p = d.report;
  p.makespan_us = makespan_us;
  p.critical_path_us = critical_path_us;
  GraphDocument doc = fork_join();
  for (uint32_t i = 0; i < 5; ++i) {
    NodeProfile f;
    f.index = i;
    f.replays = 1;
    f.delay_us = 0.1;
    f.verdict = i ? Verdict::real : Verdict::none;
    p.nodes.push_back(f);
    ProfileDocument::NodeIdentity id;
    id.kernel_name = doc.root.nodes[i].kernel_name;
    d.nodes.push_back(id);
  }
  auto& n2 = p.nodes[2];
  n2.delay_us = delay;
  n2.fake_wait_us = delay;  // all of its delay behind its blocker
  n2.verdict = Verdict::fake;
  n2.blocking = true;
  n2.blocker = 1;
  n2.cause = "same channel";
  return d;
}

RuleResult only(const CheckResult& r) {
  REQUIRE(r.results.size() == 1);
  return r.results[0];
}

}  // namespace

// --- rules files -------------------------------------------------------------

TEST_CASE("a rules file sets every rule it names") {
  CheckRules r = parse_check_rules(
      R"({"schema":"graphscope.rules/1","max_nodes":500,"max_kernels":400,"forbid_types":["host","memcpy","host"],
          "max_depth":100,"baseline":"base/g.json","node_count_tolerance_pct":5,"max_blocking_fake_us":10.5,
          "min_critical_path_efficiency":0.8})",
      "ci/rules.json");
  CHECK(r.max_nodes == 500u);
  CHECK(r.max_kernels == 400u);
  CHECK(r.forbid_types == std::vector<NodeType>{NodeType::host, NodeType::memcpy});  // repeats dropped
  CHECK(r.max_depth == 100u);
  CHECK(r.baseline == "ci/base/g.json");  // relative to the rules file
  CHECK(r.node_count_tolerance_pct == 5.0);
  CHECK(r.max_blocking_fake_us == 10.5);
  CHECK(r.min_critical_path_efficiency == 0.8);
  CHECK(r.needs_profile());
  CHECK(r.profile_rules() ==
        std::vector<std::string>{"max_blocking_fake_us", "min_critical_path_efficiency"});
}

TEST_CASE("a rules file's baseline resolves against the file's directory only when relative") {
  CHECK(parse_check_rules(with_schema(R"("baseline":"/abs/g.json")"), "ci/rules.json").baseline ==
        "/abs/g.json");
  CHECK(parse_check_rules(with_schema(R"("baseline":"g.json")"), "rules.json").baseline == "g.json");
  CHECK(parse_check_rules(with_schema(R"("baseline":"../g.json")"), "/x/y/rules.json").baseline ==
        "/x/y/../g.json");
}

TEST_CASE("a rules file with only a schema has no rules") {
  CheckRules r = parse_check_rules(with_schema(""), "r.json");
  CHECK(r.empty());
  CHECK_FALSE(r.needs_profile());
  CHECK(parse_check_rules(with_schema(R"("forbid_types":[])"), "r.json").empty());
}

TEST_CASE("rules file errors name the file, the JSON path and the reason") {
  CHECK(rules_error("{\"schema\": ") == "r.json (line 1, column 12: unexpected end of input)");
  CHECK(rules_error("[1]") ==
        "r.json (the rules file is an array, expected an object {\"schema\": \"graphscope.rules/1\", ...})");
  CHECK(rules_error(R"({"max_nodes": 5})") ==
        "r.json (schema: missing (a rules file starts {\"schema\": \"graphscope.rules/1\", ...}))");
  CHECK(rules_error(R"({"schema": "graphscope.graph/1", "nodes": []})") ==
        "r.json (schema: \"graphscope.graph/1\" is not a rules file (expected graphscope.rules/1))");
  CHECK(rules_error(R"({"schema": "graphscope.rules/2"})") ==
        "r.json (schema: unknown major version \"2\" (this graphscope reads graphscope.rules/1))");
  CHECK(rules_error(R"({"schema": "graphscope.rules/x"})") ==
        "r.json (schema: bad version in \"graphscope.rules/x\")");
  CHECK(rules_error(R"({"schema": 1})") == "r.json (schema: is an integer, expected a string)");
  CHECK(rules_error(with_schema(R"("max_nodes": "500")")) ==
        "r.json (max_nodes: is a string, expected a count of nodes)");
  CHECK(rules_error(with_schema(R"("max_nodes": -1)")) ==
        "r.json (max_nodes: is negative (-1), expected a count of nodes)");
  CHECK(rules_error(with_schema(R"("max_kernels": 2.5)")) ==
        "r.json (max_kernels: is 2.5, expected a count of kernels)");
  CHECK(rules_error(with_schema(R"("max_depth": null)")) ==
        "r.json (max_depth: is null, expected a count of nodes on the longest path)");
  CHECK(rules_error(with_schema(R"("forbid_types": "host")")) ==
        "r.json (forbid_types: is a string, expected an array of node type names)");
  CHECK(rules_error(with_schema(R"("forbid_types": ["host", 3])")) ==
        "r.json (forbid_types[1]: is an integer, expected a string)");
  CHECK(rules_error(with_schema(R"("baseline": "")")) ==
        "r.json (baseline: is empty, expected the path of a graph document)");
  CHECK(rules_error(with_schema(R"("baseline": "a\u0000b")")) ==
        "r.json (baseline: contains a NUL character)");
  CHECK(rules_error(with_schema(R"("node_count_tolerance_pct": -5)")) ==
        "r.json (node_count_tolerance_pct: is negative (-5))");
  CHECK(rules_error(with_schema(R"("max_blocking_fake_us": true)")) ==
        "r.json (max_blocking_fake_us: is a boolean, expected a number)");
  CHECK(rules_error(with_schema(R"("min_critical_path_efficiency": 1.5)")) ==
        "r.json (min_critical_path_efficiency: is 1.5, expected a ratio from 0 to 1 (critical_path_us / "
        "makespan_us))");
  CHECK(rules_error(with_schema(R"("max_nodes": 5, "max_nodes": 6)")) == "r.json (max_nodes: appears twice)");
}

TEST_CASE("an unknown key in a rules file is an error that suggests the likely key") {
  std::string m = rules_error(with_schema(R"("max_node": 5)"));
  CHECK(m.find("r.json (\"max_node\": unknown key (did you mean \"max_nodes\"?); a rules file has schema, "
               "graphscope_version, max_nodes,") == 0);
  m = rules_error(with_schema(R"("min_critical_path_eficiency": 0.5)"));
  CHECK(m.find("did you mean \"min_critical_path_efficiency\"?") != std::string::npos);
  m = rules_error(with_schema(R"("colour": 5)"));
  CHECK(m.find("did you mean") == std::string::npos);
  CHECK(m.find("\"colour\": unknown key; a rules file has") != std::string::npos);
}

TEST_CASE("forbid_types accepts the model's node type names only") {
  std::string m = rules_error(with_schema(R"("forbid_types": ["kernel", "hots"])"));
  CHECK(m.find("r.json (forbid_types[1]: \"hots\" is not a node type (did you mean \"host\"?); node types: "
               "kernel, "
               "memcpy, memset, host, child_graph,") == 0);
  CHECK(m.find("batch_mem_op)") != std::string::npos);
  // "unknown" is the model's placeholder for types it does not know, not a type.
  CHECK(rules_error(with_schema(R"("forbid_types": ["unknown"])")).find("\"unknown\" is not a node type") !=
        std::string::npos);
  CheckRules all = parse_check_rules(
      with_schema(R"("forbid_types": ["kernel","memcpy","memset","host","child_graph","empty","wait_event",
                  "event_record","ext_semas_signal","ext_semas_wait","mem_alloc","mem_free","conditional","batch_mem_op"])"),
      "r.json");
  CHECK(all.forbid_types.size() == 14);
  CHECK(parse_forbidden_type("mem_free", ExitCode::usage, "--forbid") == NodeType::mem_free);
  CHECK(error_of([] { parse_forbidden_type("Host", ExitCode::usage, "--forbid"); }, ExitCode::usage)
            .find("--forbid (\"Host\" is not a node type (did you mean \"host\"?)") == 0);
}

TEST_CASE("hostile rules files give one line each, never a crash") {
  // Control characters and a huge key are quoted and cut short in the message.
  std::string m = rules_error(with_schema("\"max\\nnodes\\u0007\": 1"));
  CHECK(m.find("\"max\\nnodes\\u0007\": unknown key") != std::string::npos);
  m = rules_error(with_schema("\"" + std::string(100000, 'k') + "\": 1"));
  CHECK(m.size() < 600);
  CHECK(m.find("kkk...\": unknown key") != std::string::npos);
  // A rules file is flat: deep nesting is refused by the parser, early.
  CHECK(rules_error(with_schema("\"forbid_types\": " + std::string(100000, '[') + std::string(100000, ']')))
            .find("nested deeper than 8 levels") != std::string::npos);
  CHECK(rules_error(with_schema(R"("max_nodes": 1e999)")).find("number out of range") != std::string::npos);
  CHECK(rules_error(with_schema(R"("max_nodes": 99999999999999999999)")) ==
        "r.json (max_nodes: is 1e+20, expected a count of nodes)");
  CHECK(rules_error("").find("unexpected end of input") != std::string::npos);
  CHECK(rules_error(std::string("\xff\xfe{}", 4)).find("r.json (line 1") == 0);
  // Every prefix and every one-byte change of a good file parses or is
  // refused with Error(bad_input); nothing else escapes.
  const std::string good =
      R"({"schema":"graphscope.rules/1","max_nodes":500,"forbid_types":["host"],"baseline":"b.json",)"
      R"("node_count_tolerance_pct":5,"min_critical_path_efficiency":0.8})";
  size_t refused = 0;
  for (size_t n = 0; n <= good.size(); ++n) {
    for (int flip = -1; flip < 4; ++flip) {
      std::string t = good.substr(0, n);
      if (flip >= 0 && n < good.size()) t += char("\"]}\x00"[flip]) + good.substr(n + 1);
      try {
        parse_check_rules(t, "r.json");
      } catch (const Error& e) {
        CHECK(e.code() == ExitCode::bad_input);
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
        ++refused;
      }
    }
  }
  CHECK(refused > good.size());
}

// --- combining and usability --------------------------------------------------

TEST_CASE("flags override the rules file, rule by rule") {
  CheckRules file = parse_check_rules(
      with_schema(R"("max_nodes": 500, "max_depth": 10, "forbid_types": ["host"], "baseline": "b.json")"),
      "d/r.json");
  CheckRules flags;
  flags.max_nodes = 20;
  flags.forbid_types = {NodeType::memcpy};
  flags.baseline = "other.json";
  flags.node_count_tolerance_pct = 2;
  override_rules(file, flags);
  CHECK(file.max_nodes == 20u);
  CHECK(file.max_depth == 10u);                                         // not given as a flag: the file's
  CHECK(file.forbid_types == std::vector<NodeType>{NodeType::memcpy});  // replaced, not merged
  CHECK(file.baseline == "other.json");
  CHECK(file.node_count_tolerance_pct == 2.0);
  CheckRules none;
  override_rules(file, none);
  CHECK(file.max_nodes == 20u);
  CHECK(file.forbid_types.size() == 1);
}

TEST_CASE("rules that cannot run as given are usage errors") {
  CheckRules r;
  CHECK(error_of([&] { check_rules_usable(r, true); }, ExitCode::usage) ==
        "check (no rules: give --rules FILE or a rule flag such as --max-nodes N)");
  r.baseline = "b.json";
  CHECK(
      error_of([&] { check_rules_usable(r, false); }, ExitCode::usage).find("a baseline needs a tolerance") !=
      std::string::npos);
  r.baseline.clear();
  r.node_count_tolerance_pct = 5;
  CHECK(error_of([&] { check_rules_usable(r, false); }, ExitCode::usage)
            .find("node_count_tolerance_pct needs a baseline") != std::string::npos);
  r.node_count_tolerance_pct.reset();
  r.max_blocking_fake_us = 10;
  CHECK(error_of([&] { check_rules_usable(r, false); }, ExitCode::usage) ==
        "check (max_blocking_fake_us needs a profile report: give --profile REPORT (graphscope profile "
        "--json))");
  r.min_critical_path_efficiency = 0.5;
  CHECK(error_of([&] { check_rules_usable(r, false); }, ExitCode::usage)
            .find("max_blocking_fake_us and min_critical_path_efficiency need a profile report") !=
        std::string::npos);
  check_rules_usable(r, true);
}

// --- rules -------------------------------------------------------------------

TEST_CASE("max_nodes passes at its limit and fails one below") {
  CheckRules r;
  r.max_nodes = 5;
  const auto& at = only(run_checks(fork_join(), nullptr, nullptr, r));
  CHECK(at.passed);
  CHECK(at.measured == 5);
  CHECK(at.limit == 5);
  CHECK(at.summary == "5 nodes <= 5");
  r.max_nodes = 4;
  CheckResult c = run_checks(fork_join(), nullptr, nullptr, r);
  CHECK_FALSE(c.passed());
  CHECK(c.failed == 1);
  CHECK(only(c).summary == "5 nodes > 4");
  CHECK(only(c).message == "5 nodes > 4 (nested graphs included)");
}

TEST_CASE("max_nodes and max_kernels count nested bodies") {
  GraphDocument doc = fork_join();  // 4 kernels and a memset
  doc.root.nodes[3].type = NodeType::child_graph;
  doc.root.nodes[3].bodies.push_back(fork_join().root);
  CheckRules r;
  r.max_nodes = 10;
  r.max_kernels = 8;
  CheckResult c = run_checks(doc, nullptr, nullptr, r);
  REQUIRE(c.results.size() == 2);
  CHECK(c.results[0].measured == 10);
  CHECK(c.results[0].passed);
  CHECK(c.results[1].rule == "max_kernels");
  CHECK(c.results[1].measured == 8);
  CHECK(c.results[1].passed);
  r.max_kernels = 7;
  CHECK(run_checks(doc, nullptr, nullptr, r).results[1].summary == "8 kernels > 7");
}

TEST_CASE("forbid_types fails naming every forbidden node, nested ones by their path") {
  GraphDocument doc = fork_join();
  doc.root.nodes[3].type = NodeType::child_graph;
  GraphDocument body = make_doc({{NodeType::host, "", {}}, {NodeType::kernel, "_Z1kv", {0}}});
  doc.root.nodes[3].bodies.push_back(body.root);
  CheckRules r;
  r.forbid_types = {NodeType::host, NodeType::memset};
  const auto& fail = only(run_checks(doc, nullptr, nullptr, r));
  CHECK_FALSE(fail.passed);
  CHECK(fail.measured == 1);
  CHECK(fail.limit == 0);
  CHECK(fail.types == std::vector<std::string>{"host", "memset"});
  REQUIRE(fail.offenders.size() == 1);
  CHECK(fail.offenders[0].node == "3/0/0");
  CHECK(fail.offenders[0].node_type == "host");
  CHECK(fail.message == "1 forbidden node > 0 (types host, memset; nested graphs included): node 3/0/0 host");
  r.forbid_types = {NodeType::memset};
  const auto& pass = only(run_checks(doc, nullptr, nullptr, r));
  CHECK(pass.passed);
  CHECK(pass.summary == "0 forbidden nodes");
  r.forbid_types = {NodeType::kernel};
  const auto& k = only(run_checks(doc, nullptr, nullptr, r));
  CHECK(k.offender_count == 5);
  CHECK(k.message.find(": node 0 fork, node 1 scale, node 2 scale, node 3/0/1 k, node 4 join") !=
        std::string::npos);
}

TEST_CASE("forbid_types lists the first offenders and counts the rest") {
  CheckRules r;
  r.forbid_types = {NodeType::kernel};
  const auto& res = only(run_checks(kernels(30), nullptr, nullptr, r));
  CHECK(res.offender_count == 30);
  CHECK(res.offenders.size() == kMaxOffenders);
  CHECK(res.message.find("node 4 k and 25 more") != std::string::npos);
}

TEST_CASE("max_depth counts nodes on the longest path of the root graph") {
  CheckRules r;
  r.max_depth = 3;
  const auto& pass = only(run_checks(fork_join(), nullptr, nullptr, r));
  CHECK(pass.passed);
  CHECK(pass.summary == "3 nodes on the longest path <= 3");
  r.max_depth = 2;
  CHECK_FALSE(only(run_checks(fork_join(), nullptr, nullptr, r)).passed);
}

TEST_CASE("the node count tolerance is inclusive, both ways") {
  GraphDocument base = kernels(100);
  CheckRules r;
  r.baseline = "b.json";
  r.node_count_tolerance_pct = 5;
  auto run = [&](uint32_t n) { return only(run_checks(kernels(n), nullptr, &base, r)); };
  CHECK(run(105).passed);
  CHECK(run(95).passed);
  CHECK_FALSE(run(106).passed);
  CHECK_FALSE(run(94).passed);
  CHECK(run(105).summary == "+5% within +-5%");
  CHECK(run(94).summary == "-6% outside +-5%");
  CHECK(run(94).message == "-6% outside +-5% (94 nodes against 100 in the baseline)");
  CHECK(run(94).measured == doctest::Approx(6));
  r.node_count_tolerance_pct = 0;
  CHECK(run(100).passed);
  CHECK_FALSE(run(101).passed);
  // A decimal tolerance at the boundary: 33 of 1000 is 3.3%.
  GraphDocument big = kernels(1000);
  r.node_count_tolerance_pct = 3.3;
  CHECK(only(run_checks(kernels(1033), nullptr, &big, r)).passed);
  CHECK_FALSE(only(run_checks(kernels(1034), nullptr, &big, r)).passed);
  CHECK(only(run_checks(kernels(967), nullptr, &big, r)).passed);
}

TEST_CASE("an empty baseline leaves no room for nodes") {
  GraphDocument empty;
  CheckRules r;
  r.baseline = "b.json";
  r.node_count_tolerance_pct = 50;
  CHECK(only(run_checks(empty, nullptr, &empty, r)).passed);
  const auto& fail = only(run_checks(kernels(1), nullptr, &empty, r));
  CHECK_FALSE(fail.passed);
  CHECK(std::isinf(fail.measured));
  // JSON has no infinity: the report writes null.
  auto j = nlohmann::json::parse(write_check_json(run_checks(kernels(1), nullptr, &empty, r)));
  CHECK(j["results"][0]["measured"].is_null());
}

TEST_CASE("max_blocking_fake_us passes at its limit and fails just over it, naming the offenders") {
  GraphDocument doc = fork_join();
  CheckRules r;
  r.max_blocking_fake_us = 12.5;
  ProfileDocument p = facts(12.5);
  const auto& pass = only(run_checks(doc, &p, nullptr, r));
  CHECK(pass.passed);
  CHECK(pass.measured == 12.5);
  CHECK(pass.summary == "worst fake wait 12.5 us <= 12.5 us");
  p = facts(12.51);
  const auto& fail = only(run_checks(doc, &p, nullptr, r));
  CHECK_FALSE(fail.passed);
  CHECK(fail.offender_count == 1);
  REQUIRE(fail.offenders.size() == 1);
  CHECK(fail.offenders[0].node == "2");
  CHECK(fail.offenders[0].kernel_name == "_Z5scalePfif");
  CHECK(fail.offenders[0].blocker == 1u);
  CHECK(fail.offenders[0].blocker_kernel_name == "_Z5scalePfif");
  CHECK(fail.summary == "1 fake wait over 12.5 us, worst 12.51 us > 12.5 us");
  CHECK(fail.message ==
        "1 fake wait over 12.5 us, worst 12.51 us > 12.5 us (1 blocking fake dependency in all; a fake wait is from "
        "ready to the blocker's end): node 2 scale 12.51 us (after node 1 scale, same channel)");
}

TEST_CASE("max_blocking_fake_us ignores fake dependencies that block nothing") {
  ProfileDocument p = facts(50);
  p.report.nodes[2].blocking = false;
  p.report.nodes[2].blocker.reset();
  CheckRules r;
  r.max_blocking_fake_us = 1;
  const auto& res = only(run_checks(fork_join(), &p, nullptr, r));
  CHECK(res.passed);
  CHECK(res.measured == 0);
  CHECK(res.summary == "no blocking fake dependency (limit 1 us)");
}

TEST_CASE("max_blocking_fake_us lists the worst offenders first") {
  ProfileDocument p = facts(20);
  p.report.nodes[3].verdict = Verdict::fake;
  p.report.nodes[3].blocking = true;
  p.report.nodes[3].blocker = 2;
  p.report.nodes[3].delay_us = 31;
  p.report.nodes[3].fake_wait_us = 30;
  p.report.nodes[3].cause = "other";
  p.report.nodes[4].verdict = Verdict::fake;
  p.report.nodes[4].blocking = true;
  p.report.nodes[4].blocker = 0;
  p.report.nodes[4].delay_us = 12;
  p.report.nodes[4].fake_wait_us = 5;  // under the limit (its delay is not): blocking but not an offender
  CheckRules r;
  r.max_blocking_fake_us = 10;
  const auto& res = only(run_checks(fork_join(), &p, nullptr, r));
  CHECK_FALSE(res.passed);
  CHECK(res.measured == 30);
  CHECK(res.offender_count == 2);
  REQUIRE(res.offenders.size() == 2);
  CHECK(res.offenders[0].node == "3");
  CHECK(res.offenders[0].node_type == "memset");
  CHECK(res.offenders[0].kernel_name.empty());
  CHECK(res.offenders[1].node == "2");
  CHECK(res.message.find(
            "(3 blocking fake dependencies in all; a fake wait is from ready to the blocker's end): node 3 memset "
            "30 us (after node 2 scale, other), node 2 scale 20 us (after node 1 scale, same channel)") !=
        std::string::npos);
}

TEST_CASE("critical-path efficiency is critical_path_us / makespan_us, inclusive") {
  CheckRules r;
  r.min_critical_path_efficiency = 0.75;
  ProfileDocument p = facts(0, 7.5, 10);
  const auto& pass = only(run_checks(fork_join(), &p, nullptr, r));
  CHECK(pass.passed);
  CHECK(pass.measured == doctest::Approx(0.75));
  CHECK(pass.summary == "0.750 >= 0.75");
  CHECK(pass.message == "0.750 >= 0.75 (critical_path_us / makespan_us = 7.5 / 10 us)");
  p = facts(0, 7.49, 10);
  const auto& fail = only(run_checks(fork_join(), &p, nullptr, r));
  CHECK_FALSE(fail.passed);
  CHECK(fail.summary == "0.749 < 0.75");
  REQUIRE(fail.details.size() == 2);
  CHECK(fail.details[0] == std::pair<std::string, double>("critical_path_us", 7.49));
  CHECK(fail.details[1] == std::pair<std::string, double>("makespan_us", 10));
}

TEST_CASE("critical-path efficiency can exceed 1 when programmatic launches overlap") {
  // Seen on the H100 (pdl.c1): a critical path of 7.68 us in a makespan of 6.91 us.
  CheckRules r;
  r.min_critical_path_efficiency = 1;
  ProfileDocument p = facts(0, 7.68, 6.912);
  const auto& res = only(run_checks(fork_join(), &p, nullptr, r));
  CHECK(res.passed);
  CHECK(res.summary == "1.111 >= 1");
}

TEST_CASE("critical-path efficiency fails when nothing was measured") {
  CheckRules r;
  r.min_critical_path_efficiency = 0;
  ProfileDocument p = facts(0, 0, 0);
  const auto& res = only(run_checks(fork_join(), &p, nullptr, r));
  CHECK_FALSE(res.passed);
  CHECK(res.summary == "no makespan measured (limit 0)");
}

TEST_CASE("results come in the order of the rules file's keys") {
  GraphDocument base = fork_join();
  ProfileDocument p = facts(1);
  CheckRules r;
  r.min_critical_path_efficiency = 0.1;
  r.max_blocking_fake_us = 100;
  r.node_count_tolerance_pct = 1;
  r.baseline = "b.json";
  r.max_depth = 10;
  r.forbid_types = {NodeType::host};
  r.max_kernels = 10;
  r.max_nodes = 10;
  CheckResult c = run_checks(fork_join(), &p, &base, r);
  std::vector<std::string> order;
  for (const auto& x : c.results) order.push_back(x.rule);
  CHECK(order == std::vector<std::string>{"max_nodes", "max_kernels", "forbid_types", "max_depth",
                                          "node_count_tolerance_pct", "max_blocking_fake_us",
                                          "min_critical_path_efficiency"});
  CHECK(c.passed());
}

// --- profile reports ------------------------------------------------------------

TEST_CASE("a recorded profile report reads back") {
  ProfileDocument p =
      read_profile_json(test::read_data("profiles/wide.c1.profile.json"), "wide.c1.profile.json");
  CHECK(p.report.exec_graph_id == 2u);
  CHECK(p.report.replays == 20);
  CHECK(p.report.makespan_us == doctest::Approx(31.744));
  CHECK(p.report.critical_path_us == doctest::Approx(4.864));
  REQUIRE(p.nodes.size() == 66);
  CHECK(p.nodes[0].kernel_name == "_Z11wide_sourcePfPKfl");
  // Derived from the recorded graph and trace (tests/data/profiles/README.md):
  // the 56 branches dispatched onto a busy channel are lane busy, not blocking.
  size_t blocking = 0, lane_busy = 0;
  for (const auto& n : p.report.nodes) blocking += n.blocking, lane_busy += n.lane_busy;
  CHECK(blocking == 0);
  CHECK(lane_busy == 56);
  CHECK(p.report.lane_busy == 56);
  CHECK(p.report.account.replays == 20);
  REQUIRE(p.report.findings.size() == 1);
  CHECK(p.report.findings[0].kind == FindingKind::latency);
}

TEST_CASE("a profile report written by write_profile_json reads back") {
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}},
                                {NodeType::kernel, "_Z1bv", {0}},
                                {NodeType::kernel, "_Z1cv", {0}},
                                {NodeType::host, "", {1, 2}}});
  Trace t;
  auto act = [&](uint32_t node, double s, double e) {
    Activity a;
    a.name = t.intern("k" + std::to_string(node));
    a.start_ns = uint64_t(s * 1000);
    a.end_ns = uint64_t(e * 1000);
    a.channel_type = 1;
    a.correlation = 1;
    a.graph_id = 7;
    a.graph_node_id = (uint64_t(7) << 32) | node;
    t.activities.push_back(a);
  };
  act(0, 0, 10);
  act(1, 10, 20);
  act(2, 20.2, 30);  // waits for 1 on the same channel: blocking fake
  ProfileReport rep = analyze_profile(doc, t, {});
  ProfileDocument p = read_profile_json(write_profile_json(rep, doc), "p.json");
  REQUIRE(p.nodes.size() == 4);
  CHECK(p.report.nodes[2].blocking);
  CHECK(p.report.nodes[2].verdict == Verdict::fake);
  CHECK(p.report.nodes[2].blocker == 1u);
  CHECK(p.report.nodes[2].delay_us == doctest::Approx(10.2));
  CHECK(p.report.nodes[2].cause == "same channel");
  CHECK(p.nodes[2].kernel_name == "_Z1cv");
  CHECK(p.report.nodes[3].replays == 0);  // the host node has no record
  CHECK(p.nodes[3].kernel_name.empty());
  CHECK(p.report.makespan_us == doctest::Approx(rep.makespan_us));
  CHECK(p.report.critical_path_us == doctest::Approx(rep.critical_path_us));
  check_profile_matches(p, doc, "p.json", "g.json");
}

TEST_CASE("profile report errors name the report, the JSON path and the reason") {
  auto err = [](const std::string& text) { return error_of([&] { read_profile_json(text, "p.json"); }); };
  const std::string head =
      R"({"schema":"graphscope.profile/1","summary":{"makespan_us":10,"critical_path_us":5},)";
  auto node = [](const std::string& extra) {
    return R"({"index":0,"kernel_name":null,"delay_us":1,"verdict":"none","blocking":false,"blocker":null)" +
           extra + "}";
  };
  CHECK(read_profile_json(head + R"("nodes":[)" + node("") + "]}", "p.json").nodes.size() == 1);
  CHECK(err(R"({"schema":"graphscope.graph/1","nodes":[]})") ==
        "p.json (schema: \"graphscope.graph/1\" is not a profile report (expected graphscope.profile/1))");
  CHECK(err(R"({"nodes":[]})") ==
        "p.json (schema: missing (a profile report starts {\"schema\": \"graphscope.profile/1\", ...}))");
  CHECK(err(R"({"schema":"graphscope.profile/3"})").find("unknown major version \"3\"") != std::string::npos);
  CHECK(err("[]") == "p.json (the document is an array, not a profile report)");
  CHECK(err(R"({"schema":"graphscope.profile/1","nodes":[]})") == "p.json (summary: missing)");
  CHECK(err(R"({"schema":"graphscope.profile/1","summary":{"makespan_us":10},"nodes":[]})") ==
        "p.json (summary.critical_path_us: missing)");
  CHECK(
      err(R"({"schema":"graphscope.profile/1","summary":{"makespan_us":-1,"critical_path_us":1},"nodes":[]})") ==
      "p.json (summary.makespan_us: is negative (-1))");
  CHECK(err(head + R"("nodes":{}})") == "p.json (nodes: is an object, expected an array of node profiles)");
  CHECK(err(head + R"("nodes":[)" + node("") + "," + node("") + "]}") ==
        "p.json (nodes[1].index: is 0, expected 1 (nodes in index order))");
  CHECK(err(head + R"("nodes":[{"index":0}]})") == "p.json (nodes[0].delay_us: missing)");
  CHECK(err(head +
            R"("nodes":[{"index":0,"delay_us":1,"verdict":"maybe","blocking":false,"blocker":null}]})") ==
        "p.json (nodes[0].verdict: \"maybe\" is not \"real\", \"fake\" or \"none\")");
  CHECK(err(head + R"("nodes":[{"index":0,"delay_us":1,"verdict":"fake","blocking":true,"blocker":5}]})") ==
        "p.json (nodes[0].blocker: 5 is not a node index (the report has 1 node))");
  CHECK(err(head + R"("nodes":[{"index":0,"delay_us":1,"verdict":"real","blocking":true,"blocker":0}]})") ==
        "p.json (nodes[0].blocking: is true without a fake verdict, a blocker and a delay)");
  CHECK(err(head +
            R"("nodes":[{"index":0,"delay_us":"1","verdict":"real","blocking":false,"blocker":null}]})") ==
        "p.json (nodes[0].delay_us: is a string, expected a number)");
}

TEST_CASE("truncated and altered profile reports never escape as anything but bad input") {
  std::string good = test::read_data("profiles/forkjoin.c8.profile.json");
  for (size_t n = 0; n < good.size(); n += 7) {
    for (char c : {'"', '}', '1', 'x'}) {
      std::string t = good.substr(0, n) + c + (n + 1 < good.size() ? good.substr(n + 1) : "");
      try {
        read_profile_json(t, "p.json");
      } catch (const Error& e) {
        CHECK(e.code() == ExitCode::bad_input);
      }
      try {
        read_profile_json(good.substr(0, n), "p.json");
      } catch (const Error& e) {
        CHECK(e.code() == ExitCode::bad_input);
      }
    }
  }
}

TEST_CASE("a profile report of another graph is refused") {
  GraphDocument doc = fork_join();
  ProfileDocument p = facts(1);
  check_profile_matches(p, doc, "p.json", "g.json");
  p.nodes.pop_back();
  CHECK(error_of([&] { check_profile_matches(p, doc, "p.json", "g.json"); }) ==
        "p.json (not a report of g.json: 4 nodes against the graph's 5)");
  p = facts(1);
  p.nodes[1].kernel_name = "_Z5otherv";
  CHECK(error_of([&] { check_profile_matches(p, doc, "p.json", "g.json"); }) ==
        "p.json (not a report of g.json: node 1 runs \"_Z5otherv\", the graph's \"_Z5scalePfif\")");
  p = facts(1);
  p.nodes[0].tools_id = 1;
  CHECK(error_of([&] {
          check_profile_matches(p, doc, "p.json", "g.json");
        }).find("node 0 has tools id 1 against the graph's 30064771072") != std::string::npos);
}

// --- output --------------------------------------------------------------------

TEST_CASE("the text report has one line per rule and a total") {
  CheckRules r;
  r.max_nodes = 10;
  r.max_depth = 2;
  CheckResult c = run_checks(fork_join(), nullptr, nullptr, r);
  c.graph = "g.json";
  CHECK(format_check(c) ==
        "PASS  max_nodes                     5 nodes <= 10 (nested graphs included)\n"
        "FAIL  max_depth                     3 nodes on the longest path > 2 (root graph)\n"
        "check failed: 1 of 2 rules failed (g.json)\n");
  r.max_depth.reset();
  c = run_checks(fork_join(), nullptr, nullptr, r);
  c.graph = "g.json";
  c.profile = "p.json";
  CHECK(format_check(c).find("check passed: 1 rule (g.json, profile p.json)\n") != std::string::npos);
}

TEST_CASE("the text report keeps one line per rule whatever the kernel names hold") {
  GraphDocument doc = make_doc({{NodeType::kernel, "evil\nname\r", {}}});
  CheckRules r;
  r.forbid_types = {NodeType::kernel};
  CheckResult c = run_checks(doc, nullptr, nullptr, r);
  c.graph = "g\n.json";
  std::string text = format_check(c);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
}

TEST_CASE("the JSON report is graphscope.check/1 with every result") {
  ProfileDocument p = facts(20);
  CheckRules r;
  r.max_nodes = 10;
  r.forbid_types = {NodeType::memset};
  r.max_blocking_fake_us = 10;
  CheckResult c = run_checks(fork_join(), &p, nullptr, r);
  c.graph = "g.json";
  c.profile = "p.json";
  auto j = nlohmann::json::parse(write_check_json(c));
  CHECK(j["schema"] == "graphscope.check/1");
  CHECK(j["graph"] == "g.json");
  CHECK(j["profile"] == "p.json");
  CHECK(j["baseline"].is_null());
  CHECK(j["passed"] == false);
  CHECK(j["rules"] == 3);
  CHECK(j["failed"] == 2);
  auto& res = j["results"];
  REQUIRE(res.size() == 3);
  CHECK(res[0]["rule"] == "max_nodes");
  CHECK(res[0]["passed"] == true);
  CHECK(res[0]["measured"] == 5);
  CHECK(res[0]["limit"] == 10);
  CHECK(res[0]["unit"] == "nodes");
  CHECK(res[1]["types"] == nlohmann::json::array({"memset"}));
  CHECK(res[1]["offenders"][0]["node"] == "3");
  CHECK(res[1]["offenders"][0]["kernel_name"].is_null());
  CHECK(res[2]["rule"] == "max_blocking_fake_us");
  CHECK(res[2]["measured"] == 20);
  CHECK(res[2]["offender_count"] == 1);
  CHECK(res[2]["offenders"][0]["delay_us"] == 20);
  CHECK(res[2]["offenders"][0]["blocker"] == 1);
  CHECK(res[2]["offenders"][0]["cause"] == "same channel");
  CHECK(res[2]["message"].get<std::string>().find("node 2 scale 20 us") != std::string::npos);
}

TEST_CASE("JUnit XML has one testsuite, one testcase per rule, and escaped failures") {
  // A kernel name as hostile as a graph may carry: markup, quotes, a control character.
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z<T&\"x'>\x01", {}}, {NodeType::kernel, "_Z1bv", {0}}});
  CheckRules r;
  r.max_nodes = 5;
  r.forbid_types = {NodeType::kernel};
  CheckResult c = run_checks(doc, nullptr, nullptr, r);
  c.graph = "a&b\x01.json";
  std::string x = write_check_junit(c);
  CHECK(
      x.find("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"graphscope check\" tests=\"2\" "
             "failures=\"1\" errors=\"0\">\n") == 0);
  CHECK(x.find("<testsuite name=\"graphscope check a&amp;b\xEF\xBF\xBD.json\" tests=\"2\" failures=\"1\"") !=
        std::string::npos);
  CHECK(x.find("<property name=\"graph\" value=\"a&amp;b\xEF\xBF\xBD.json\"/>") != std::string::npos);
  CHECK(x.find("<testcase classname=\"graphscope.check\" name=\"max_nodes\" time=\"0\">\n      <system-out>2 "
               "nodes "
               "&lt;= 5 (nested graphs included)</system-out>\n    </testcase>") != std::string::npos);
  CHECK(x.find("<failure type=\"forbid_types\" message=\"2 forbidden nodes &gt; 0\">") != std::string::npos);
  CHECK(x.find("node 0 _Z&lt;T&amp;&quot;x&apos;&gt;") != std::string::npos);
  CHECK(x.find('\x01') == std::string::npos);
  CHECK(x.find("<T") == std::string::npos);
  // Exactly one testsuite, one testcase per rule, balanced.
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t i = x.find(s); i != std::string::npos; i = x.find(s, i + 1)) ++n;
    return n;
  };
  CHECK(count("<testsuite ") == 1);
  CHECK(count("</testsuite>") == 1);
  CHECK(count("<testcase ") == 2);
  CHECK(count("</testcase>") == 2);
  CHECK(count("<failure ") == 1);
  CHECK(count("</failure>") == 1);
}

TEST_CASE("JUnit failure bodies list every offender kept, one per line") {
  CheckRules r;
  r.forbid_types = {NodeType::kernel};
  CheckResult c = run_checks(kernels(12), nullptr, nullptr, r);
  c.graph = "g.json";
  std::string x = write_check_junit(c);
  CHECK(x.find("<failure type=\"forbid_types\" message=\"12 forbidden nodes &gt; 0\">12 forbidden nodes &gt; "
               "0 (types kernel; "
               "nested graphs included)\nnode 0 k\nnode 1 k\n") != std::string::npos);
  CHECK(x.find("\nnode 9 k\n... and 2 more</failure>\n    </testcase>") != std::string::npos);
}

TEST_CASE("max_account_share: parsed, written back, refused when it names no part or no share") {
  CheckRules r = parse_check_rules(
      R"({"schema": "graphscope.rules/1", "max_account_share": {"fake": 0.05, "unexplained": 0.02}})", "r.json");
  REQUIRE(r.max_account_share.size() == 2);
  CHECK(r.max_account_share[0].first == "fake");
  CHECK(r.max_account_share[1].second == doctest::Approx(0.02));
  CHECK(r.needs_profile());
  CHECK(write_rules_json(r).find("\"max_account_share\": {\"fake\": 0.05, \"unexplained\": 0.02}") != std::string::npos);
  CHECK_THROWS_WITH_AS(parse_check_rules(R"({"schema": "graphscope.rules/1", "max_account_share": {"fak": 0.05}})", "r.json"),
                       doctest::Contains("is not a part of the account"), Error);
  CHECK_THROWS_WITH_AS(parse_check_rules(R"({"schema": "graphscope.rules/1", "max_account_share": {"fake": 1.5}})", "r.json"),
                       doctest::Contains("expected a share from 0 to 1"), Error);
  CHECK_THROWS_AS(parse_check_rules(R"({"schema": "graphscope.rules/1", "max_account_share": [0.05]})", "r.json"), Error);
}

TEST_CASE("the blocking rule and the account's fake share agree on the recordings") {
  // Both gates read one rule (profile.h, account.h): on the copies both
  // fail, at any tolerance; on the wide fan-out, whose branches were
  // dispatched one by one onto a busy channel, both pass.
  struct Case {
    const char* name;
    double tolerance_us;
    bool fails;
  };
  for (const Case& c : {Case{"copies.c1", 0.5, true}, Case{"copies.c1", 2, true}, Case{"copies.c8", 0.5, true},
                        Case{"wide.c1", 2, false}, Case{"wide.c1", 0.5, false}, Case{"wide.c8", 2, false},
                        Case{"chain.c1", 2, false}, Case{"forkjoin.c8", 2, false}}) {
    CAPTURE(c.name);
    CAPTURE(c.tolerance_us);
    const std::string base = std::string("profiles/") + c.name;
    GraphDocument doc = load_graph(test::data_path(base + ".graph.json"));
    Trace trace = read_chrome_trace(test::read_data(base + ".trace.json"), base);
    ProfileOptions o;
    o.tolerance_us = c.tolerance_us;
    ProfileDocument p;
    p.report = analyze_profile(doc, trace, o);
    // Through the JSON, as check reads it.
    p = read_profile_json(write_profile_json(p.report, doc), "p.json");
    CheckRules r;
    r.max_blocking_fake_us = 10;
    r.max_account_share = {{"fake", 0.05}};
    CheckResult res = run_checks(doc, &p, nullptr, r);
    REQUIRE(res.results.size() == 2);
    CHECK(res.results[0].passed == !c.fails);
    CHECK(res.results[1].passed == !c.fails);
  }
}

TEST_CASE("the blocking rule measures a node's fake wait, not its delay (an older report's: its delay)") {
  GraphDocument doc = load_graph(test::data_path("profiles/copies.c1.graph.json"));
  Trace trace = read_chrome_trace(test::read_data("profiles/copies.c1.trace.json"), "copies");
  ProfileDocument p;
  p.report = analyze_profile(doc, trace, {});
  const NodeProfile& last = p.report.nodes[3];
  REQUIRE(last.blocking);
  CHECK(last.fake_wait_us < last.delay_us);  // less the latency after its blocker ended
  CheckRules r;
  r.max_blocking_fake_us = (last.fake_wait_us + last.delay_us) / 2;
  CheckResult res = run_checks(doc, &p, nullptr, r);
  CHECK(res.passed());
  CHECK(res.results[0].measured == doctest::Approx(last.fake_wait_us));
  // A report without fake_wait_us (an older graphscope's): its delay.
  nlohmann::json j = nlohmann::json::parse(write_profile_json(p.report, doc));
  for (auto& n : j["nodes"]) n.erase("fake_wait_us");
  ProfileDocument old = read_profile_json(j.dump(), "old.json");
  CHECK(old.report.nodes[3].fake_wait_us == doctest::Approx(last.delay_us));
  CHECK_FALSE(run_checks(doc, &old, nullptr, r).passed());
}
