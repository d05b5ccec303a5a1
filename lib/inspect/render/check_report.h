// The text and JUnit renderings of a check's result (check.h computes it).
#pragma once

#include <string>

#include "../analysis/check.h"

namespace graphscope {

/// One line per rule ("PASS max_nodes  66 nodes <= 500 ..."), then a total.
std::string format_check(const CheckResult& r);
/// JUnit XML: one testsuite, one testcase per rule, a failure element (with
/// measured against limit) for each failed rule.
std::string write_check_junit(const CheckResult& r);


}  // namespace graphscope
