#include "diff_json.h"

#include "../core/json_read.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"

namespace graphscope {

namespace {

void kind_json(JsonWriter& w, const char* key, const NodeKind& k) {
  w.key(key).begin_object();
  w.key("node_type").value(k.type == NodeType::unknown && !k.name.empty() ? k.name : to_string(k.type));
  if (k.type == NodeType::kernel) w.key("kernel_name").value(k.name);
  if (k.type == NodeType::conditional) w.key("conditional_type").value(k.name);
  w.end_object();
}

void pairs_json(JsonWriter& w, const char* key, const std::vector<std::pair<uint32_t, uint32_t>>& v) {
  w.key(key).begin_array();
  for (const auto& [x, y] : v) w.begin_array().value(x).value(y).end_array();
  w.end_array();
}

void structure_json(JsonWriter& w, const StructureDiff& d) {
  w.begin_object();
  w.key("same").value(d.same());
  auto ab = [&](const char* key, size_t a, size_t b) {
    w.key(key).begin_object().key("a").value(uint64_t(a)).key("b").value(uint64_t(b)).end_object();
  };
  w.key("nodes").begin_object().key("a").value(uint64_t(d.a_nodes)).key("b").value(uint64_t(d.b_nodes));
  w.key("matched").value(uint64_t(d.matched_nodes)).end_object();
  w.key("edges").begin_object().key("a").value(uint64_t(d.a_edges)).key("b").value(uint64_t(d.b_edges));
  w.key("matched")
      .value(uint64_t(d.matched_edges))
      .key("of_removed_nodes")
      .value(uint64_t(d.removed_node_edges));
  w.key("of_added_nodes").value(uint64_t(d.added_node_edges));
  pairs_json(w, "through_added_nodes", d.edges_through_added);
  pairs_json(w, "through_removed_nodes", d.edges_through_removed);
  w.end_object();
  ab("depth", d.a_depth, d.b_depth);
  ab("width", d.a_width, d.b_width);
  ab("width_level", d.a_width_level, d.b_width_level);
  auto groups = [&](const char* key, const std::vector<NodeGroup>& v) {
    w.key(key).begin_array();
    for (const auto& g : v) {
      w.begin_object();
      kind_json(w, "kind", g.kind);
      w.key("count").value(uint64_t(g.nodes.size()));
      w.key("nested_nodes").value(uint64_t(g.nested_nodes));
      w.key("nodes").begin_array();
      for (uint32_t i : g.nodes) w.value(i);
      w.end_array().end_object();
    }
    w.end_array();
  };
  groups("removed_nodes", d.removed);
  groups("added_nodes", d.added);
  w.key("changed_nodes").begin_array();
  for (const auto& g : d.changed) {
    w.begin_object();
    kind_json(w, "kind", g.kind);
    w.key("count").value(uint64_t(g.nodes.size()));
    w.key("changes").begin_array();
    for (const auto& f : g.changes)
      w.begin_object().key("field").value(f.field).key("a").raw(f.a_json).key("b").raw(f.b_json).end_object();
    w.end_array();
    pairs_json(w, "nodes", g.nodes);
    w.end_object();
  }
  w.end_array();
  auto edges = [&](const char* key, const std::vector<EdgeGroup>& v) {
    w.key(key).begin_array();
    for (const auto& g : v) {
      w.begin_object();
      kind_json(w, "from", g.from);
      kind_json(w, "to", g.to);
      if (!g.a_edge.empty()) w.key("a").value(g.a_edge);
      if (!g.b_edge.empty()) w.key("b").value(g.b_edge);
      w.key("count").value(uint64_t(g.edges.size()));
      pairs_json(w, "edges", g.edges);
      w.end_object();
    }
    w.end_array();
  };
  edges("removed_edges", d.removed_edges);
  edges("added_edges", d.added_edges);
  edges("retyped_edges", d.retyped_edges);
  // One line however many nodes: [0, 1, null, 2, ...]. A diff read from a
  // document written before a_to_b has none: written without it too.
  if (d.a_to_b.size() == d.a_nodes) {
    std::string match = "[";
    for (size_t i = 0; i < d.a_to_b.size(); ++i)
      match += (i ? ", " : "") + (d.a_to_b[i] < 0 ? std::string("null") : std::to_string(d.a_to_b[i]));
    w.key("a_to_b").raw(match + "]");
  }
  w.key("nested_compared").value(uint64_t(d.nested_compared));
  w.key("nested").begin_array();
  for (const auto& s : d.nested) {
    w.begin_object();
    kind_json(w, "kind", s.kind);
    w.key("a_node").value(s.a_node).key("b_node").value(s.b_node).key("body").value(s.body);
    w.key("diff");
    structure_json(w, s.diff);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void facts_json(JsonWriter& w, const char* key, const std::string& origin, const DocumentFacts& f) {
  w.key(key).begin_object();
  w.key("path").value(origin);
  w.key("source_format").value(f.source_format);
  if (!f.name.empty()) w.key("name").value(f.name);
  w.key("nodes").value(uint64_t(f.nodes));
  w.key("edges").value(uint64_t(f.edges));
  w.key("nested_graphs").value(uint64_t(f.nested_graphs));
  w.end_object();
}

}  // namespace

std::string write_diff_json(const GraphDiff& d, const std::string& a_origin, const std::string& b_origin) {
  JsonWriter w(3);
  w.begin_object();
  w.key("schema").value(kDiffSchema);
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  w.key("same").value(d.same());
  facts_json(w, "a", a_origin, d.a);
  facts_json(w, "b", b_origin, d.b);
  w.key("options").begin_object();
  w.key("ignore_geometry").value(d.options.ignore_geometry);
  w.key("ignore_sizes").value(d.options.ignore_sizes);
  w.end_object();
  w.key("edge_types_compared").value(d.edge_types_compared);
  w.key("geometry_unknown").value(uint64_t(d.root.geometry_unknown));
  w.key("notes").begin_array();
  for (const auto& n : d.notes) w.value(n);
  w.end_array();
  w.key("where").begin_array();
  for (const auto& n : d.where) w.value(n);
  w.end_array();
  w.key("root");
  structure_json(w, d.root);
  w.end_object();
  std::string s = w.take();
  s += "\n";
  return s;
}

}  // namespace graphscope

namespace graphscope {
namespace {

using Kind = JsonTape::Kind;

// Reads what write_diff_json writes, by the same JSON paths.
class DiffReader {
 public:
  DiffReader(const JsonTape& t, const std::string& origin) : r_(t, origin), t_(t) {}

  DiffDocument document() {
    const uint32_t root = r_.document(kDiffSchema, "a diff");
    DiffDocument d;
    facts(r_.required(root, "a", ""), "a", d.diff.a, d.a_origin);
    facts(r_.required(root, "b", ""), "b", d.diff.b, d.b_origin);
    const JsonPath opt("options");
    uint32_t o = r_.object(r_.required(root, "options", ""), opt);
    d.diff.options.ignore_geometry =
        r_.boolean(r_.required(o, "ignore_geometry", opt), JsonPath(opt, "ignore_geometry"));
    d.diff.options.ignore_sizes = r_.boolean(r_.required(o, "ignore_sizes", opt), JsonPath(opt, "ignore_sizes"));
    d.diff.edge_types_compared = r_.boolean(r_.required(root, "edge_types_compared", ""), "edge_types_compared");
    uint32_t n = 0, notes = r_.array(r_.required(root, "notes", ""), "notes", "an array of strings", &n);
    for (uint32_t i = 0; i < n; ++i)
      d.diff.notes.emplace_back(r_.string(t_.element(notes, i), JsonPath(JsonPath("notes"), i)));
    if (uint32_t x = r_.find(root, "where"); x != kJsonAbsent) {  // optional: older documents lack it
      uint32_t wn = 0, where = r_.array(x, "where", "an array of strings", &wn);
      for (uint32_t i = 0; i < wn; ++i)
        d.diff.where.emplace_back(r_.string(t_.element(where, i), JsonPath(JsonPath("where"), i)));
    }
    structure(r_.required(root, "root", ""), "root", d.diff.root, 0);
    d.diff.root.geometry_unknown =
        size_t(r_.u64(r_.required(root, "geometry_unknown", ""), "geometry_unknown"));
    bool same = r_.boolean(r_.required(root, "same", ""), "same");
    if (same != d.diff.same()) r_.fail("same", "disagrees with the differences listed");
    return d;
  }

 private:
  size_t count(uint32_t obj, const char* key, const JsonPath& at) const {
    return size_t(r_.u64(r_.required(obj, key, at), JsonPath(at, key)));
  }
  // {"a": .., "b": ..} as two counts.
  void ab(uint32_t obj, const char* key, const JsonPath& at, size_t& a, size_t& b) const {
    const JsonPath p(at, key);
    uint32_t o = r_.object(r_.required(obj, key, at), p);
    a = count(o, "a", p);
    b = count(o, "b", p);
  }

  void facts(uint32_t v, const char* key, DocumentFacts& f, std::string& origin) const {
    const JsonPath at(key);
    r_.object(v, at);
    origin = std::string(r_.string(r_.required(v, "path", at), JsonPath(at, "path")));
    f.source_format = std::string(r_.string(r_.required(v, "source_format", at), JsonPath(at, "source_format"), 64));
    if (uint32_t x = r_.find(v, "name"); x != kJsonAbsent) f.name = std::string(r_.string(x, JsonPath(at, "name")));
    f.nodes = count(v, "nodes", at);
    f.edges = count(v, "edges", at);
    f.nested_graphs = count(v, "nested_graphs", at);
  }

  NodeKind kind(uint32_t v, const JsonPath& at) const {
    r_.object(v, at, "a node kind");
    NodeKind k;
    std::string_view type = r_.string(r_.required(v, "node_type", at), JsonPath(at, "node_type"));
    if (!parse_node_type(type, &k.type)) {
      k.type = NodeType::unknown;
      k.name = std::string(type);
    }
    if (uint32_t x = r_.find(v, "kernel_name"); x != kJsonAbsent)
      k.name = std::string(r_.string(x, JsonPath(at, "kernel_name")));
    if (uint32_t x = r_.find(v, "conditional_type"); x != kJsonAbsent)
      k.name = std::string(r_.string(x, JsonPath(at, "conditional_type"), 64));
    return k;
  }

  void indices(uint32_t v, const JsonPath& at, std::vector<uint32_t>& out) const {
    uint32_t n = 0;
    r_.array(v, at, "an array of node indices", &n);
    for (uint32_t i = 0; i < n; ++i) out.push_back(r_.u32(t_.element(v, i), JsonPath(at, i)));
  }

  void pairs(uint32_t v, const JsonPath& at, std::vector<std::pair<uint32_t, uint32_t>>& out) const {
    uint32_t n = 0;
    r_.array(v, at, "an array of index pairs", &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath p(at, i);
      uint32_t m = 0, e = r_.array(t_.element(v, i), p, "a pair of node indices", &m);
      if (m != 2) r_.fail(p, "has " + std::to_string(m) + " elements, expected 2");
      out.emplace_back(r_.u32(t_.element(e, 0), JsonPath(p, uint32_t(0))), r_.u32(t_.element(e, 1), JsonPath(p, uint32_t(1))));
    }
  }

  // A changed field's value as the writer writes it (JSON: "[256, 1, 1]",
  // "\"HtoD\"", "16384") and as the text report shows it ("256x1x1", "HtoD").
  void field_value(uint32_t v, const JsonPath& at, std::string& text, std::string& json) const {
    switch (r_.kind(v)) {
      case Kind::string:
        text = std::string(r_.string(v, at));
        json.clear();
        append_json_string(json, text);
        return;
      case Kind::unsigned_integer:
      case Kind::integer:
        text = json = std::to_string(r_.u64(v, at));
        return;
      case Kind::array: {
        uint32_t n = t_.at(v).count;
        if (n != 3) break;
        json = "[", text.clear();
        for (uint32_t i = 0; i < 3; ++i) {
          std::string x = std::to_string(r_.u32(t_.element(v, i), JsonPath(at, i)));
          json += (i ? ", " : "") + x;
          text += (i ? "x" : "") + x;
        }
        json += "]";
        return;
      }
      case Kind::null:  // a cluster one side does not have (diff.cc writes "none")
        text = "none", json = "null";
        return;
      default:
        break;
    }
    r_.wrong(v, at, "a string, an integer, 3 integers or null");
  }

  void structure(uint32_t v, const JsonPath& at, StructureDiff& d, int depth) const {
    if (depth > 64) r_.fail(at, "nested deeper than 64");
    r_.object(v, at, "an object");
    {
      const JsonPath p(at, "nodes");
      uint32_t o = r_.object(r_.required(v, "nodes", at), p);
      d.a_nodes = count(o, "a", p), d.b_nodes = count(o, "b", p), d.matched_nodes = count(o, "matched", p);
    }
    {
      const JsonPath p(at, "edges");
      uint32_t o = r_.object(r_.required(v, "edges", at), p);
      d.a_edges = count(o, "a", p), d.b_edges = count(o, "b", p), d.matched_edges = count(o, "matched", p);
      d.removed_node_edges = count(o, "of_removed_nodes", p);
      d.added_node_edges = count(o, "of_added_nodes", p);
      // Optional: older documents lack them.
      if (uint32_t x = r_.find(o, "through_added_nodes"); x != kJsonAbsent)
        pairs(x, JsonPath(p, "through_added_nodes"), d.edges_through_added);
      if (uint32_t x = r_.find(o, "through_removed_nodes"); x != kJsonAbsent)
        pairs(x, JsonPath(p, "through_removed_nodes"), d.edges_through_removed);
    }
    ab(v, "depth", at, d.a_depth, d.b_depth);
    ab(v, "width", at, d.a_width, d.b_width);
    ab(v, "width_level", at, d.a_width_level, d.b_width_level);
    node_groups(r_.required(v, "removed_nodes", at), JsonPath(at, "removed_nodes"), d.removed);
    node_groups(r_.required(v, "added_nodes", at), JsonPath(at, "added_nodes"), d.added);
    {
      const JsonPath p(at, "changed_nodes");
      uint32_t n = 0, a = r_.array(r_.required(v, "changed_nodes", at), p, "an array", &n);
      for (uint32_t i = 0; i < n; ++i) {
        const JsonPath e(p, i);
        uint32_t o = r_.object(t_.element(a, i), e);
        ChangeGroup g;
        g.kind = kind(r_.required(o, "kind", e), JsonPath(e, "kind"));
        const JsonPath cp(e, "changes");
        uint32_t m = 0, c = r_.array(r_.required(o, "changes", e), cp, "an array", &m);
        for (uint32_t k = 0; k < m; ++k) {
          const JsonPath fp(cp, k);
          uint32_t f = r_.object(t_.element(c, k), fp);
          FieldChange fc;
          fc.field = std::string(r_.string(r_.required(f, "field", fp), JsonPath(fp, "field"), 64));
          field_value(r_.required(f, "a", fp), JsonPath(fp, "a"), fc.a, fc.a_json);
          field_value(r_.required(f, "b", fp), JsonPath(fp, "b"), fc.b, fc.b_json);
          g.changes.push_back(std::move(fc));
        }
        pairs(r_.required(o, "nodes", e), JsonPath(e, "nodes"), g.nodes);
        if (count(o, "count", e) != g.nodes.size()) r_.fail(JsonPath(e, "count"), "disagrees with its nodes");
        d.changed.push_back(std::move(g));
      }
    }
    edge_groups(r_.required(v, "removed_edges", at), JsonPath(at, "removed_edges"), d.removed_edges);
    edge_groups(r_.required(v, "added_edges", at), JsonPath(at, "added_edges"), d.added_edges);
    edge_groups(r_.required(v, "retyped_edges", at), JsonPath(at, "retyped_edges"), d.retyped_edges);
    if (uint32_t x = r_.find(v, "a_to_b"); x != kJsonAbsent) {  // optional: older documents lack it
      const JsonPath p(at, "a_to_b");
      uint32_t n = 0, arr = r_.array(x, p, "an array of node indices or null", &n);
      if (n != d.a_nodes) r_.fail(p, "has " + std::to_string(n) + " elements, A has " + std::to_string(d.a_nodes) + " nodes");
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t e = t_.element(arr, i);
        d.a_to_b.push_back(r_.kind(e) == Kind::null ? -1 : int64_t(r_.u32(e, JsonPath(p, i))));
      }
    }
    d.nested_compared = count(v, "nested_compared", at);
    const JsonPath np(at, "nested");
    uint32_t n = 0, a = r_.array(r_.required(v, "nested", at), np, "an array", &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(np, i);
      uint32_t o = r_.object(t_.element(a, i), e);
      NestedDiff s;
      s.kind = kind(r_.required(o, "kind", e), JsonPath(e, "kind"));
      s.a_node = r_.u32(r_.required(o, "a_node", e), JsonPath(e, "a_node"));
      s.b_node = r_.u32(r_.required(o, "b_node", e), JsonPath(e, "b_node"));
      s.body = r_.u32(r_.required(o, "body", e), JsonPath(e, "body"));
      structure(r_.required(o, "diff", e), JsonPath(e, "diff"), s.diff, depth + 1);
      d.nested.push_back(std::move(s));
    }
    bool same = r_.boolean(r_.required(v, "same", at), JsonPath(at, "same"));
    if (same != d.same()) r_.fail(JsonPath(at, "same"), "disagrees with the differences listed");
  }

  void node_groups(uint32_t v, const JsonPath& at, std::vector<NodeGroup>& out) const {
    uint32_t n = 0;
    r_.array(v, at, "an array", &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(at, i);
      uint32_t o = r_.object(t_.element(v, i), e);
      NodeGroup g;
      g.kind = kind(r_.required(o, "kind", e), JsonPath(e, "kind"));
      g.nested_nodes = count(o, "nested_nodes", e);
      indices(r_.required(o, "nodes", e), JsonPath(e, "nodes"), g.nodes);
      if (count(o, "count", e) != g.nodes.size()) r_.fail(JsonPath(e, "count"), "disagrees with its nodes");
      out.push_back(std::move(g));
    }
  }

  void edge_groups(uint32_t v, const JsonPath& at, std::vector<EdgeGroup>& out) const {
    uint32_t n = 0;
    r_.array(v, at, "an array", &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(at, i);
      uint32_t o = r_.object(t_.element(v, i), e);
      EdgeGroup g;
      g.from = kind(r_.required(o, "from", e), JsonPath(e, "from"));
      g.to = kind(r_.required(o, "to", e), JsonPath(e, "to"));
      if (uint32_t x = r_.find(o, "a"); x != kJsonAbsent) g.a_edge = std::string(r_.string(x, JsonPath(e, "a"), 256));
      if (uint32_t x = r_.find(o, "b"); x != kJsonAbsent) g.b_edge = std::string(r_.string(x, JsonPath(e, "b"), 256));
      pairs(r_.required(o, "edges", e), JsonPath(e, "edges"), g.edges);
      if (count(o, "count", e) != g.edges.size()) r_.fail(JsonPath(e, "count"), "disagrees with its edges");
      out.push_back(std::move(g));
    }
  }

  JsonRead r_;
  const JsonTape& t_;
};

}  // namespace

DiffDocument read_diff_json(std::string_view text, const std::string& origin) {
  JsonTape t = JsonTape::parse(text, origin, 512);
  return DiffReader(t, origin).document();
}

}  // namespace graphscope
