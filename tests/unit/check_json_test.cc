// graphscope.rules/1 and graphscope.check/1, each written and read back on
// the same struct.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "inspect/analysis/check.h"
#include "inspect/formats/check_json.h"
#include "inspect/core/error.h"
#include "inspect/formats/load.h"
#include "inspect/formats/profile_json.h"
#include "inspect/formats/rules_json.h"
#include "test_data.h"

using namespace graphscope;

namespace {

void check_same(const CheckRules& a, const CheckRules& b) {
  CHECK(a.max_nodes == b.max_nodes);
  CHECK(a.max_kernels == b.max_kernels);
  CHECK(a.forbid_types == b.forbid_types);
  CHECK(a.max_depth == b.max_depth);
  CHECK(a.baseline == b.baseline);
  CHECK(a.node_count_tolerance_pct == b.node_count_tolerance_pct);
  CHECK(a.max_blocking_fake_us == b.max_blocking_fake_us);
  CHECK(a.min_critical_path_efficiency == b.min_critical_path_efficiency);
}

void check_same(const CheckResult& a, const CheckResult& b) {
  CHECK(a.graph == b.graph);
  CHECK(a.profile == b.profile);
  CHECK(a.baseline == b.baseline);
  CHECK(a.failed == b.failed);
  REQUIRE(a.results.size() == b.results.size());
  for (size_t i = 0; i < a.results.size(); ++i) {
    const RuleResult &x = a.results[i], &y = b.results[i];
    CAPTURE(x.rule);
    CHECK(x.rule == y.rule);
    CHECK(x.passed == y.passed);
    CHECK(x.measured == y.measured);
    CHECK(x.limit == y.limit);
    CHECK(x.unit == y.unit);
    CHECK(x.types == y.types);
    CHECK(x.details == y.details);
    CHECK(x.summary == y.summary);
    CHECK(x.message == y.message);
    CHECK(x.offender_count == y.offender_count);
    REQUIRE(x.offenders.size() == y.offenders.size());
    for (size_t k = 0; k < x.offenders.size(); ++k) {
      const CheckOffender &o = x.offenders[k], &p = y.offenders[k];
      CHECK(o.node == p.node);
      CHECK(o.node_type == p.node_type);
      CHECK(o.kernel_name == p.kernel_name);
      CHECK(o.delay_us == p.delay_us);
      CHECK(o.blocker == p.blocker);
      CHECK(o.blocker_node_type == p.blocker_node_type);
      CHECK(o.blocker_kernel_name == p.blocker_kernel_name);
      CHECK(o.cause == p.cause);
    }
  }
}

}  // namespace

TEST_CASE("rules files read, write and read back to the same rules") {
  for (const char* f : {"rules/forkjoin.rules.json", "rules/profile.rules.json"}) {
    CAPTURE(f);
    CheckRules r = parse_check_rules(test::read_data(f), "r.json");
    const std::string text = write_rules_json(r);
    CheckRules back = parse_check_rules(text, "r.json");
    check_same(r, back);
    CHECK(write_rules_json(back) == text);
  }
  CheckRules all;
  all.max_nodes = 500, all.max_kernels = 400, all.max_depth = 12;
  all.forbid_types = {NodeType::host, NodeType::mem_alloc, NodeType::conditional};
  all.baseline = "/abs/base.json";
  all.node_count_tolerance_pct = 2.5;
  all.max_blocking_fake_us = 0.125;
  all.min_critical_path_efficiency = 0.875;
  const std::string text = write_rules_json(all);
  check_same(all, parse_check_rules(text, "dir/r.json"));  // an absolute baseline stays as it is
  CHECK(write_rules_json(parse_check_rules(text, "r.json")) == text);
  CHECK(write_rules_json(CheckRules{}) ==
        "{\n  \"schema\": \"graphscope.rules/1\",\n  \"graphscope_version\": \"" GRAPHSCOPE_VERSION "\"\n}\n");
}

TEST_CASE("check results of recorded graphs and profiles read back to the same result and bytes") {
  struct Case {
    const char *graph, *profile, *rules;
    const char* baseline;
  };
  const Case cases[] = {
      {"profiles/wide.c1.graph.json", "profiles/wide.c1.offline.profile.json", "rules/profile.rules.json", nullptr},
      {"profiles/copies.c8.graph.json", "profiles/copies.c8.offline.profile.json", "rules/profile.rules.json",
       nullptr},
      {"captures/forkjoin.json", nullptr, "rules/forkjoin.rules.json", "nvidia/forkjoin.dot"},
      {"captures/mixed.json", nullptr, nullptr, nullptr},
  };
  for (const Case& c : cases) {
    CAPTURE(c.graph);
    GraphDocument doc = load_graph(test::data_path(c.graph));
    CheckRules rules;
    if (c.rules) rules = parse_check_rules(test::read_data(c.rules), "r.json");
    rules.forbid_types = {NodeType::host, NodeType::memcpy};
    rules.max_nodes = 8;
    rules.max_depth = 3;
    std::optional<ProfileDocument> profile;
    if (c.profile) profile = read_profile_json(test::read_data(c.profile), c.profile);
    std::optional<GraphDocument> base;
    if (c.baseline) {
      base = load_graph(test::data_path(c.baseline));
      rules.baseline = c.baseline;
      rules.node_count_tolerance_pct = 5;
    }
    CheckResult r = run_checks(doc, profile ? &*profile : nullptr, base ? &*base : nullptr, rules);
    r.graph = c.graph;
    if (c.profile) r.profile = c.profile;
    if (c.baseline) r.baseline = c.baseline;
    const std::string text = write_check_json(r);
    CheckResult back = read_check_json(text, "c.json");
    check_same(r, back);
    CHECK(write_check_json(back) == text);
  }
}

TEST_CASE("a check result that contradicts itself is refused") {
  auto err = [](const std::string& text) {
    try {
      read_check_json(text, "c.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string head = R"({"schema": "graphscope.check/1", "graph": "g.json", "profile": null, "baseline": null, )";
  CHECK(err(head + R"("passed": true, "rules": 0, "failed": 0, "results": []})") == "");
  CHECK(err(head + R"("passed": false, "rules": 0, "failed": 0, "results": []})") ==
        "c.json (passed: disagrees with the results listed)");
  CHECK(err(head + R"("passed": true, "rules": 2, "failed": 0, "results": []})") ==
        "c.json (rules: disagrees with the results listed)");
  CHECK(err(R"({"schema": "graphscope.profile/1"})") ==
        "c.json (schema: \"graphscope.profile/1\" is not a check result (expected graphscope.check/1))");
}

TEST_CASE("a figure JSON cannot hold is written as null and read back as one") {
  // Found by fuzz_rules: a node count against an empty baseline is infinitely
  // many percent off; the writer writes null, which the reader must take.
  GraphDocument doc = load_graph(test::data_path("captures/forkjoin.json"));
  GraphDocument empty;
  CheckRules rules;
  rules.baseline = "base.json";
  rules.node_count_tolerance_pct = 5.5;
  CheckResult r = run_checks(doc, nullptr, &empty, rules);
  r.graph = "g.json";
  r.baseline = "base.json";
  REQUIRE(r.results.size() == 1);
  CHECK_FALSE(std::isfinite(r.results[0].measured));
  const std::string text = write_check_json(r);
  CHECK(text.find("\"measured\": null") != std::string::npos);
  CheckResult back = read_check_json(text, "c.json");
  CHECK(std::isnan(back.results[0].measured));
  CHECK(write_check_json(back) == text);
}
