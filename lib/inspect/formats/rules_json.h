// "graphscope.rules/1": the rules file of `graphscope check`, read and
// written on the same struct (CheckRules).
#pragma once

#include <string>
#include <string_view>

#include "../analysis/check.h"
#include "../core/error.h"

namespace graphscope {

inline constexpr std::string_view kRulesSchema = "graphscope.rules/1";

/// Parses a rules file: a JSON object with "schema": "graphscope.rules/1" and
/// the keys max_nodes, max_kernels, forbid_types, max_depth, identical_repeats, baseline,
/// node_count_tolerance_pct, max_blocking_fake_us,
/// min_critical_path_efficiency and max_account_share (an object: account
/// part, or "fake", to its largest share of the makespan, 0 to 1). Unknown and repeated keys are errors. A
/// relative baseline is resolved against origin's directory. Throws
/// Error(bad_input) "origin (json.path: why)" on any problem, never crashes on
/// hostile input.
CheckRules parse_check_rules(const std::string& text, const std::string& origin);

/// Parses a node type name a rule may forbid ("host", "memcpy", ...). Throws
/// Error(code, what, why) listing the node types when it names none.
NodeType parse_forbidden_type(std::string_view name, ExitCode code, const std::string& what);

/// Whether a max_account_share key names an account part (account.h's JSON
/// keys) or "fake"; the names for a message in *names.
bool account_share_key(std::string_view key, std::string* names = nullptr);

/// Writes the rules that are set, in the order of the keys above. The
/// baseline is written as it stands (already resolved when it was read).
std::string write_rules_json(const CheckRules& rules);

}  // namespace graphscope
