#include "topology.h"

#include <algorithm>

#include "../core/error.h"

namespace graphscope {

std::vector<uint32_t> topological_order(const Graph& g, const std::string& where, const std::string& origin) {
  const size_t n = g.nodes.size();
  std::vector<uint32_t> indegree(n, 0), order;
  order.reserve(n);
  for (uint32_t i = 0; i < n; ++i) indegree[i] = uint32_t(g.nodes[i].dependencies.size());
  for (uint32_t i = 0; i < n; ++i)
    if (indegree[i] == 0) order.push_back(i);
  for (size_t head = 0; head < order.size(); ++head)
    for (uint32_t next : g.nodes[order[head]].dependents)
      if (next < n && --indegree[next] == 0) order.push_back(next);
  if (order.size() != n) {
    // Walk backwards along dependencies from any unplaced node until a node
    // repeats: that stretch is a cycle.
    uint32_t start = 0;
    while (indegree[start] == 0) ++start;
    std::vector<int64_t> seen(n, -1);
    std::vector<uint32_t> path;
    uint32_t cur = start;
    while (seen[cur] < 0) {
      seen[cur] = int64_t(path.size());
      path.push_back(cur);
      for (const auto& d : g.nodes[cur].dependencies)
        if (d.from < n && indegree[d.from] != 0) {
          cur = d.from;
          break;
        }
    }
    std::string cycle;
    for (size_t k = size_t(seen[cur]); k < path.size(); ++k) cycle = std::to_string(path[k]) + " -> " + cycle;
    cycle = std::to_string(cur) + " -> " + cycle;
    cycle.resize(cycle.size() - 4);
    throw_input(origin, where + "[" + std::to_string(cur) + "]: on a dependency cycle (" + cycle + ")");
  }
  return order;
}

Topology topology(const Graph& g, const std::string& where, const std::string& origin) {
  Topology t;
  t.order = topological_order(g, where, origin);
  const size_t n = g.nodes.size();
  t.level.assign(n, 1);
  t.height.assign(n, 1);
  for (uint32_t i : t.order)
    for (const auto& d : g.nodes[i].dependencies) t.level[i] = std::max(t.level[i], t.level[d.from] + 1);
  for (size_t k = n; k-- > 0;) {
    uint32_t i = t.order[k];
    for (uint32_t next : g.nodes[i].dependents) t.height[i] = std::max(t.height[i], t.height[next] + 1);
  }
  for (uint32_t l : t.level) t.depth = std::max<size_t>(t.depth, l);
  std::vector<size_t> per_level(t.depth + 1, 0);
  for (uint32_t l : t.level) ++per_level[l];
  for (size_t l = 1; l < per_level.size(); ++l)
    if (per_level[l] > t.width) t.width = per_level[l], t.width_level = l;
  return t;
}

}  // namespace graphscope
