// "graphscope.profile/1": the profile report as JSON, written and read back
// on the same struct. Each node line also says which graph node it is
// (tools id, kernel name, node type), so that a report read back without
// its graph can be checked against one (graphscope check --profile).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../model/graph.h"
#include "../analysis/profile.h"

namespace graphscope {

inline constexpr std::string_view kProfileSchema = "graphscope.profile/1";

/// Writes the report of doc's graph.
std::string write_profile_json(const ProfileReport& r, const GraphDocument& doc);

/// Reads a "graphscope.profile/1" report (every key write_profile_json
/// writes; unknown keys are ignored). Throws Error(bad_input) "origin
/// (json.path: why)" when it is not valid JSON, its schema is not
/// graphscope.profile/1, or a field is missing or wrong.
ProfileDocument read_profile_json(std::string_view text, const std::string& origin);

/// Throws Error(bad_input) naming the report when it does not describe the
/// graph: another node count, or a node whose tools id or kernel differs.
void check_profile_matches(const ProfileDocument& p, const GraphDocument& doc, const std::string& profile_origin,
                           const std::string& graph_origin);

}  // namespace graphscope
