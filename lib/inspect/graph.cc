#include "graph.h"

#include <algorithm>
#include <array>

namespace graphscope {
namespace {
constexpr std::array<std::string_view, kNodeTypeCount> kNodeTypeNames = {
    "kernel",       "memcpy",         "memset",      "host",           "child_graph",
    "empty",        "wait_event",     "event_record", "ext_semas_signal", "ext_semas_wait",
    "mem_alloc",    "mem_free",       "conditional", "batch_mem_op",   "unknown"};
constexpr std::array<std::string_view, 3> kEdgeTypeNames = {"default", "programmatic",
                                                             "launch_completion"};
}  // namespace

std::string_view to_string(NodeType t) { return kNodeTypeNames[static_cast<size_t>(t)]; }

bool parse_node_type(std::string_view s, NodeType* out) {
  for (size_t i = 0; i < kNodeTypeNames.size(); ++i)
    if (kNodeTypeNames[i] == s) {
      *out = static_cast<NodeType>(i);
      return true;
    }
  return false;
}

std::string_view to_string(EdgeType t) { return kEdgeTypeNames[static_cast<size_t>(t)]; }

bool parse_edge_type(std::string_view s, EdgeType* out) {
  for (size_t i = 0; i < kEdgeTypeNames.size(); ++i)
    if (kEdgeTypeNames[i] == s) {
      *out = static_cast<EdgeType>(i);
      return true;
    }
  return false;
}

void link_dependents(Graph& g) {
  for (auto& n : g.nodes) n.dependents.clear();
  for (const auto& n : g.nodes)
    for (const auto& d : n.dependencies)
      if (d.from < g.nodes.size()) g.nodes[d.from].dependents.push_back(n.index);
  for (auto& n : g.nodes) {
    // Dependencies are visited in node order, so dependents come out sorted
    // unless indices are out of order; sort to be sure.
    if (!std::is_sorted(n.dependents.begin(), n.dependents.end()))
      std::sort(n.dependents.begin(), n.dependents.end());
    for (auto& b : n.bodies) link_dependents(b);
  }
}

size_t total_nodes(const Graph& g) {
  size_t n = g.nodes.size();
  for (const auto& node : g.nodes)
    for (const auto& b : node.bodies) n += total_nodes(b);
  return n;
}

}  // namespace graphscope

namespace graphscope {

std::string Origin::module() const {
  if (modules.empty()) return "";
  if (!modules.back().name.empty()) return modules.back().name;
  return modules.back().type;
}

std::string Origin::describe() const {
  if (!modules.empty()) return module();
  if (!nvtx.empty()) {
    std::string s;
    for (const auto& r : nvtx) s += (s.empty() ? "" : " / ") + r.message;
    return s;
  }
  if (!python.empty()) return python.front().file + ":" + std::to_string(python.front().line);
  if (native) return native->function.empty() ? native->object : native->function;
  return op;
}

}  // namespace graphscope
