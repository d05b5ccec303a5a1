// "graphscope.check/1": a check's result as JSON, written and read back on
// the same struct (CheckResult).
#pragma once

#include <string>
#include <string_view>

#include "../analysis/check.h"

namespace graphscope {

inline constexpr std::string_view kCheckSchema = "graphscope.check/1";

/// "graphscope.check/1" JSON.
std::string write_check_json(const CheckResult& r);

/// Reads a "graphscope.check/1" document (everything write_check_json
/// writes; a rule's note is part of its message and is not read back).
/// Throws Error(bad_input) "origin (json.path: why)" on any problem.
CheckResult read_check_json(std::string_view text, const std::string& origin);

}  // namespace graphscope
