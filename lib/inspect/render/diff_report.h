// The readable report of `graphscope diff`: rendering only; diff.h computes.
#pragma once

#include <cstddef>
#include <string>

#include "../analysis/diff.h"

namespace graphscope {

/// The readable report: a header line per document, a verdict line, then
/// one line per group of added, removed and changed nodes and edges (at most
/// max_lines per section; --json has all), depth and width changes, nested
/// bodies. a_origin and b_origin name the documents.
std::string format_diff(const GraphDiff& d, const std::string& a_origin, const std::string& b_origin,
                        size_t max_lines = 20);

}  // namespace graphscope
