// The shape of a graph, computed once: a topological order, each node's
// level, depth and width. Used by the summary, diff, profile and validation,
// with one convention: a root is level 1 and a node's level is the number of
// nodes on the longest path from a root to it, so depth (the longest path,
// in nodes) is the largest level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph.h"

namespace graphscope {

struct Topology {
  std::vector<uint32_t> order;   // Kahn's order: roots in index order, then as they become free
  std::vector<uint32_t> level;   // per node: nodes on the longest path from a root (roots: 1)
  std::vector<uint32_t> height;  // per node: nodes on the longest path to a leaf (leaves: 1)
  size_t depth = 0;              // the largest level; 0 for an empty graph
  size_t width = 0;              // most nodes on one level
  size_t width_level = 0;        // the first level that has them (0 for an empty graph)
};

/// The topology of g (dependents must be linked, as every reader leaves
/// them). Throws Error(bad_input) naming the nodes of a cycle, with where
/// ("nodes") and origin in the message.
Topology topology(const Graph& g, const std::string& where, const std::string& origin);

/// The nodes of g in Kahn's order (as Topology::order), or throws
/// Error(bad_input) "origin (where[3]: on a dependency cycle (1 -> 3 -> 1))".
std::vector<uint32_t> topological_order(const Graph& g, const std::string& where, const std::string& origin);

}  // namespace graphscope
