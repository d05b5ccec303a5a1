#include "summary.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <unordered_map>

#include "../model/collective.h"
#include "../core/demangle.h"
#include "fold.h"
#include "../model/origin_view.h"
#include "../core/text.h"
#include "../model/topology.h"

namespace graphscope {
namespace {

struct Counts {
  std::array<size_t, kNodeTypeCount> types{};
  std::array<size_t, 3> edge_types{};
  std::unordered_map<std::string_view, size_t> kernels;
  size_t nodes = 0, edges = 0, nested = 0;
};

void count(const Graph& g, Counts& c) {
  for (const auto& n : g.nodes) {
    ++c.nodes;
    ++c.types[size_t(n.type)];
    c.edges += n.dependencies.size();
    for (const auto& d : n.dependencies) ++c.edge_types[size_t(d.type)];
    if (n.type == NodeType::kernel) ++c.kernels[n.kernel_name];
    c.nested += n.bodies.size();
    for (const auto& b : n.bodies) count(b, c);
  }
}

}  // namespace

GraphSummary summarize(const GraphDocument& doc, size_t top) {
  GraphSummary s;
  Counts c;
  count(doc.root, c);
  s.nodes = c.nodes;
  s.top_nodes = doc.root.nodes.size();
  s.edges = c.edges;
  s.nested_graphs = c.nested;
  s.collectives = count_collectives(doc.root);
  for (int t = 0; t < kNodeTypeCount; ++t)
    if (c.types[t]) s.by_type.emplace_back(std::string(to_string(NodeType(t))), c.types[t]);
  for (int t = 1; t < 3; ++t)
    if (c.edge_types[t]) s.edge_types.emplace_back(std::string(to_string(EdgeType(t))), c.edge_types[t]);
  for (const auto& [name, n] : c.kernels) s.top_kernels.emplace_back(std::string(name), n);
  std::sort(s.top_kernels.begin(), s.top_kernels.end(),
            [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  if (s.top_kernels.size() > top) s.top_kernels.resize(top);
  KernelNamer names(kSummaryNameWidth);
  for (const auto& [name, n] : c.kernels) names.add(name);
  for (const auto& [name, n] : s.top_kernels) s.top_kernel_names.push_back(names(name));

  // Depth and width of the root graph (levels count nodes from a root).
  const auto& nodes = doc.root.nodes;
  Topology t = topology(doc.root, "nodes", "graph");
  s.depth = t.depth, s.width = t.width, s.width_level = t.width_level;
  for (const auto& n : nodes) {
    s.roots += n.dependencies.empty();
    s.leaves += n.dependents.empty();
  }
  return s;
}

std::string format_summary(const GraphDocument& doc, const GraphSummary& s, const std::string& origin,
                           const Folding* folding) {
  std::string out;
  char buf[512];
  // Every value is one line; names in it (the document's, the device's, the
  // input's path, kernels in the repeats) are shown escaped, whole.
  auto line = [&](const char* key, const std::string& value) {
    out += padded(key, 14) + " " + printable(value) + "\n";
  };
  auto id = [](const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  std::string what = origin;
  if (!doc.source_format.empty()) what += " (" + doc.source_format + ")";
  line("graph", what);
  if (!doc.name.empty()) line("name", doc.name);
  if (doc.device) {
    std::string d = doc.device->name;
    if (doc.device->driver_version) d += ", driver API " + std::to_string(*doc.device->driver_version);
    line("device", d);
  }
  line("ids", "exec graph " + id(doc.exec_graph_id) + ", template graph " + id(doc.root.graph_id));
  std::string nodes = std::to_string(s.nodes);
  if (s.nested_graphs)
    nodes += " (" + std::to_string(s.top_nodes) + " in the root graph, " + std::to_string(s.nodes - s.top_nodes) +
             " in " + std::to_string(s.nested_graphs) + " nested graph" + (s.nested_graphs == 1 ? "" : "s") + ")";
  line("nodes", nodes);
  std::string edges = std::to_string(s.edges);
  for (const auto& [t, n] : s.edge_types) edges += ", " + std::to_string(n) + " " + t;
  line("edges", edges);
  line("depth", std::to_string(s.depth) + " (nodes on the longest path of the root graph)");
  line("width", std::to_string(s.width) + (s.width ? " (at level " + std::to_string(s.width_level) + ")" : ""));
  line("roots/leaves", std::to_string(s.roots) + " / " + std::to_string(s.leaves));
  if (s.collectives) line("collectives", std::to_string(s.collectives) + " (NCCL, RCCL or in-graph all-reduce kernels)");
  std::optional<Folding> found;
  if (!folding) folding = &found.emplace(find_repeats(doc.root));
  const std::string repeats = describe_folding(*folding, doc.root.nodes.size());
  if (!repeats.empty()) line("repeats", repeats);
  out += format_origins(doc.root);
  // A capture's own record, when the document carries it.
  for (const auto& w : doc.warnings) line("warning", w);
  std::string text;
  auto add = [&](const std::optional<double>& v, const char* label, const char* unit, double scale) {
    if (!v) return;
    std::snprintf(buf, sizeof buf, "%s%s %.3g %s", text.empty() ? "" : ", ", label, *v * scale, unit);
    text += buf;
  };
  if (const auto& t = doc.timings) {
    add(t->capture_ms, "capture", "ms", 1);
    add(t->instantiate_ms, "instantiate", "ms", 1);
    add(t->walk_ms, "walk", "ms", 1);
    add(t->first_replay_ms, "first replay", "ms", 1);
    add(t->steady_replay_ms, "steady replay", "ms", 1);
    if (!text.empty()) line("timings", text);
  }
  if (const auto& m = doc.graph_memory) {
    text.clear();
    add(double(m->used_current), "used", "MiB", 1.0 / (1 << 20));
    add(double(m->reserved_current), "reserved", "MiB", 1.0 / (1 << 20));
    line("graph memory", text);
  }
  out += "\nnode types\n";
  for (const auto& [t, n] : s.by_type) out += "  " + padded(t, 18) + " " + std::to_string(n) + "\n";
  if (!s.top_kernels.empty()) {
    out += "\ntop kernels\n";
    std::vector<std::string> shown;
    size_t width = 52;  // the name column: wider (up to kSummaryNameWidth) for longer names
    for (size_t i = 0; i < s.top_kernels.size(); ++i) {
      const std::string& name = s.top_kernels[i].first;
      shown.push_back(printable(i < s.top_kernel_names.size() ? s.top_kernel_names[i]
                                                              : short_kernel_name(name, kSummaryNameWidth)));
      width = std::min(std::max(width, shown.back().size()), kSummaryNameWidth);
    }
    for (size_t i = 0; i < s.top_kernels.size(); ++i) {
      std::snprintf(buf, sizeof buf, "  %6zu  ", s.top_kernels[i].second);
      out += buf + padded(shown[i], width) + " " + printable(shortened(s.top_kernels[i].first, 100)) + "\n";
    }
  }
  return out;
}

}  // namespace graphscope
