// `graphscope check`: rules a CI pipeline gates on (graph shape, and with a
// profile report, fake dependencies and critical-path efficiency), read from a
// rules file ("graphscope.rules/1") and flags, checked against a graph, and
// reported as text, JSON ("graphscope.check/1") or JUnit XML.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/error.h"
#include "../model/graph.h"
#include "profile.h"

namespace graphscope {

/// The keys of a rules file, in the order results are reported (a result's
/// rule is its key).
namespace rules_key {
inline constexpr std::string_view kMaxNodes = "max_nodes";
inline constexpr std::string_view kMaxKernels = "max_kernels";
inline constexpr std::string_view kForbidTypes = "forbid_types";
inline constexpr std::string_view kMaxDepth = "max_depth";
inline constexpr std::string_view kIdenticalRepeats = "identical_repeats";
inline constexpr std::string_view kBaseline = "baseline";
inline constexpr std::string_view kTolerance = "node_count_tolerance_pct";
inline constexpr std::string_view kBlockingFake = "max_blocking_fake_us";
inline constexpr std::string_view kEfficiency = "min_critical_path_efficiency";
inline constexpr std::string_view kAccountShare = "max_account_share";
}  // namespace rules_key

/// The rules to check. Every rule is optional; limits are inclusive (a value
/// equal to its limit passes).
struct CheckRules {
  std::optional<uint64_t> max_nodes;    // all nodes, nested bodies included
  std::optional<uint64_t> max_kernels;  // kernel nodes, nested bodies included
  std::vector<NodeType> forbid_types;   // no node of these types, anywhere
  std::optional<uint64_t> max_depth;    // nodes on the longest path of the root graph
  bool identical_repeats = false;       // no copy of a repeated block differs from its siblings (fold.h)
  // The node count within +-pct percent of the baseline document's.
  std::string baseline;  // a graph document path ("" none); relative paths of a
                         // rules file are already resolved against its directory
  std::optional<double> node_count_tolerance_pct;
  // Needs a profile report: no blocking node waits behind its fake
  // dependency more than this many microseconds (its fake wait, profile.h:
  // what the account charges it on the chain; off the chain too). The
  // account share below says what such waits cost the makespan.
  std::optional<double> max_blocking_fake_us;
  // Needs a profile report: critical_path_us / makespan_us at least this.
  std::optional<double> min_critical_path_efficiency;
  // Needs a profile report with its account (account.h): each part at most
  // this share (0 to 1) of the makespan, by the account's JSON key
  // ("latency", "fake_same_channel", ...) or "fake" (all fake waits).
  std::vector<std::pair<std::string, double>> max_account_share;

  /// True when no rule is set.
  bool empty() const;
  /// True when a rule needs a profile report.
  bool needs_profile() const;
  /// The rules-file keys of the rules that need a profile report.
  std::vector<std::string> profile_rules() const;
};

/// Sets in `base` every rule that `flags` sets (flags override the rules
/// file; a non-empty forbid list replaces the file's).
void override_rules(CheckRules& base, const CheckRules& flags);

/// Throws Error(usage) when the rules cannot be run as given: none at all, a
/// baseline without a tolerance or the other way round, or a rule that needs
/// a profile report when have_profile is false.
void check_rules_usable(const CheckRules& rules, bool have_profile);

/// A node a failing rule names.
struct CheckOffender {
  std::string node;  // "12", or "3/0/1" for node 1 of body 0 of node 3
  std::string node_type;
  std::string kernel_name;  // mangled; empty for non-kernel nodes
  std::optional<double> delay_us;  // the blocking rule's: the node's fake wait
  std::optional<uint32_t> blocker;
  std::string blocker_node_type;
  std::string blocker_kernel_name;
  std::string cause;
};

/// The outcome of one rule.
struct RuleResult {
  std::string rule;  // the rules-file key: "max_nodes", "forbid_types", ...
  bool passed = false;
  double measured = 0, limit = 0;
  std::string unit;                                     // "nodes", "kernels", "%", "us", "" for ratios
  std::vector<std::string> types;                       // forbid_types: the types
  std::vector<std::pair<std::string, double>> details;  // other figures ("baseline_nodes", "makespan_us")
  std::string summary;                                  // "66 nodes <= 500": measured against the limit
  std::string note;                      // what was measured ("nested graphs included"); may be empty
  std::string message;                   // one line: summary (note): the worst offenders
  std::vector<CheckOffender> offenders;  // the worst first, at most kMaxOffenders
  size_t offender_count = 0;             // all of them
};

inline constexpr size_t kMaxOffenders = 10;

struct CheckResult {
  std::string graph, profile, baseline;  // the inputs as named to the user ("" none)
  std::vector<RuleResult> results;       // in the fixed order of the rules-file keys
  size_t failed = 0;
  bool passed() const { return failed == 0; }
};

/// Runs every rule that is set. profile is needed by the profile rules and
/// baseline by the node count tolerance (check_rules_usable says so first).
CheckResult run_checks(const GraphDocument& doc, const ProfileDocument* profile, const GraphDocument* baseline,
                       const CheckRules& rules);

/// One offender on one line: "node 2 scale 12.51 us (after node 1 scale,
/// same channel)".
std::string describe(const CheckOffender& o);

}  // namespace graphscope
