// The structural diff of two graph documents.
//
// Matching. Ids, handles and node order change with every capture, so nodes
// are paired by what they are and where they sit, never by id. Each node has
//   kind   its type and the one name that says what it runs (NodeKind);
//   label  kind plus the compared attributes (geometry, sizes, the contents
//          of its bodies): equal labels mean "nothing changed";
//   level  nodes on the longest path from a root to it; rlevel, to a leaf.
// Colour refinement (a node's colour hashed with the multisets of its
// predecessors' and successors' colours) turns these into signatures of
// neighbourhoods. The match is built in stages, the most certain first, and
// after each one it is grown along edges: the unmatched predecessors of a
// matched pair are paired with each other when their signatures agree, and
// so are the successors.
//  1. Equal labelled neighbourhoods at equal positions, refined until the
//     partition is stable: equal graphs and re-captures match entirely here,
//     and so does everything far from a change.
//  2. Anchors: a neighbourhood or a label that occurs once on each side.
//  3. Alignment: cut at the pairs so far, each side's unmatched nodes in
//     level order are aligned like the lines of two texts (a longest common
//     subsequence of labels). This finds the match past a node removed on
//     the longest path, which shifts every later level.
//  4. Equal neighbourhoods or labels anywhere, equal levels first.
//  5. The same by kind: what is left changed an attribute (a grid, a size).
//     Copies pair with copies in the same direction first.
// Growing is O(E) per stage, each stage sorts the unmatched nodes once, and
// the alignment is O(N D) for D differences, in windows of bounded cost:
// 100k nodes take about a tenth of a second.
//
// Limits. The match is greedy, not a minimum edit script. Nodes that colour
// refinement cannot tell apart pair in level and index order (fine when they
// are truly symmetric); around a change, the pairing among nodes of one kind
// follows neighbours and order, and the edges reported follow that pairing.
// The counts of added and removed nodes per kind are exact whatever the
// pairing (a multiset difference).
#include "diff.h"

#include <algorithm>
#include <optional>
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>

#include "../core/demangle.h"
#include "diff_match.h"
#include "fold.h"
#include "../model/origin_view.h"
#include "../core/json_writer.h"
#include "../core/text.h"

namespace graphscope {
namespace {

using namespace diff_match;

// --- what changed on a matched pair ---

std::string dim_text(const Dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}
std::string dim_json(const Dim3& d) {
  return "[" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + "]";
}
void add_change(std::vector<FieldChange>& v, const char* field, std::string a, std::string b, std::string aj,
                std::string bj) {
  v.push_back({field, std::move(a), std::move(b), std::move(aj), std::move(bj)});
}
void add_number(std::vector<FieldChange>& v, const char* field, uint64_t a, uint64_t b) {
  if (a != b)
    add_change(v, field, std::to_string(a), std::to_string(b), std::to_string(a), std::to_string(b));
}
void add_dim(std::vector<FieldChange>& v, const char* field, const Dim3& a, const Dim3& b) {
  if (a != b) add_change(v, field, dim_text(a), dim_text(b), dim_json(a), dim_json(b));
}

// A kernel argument's value as a number (1, 2, 4 or 8 bytes: "0x..."), or
// nullopt for the hex of a larger one and its hash.
std::optional<uint64_t> arg_number(const std::string& v) {
  if (v.size() < 3 || v[0] != '0' || v[1] != 'x') return std::nullopt;
  return std::stoull(v.substr(2), nullptr, 16);
}

// The arguments of a matched kernel pair: values that changed as
// "argument N" (N from 0, as the driver counts them), addresses that moved
// counted in d.
void compare_args(const KernelInfo& x, const KernelInfo& y, std::vector<FieldChange>& v, StructureDiff& d) {
  if (x.args.empty() || y.args.empty()) {
    if (x.args.empty() != y.args.empty()) ++d.args_unknown;
    return;
  }
  if (x.args.size() != y.args.size()) {
    add_number(v, "arguments", x.args.size(), y.args.size());
    return;
  }
  size_t moved = 0;
  for (size_t i = 0; i < x.args.size(); ++i) {
    const KernelArg &a = x.args[i], &b = y.args[i];
    if (a.value == b.value && a.size == b.size) continue;
    const std::string field = "argument " + std::to_string(i);
    if (a.size != b.size) {
      const std::string sa = std::to_string(a.size) + " bytes", sb = std::to_string(b.size) + " bytes";
      add_change(v, field.c_str(), sa, sb, quoted(sa), quoted(sb));
      continue;
    }
    const auto na = arg_number(a.value), nb = arg_number(b.value);
    if (na && nb) {
      if (a.size == 8 && is_address_word(*na) && is_address_word(*nb)) {
        ++moved;
        continue;
      }
      add_change(v, field.c_str(), std::to_string(*na), std::to_string(*nb), quoted(a.value), quoted(b.value));
      continue;
    }
    // Hex of up to 64 bytes: compared with the aligned words that hold
    // addresses on both sides left out.
    if (a.value.size() == 2 * size_t(a.size) && b.value.size() == a.value.size()) {
      bool other = false;
      size_t words = 0;
      for (size_t byte = 0; byte < a.size && !other; ++byte) {
        const bool aligned = (a.offset + byte) % 8 == 0 && byte + 8 <= a.size;
        if (aligned) {
          const auto word = [&](const std::string& h) {
            uint64_t w = 0;
            for (size_t k = 8; k-- > 0;) w = (w << 8) | std::stoul(h.substr(2 * (byte + k), 2), nullptr, 16);
            return w;
          };
          const uint64_t wa = word(a.value), wb = word(b.value);
          if (wa != wb && is_address_word(wa) && is_address_word(wb)) {
            ++words;
            byte += 7;
            continue;
          }
        }
        other = a.value.compare(2 * byte, 2, b.value, 2 * byte, 2) != 0;
      }
      moved += words;
      if (!other) continue;
    }
    add_change(v, field.c_str(), a.value, b.value, quoted(a.value), quoted(b.value));
  }
  if (moved) d.moved_addresses += moved, ++d.moved_address_nodes;
}

// Field changes of a matched pair, in a fixed order; counts a kernel pair
// whose geometry one side does not record.
std::vector<FieldChange> compare_nodes(const Context& c, const Node& x, const Node& y, StructureDiff& d) {
  size_t* geometry_unknown = &d.geometry_unknown;
  std::vector<FieldChange> v;
  const DiffOptions& o = c.options;
  if (x.type == NodeType::kernel && !o.ignore_geometry) {
    bool kx = x.kernel && x.kernel->geometry_known, ky = y.kernel && y.kernel->geometry_known;
    if (kx && ky && c.geometry) {
      add_dim(v, "grid", x.kernel->grid, y.kernel->grid);
      add_dim(v, "block", x.kernel->block, y.kernel->block);
      if (c.cluster && x.kernel->cluster != y.kernel->cluster) {
        auto text = [](const std::optional<Dim3>& d) { return d ? dim_text(*d) : std::string("none"); };
        auto json = [](const std::optional<Dim3>& d) { return d ? dim_json(*d) : std::string("null"); };
        add_change(v, "cluster", text(x.kernel->cluster), text(y.kernel->cluster), json(x.kernel->cluster),
                   json(y.kernel->cluster));
      }
      add_number(v, "shared_mem_bytes", x.kernel->shared_mem_bytes, y.kernel->shared_mem_bytes);
    } else {
      ++*geometry_unknown;
    }
  }
  if (x.kernel && y.kernel) compare_args(*x.kernel, *y.kernel, v, d);
  if (x.memcpy && y.memcpy) {
    if (!x.memcpy->kind.empty() && !y.memcpy->kind.empty() && x.memcpy->kind != y.memcpy->kind)
      add_change(v, "kind", x.memcpy->kind, y.memcpy->kind, quoted(x.memcpy->kind), quoted(y.memcpy->kind));
    if (!o.ignore_sizes) add_number(v, "bytes", x.memcpy->bytes, y.memcpy->bytes);
  }
  if (x.memset && y.memset && !o.ignore_sizes) {
    add_number(v, "value", x.memset->value, y.memset->value);
    add_number(v, "bytes", x.memset->bytes, y.memset->bytes);
    if (c.memset_shape) {
      add_number(v, "element_size", x.memset->element_size, y.memset->element_size);
      add_number(v, "width", x.memset->width, y.memset->width);
      add_number(v, "height", x.memset->height, y.memset->height);
    }
  }
  if (x.mem_alloc && y.mem_alloc && !o.ignore_sizes)
    add_number(v, "bytes", x.mem_alloc->bytes, y.mem_alloc->bytes);
  if (x.host && y.host && c.host_symbols && x.host->symbol != y.host->symbol)
    add_change(v, "symbol", x.host->symbol, y.host->symbol, quoted(x.host->symbol), quoted(y.host->symbol));
  add_number(v, "bodies", x.bodies.size(), y.bodies.size());
  return v;
}

std::string edge_text(const Dependency& d, bool with_ports) {
  std::string s(to_string(d.type));
  if (with_ports && (d.from_port || d.to_port))
    s += " (ports " + std::to_string(d.from_port) + "->" + std::to_string(d.to_port) + ")";
  return s;
}

// Groups in first-seen order, then most members first (stable).
template <typename Group, typename Size>
void order_groups(std::vector<Group>& v, Size size) {
  std::stable_sort(v.begin(), v.end(), [&](const Group& x, const Group& y) { return size(x) > size(y); });
}

StructureDiff diff_structure(Context& c, const Graph& ga, const Graph& gb);

// Whether a side has a path from one matched node to another through its
// unmatched nodes alone. The searches of one graph pair share a budget of
// steps (a few times its size); past it the answer is no, and the edge is
// reported as removed or added, as before the search.
class PathSearch {
 public:
  explicit PathSearch(const Side& s) : s_(s), budget_(4 * (s.size() + s.edges) + 1024) {}

  bool operator()(uint32_t from, uint32_t to) {
    if (seen_.empty()) seen_.assign(s_.size(), 0);
    ++stamp_;
    stack_.assign(1, from);
    while (!stack_.empty() && budget_) {
      const uint32_t v = stack_.back();
      stack_.pop_back();
      for (uint32_t k = s_.succ_start[v]; k < s_.succ_start[v + 1]; ++k) {
        const uint32_t w = s_.succ_to[k];
        if (budget_) --budget_;
        if (w == to && v != from) return true;
        if (s_.partner[w] == kNone && seen_[w] != stamp_) seen_[w] = stamp_, stack_.push_back(w);
      }
    }
    return false;
  }

 private:
  const Side& s_;
  size_t budget_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> seen_, stack_;
};

void collect(Context& c, Side& a, Side& b, StructureDiff& d) {
  const auto& an = a.g.nodes;
  const auto& bn = b.g.nodes;
  d.a_nodes = an.size();
  d.b_nodes = bn.size();
  d.a_edges = a.edges;
  d.b_edges = b.edges;
  d.a_depth = a.depth, d.b_depth = b.depth;
  d.a_width = a.width, d.b_width = b.width;
  d.a_width_level = a.width_level, d.b_width_level = b.width_level;
  d.a_to_b.assign(an.size(), -1);

  // Unmatched nodes by kind, in the order their kind first appears.
  auto unmatched = [&](const Side& s, std::vector<NodeGroup>& out) {
    std::unordered_map<uint32_t, size_t> at;
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (s.partner[i] != kNone) continue;
      auto [it, fresh] = at.emplace(s.kind[i], out.size());
      if (fresh) out.push_back({c.kinds[s.kind[i]], {}, 0, {}});
      NodeGroup& g = out[it->second];
      g.nodes.push_back(i);
      for (const auto& body : s.g.nodes[i].bodies) g.nested_nodes += total_nodes(body);
    }
    for (NodeGroup& g : out) g.origin = shared_origin(s.g, g.nodes);
    order_groups(out, [](const NodeGroup& g) { return g.nodes.size(); });
  };
  unmatched(a, d.removed);
  unmatched(b, d.added);

  // Matched pairs: attribute changes, grouped by kind and the exact changes;
  // bodies compared pair by pair.
  std::map<std::pair<uint32_t, std::string>, size_t> change_at;
  for (uint32_t i = 0; i < an.size(); ++i) {
    uint32_t j = a.partner[i];
    if (j == kNone) continue;
    ++d.matched_nodes;
    d.a_to_b[i] = j;
    std::vector<FieldChange> ch = compare_nodes(c, an[i], bn[j], d);
    if (!ch.empty()) {
      std::string key;
      for (const auto& f : ch) key += f.field + '\0' + f.a_json + '\0' + f.b_json + '\0';
      auto [it, fresh] = change_at.emplace(std::make_pair(a.kind[i], key), d.changed.size());
      if (fresh) d.changed.push_back({c.kinds[a.kind[i]], std::move(ch), {}, {}});
      d.changed[it->second].nodes.emplace_back(i, j);
    }
    size_t bodies = std::min(an[i].bodies.size(), bn[j].bodies.size());
    for (uint32_t k = 0; k < bodies; ++k) {
      StructureDiff sub = diff_structure(c, an[i].bodies[k], bn[j].bodies[k]);
      d.nested_compared += 1 + sub.nested_compared;
      d.geometry_unknown += sub.geometry_unknown;
      d.moved_addresses += sub.moved_addresses, d.moved_address_nodes += sub.moved_address_nodes;
      d.args_unknown += sub.args_unknown;
      if (!sub.same()) d.nested.push_back({c.kinds[a.kind[i]], i, j, k, std::move(sub)});
    }
  }
  for (ChangeGroup& g : d.changed) {
    std::vector<uint32_t> in_a;
    for (const auto& p : g.nodes) in_a.push_back(p.first);
    g.origin = shared_origin(a.g, in_a);
  }
  order_groups(d.changed, [](const ChangeGroup& g) { return g.nodes.size(); });

  // Edges: between matched nodes, each side looked up in the other. One
  // the other side runs through nodes only it has is where they were
  // inserted (or removed), not an edge removed (or added).
  PathSearch through_a(a), through_b(b);
  std::map<std::tuple<uint32_t, uint32_t, std::string, std::string>, size_t> removed_at, added_at, retyped_at;
  auto group = [&](auto& at, std::vector<EdgeGroup>& out, uint32_t kf, uint32_t kt, std::string ea,
                   std::string eb, uint32_t from, uint32_t to) {
    auto [it, fresh] = at.emplace(std::make_tuple(kf, kt, ea, eb), out.size());
    if (fresh) out.push_back({c.kinds[kf], c.kinds[kt], std::move(ea), std::move(eb), {}});
    out[it->second].edges.emplace_back(from, to);
  };
  for (uint32_t v = 0; v < an.size(); ++v)
    for (uint32_t k = a.dep_start[v]; k < a.dep_start[v + 1]; ++k) {
      uint32_t u = a.dep_from[k];
      if (a.partner[u] == kNone || a.partner[v] == kNone) {
        ++d.removed_node_edges;
        continue;
      }
      uint32_t other = find_edge(b, a.partner[u], a.partner[v]);
      if (other == kNone && through_b(a.partner[u], a.partner[v])) {
        d.edges_through_added.emplace_back(u, v);
        continue;
      }
      if (other == kNone) {
        group(removed_at, d.removed_edges, a.kind[u], a.kind[v], edge_text(edge_at(a, v, k), c.edge_types),
              "", u, v);
        continue;
      }
      ++d.matched_edges;
      if (a.dep_bits[k] != b.dep_bits[other])  // both 0 unless edge types are compared
        group(retyped_at, d.retyped_edges, a.kind[u], a.kind[v], edge_text(edge_at(a, v, k), true),
              edge_text(edge_at(b, a.partner[v], other), true), u, v);
    }
  for (uint32_t v = 0; v < bn.size(); ++v)
    for (uint32_t k = b.dep_start[v]; k < b.dep_start[v + 1]; ++k) {
      uint32_t u = b.dep_from[k];
      if (b.partner[u] == kNone || b.partner[v] == kNone) {
        ++d.added_node_edges;
        continue;
      }
      if (find_edge(a, b.partner[u], b.partner[v]) != kNone) continue;
      if (through_a(b.partner[u], b.partner[v]))
        d.edges_through_removed.emplace_back(u, v);
      else
        group(added_at, d.added_edges, b.kind[u], b.kind[v], "", edge_text(edge_at(b, v, k), c.edge_types), u,
              v);
    }
  auto edges = [](const EdgeGroup& g) { return g.edges.size(); };
  order_groups(d.removed_edges, edges);
  order_groups(d.added_edges, edges);
  order_groups(d.retyped_edges, edges);
}

StructureDiff diff_structure(Context& c, const Graph& ga, const Graph& gb) {
  Side a(ga), b(gb);
  prepare(c, a);
  prepare(c, b);
  match(a, b);
  StructureDiff d;
  collect(c, a, b, d);
  return d;
}

// A root graph's folding: the one the command found, else found here once,
// when a side has nodes the other lacks (sliding them and locating them
// both read it).
struct RootFolding {
  const Graph& g;
  const Folding* given;
  std::optional<Folding> found;
  const Folding& get() { return given ? *given : found ? *found : found.emplace(find_repeats(g)); }
};

std::vector<uint64_t> copies(const Folding& f, size_t n) {
  std::vector<uint64_t> v(n, kNoCopy);
  for (size_t i = 0; i < n && i < f.repeat_of.size(); ++i)
    if (f.repeat_of[i] != UINT32_MAX) v[i] = uint64_t(f.repeat_of[i]) << 32 | f.copy_of[i];
  return v;
}

// The root pair: matched as any pair, then runs of nodes one side has slid
// to whole copies of its repeats (diff_match.h).
StructureDiff diff_root(Context& c, RootFolding& fa, RootFolding& fb) {
  Side a(fa.g), b(fb.g);
  prepare(c, a);
  prepare(c, b);
  match(a, b);
  auto unmatched = [](const Side& s) {
    return std::any_of(s.partner.begin(), s.partner.end(), [](uint32_t p) { return p == kNone; });
  };
  if (unmatched(a)) a.copy = copies(fa.get(), a.size());
  if (unmatched(b)) b.copy = copies(fb.get(), b.size());
  if (!a.copy.empty() || !b.copy.empty()) slide(a, b);
  StructureDiff d;
  collect(c, a, b, d);
  return d;
}

// --- what each document records ---

struct Records {
  bool geometry = false, host_symbols = false, kernels = false, hosts = false, memsets = false;
  DocumentFacts facts;
};

void scan(const Graph& g, Records& r) {
  for (const auto& n : g.nodes) {
    ++r.facts.nodes;
    r.facts.edges += n.dependencies.size();
    r.facts.nested_graphs += n.bodies.size();
    r.kernels |= n.type == NodeType::kernel;
    r.hosts |= n.type == NodeType::host;
    r.memsets |= n.memset.has_value();
    if (n.kernel && n.kernel->geometry_known) r.geometry = true;
    if (n.host && !n.host->symbol.empty()) r.host_symbols = true;
    for (const auto& b : n.bodies) scan(b, r);
  }
}

Records records(const GraphDocument& doc) {
  Records r;
  r.facts.source_format = doc.source_format;
  r.facts.name = doc.name;
  scan(doc.root, r);
  return r;
}

// Formats that record edge types and cluster dimensions: graphscope's own
// JSON (and hand-built documents). A cudaGraphDebugDotPrint file and
// PyTorch's dict record neither.
bool full_format(const GraphDocument& doc) {
  return doc.source_format.empty() || doc.source_format == "graphscope";
}

std::string format_name(const std::string& f, bool plural = false) {
  std::string s = f == "nvidia-dot" ? "cudaGraphDebugDotPrint file"
                  : f == "pytorch"  ? "PyTorch get_graph_data dict"
                                    : (f.empty() ? std::string("graph") : f) + " document";
  return plural ? s + "s" : "a " + s;
}

}  // namespace

bool StructureDiff::same() const {
  return removed.empty() && added.empty() && changed.empty() && removed_edges.empty() &&
         added_edges.empty() && retyped_edges.empty() && nested.empty() && a_depth == b_depth &&
         a_width == b_width;
}

namespace {

// The root nodes that differ on one side, and whether they all lie in one
// copy of a repeated block (or the copy that differs next to one) there.
std::string locate(const char* side, const GraphDocument& doc, const std::vector<uint32_t>& nodes,
                   const Folding* given) {
  if (nodes.empty()) return "";
  std::optional<Folding> found;
  const Folding& f = given ? *given : found.emplace(find_repeats(doc.root));
  const size_t n = doc.root.nodes.size();
  for (const OddCopy& o : f.odd) {
    std::vector<uint32_t> in(o.nodes);
    std::sort(in.begin(), in.end());
    bool all = true;
    for (uint32_t v : nodes) all = all && std::binary_search(in.begin(), in.end(), v);
    if (all)
      return std::string("in ") + side + ", all of them lie in the copy that differs next to the " +
             std::to_string(f.repeats[o.repeat].count) + " x " + f.repeats[o.repeat].label + " (nodes " +
             std::to_string(o.nodes.front()) + ".." + std::to_string(o.nodes.back()) + ": " + o.difference + ")";
  }
  // Origins name the part of the model: "nodes of model.layers.5.mlp".
  const std::string module = common_module(doc.root, nodes);
  const std::string of_module = module.empty() ? "" : " (nodes of " + module + ")";
  const uint32_t r = nodes[0] < n ? f.repeat_of[nodes[0]] : UINT32_MAX, c = nodes[0] < n ? f.copy_of[nodes[0]] : 0;
  bool one_copy = r != UINT32_MAX;
  for (uint32_t v : nodes) one_copy = one_copy && v < n && f.repeat_of[v] == r && f.copy_of[v] == c;
  if (!one_copy && r != UINT32_MAX) {
    // Whole copies of one repeat in a row: layers inserted or removed.
    std::vector<uint32_t> sorted(nodes);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    uint32_t lo = UINT32_MAX, hi = 0;
    bool in_r = true;
    for (uint32_t v : sorted) {
      in_r = in_r && v < n && f.repeat_of[v] == r;
      if (!in_r) break;
      lo = std::min(lo, f.copy_of[v]), hi = std::max(hi, f.copy_of[v]);
    }
    const Repeat& rp = f.repeats[r];
    if (in_r && lo < hi && sorted.size() == size_t(hi - lo + 1) * rp.size) {
      std::string names;
      if (!rp.copy_module.empty()) names = " (" + rp.copy_module[lo] + " to " + rp.copy_module[hi] + ")";
      return std::string("in ") + side + ", they are copies " + std::to_string(lo + 1) + " to " +
             std::to_string(hi + 1) + " of the " + std::to_string(rp.count) + " x " + rp.label + ", whole" + names;
    }
  }
  if (!one_copy) return module.empty() ? "" : std::string("in ") + side + ", all of them are nodes of " + module;
  const Repeat& rp = f.repeats[r];
  const std::string copy = rp.copy_module.empty() ? "" : " (" + rp.copy_module[c] + ")";
  return std::string("in ") + side + ", all of them lie in copy " + std::to_string(c + 1) + copy + " of the " +
         std::to_string(rp.count) + " x " + rp.label + (module == (rp.copy_module.empty() ? "" : rp.copy_module[c]) ? "" : of_module);
}

}  // namespace

void locate_in_repeats(const GraphDocument& a, const GraphDocument& b, GraphDiff& d, const Folding* fold_a,
                       const Folding* fold_b) {
  std::vector<uint32_t> in_a, in_b;
  for (const NodeGroup& g : d.root.removed) in_a.insert(in_a.end(), g.nodes.begin(), g.nodes.end());
  for (const NodeGroup& g : d.root.added) in_b.insert(in_b.end(), g.nodes.begin(), g.nodes.end());
  for (const ChangeGroup& g : d.root.changed)
    for (const auto& [x, y] : g.nodes) in_a.push_back(x), in_b.push_back(y);
  for (auto [side, doc, nodes, fold] :
       {std::make_tuple("A", &a, &in_a, fold_a), std::make_tuple("B", &b, &in_b, fold_b)}) {
    std::string w = locate(side, *doc, *nodes, fold);
    if (!w.empty()) d.where.push_back(std::move(w));
  }
}

GraphDiff diff_graphs(const GraphDocument& a, const GraphDocument& b, const DiffOptions& options,
                      const Folding* fold_a, const Folding* fold_b) {
  GraphDiff d;
  d.options = options;
  Records ra = records(a), rb = records(b);
  d.a = ra.facts;
  d.b = rb.facts;
  Context c;
  c.options = options;
  c.geometry = ra.geometry && rb.geometry;
  c.edge_types = full_format(a) && full_format(b);
  c.cluster = c.edge_types;
  c.host_symbols = ra.host_symbols && rb.host_symbols;
  // A default-flags cudaGraphDebugDotPrint file gives a memset's value and
  // size only (the reader fills in element size 1); a verbose one, which
  // also gives kernel geometry, gives the shape.
  auto shape = [](const GraphDocument& doc, const Records& r) { return full_format(doc) || r.geometry; };
  c.memset_shape = shape(a, ra) && shape(b, rb);
  d.edge_types_compared = c.edge_types;
  RootFolding fa{a.root, fold_a, {}}, fb{b.root, fold_b, {}};
  d.root = diff_root(c, fa, fb);
  locate_in_repeats(a, b, d, fa.given ? fa.given : fa.found ? &*fa.found : nullptr,
                    fb.given ? fb.given : fb.found ? &*fb.found : nullptr);

  // Say what could not be compared, and why, rather than call it the same.
  auto lacking = [&](bool in_a, bool in_b) {
    return std::string(!in_a && !in_b ? "neither A nor B records"
                       : !in_a        ? "A does not record"
                                      : "B does not record");
  };
  if (!c.edge_types) {
    bool fa = full_format(a), fb = full_format(b);
    std::string who;
    if (!fa && !fb && a.source_format == b.source_format)
      who = "A and B are " + format_name(a.source_format, true) + ", which do not record them";
    else if (!fa && !fb)
      who = "A is " + format_name(a.source_format) + " and B is " + format_name(b.source_format) +
            ", which do not record them";
    else
      who = (!fa ? "A is " + format_name(a.source_format) : "B is " + format_name(b.source_format)) +
            ", which does not record them";
    d.notes.push_back("edge types and ports not compared: " + who);
  }
  if (!options.ignore_geometry && !c.geometry && ra.kernels && rb.kernels) {
    // A default-flags cudaGraphDebugDotPrint file is the usual reason.
    bool dot = (!ra.geometry && a.source_format == "nvidia-dot") ||
               (!rb.geometry && b.source_format == "nvidia-dot");
    d.notes.push_back("launch geometry not compared: " + lacking(ra.geometry, rb.geometry) + " it" +
                      (dot ? " (cudaGraphDebugDotPrint writes it with the verbose flag only)" : ""));
  } else if (!options.ignore_geometry && d.root.geometry_unknown)
    d.notes.push_back("launch geometry not compared for " + std::to_string(d.root.geometry_unknown) +
                      " matched kernel pairs that one side records without it");
  if (d.root.moved_addresses)
    d.notes.push_back(std::to_string(d.root.moved_addresses) + " kernel argument addresses of " +
                      std::to_string(d.root.moved_address_nodes) +
                      " matched kernels differ (not compared: addresses move from run to run)");
  if (d.root.args_unknown)
    d.notes.push_back("kernel arguments not compared for " + std::to_string(d.root.args_unknown) +
                      " matched kernel pairs that one side records without them");
  if (!c.memset_shape && !options.ignore_sizes && ra.memsets && rb.memsets)
    d.notes.push_back("memset element sizes, widths and heights not compared: " +
                      lacking(shape(a, ra), shape(b, rb)) + " them (values and sizes are)");
  if (!c.host_symbols && ra.hosts && rb.hosts && (ra.host_symbols || rb.host_symbols))
    d.notes.push_back("host function symbols not compared: " + lacking(ra.host_symbols, rb.host_symbols) +
                      " them");
  return d;
}

}  // namespace graphscope
