// graphscope check GRAPH [--rules FILE] [--profile REPORT] [rule flags]
//   [--json] [--junit FILE] [-o OUT]
#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>

#include "commands.h"
#include "inspect/analysis/check.h"
#include "inspect/formats/check_json.h"
#include "inspect/formats/profile_json.h"
#include "inspect/render/check_report.h"
#include "inspect/formats/rules_json.h"
#include "inspect/core/text.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/formats/load.h"

namespace graphscope::cli {
namespace {

struct CheckCli {
  std::string graph, rules_file, profile, baseline, output = "-", junit;
  bool json = false;
  uint64_t max_nodes = 0, max_kernels = 0, max_depth = 0;
  bool identical_repeats = false;
  std::vector<std::string> forbid, account_share;
  double tolerance = 0, blocking_fake = 0, efficiency = 0;
  // Which rule flags were given (a flag overrides the rules file only then).
  CLI::Option *max_nodes_opt = nullptr, *max_kernels_opt = nullptr, *max_depth_opt = nullptr,
              *tolerance_opt = nullptr, *blocking_fake_opt = nullptr, *efficiency_opt = nullptr,
              *output_opt = nullptr;
};

std::string origin_of(const std::string& path) {
  return path == "-" ? "standard input" : path;
}

CheckRules rules_from_flags(const CheckCli& c) {
  CheckRules r;
  if (c.max_nodes_opt->count()) r.max_nodes = c.max_nodes;
  if (c.max_kernels_opt->count()) r.max_kernels = c.max_kernels;
  if (c.max_depth_opt->count()) r.max_depth = c.max_depth;
  if (c.identical_repeats) r.identical_repeats = true;
  for (const auto& name : c.forbid) {
    NodeType t = parse_forbidden_type(name, ExitCode::usage, "--forbid");
    if (std::find(r.forbid_types.begin(), r.forbid_types.end(), t) == r.forbid_types.end())
      r.forbid_types.push_back(t);
  }
  r.baseline = c.baseline;
  if (c.tolerance_opt->count()) r.node_count_tolerance_pct = c.tolerance;
  if (c.blocking_fake_opt->count()) r.max_blocking_fake_us = c.blocking_fake;
  if (c.efficiency_opt->count()) r.min_critical_path_efficiency = c.efficiency;
  for (const auto& s : c.account_share) {
    const size_t eq = s.find('=');
    std::string names;
    const std::string part = s.substr(0, eq);
    const bool known = account_share_key(part, &names);
    if (known) account_share_key("", &names);  // the list, for the message below
    if (eq == std::string::npos || !known)
      throw Error(ExitCode::usage, "--max-account-share",
                  quoted(s, 64) + " is not PART=SHARE; parts: " + names);
    double share = -1;
    const std::string value = s.substr(eq + 1);
    auto res = std::from_chars(value.data(), value.data() + value.size(), share);
    if (value.empty() || res.ec != std::errc() || res.ptr != value.data() + value.size() || !(share >= 0 && share <= 1))
      throw Error(ExitCode::usage, "--max-account-share", quoted(value, 64) + " is not a share from 0 to 1");
    r.max_account_share.push_back({part, share});
  }
  return r;
}

int run_check(const CheckCli& c) {
  // --junit - puts the XML on standard output in place of the report, unless
  // -o sends the report elsewhere; both on standard output would be neither.
  bool junit_only = c.junit == "-" && !c.output_opt->count();
  if (c.junit == "-" && c.output == "-" && !junit_only)
    throw Error(ExitCode::usage, "check", "--junit - and -o - would both write to standard output");
  CheckRules rules;
  if (!c.rules_file.empty()) rules = parse_check_rules(read_file(c.rules_file, json_head), origin_of(c.rules_file));
  override_rules(rules, rules_from_flags(c));
  check_rules_usable(rules, !c.profile.empty());
  if ((c.graph == "-") + (c.rules_file == "-") + (c.profile == "-") + (rules.baseline == "-") > 1)
    throw Error(ExitCode::usage, "check", "only one input can be standard input (-)");

  GraphDocument doc = load_graph(c.graph);
  std::optional<ProfileDocument> profile;
  if (!c.profile.empty()) {
    profile = read_profile_json(read_file(c.profile, json_head), origin_of(c.profile));
    check_profile_matches(*profile, doc, origin_of(c.profile), origin_of(c.graph));
  }
  std::optional<GraphDocument> baseline;
  if (!rules.baseline.empty()) baseline = load_graph(rules.baseline);

  CheckResult result = run_checks(doc, profile ? &*profile : nullptr, baseline ? &*baseline : nullptr, rules);
  result.graph = origin_of(c.graph);
  if (!c.profile.empty()) result.profile = origin_of(c.profile);
  if (!rules.baseline.empty()) result.baseline = origin_of(rules.baseline);
  // Everything rendered first: a failure to render leaves no file behind.
  std::string report = junit_only ? std::string() : c.json ? write_check_json(result) : format_check(result);
  std::string junit = c.junit.empty() ? std::string() : write_check_junit(result);
  OutputSet outputs;
  if (!c.junit.empty()) outputs.add(c.junit, junit);
  if (!junit_only) outputs.add(c.output, report);
  outputs.commit();
  return static_cast<int>(result.passed() ? ExitCode::ok : ExitCode::failed);
}

}  // namespace

Handler declare_check(CLI::App& sub) {
  auto c = std::make_shared<CheckCli>();
  sub.footer(
      "Limits are inclusive: a value equal to its limit passes. Flags override the rules file.\n"
      "Rules file (JSON): {\"schema\": \"graphscope.rules/1\", \"max_nodes\": 500, \"max_kernels\": 400,\n"
      "  \"forbid_types\": [\"host\"], \"max_depth\": 100, \"baseline\": \"base.json\", "
      "\"node_count_tolerance_pct\": 5,\n"
      "  \"max_blocking_fake_us\": 10, \"min_critical_path_efficiency\": 0.8,\n"
      "  \"max_account_share\": {\"fake\": 0.05, \"unexplained\": 0.02}}\n"
      "Unknown keys are errors; a relative baseline is relative to the rules file's directory.\n"
      "Exit: 0 every rule passed, 1 a rule failed, 2 usage error, 3 bad input file.");
  sub.add_option("GRAPH", c->graph,
                 "Graph document to check: .json (graphscope or PyTorch) or .dot; - reads stdin")
      ->required();
  sub.add_option("--rules", c->rules_file, "Rules file (graphscope.rules/1 JSON)");
  sub.add_option("--profile", c->profile,
                 "Profile report of this graph (graphscope profile --json), needed by the last two rules");
  sub.add_option("--baseline", c->baseline, "Baseline graph document for --node-count-tolerance");
  c->max_nodes_opt = sub.add_option("--max-nodes", c->max_nodes, "At most N nodes, nested graphs included")
                         ->check(whole_in(0, UINT64_MAX));
  c->max_kernels_opt =
      sub.add_option("--max-kernels", c->max_kernels, "At most N kernel nodes, nested graphs included")
          ->check(whole_in(0, UINT64_MAX));
  sub.add_option(
         "--forbid", c->forbid,
         "No node of this type (kernel, memcpy, memset, host, child_graph, empty, wait_event, event_record, "
         "ext_semas_signal, ext_semas_wait, mem_alloc, mem_free, conditional, batch_mem_op); repeatable, "
         "replaces the rules file's forbid_types")
      ->expected(1)
      ->allow_extra_args(false)  // one type per --forbid: the GRAPH after it stays positional
      ->take_all()
      ->delimiter(',');
  sub.add_flag("--identical-repeats", c->identical_repeats,
               "No copy of a repeated block (layers, branches) differs from its siblings");
  c->max_depth_opt =
      sub.add_option("--max-depth", c->max_depth, "At most N nodes on the longest path of the root graph")
          ->check(whole_in(0, UINT64_MAX));
  c->tolerance_opt = sub.add_option("--node-count-tolerance", c->tolerance,
                                    "The node count within +-PCT percent of the baseline's")
                         ->check(finite_in(0, 1e15, "a percentage"));
  c->blocking_fake_opt =
      sub.add_option("--max-blocking-fake-us", c->blocking_fake,
                     "No blocking node's fake wait (ready to its blocker's end, as the account counts it) over US "
                     "microseconds, anywhere in the graph (needs --profile)")
          ->check(finite_in(0, 1e15, "a number of microseconds"));
  c->efficiency_opt =
      sub.add_option("--min-critical-path-efficiency", c->efficiency,
                     "critical_path_us / makespan_us at least R, from 0 to 1 (needs --profile)")
          ->check(finite_in(0, 1, "a ratio"));
  sub.add_option("--max-account-share", c->account_share,
                 "PART=SHARE: that part of where the makespan went at most SHARE (0 to 1) of it; PART is an "
                 "account key (latency, concurrent, unexplained, fake_same_channel, ...) or fake (all fake "
                 "waits); repeatable (needs --profile)");
  sub.add_flag("--json", c->json, "Write the graphscope.check/1 report instead of text");
  sub.add_option(
      "--junit", c->junit,
      "Also write JUnit XML (one testsuite, one testcase per rule) to FILE; - writes it to standard "
      "output in place of the report unless -o gives a file");
  c->output_opt =
      sub.add_option("-o,--output", c->output, "Report file, written atomically (default: standard output)");
  return [c] { return run_check(*c); };
}

}  // namespace graphscope::cli
