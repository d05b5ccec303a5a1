// Structural validation of a graph: indices in range, dependency and
// dependent lists that agree, no cycles, ids consistent. Messages say which
// node, which field, and what was wrong.
#pragma once

#include <string>
#include <vector>

#include "graph.h"

namespace graphscope {

/// Maximum nesting of child graphs and conditional bodies accepted.
inline constexpr int kMaxNesting = 64;

/// Throws Error(bad_input) "origin (nodes[3].dependents: ...)" on the first
/// problem found: indices out of range, dependents lists that disagree with
/// the dependencies, duplicate edges or node ids, cycles, tools ids that are
/// not (graph_id << 32) | node_id, bodies on nodes that cannot have them.
void validate_graph(const GraphDocument& doc, const std::string& origin);

}  // namespace graphscope
