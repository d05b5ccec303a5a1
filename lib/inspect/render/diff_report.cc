#include <algorithm>
#include <cstdio>
#include <map>

#include "../core/demangle.h"
#include "diff_report.h"
#include "../core/text.h"

namespace graphscope {

namespace {

// Names for kinds: kernels by KernelNamer (no two different kernels of one
// report read the same); escaped for the terminal (printable), as every
// name from the documents in this report.
class Namer {
 public:
  void add(const NodeKind& k) {
    if (k.type == NodeType::kernel) kernels_.add(k.name);
  }
  std::string operator()(const NodeKind& k) const {
    switch (k.type) {
      case NodeType::kernel:
        return printable(kernels_(k.name));
      case NodeType::conditional:
        return "conditional " + (k.name.empty() ? std::string("?") : printable(k.name));
      case NodeType::unknown:
        return k.name.empty() ? std::string("unknown") : printable(k.name);
      default:
        return std::string(to_string(k.type));
    }
  }

 private:
  KernelNamer kernels_{64};
};

// The longest name of a node group, here or in a nested body.
size_t widest(const StructureDiff& d, const Namer& n) {
  size_t w = 0;
  for (const auto* v : {&d.removed, &d.added})
    for (const auto& g : *v) w = std::max(w, n(g.kind).size());
  for (const auto& g : d.changed) w = std::max(w, n(g.kind).size());
  for (const auto& s : d.nested) w = std::max(w, widest(s.diff, n));
  return w;
}

void name_all(const StructureDiff& d, Namer& n) {
  for (const auto& g : d.removed) n.add(g.kind);
  for (const auto& g : d.added) n.add(g.kind);
  for (const auto& g : d.changed) n.add(g.kind);
  for (const auto* v : {&d.removed_edges, &d.added_edges, &d.retyped_edges})
    for (const auto& g : *v) n.add(g.from), n.add(g.to);
  for (const auto& s : d.nested) name_all(s.diff, n);
}

template <typename T, typename F>
std::string examples(const char* one, const char* many, const std::vector<T>& v, F text, size_t max = 3) {
  std::string s = std::string(v.size() == 1 ? one : many) + " ";
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + text(v[i]);
  if (v.size() > max) s += ", ...";
  return s;
}

std::string pair_text(const std::pair<uint32_t, uint32_t>& p) {
  return std::to_string(p.first) + "->" + std::to_string(p.second);
}

struct Writer {
  const Namer& name;
  size_t max_lines;
  std::string out;
  size_t width = 36;  // of the name column: the longest node name, 36 to 64

  void line(const std::string& indent, const std::string& s) { out += indent + s + "\n"; }

  template <typename G, typename F>
  void section(const std::string& indent, const char* title, const std::vector<G>& groups, F row) {
    if (groups.empty()) return;
    line(indent, title);
    for (size_t i = 0; i < groups.size() && i < max_lines; ++i) line(indent, "  " + row(groups[i]));
    if (groups.size() > max_lines)
      line(indent,
           "  ... " + plural(groups.size() - max_lines, "more group", "more groups") + " (see --json)");
  }

  std::string counted(size_t n, const std::string& what, const std::string& rest) const {
    char count[32];
    std::snprintf(count, sizeof count, "%6zu  ", n);
    std::string s = count + padded(what, width) + "  " + rest;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }

  void structure(const StructureDiff& d, const std::string& indent) {
    // The origin the group's nodes share: "(aten::gelu, model.layers.0.mlp)".
    auto of = [](const std::string& origin) { return origin.empty() ? "" : " (" + printable(origin) + ")"; };
    section(indent, "nodes only in A (removed)", d.removed, [&](const NodeGroup& g) {
      std::string rest = examples("node", "nodes", g.nodes, [](uint32_t i) { return std::to_string(i); });
      if (g.nested_nodes) rest += ", with " + plural(g.nested_nodes, "nested node", "nested nodes");
      return counted(g.nodes.size(), name(g.kind), rest + of(g.origin));
    });
    section(indent, "nodes only in B (added)", d.added, [&](const NodeGroup& g) {
      std::string rest = examples("node", "nodes", g.nodes, [](uint32_t i) { return std::to_string(i); });
      if (g.nested_nodes) rest += ", with " + plural(g.nested_nodes, "nested node", "nested nodes");
      return counted(g.nodes.size(), name(g.kind), rest + of(g.origin));
    });
    section(indent, "changed nodes (A -> B)", d.changed, [&](const ChangeGroup& g) {
      std::string what;
      for (const auto& f : g.changes)
        what += (what.empty() ? "" : ", ") + f.field + " " + printable(f.a) + " -> " + printable(f.b);
      return counted(g.nodes.size(), name(g.kind),
                     what + "  (" + examples("node", "nodes", g.nodes, pair_text) + ")" + of(g.origin));
    });
    auto edge_row = [&](const EdgeGroup& g, const std::string& data) {
      std::string rest = data.empty() || data == "default" ? "" : data + "  ";
      rest += "(" + examples("edge", "edges", g.edges, pair_text) + ")";
      std::string s = counted(g.edges.size(), name(g.from) + " -> " + name(g.to), rest);
      return s;
    };
    section(indent, "edges only in A (removed, between matched nodes)", d.removed_edges,
            [&](const EdgeGroup& g) { return edge_row(g, g.a_edge); });
    section(indent, "edges only in B (added, between matched nodes)", d.added_edges,
            [&](const EdgeGroup& g) { return edge_row(g, g.b_edge); });
    section(indent, "edge types changed (A -> B)", d.retyped_edges,
            [&](const EdgeGroup& g) { return edge_row(g, g.a_edge + " -> " + g.b_edge); });
    std::string shape;
    if (d.a_depth != d.b_depth)
      shape = "depth " + std::to_string(d.a_depth) + " -> " + std::to_string(d.b_depth);
    if (d.a_width != d.b_width)
      shape += (shape.empty() ? "" : ", ") + std::string("width ") + std::to_string(d.a_width) + " -> " +
               std::to_string(d.b_width);
    if (!shape.empty()) line(indent, shape);
    for (const auto& s : d.nested) {
      line(indent, "body " + std::to_string(s.body) + " of " + name(s.kind) + " node " +
                       std::to_string(s.a_node) + " (node " + std::to_string(s.b_node) +
                       " in B): " + verdict(s.diff));
      structure(s.diff, indent + "  ");
    }
  }

  // "64 nodes removed, 1 added, 12 changed; 3 edges removed, ..."
  static std::string verdict(const StructureDiff& d) {
    auto nodes = [](const std::vector<NodeGroup>& v) {
      size_t n = 0;
      for (const auto& g : v) n += g.nodes.size();
      return n;
    };
    auto count = [](const auto& v, auto size) {
      size_t n = 0;
      for (const auto& g : v) n += size(g);
      return n;
    };
    auto pairs = [](const ChangeGroup& g) { return g.nodes.size(); };
    auto edges = [](const EdgeGroup& g) { return g.edges.size(); };
    std::vector<std::string> parts;
    size_t removed = nodes(d.removed), added = nodes(d.added), changed = count(d.changed, pairs);
    if (removed || added || changed) {
      std::string s;
      auto add = [&](size_t n, const char* what) {
        if (!n) return;
        s += (s.empty() ? plural(n, "node", "nodes") : std::to_string(n)) + " " + what;
        s += ", ";
      };
      add(removed, "removed");
      add(added, "added");
      add(changed, "changed");
      s.resize(s.size() - 2);
      parts.push_back(s);
    }
    size_t er = count(d.removed_edges, edges), ea = count(d.added_edges, edges),
           et = count(d.retyped_edges, edges);
    if (er || ea || et) {
      std::string s;
      auto add = [&](size_t n, const char* what) {
        if (!n) return;
        s += (s.empty() ? plural(n, "edge", "edges") : std::to_string(n)) + " " + what;
        s += ", ";
      };
      add(er, "removed");
      add(ea, "added");
      add(et, "retyped");
      s.resize(s.size() - 2);
      parts.push_back(s + " between matched nodes");
    }
    if (!d.nested.empty())
      parts.push_back(plural(d.nested.size(), "nested body differs", "nested bodies differ"));
    if (parts.empty() && (d.a_depth != d.b_depth || d.a_width != d.b_width)) parts.push_back("shape differs");
    if (parts.empty()) return "same";
    std::string s = "differ: ";
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
    return s;
  }
};

std::string header(const char* side, const std::string& origin, const DocumentFacts& f,
                   const StructureDiff& d, bool is_a) {
  std::string s = std::string(side) + "  " + printable(origin);
  std::string what = f.source_format;
  if (!f.name.empty()) what += (what.empty() ? "" : ", ") + std::string("graph ") + printable(f.name);
  if (!what.empty()) s += " (" + what + ")";
  s += ": " + plural(f.nodes, "node", "nodes") + ", " + plural(f.edges, "edge", "edges");
  size_t depth = is_a ? d.a_depth : d.b_depth, width = is_a ? d.a_width : d.b_width;
  s += ", depth " + std::to_string(depth) + ", width " + std::to_string(width);
  if (f.nested_graphs) s += ", " + plural(f.nested_graphs, "nested graph", "nested graphs");
  return s + "\n";
}

}  // namespace

std::string format_diff(const GraphDiff& d, const std::string& a_origin, const std::string& b_origin,
                        size_t max_lines) {
  Namer namer;
  name_all(d.root, namer);
  Writer w{namer, std::max<size_t>(1, max_lines), {}};
  w.width = std::clamp<size_t>(widest(d.root, namer), 36, 64);
  w.out += header("A", a_origin, d.a, d.root, true);
  w.out += header("B", b_origin, d.b, d.root, false);
  for (const auto& n : d.notes) w.out += "note: " + printable(n) + "\n";
  if (d.same()) {
    // Everything matched: the documents' totals are the matched counts.
    w.out += "same: " + std::string(d.a.nodes > 1 ? "all " : "") + plural(d.a.nodes, "node", "nodes") +
             " and " + plural(d.a.edges, "edge", "edges") + " match";
    if (d.a.nested_graphs)
      w.out += " (" + plural(d.a.nested_graphs, "nested graph", "nested graphs") + " included)";
    w.out += "\n";
    return w.out;
  }
  w.out += Writer::verdict(d.root) + "\n";
  if (d.root.removed_node_edges || d.root.added_node_edges)
    w.out += "(" + plural(d.root.removed_node_edges, "edge", "edges") + " went with the removed nodes, " +
             std::to_string(d.root.added_node_edges) + " came with the added ones)\n";
  // Where nodes were put in or taken out: edges of one side that the other
  // runs through the nodes only it has (neither removed nor added).
  if (!d.root.edges_through_added.empty())
    w.out += "the added nodes were inserted into " + plural(d.root.edges_through_added.size(), "edge", "edges") +
             " of A (" + examples("edge", "edges", d.root.edges_through_added, pair_text) + ")\n";
  if (!d.root.edges_through_removed.empty())
    w.out += "the removed nodes were taken out of " +
             plural(d.root.edges_through_removed.size(), "path", "paths") + " of A that " +
             (d.root.edges_through_removed.size() == 1 ? "is an edge" : "are edges") + " in B (" +
             examples("edge", "edges", d.root.edges_through_removed, pair_text) + ")\n";
  for (const auto& where : d.where) w.out += "where: " + printable(where) + "\n";
  w.out += "\n";
  w.structure(d.root, "");
  return w.out;
}

}  // namespace graphscope
