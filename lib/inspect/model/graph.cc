#include "graph.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "../core/hash.h"
#include "../core/parallel.h"

namespace graphscope {
namespace {
constexpr std::array<std::string_view, kNodeTypeCount> kNodeTypeNames = {
    "kernel",       "memcpy",         "memset",      "host",           "child_graph",
    "empty",        "wait_event",     "event_record", "ext_semas_signal", "ext_semas_wait",
    "mem_alloc",    "mem_free",       "conditional", "batch_mem_op",   "unknown"};
constexpr std::array<std::string_view, 3> kEdgeTypeNames = {"default", "programmatic",
                                                             "launch_completion"};
}  // namespace

std::string kernel_arg_value(const unsigned char* bytes, size_t size, size_t offset) {
  static const char hex[] = "0123456789abcdef";
  std::string s;
  if (size == 1 || size == 2 || size == 4 || size == 8) {
    uint64_t v = 0;
    for (size_t i = size; i-- > 0;) v = (v << 8) | bytes[i];
    s = "0x";
    bool lead = true;
    for (int shift = 60; shift >= 0; shift -= 4) {
      const unsigned d = unsigned(v >> shift) & 15u;
      if (lead && d == 0 && shift) continue;
      lead = false;
      s += hex[d];
    }
    return s;
  }
  if (size <= KernelArg::kMaxHexBytes) {
    for (size_t i = 0; i < size; ++i) s += hex[bytes[i] >> 4], s += hex[bytes[i] & 15];
    return s;
  }
  std::string masked(reinterpret_cast<const char*>(bytes), size);
  for (size_t i = (8 - offset % 8) % 8; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, masked.data() + i, 8);
    if (is_address_word(w)) std::memset(masked.data() + i, 0, 8);
  }
  const uint64_t h = hash_text(masked);
  s = "#";
  for (int shift = 60; shift >= 0; shift -= 4) s += hex[unsigned(h >> shift) & 15u];
  return s;
}

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
  // Through flat arrays: the edges gathered in one pass over the nodes,
  // each node's dependents counted and placed, and then every node's list
  // made in parallel slices (a list per node was a hundred thousand
  // allocations in a row: 9 ms of a 100k-node walk on the H100).
  const size_t n = g.nodes.size();
  std::vector<uint32_t> start(n + 1, 0);
  std::vector<std::pair<uint32_t, uint32_t>> edges;  // (from, the dependent's index), in node order
  for (const auto& x : g.nodes)
    for (const auto& d : x.dependencies)
      if (d.from < n) {
        edges.emplace_back(d.from, x.index);
        ++start[d.from + 1];
      }
  for (size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<uint32_t> flat(edges.size());
  {
    std::vector<uint32_t> at(start.begin(), start.end() - 1);
    for (const auto& [from, to] : edges) flat[at[from]++] = to;
  }
  auto place = [&](unsigned, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      auto& v = g.nodes[i].dependents;
      v.assign(flat.begin() + start[i], flat.begin() + start[i + 1]);
      // Dependencies are visited in node order, so dependents come out
      // sorted unless indices are out of order; sort to be sure.
      if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
    }
  };
  parallel_slices(n, n >= 20000 ? worker_count(n, 5000, 16) : 1, place);
  for (auto& x : g.nodes)
    for (auto& b : x.bodies) link_dependents(b);
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
