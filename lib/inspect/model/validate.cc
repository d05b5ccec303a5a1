#include "validate.h"

#include <algorithm>
#include <unordered_set>

#include "../core/error.h"
#include "../core/text.h"
#include "topology.h"

namespace graphscope {
namespace {

std::string at(const std::string& where, uint32_t i) { return where + "[" + std::to_string(i) + "]"; }

// Whether node ids repeat: the index of the first node whose id an earlier
// node has, or n. Ids are mostly 0..n-1: a bitmap then, a hash set when they
// are sparse.
uint32_t first_repeated_id(const Graph& g) {
  const uint32_t n = uint32_t(g.nodes.size());
  uint32_t top = 0;
  for (const Node& node : g.nodes) top = std::max(top, node.node_id);
  if (top <= 4 * uint64_t(n) + 1024) {
    std::vector<bool> seen(size_t(top) + 1);
    for (uint32_t i = 0; i < n; ++i) {
      auto bit = seen[g.nodes[i].node_id];
      if (bit) return i;
      bit = true;
    }
    return n;
  }
  std::unordered_set<uint32_t> ids;
  ids.reserve(n);
  for (uint32_t i = 0; i < n; ++i)
    if (!ids.insert(g.nodes[i].node_id).second) return i;
  return n;
}

void validate(const Graph& g, const std::string& where, const std::string& origin,
              std::optional<uint32_t> exec_id, int depth) {
  auto fail = [&](const std::string& path, const std::string& why) { throw_input(origin, path + ": " + why); };
  if (depth > kMaxNesting) fail(where, "graphs nested deeper than " + std::to_string(kMaxNesting));
  const size_t n = g.nodes.size();
  if (n > UINT32_MAX - 1) fail(where, "too many nodes");
  // The dependents each node should list, all in one array: node d's are
  // expected[first[d] .. first[d + 1]), in increasing order. Paths are made
  // only for a message: a large graph is read without a string per edge.
  std::vector<uint32_t> first(n + 1, 0);
  for (const Node& node : g.nodes)
    for (const auto& d : node.dependencies)
      if (d.from < n) ++first[d.from + 1];
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<uint32_t> expected(first[n]);
  std::vector<uint32_t> fill(first.begin(), first.end() - 1);
  const uint32_t repeated = first_repeated_id(g);
  for (uint32_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    if (node.index != i)
      fail(at(where, i) + ".index", "is " + std::to_string(node.index) + ", expected " + std::to_string(i));
    if (i == repeated)
      fail(at(where, i) + ".node_id", std::to_string(node.node_id) + " is used by an earlier node too");
    for (size_t k = 0; k < node.dependencies.size(); ++k) {
      uint32_t d = node.dependencies[k].from;
      if (d >= n || d == i) {
        std::string dp = at(where, i) + ".dependencies[" + std::to_string(k) + "]";
        if (d >= n)
          fail(dp, "node " + std::to_string(d) + " does not exist: its graph has " + plural(n, "node", "nodes"));
        fail(dp, "the node depends on itself");
      }
      expected[fill[d]++] = i;
    }
    if (node.tools_id && node.graph_id) {
      uint64_t want = (uint64_t(*node.graph_id) << 32) | node.node_id;
      if (*node.tools_id != want)
        fail(at(where, i) + ".tools_id", std::to_string(*node.tools_id) + " is not (graph_id << 32) | node_id = " +
                                            std::to_string(want));
    }
    if (depth == 0 && exec_id && node.tools_id && node.graph_id && *node.graph_id != *exec_id)
      fail(at(where, i) + ".graph_id", std::to_string(*node.graph_id) + " differs from exec_graph_id " +
                                          std::to_string(*exec_id));
    if (!node.bodies.empty() && node.type != NodeType::child_graph && node.type != NodeType::conditional &&
        node.type != NodeType::unknown)
      fail(at(where, i) + ".bodies", std::string("a ") + std::string(to_string(node.type)) + " node has no bodies");
    if (node.type == NodeType::child_graph && node.bodies.size() > 1)
      fail(at(where, i) + ".bodies", "a child graph node has one body, not " + std::to_string(node.bodies.size()));
  }
  std::vector<uint32_t> deps, given;  // reused: no allocation per node
  for (uint32_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    // Duplicate edges: the same upstream node listed twice.
    deps.clear();
    for (const auto& d : node.dependencies) deps.push_back(d.from);
    std::sort(deps.begin(), deps.end());
    auto dup = std::adjacent_find(deps.begin(), deps.end());
    if (dup != deps.end()) fail(at(where, i) + ".dependencies", "lists node " + std::to_string(*dup) + " twice");
    given.assign(node.dependents.begin(), node.dependents.end());
    std::sort(given.begin(), given.end());
    const uint32_t* want = expected.data() + first[i];
    const size_t wants = first[i + 1] - first[i];
    if (given.size() != wants || !std::equal(given.begin(), given.end(), want)) {
      std::vector<uint32_t> extra, missing;
      std::set_difference(given.begin(), given.end(), want, want + wants, std::back_inserter(extra));
      std::set_difference(want, want + wants, given.begin(), given.end(), std::back_inserter(missing));
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
