#include "validate.h"

#include <algorithm>
#include <unordered_set>

#include "error.h"
#include "topology.h"

namespace graphscope {
namespace {

std::string at(const std::string& where, uint32_t i) { return where + "[" + std::to_string(i) + "]"; }

void validate(const Graph& g, const std::string& where, const std::string& origin,
              std::optional<uint32_t> exec_id, int depth) {
  auto fail = [&](const std::string& path, const std::string& why) { throw_input(origin, path + ": " + why); };
  if (depth > kMaxNesting) fail(where, "graphs nested deeper than " + std::to_string(kMaxNesting));
  const size_t n = g.nodes.size();
  if (n > UINT32_MAX - 1) fail(where, "too many nodes");
  std::vector<std::vector<uint32_t>> expected(n);
  std::unordered_set<uint32_t> node_ids;
  node_ids.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    const std::string p = at(where, i);
    if (node.index != i) fail(p + ".index", "is " + std::to_string(node.index) + ", expected " + std::to_string(i));
    if (!node_ids.insert(node.node_id).second)
      fail(p + ".node_id", std::to_string(node.node_id) + " is used by an earlier node too");
    for (size_t k = 0; k < node.dependencies.size(); ++k) {
      uint32_t d = node.dependencies[k].from;
      std::string dp = p + ".dependencies[" + std::to_string(k) + "]";
      if (d >= n)
        fail(dp, "node " + std::to_string(d) + " does not exist (" + where + " has " + std::to_string(n) + " nodes)");
      if (d == i) fail(dp, "the node depends on itself");
      expected[d].push_back(i);
    }
    if (node.tools_id && node.graph_id) {
      uint64_t want = (uint64_t(*node.graph_id) << 32) | node.node_id;
      if (*node.tools_id != want)
        fail(p + ".tools_id", std::to_string(*node.tools_id) + " is not (graph_id << 32) | node_id = " +
                                  std::to_string(want));
    }
    if (depth == 0 && exec_id && node.tools_id && node.graph_id && *node.graph_id != *exec_id)
      fail(p + ".graph_id", std::to_string(*node.graph_id) + " differs from exec_graph_id " +
                                std::to_string(*exec_id));
    if (!node.bodies.empty() && node.type != NodeType::child_graph && node.type != NodeType::conditional &&
        node.type != NodeType::unknown)
      fail(p + ".bodies", std::string("a ") + std::string(to_string(node.type)) + " node has no bodies");
    if (node.type == NodeType::child_graph && node.bodies.size() > 1)
      fail(p + ".bodies", "a child graph node has one body, not " + std::to_string(node.bodies.size()));
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    // Duplicate edges: the same upstream node listed twice.
    std::vector<uint32_t> deps;
    deps.reserve(node.dependencies.size());
    for (const auto& d : node.dependencies) deps.push_back(d.from);
    std::sort(deps.begin(), deps.end());
    auto dup = std::adjacent_find(deps.begin(), deps.end());
    if (dup != deps.end()) fail(at(where, i) + ".dependencies", "lists node " + std::to_string(*dup) + " twice");
    std::vector<uint32_t> given = node.dependents;
    std::sort(given.begin(), given.end());
    auto& want = expected[i];  // built in increasing order of i
    if (given != want) {
      std::vector<uint32_t> extra, missing;
      std::set_difference(given.begin(), given.end(), want.begin(), want.end(), std::back_inserter(extra));
      std::set_difference(want.begin(), want.end(), given.begin(), given.end(), std::back_inserter(missing));
      std::string p = at(where, i) + ".dependents";
      if (!extra.empty())
        fail(p, "lists " + std::to_string(extra[0]) + ", but " + at(where, extra[0]) +
                    ".dependencies does not list " + std::to_string(i));
      if (!missing.empty())
        fail(p, "does not list " + std::to_string(missing[0]) + ", but " + at(where, missing[0]) +
                    ".dependencies lists " + std::to_string(i));
      fail(p, "lists a node twice");
    }
  }
  topological_order(g, where, origin);
  for (uint32_t i = 0; i < n; ++i)
    for (size_t b = 0; b < g.nodes[i].bodies.size(); ++b)
      validate(g.nodes[i].bodies[b], at(where, i) + ".bodies[" + std::to_string(b) + "].nodes", origin, exec_id,
               depth + 1);
}

}  // namespace

void validate_graph(const GraphDocument& doc, const std::string& origin) {
  validate(doc.root, "nodes", origin, doc.exec_graph_id, 0);
}

}  // namespace graphscope
