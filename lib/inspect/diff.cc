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
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>

#include "demangle.h"
#include "json_writer.h"
#include "topology.h"

namespace graphscope {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t combine(uint64_t h, uint64_t v) {
  return mix(h ^ (v + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2)));
}
uint64_t hash_text(std::string_view s) {  // FNV-1a: the same on every platform
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}
uint64_t hash_dim(uint64_t h, const Dim3& d) {
  return combine(combine(combine(h, d.x), d.y), d.z);
}
uint64_t edge_bits(const Dependency& d) {
  return uint64_t(d.type) | uint64_t(d.from_port) << 8 | uint64_t(d.to_port) << 16;
}

// The name in a node's kind (NodeKind): a view into the node.
std::string_view kind_name(const Node& n) {
  if (n.type == NodeType::kernel) return n.kernel_name;
  if (n.type == NodeType::conditional) return n.conditional_type;
  if (n.type == NodeType::unknown) return n.type_spelling;
  return {};
}

struct KindKey {
  NodeType type;
  std::string_view name;
  bool operator==(const KindKey& o) const { return type == o.type && name == o.name; }
};
struct KindKeyHash {
  size_t operator()(const KindKey& k) const { return size_t(combine(hash_text(k.name), uint64_t(k.type))); }
};

// What can be compared between the two documents: decided once, from what
// each side's format records, so that both sides hash the same attributes.
struct Context {
  DiffOptions options;
  bool geometry = true;      // both sides record launch geometry
  bool cluster = true;       // both record cluster dimensions (absent means none)
  bool edge_types = true;    // both record edge types and ports
  bool host_symbols = true;  // both record host function symbols
  bool memset_shape = true;  // both record memset element size, width and height
  // Kinds by id; the keys view the documents' strings, which outlive this.
  std::unordered_map<KindKey, uint32_t, KindKeyHash> kind_ids;
  std::vector<NodeKind> kinds;

  uint32_t kind_id(const Node& n) {
    std::string_view name = kind_name(n);
    auto [it, fresh] = kind_ids.emplace(KindKey{n.type, name}, uint32_t(kinds.size()));
    if (fresh) kinds.push_back({n.type, std::string(name)});
    return it->second;
  }
};

uint64_t graph_content(const Context& c, const Graph& g);

// The compared attributes of a node, hashed: equal labels and equal kinds
// mean the node did not change.
uint64_t label_of(const Context& c, const Node& n) {
  uint64_t h = combine(hash_text(kind_name(n)), uint64_t(n.type));
  const DiffOptions& o = c.options;
  if (n.kernel && c.geometry && !o.ignore_geometry && n.kernel->geometry_known) {
    h = hash_dim(hash_dim(combine(h, n.kernel->shared_mem_bytes), n.kernel->grid), n.kernel->block);
    if (c.cluster && n.kernel->cluster) h = hash_dim(combine(h, 1), *n.kernel->cluster);
  }
  if (n.memcpy) {
    h = combine(h, hash_text(n.memcpy->kind));
    if (!o.ignore_sizes) h = combine(h, n.memcpy->bytes);
  }
  if (n.memset && !o.ignore_sizes) h = combine(combine(h, n.memset->bytes), n.memset->value);
  if (n.mem_alloc && !o.ignore_sizes) h = combine(h, n.mem_alloc->bytes);
  if (n.host && c.host_symbols) h = combine(h, hash_text(n.host->symbol));
  if (!n.bodies.empty()) {
    h = combine(h, n.bodies.size());
    for (const auto& b : n.bodies) h = combine(h, graph_content(c, b));
  }
  return h;
}

// A graph's labels and edges as a multiset: equal for equal bodies whatever
// their node order.
uint64_t graph_content(const Context& c, const Graph& g) {
  uint64_t sum = 0, edges = 0;
  std::vector<uint64_t> labels(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) labels[i] = label_of(c, g.nodes[i]);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    sum += mix(labels[i]);
    for (const auto& d : g.nodes[i].dependencies)
      edges += mix(combine(combine(labels[d.from], labels[i]), c.edge_types ? edge_bits(d) : 0));
  }
  return combine(combine(sum, edges), g.nodes.size());
}

// One side of a graph pair, with everything the matcher needs. The edges
// are copied into compact arrays once: the passes below then never touch
// the (large) Node objects.
struct Side {
  const Graph& g;
  explicit Side(const Graph& graph) : g(graph) {}
  size_t size() const { return g.nodes.size(); }
  std::vector<uint32_t> kind;
  std::vector<uint64_t> label;
  std::vector<uint32_t> level, rlevel;
  // Signatures, most specific first (see the top of the file): pos_label
  // always, the others only when pos_label leaves nodes unmatched.
  std::vector<uint64_t> pos_label, local2, local1, pos_kind, local_kind, kind_sig, type_sig;
  std::vector<uint32_t> partner;
  // Dependencies of node v: dep_from etc. [dep_start[v], dep_start[v + 1]),
  // sorted by upstream node; dep_pos is the position in v's dependencies.
  std::vector<uint32_t> dep_start, dep_from, dep_pos;
  std::vector<uint32_t> dep_bits;  // edge_bits() when edge types count, else 0
  // Dependents of node u: succ_to [succ_start[u], succ_start[u + 1]), with
  // the edge's bits.
  std::vector<uint32_t> succ_start, succ_to, succ_bits;
  size_t edges = 0;
  size_t depth = 0, width = 0, width_level = 0;
};

// One round of colour refinement: a node's colour with the multisets of its
// neighbours' colours (sums of mixed hashes are order-free), edge types
// included where both sides record them.
std::vector<uint64_t> refine(const Side& s, const std::vector<uint64_t>& c) {
  const size_t n = s.size();
  std::vector<uint64_t> r(n);
  for (size_t v = 0; v < n; ++v) {
    uint64_t in = 0, out = 0;
    for (uint32_t k = s.dep_start[v]; k < s.dep_start[v + 1]; ++k)
      in += mix(c[s.dep_from[k]] ^ s.dep_bits[k]);
    for (uint32_t k = s.succ_start[v]; k < s.succ_start[v + 1]; ++k)
      out += mix(c[s.succ_to[k]] ^ s.succ_bits[k] ^ 0x2545f4914f6cdd1dULL);
    r[v] = combine(combine(c[v], in), out);
  }
  return r;
}

// How many different colours c holds: an open-addressing set (the colours
// are hashes already), several times faster than sorting a copy.
size_t distinct(const std::vector<uint64_t>& c) {
  size_t cap = 16;
  while (cap < 2 * c.size()) cap <<= 1;
  std::vector<uint64_t> table(cap, 0);
  size_t count = 0;
  bool zero = false;  // 0 marks a free slot
  for (uint64_t v : c) {
    if (v == 0) {
      count += !zero, zero = true;
      continue;
    }
    size_t i = size_t(v) & (cap - 1);
    while (table[i] != 0 && table[i] != v) i = (i + 1) & (cap - 1);
    if (table[i] == 0) table[i] = v, ++count;
  }
  return count;
}

// Refines both sides in step until neither partition grows: then nodes of
// one colour cannot be told apart by anything their neighbours up to any
// distance carry (two identical chains that differ only at their far ends
// get different colours all along). Both sides take the same number of
// rounds, so that their colours compare.
void refine_jointly(const Side& a, const Side& b, std::vector<uint64_t>& ca, std::vector<uint64_t>& cb) {
  constexpr int kMaxRounds = 32;
  size_t na = distinct(ca), nb = distinct(cb);
  for (int round = 0; round < kMaxRounds; ++round) {
    ca = refine(a, ca);
    cb = refine(b, cb);
    size_t ma = distinct(ca), mb = distinct(cb);
    if (ma == na && mb == nb) break;
    na = ma, nb = mb;
  }
}

void prepare(Context& c, Side& s) {
  const auto& nodes = s.g.nodes;
  const size_t n = nodes.size();
  s.kind.resize(n);
  s.label.resize(n);
  s.dep_start.assign(n + 1, 0);
  std::vector<uint32_t> outdegree(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = nodes[i];
    s.kind[i] = c.kind_id(node);
    s.label[i] = label_of(c, node);
    s.dep_start[i + 1] = s.dep_start[i] + uint32_t(node.dependencies.size());
    for (const auto& d : node.dependencies) ++outdegree[d.from];
  }
  s.edges = s.dep_start[n];
  s.dep_from.resize(s.edges);
  s.dep_pos.resize(s.edges);
  s.dep_bits.resize(s.edges);
  s.succ_start.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) s.succ_start[i + 1] = s.succ_start[i] + outdegree[i];
  s.succ_to.resize(s.edges);
  s.succ_bits.resize(s.edges);
  std::vector<uint32_t> fill(s.succ_start.begin(), s.succ_start.end() - 1);
  std::vector<std::pair<uint32_t, uint32_t>> tmp;
  for (size_t v = 0; v < n; ++v) {
    const auto& deps = nodes[v].dependencies;
    tmp.clear();
    for (uint32_t k = 0; k < deps.size(); ++k) tmp.emplace_back(deps[k].from, k);
    std::sort(tmp.begin(), tmp.end());
    uint32_t at = s.dep_start[v];
    for (const auto& [from, k] : tmp) {
      uint32_t bits = c.edge_types ? uint32_t(edge_bits(deps[k])) : 0;
      s.dep_from[at] = from, s.dep_pos[at] = k, s.dep_bits[at] = bits;
      ++at;
      s.succ_to[fill[from]] = uint32_t(v), s.succ_bits[fill[from]] = bits;
      ++fill[from];
    }
  }

  // Levels as the summary counts them (topology.h); the loader refused cycles.
  Topology t = topology(s.g, "nodes", "graph");
  s.level = std::move(t.level);
  s.rlevel = std::move(t.height);
  s.depth = t.depth, s.width = t.width, s.width_level = t.width_level;

  s.pos_label.resize(n);
  for (size_t i = 0; i < n; ++i) s.pos_label[i] = combine(s.label[i], combine(s.level[i], s.rlevel[i]));
  s.partner.assign(n, kNone);
}

// The signatures that only a graph pair with differences needs.
void prepare_more(Side& s) {
  const size_t n = s.size();
  s.kind_sig.resize(n);
  s.type_sig.resize(n);
  s.pos_kind.resize(n);
  for (size_t i = 0; i < n; ++i) {
    // A copy is rather paired with a copy in the same direction.
    const Node& node = s.g.nodes[i];
    s.type_sig[i] = mix(s.kind[i] + 1);
    s.kind_sig[i] = node.memcpy ? combine(s.type_sig[i], hash_text(node.memcpy->kind)) : s.type_sig[i];
    s.pos_kind[i] = combine(s.kind_sig[i], combine(s.level[i], s.rlevel[i]));
  }
  s.local1 = refine(s, s.label);
  s.local2 = refine(s, s.local1);
  s.local_kind = refine(s, s.kind_sig);
}

// The position of the edge u -> v in s.dep_from, or kNone.
uint32_t find_edge(const Side& s, uint32_t u, uint32_t v) {
  auto b = s.dep_from.begin() + s.dep_start[v], e = s.dep_from.begin() + s.dep_start[v + 1];
  auto it = std::lower_bound(b, e, u);
  return it == e || *it != u ? kNone : uint32_t(it - s.dep_from.begin());
}
const Dependency& edge_at(const Side& s, uint32_t v, uint32_t k) {
  return s.g.nodes[v].dependencies[s.dep_pos[k]];
}

// How to pair nodes of equal signature. unique: only when each side has
// exactly one (an anchor, wherever it sits). Otherwise those on equal levels
// first, then the leftovers: kept for a later stage, paired when both sides
// have as many (a block that moved as a whole), or all paired.
enum class Leftover { unique, keep, equal_counts, all };

// Which signatures growing along edges may pair neighbours by: the
// neighbourhoods only, also the label, also the kind (a copy in the same
// direction), also the type alone.
enum class Grow { strong, label, kind, type };

using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

class Matcher {
  struct Item {
    uint64_t sig;
    uint32_t level, index;
    bool operator<(const Item& o) const {
      if (sig != o.sig) return sig < o.sig;
      if (level != o.level) return level < o.level;
      return index < o.index;
    }
  };

 public:
  Matcher(Side& a, Side& b) : a_(a), b_(b) {}

  void run() {
    // Equal graphs (the common case) match entirely in the first stage.
    Pairs fresh;
    refine_jointly(a_, b_, a_.pos_label, b_.pos_label);
    pair_by(unmatched(a_), unmatched(b_), a_.pos_label, b_.pos_label, Leftover::keep, fresh);
    if (fresh.size() == a_.size() && fresh.size() == b_.size()) return;
    prepare_more(a_);
    prepare_more(b_);
    refine_jointly(a_, b_, a_.pos_kind, b_.pos_kind);
    std::sort(fresh.begin(), fresh.end());
    // Grow from what is certain before pairing anything by level: a node
    // removed on the longest path shifts the levels of everything after it.
    extend(std::move(fresh), Grow::strong);
    stage(a_.local2, b_.local2, Leftover::unique, Grow::strong);
    stage(a_.local1, b_.local1, Leftover::unique, Grow::strong);
    stage(a_.label, b_.label, Leftover::unique, Grow::strong);
    extend(matched(), Grow::label);
    align();
    stage(a_.local2, b_.local2, Leftover::equal_counts, Grow::label);
    stage(a_.local1, b_.local1, Leftover::equal_counts, Grow::label);
    stage(a_.label, b_.label, Leftover::keep, Grow::label);
    stage(a_.label, b_.label, Leftover::equal_counts, Grow::label);
    // From here a neighbour of a matched node may pair with one of the same
    // kind whose attributes changed.
    extend(matched(), Grow::kind);
    stage(a_.pos_kind, b_.pos_kind, Leftover::keep, Grow::kind);
    stage(a_.local_kind, b_.local_kind, Leftover::unique, Grow::kind);
    stage(a_.local_kind, b_.local_kind, Leftover::equal_counts, Grow::kind);
    stage(a_.kind_sig, b_.kind_sig, Leftover::keep, Grow::kind);
    stage(a_.kind_sig, b_.kind_sig, Leftover::all, Grow::kind);
    extend(matched(), Grow::type);
    stage(a_.type_sig, b_.type_sig, Leftover::all, Grow::type);
  }

 private:
  // Pairs the unmatched nodes among ca (of A) and cb (of B) with equal
  // signatures, on equal levels first, in index order; appends the new
  // pairs to out.
  void pair_by(const std::vector<uint32_t>& ca, const std::vector<uint32_t>& cb,
               const std::vector<uint64_t>& sa, const std::vector<uint64_t>& sb, Leftover mode, Pairs& out) {
    auto items = [](const Side& s, const std::vector<uint32_t>& c, const std::vector<uint64_t>& sig,
                    std::vector<Item>& v) {
      v.clear();
      for (uint32_t i : c)
        if (s.partner[i] == kNone) v.push_back({sig[i], s.level[i], i});
      std::sort(v.begin(), v.end());
    };
    std::vector<Item>& ia = items_a_;
    std::vector<Item>& ib = items_b_;
    items(a_, ca, sa, ia);
    items(b_, cb, sb, ib);
    std::vector<uint32_t>& la = left_a_;
    std::vector<uint32_t>& lb = left_b_;
    size_t i = 0, j = 0;
    while (i < ia.size() && j < ib.size()) {
      if (ia[i].sig != ib[j].sig) {
        (ia[i].sig < ib[j].sig ? i : j)++;
        continue;
      }
      uint64_t sig = ia[i].sig;
      size_t ie = i, je = j;
      while (ie < ia.size() && ia[ie].sig == sig) ++ie;
      while (je < ib.size() && ib[je].sig == sig) ++je;
      if (mode == Leftover::unique) {
        if (ie - i == 1 && je - j == 1) link(ia[i].index, ib[j].index, out);
        i = ie, j = je;
        continue;
      }
      la.clear();
      lb.clear();
      while (i < ie && j < je) {
        if (ia[i].level == ib[j].level)
          link(ia[i++].index, ib[j++].index, out);
        else if (ia[i].level < ib[j].level)
          la.push_back(ia[i++].index);
        else
          lb.push_back(ib[j++].index);
      }
      while (i < ie) la.push_back(ia[i++].index);
      while (j < je) lb.push_back(ib[j++].index);
      if (mode == Leftover::all || (mode == Leftover::equal_counts && la.size() == lb.size()))
        for (size_t k = 0; k < std::min(la.size(), lb.size()); ++k) link(la[k], lb[k], out);
    }
  }

  // Pairs unmatched nodes of the whole graphs, then grows from the pairs.
  void stage(const std::vector<uint64_t>& sa, const std::vector<uint64_t>& sb, Leftover mode, Grow grow) {
    Pairs fresh;
    pair_by(unmatched(a_), unmatched(b_), sa, sb, mode, fresh);
    std::sort(fresh.begin(), fresh.end());  // a deterministic order to grow from
    extend(std::move(fresh), grow);
  }

  // Grows the match along edges from the given pairs (and the pairs that
  // growing adds): unmatched predecessors of a pair are paired with each
  // other, and so are unmatched successors.
  void extend(Pairs work, Grow grow) {
    const std::vector<uint64_t>* sig[6][2] = {{&a_.local2, &b_.local2},     {&a_.local1, &b_.local1},
                                              {&a_.label, &b_.label},       {&a_.local_kind, &b_.local_kind},
                                              {&a_.kind_sig, &b_.kind_sig}, {&a_.type_sig, &b_.type_sig}};
    const int sigs = grow == Grow::strong ? 2 : grow == Grow::label ? 3 : grow == Grow::kind ? 5 : 6;
    std::vector<uint32_t> na, nb;
    for (size_t w = 0; w < work.size(); ++w) {
      auto [x, y] = work[w];
      for (int dir = 0; dir < 2; ++dir) {
        neighbours(a_, x, dir, na);
        if (na.empty()) continue;
        neighbours(b_, y, dir, nb);
        if (nb.empty()) continue;
        if (na.size() == 1 && nb.size() == 1) {  // most edges of most graphs
          for (int k = 0; k < sigs; ++k)
            if ((*sig[k][0])[na[0]] == (*sig[k][1])[nb[0]]) {
              link(na[0], nb[0], work);
              break;
            }
          continue;
        }
        for (int k = 0; k < sigs; ++k) pair_by(na, nb, *sig[k][0], *sig[k][1], Leftover::all, work);
      }
    }
  }

  // Regions that growing could not cross (where a node on every path
  // between them was removed, say) are aligned like the lines of two text
  // files. Each side's nodes in level order (then by label) form a
  // sequence; the pairs matched so far that keep the same order on both
  // sides (a longest increasing subsequence) cut both sequences into
  // segments, and the unmatched nodes of each segment pair are aligned by
  // the longest common subsequence of their labels (Myers' O((N + M) D)
  // algorithm). Levels shift past a removal; the order of what follows does
  // not. A window with more than kMaxEdits differences is left to the
  // later stages, and so is everything once kMaxWork steps are spent.
  void align() {
    auto sequence = [](const Side& s) {
      std::vector<uint32_t> v(s.size());
      for (uint32_t i = 0; i < v.size(); ++i) v[i] = i;
      std::sort(v.begin(), v.end(), [&](uint32_t x, uint32_t y) {
        if (s.level[x] != s.level[y]) return s.level[x] < s.level[y];
        if (s.label[x] != s.label[y]) return s.label[x] < s.label[y];
        return x < y;
      });
      return v;
    };
    std::vector<uint32_t> sa = sequence(a_), sb = sequence(b_);
    std::vector<uint32_t> at_b(sb.size());
    for (uint32_t q = 0; q < sb.size(); ++q) at_b[sb[q]] = q;
    // Anchors: (position in sa, position in sb) of matched pairs, then the
    // longest run of them increasing on both sides (patience sorting).
    std::vector<std::pair<uint32_t, uint32_t>> anchors;
    for (uint32_t p = 0; p < sa.size(); ++p)
      if (a_.partner[sa[p]] != kNone) anchors.emplace_back(p, at_b[a_.partner[sa[p]]]);
    std::vector<uint32_t> tails, prev(anchors.size(), kNone), tail_at;
    for (uint32_t i = 0; i < anchors.size(); ++i) {
      auto it = std::lower_bound(tails.begin(), tails.end(), anchors[i].second);
      size_t len = size_t(it - tails.begin());
      if (it == tails.end())
        tails.push_back(anchors[i].second), tail_at.push_back(i);
      else
        *it = anchors[i].second, tail_at[len] = i;
      if (len > 0) prev[i] = tail_at[len - 1];
    }
    std::vector<std::pair<uint32_t, uint32_t>> cuts;
    for (uint32_t i = tail_at.empty() ? kNone : tail_at.back(); i != kNone; i = prev[i])
      cuts.push_back(anchors[i]);
    std::reverse(cuts.begin(), cuts.end());
    cuts.emplace_back(uint32_t(sa.size()), uint32_t(sb.size()));

    Pairs fresh;
    std::vector<uint32_t> ua, ub;
    uint32_t pa = 0, pb = 0;
    work_ = 0;
    for (const auto& [ca, cb] : cuts) {
      ua.clear();
      ub.clear();
      for (uint32_t p = pa; p < ca; ++p)
        if (a_.partner[sa[p]] == kNone) ua.push_back(sa[p]);
      for (uint32_t q = pb; q < cb; ++q)
        if (b_.partner[sb[q]] == kNone) ub.push_back(sb[q]);
      if (!ua.empty() && !ub.empty()) {
        Pairs seg;
        align_segment(ua, ub, seg);
        for (const auto& [x, y] : seg) fresh.emplace_back(ua[x], ub[y]);
      }
      pa = ca + 1, pb = cb + 1;
    }
    for (const auto& [x, y] : fresh) a_.partner[x] = y, b_.partner[y] = x;
    std::sort(fresh.begin(), fresh.end());
    extend(std::move(fresh), Grow::label);
  }

  // Aligns the unmatched nodes of one segment pair in windows of kWindow
  // per side, so that the cost follows the density of differences rather
  // than their total: of each window's alignment only the first half is
  // kept (its end is forced), and the next window starts after it.
  void align_segment(const std::vector<uint32_t>& ua, const std::vector<uint32_t>& ub, Pairs& out) {
    size_t i = 0, j = 0;
    Pairs window;
    while (i < ua.size() && j < ub.size() && work_ < kMaxWork) {
      size_t wa = std::min(kWindow, ua.size() - i), wb = std::min(kWindow, ub.size() - j);
      bool last = i + wa == ua.size() && j + wb == ub.size();
      window.clear();
      if (!common_subsequence(&ua[i], wa, &ub[j], wb, window)) return;
      size_t kept = 0;
      if (last)
        kept = window.size();
      else
        while (kept < window.size() && window[kept].first < wa / 2 && window[kept].second < wb / 2) ++kept;
      if (kept == 0) return;
      for (size_t k = 0; k < kept; ++k) out.emplace_back(window[k].first + i, window[k].second + j);
      if (last) return;
      i += window[kept - 1].first + 1;
      j += window[kept - 1].second + 1;
    }
  }

  // Myers' greedy longest common subsequence of the labels of sa[0, n) and
  // sb[0, m): the pairs of positions on it, in increasing order. False past
  // kMaxEdits differences or when the work budget is spent.
  bool common_subsequence(const uint32_t* sa, size_t n_, const uint32_t* sb, size_t m_, Pairs& out) {
    const int64_t n = int64_t(n_), m = int64_t(m_);
    auto same = [&](int64_t x, int64_t y) { return a_.label[sa[x]] == b_.label[sb[y]]; };
    const int64_t max_d = std::min<int64_t>(kMaxEdits, n + m);
    // v[k + off]: the furthest x on diagonal k = x - y; trace[d]: v after
    // step d, diagonals -d..d, for walking back.
    const int64_t off = max_d + 1;
    std::vector<int32_t> v(size_t(2 * max_d + 3), 0);
    std::vector<std::vector<int32_t>> trace;
    int64_t found = -1;
    for (int64_t d = 0; d <= max_d && found < 0 && work_ < kMaxWork; ++d) {
      for (int64_t k = -d; k <= d; k += 2) {
        int64_t x = (k == -d || (k != d && v[size_t(k - 1 + off)] < v[size_t(k + 1 + off)]))
                        ? v[size_t(k + 1 + off)]
                        : v[size_t(k - 1 + off)] + 1;
        int64_t y = x - k, x0 = x;
        while (x < n && y < m && same(x, y)) ++x, ++y;
        work_ += 1 + size_t(x - x0);
        v[size_t(k + off)] = int32_t(x);
        if (x >= n && y >= m) found = d;
      }
      trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
    }
    if (found < 0) return false;
    size_t first = out.size();
    int64_t x = n, y = m;
    for (int64_t d = found; d > 0; --d) {
      const auto& pv = trace[size_t(d - 1)];  // diagonals -(d-1)..d-1
      auto at = [&](int64_t kk) { return int64_t(pv[size_t(kk + d - 1)]); };
      int64_t k = x - y;
      bool down = k == -d || (k != d && at(k - 1) < at(k + 1));
      int64_t pk = down ? k + 1 : k - 1, px = at(pk);
      int64_t mx = down ? px : px + 1;  // where the snake of step d starts
      for (int64_t i = x - 1, j = y - 1; i >= mx; --i, --j) out.emplace_back(uint32_t(i), uint32_t(j));
      x = px, y = px - pk;
    }
    for (int64_t i = x - 1, j = y - 1; i >= 0 && j >= 0; --i, --j) out.emplace_back(uint32_t(i), uint32_t(j));
    std::reverse(out.begin() + first, out.end());
    return true;
  }

  static constexpr int64_t kMaxEdits = 2000;
  static constexpr size_t kWindow = 4096;
  static constexpr size_t kMaxWork = 100'000'000;
  size_t work_ = 0;

  void link(uint32_t x, uint32_t y, Pairs& out) {
    a_.partner[x] = y;
    b_.partner[y] = x;
    out.emplace_back(x, y);
  }

  static std::vector<uint32_t> unmatched(const Side& s) {
    std::vector<uint32_t> v;
    for (uint32_t i = 0; i < s.size(); ++i)
      if (s.partner[i] == kNone) v.push_back(i);
    return v;
  }

  Pairs matched() const {
    Pairs p;
    for (uint32_t i = 0; i < a_.size(); ++i)
      if (a_.partner[i] != kNone) p.emplace_back(i, a_.partner[i]);
    return p;
  }

  static void neighbours(const Side& s, uint32_t v, int dir, std::vector<uint32_t>& out) {
    out.clear();
    const auto& start = dir == 0 ? s.dep_start : s.succ_start;
    const auto& to = dir == 0 ? s.dep_from : s.succ_to;
    for (uint32_t k = start[v]; k < start[v + 1]; ++k)
      if (s.partner[to[k]] == kNone) out.push_back(to[k]);
  }

  Side& a_;
  Side& b_;
  std::vector<Item> items_a_, items_b_;  // pair_by's buffers
  std::vector<uint32_t> left_a_, left_b_;
};

// --- what changed on a matched pair ---

std::string dim_text(const Dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}
std::string dim_json(const Dim3& d) {
  return "[" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + "]";
}
std::string quoted(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
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

// Field changes of a matched pair, in a fixed order; counts a kernel pair
// whose geometry one side does not record.
std::vector<FieldChange> compare_nodes(const Context& c, const Node& x, const Node& y,
                                       size_t* geometry_unknown) {
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
      if (fresh) out.push_back({c.kinds[s.kind[i]], {}, 0});
      NodeGroup& g = out[it->second];
      g.nodes.push_back(i);
      for (const auto& body : s.g.nodes[i].bodies) g.nested_nodes += total_nodes(body);
    }
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
    std::vector<FieldChange> ch = compare_nodes(c, an[i], bn[j], &d.geometry_unknown);
    if (!ch.empty()) {
      std::string key;
      for (const auto& f : ch) key += f.field + '\0' + f.a_json + '\0' + f.b_json + '\0';
      auto [it, fresh] = change_at.emplace(std::make_pair(a.kind[i], key), d.changed.size());
      if (fresh) d.changed.push_back({c.kinds[a.kind[i]], std::move(ch), {}});
      d.changed[it->second].nodes.emplace_back(i, j);
    }
    size_t bodies = std::min(an[i].bodies.size(), bn[j].bodies.size());
    for (uint32_t k = 0; k < bodies; ++k) {
      StructureDiff sub = diff_structure(c, an[i].bodies[k], bn[j].bodies[k]);
      d.nested_compared += 1 + sub.nested_compared;
      d.geometry_unknown += sub.geometry_unknown;
      if (!sub.same()) d.nested.push_back({c.kinds[a.kind[i]], i, j, k, std::move(sub)});
    }
  }
  order_groups(d.changed, [](const ChangeGroup& g) { return g.nodes.size(); });

  // Edges: between matched nodes, each side looked up in the other.
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
      if (find_edge(a, b.partner[u], b.partner[v]) == kNone)
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
  Matcher(a, b).run();
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

GraphDiff diff_graphs(const GraphDocument& a, const GraphDocument& b, const DiffOptions& options) {
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
  d.root = diff_structure(c, a.root, b.root);

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
  if (!c.memset_shape && !options.ignore_sizes && ra.memsets && rb.memsets)
    d.notes.push_back("memset element sizes, widths and heights not compared: " +
                      lacking(shape(a, ra), shape(b, rb)) + " them (values and sizes are)");
  if (!c.host_symbols && ra.hosts && rb.hosts && (ra.host_symbols || rb.host_symbols))
    d.notes.push_back("host function symbols not compared: " + lacking(ra.host_symbols, rb.host_symbols) +
                      " them");
  return d;
}

// --- text ---

namespace {

// Short names for kinds, made longer where two kinds in one report would
// read the same.
class Namer {
 public:
  void add(const NodeKind& k) {
    if (k.type != NodeType::kernel) return;
    auto [it, fresh] = seen_.emplace(k.name, true);
    if (fresh) ++count_[short_kernel_name(k.name, 40)];
    (void)it;
  }
  std::string operator()(const NodeKind& k) const {
    switch (k.type) {
      case NodeType::kernel: {
        std::string s = short_kernel_name(k.name, 40);
        auto it = count_.find(s);
        if (it != count_.end() && it->second > 1) {
          std::string full = demangle(k.name);
          s = full.size() > 100 ? full.substr(0, 97) + "..." : full;
        }
        return s;
      }
      case NodeType::conditional:
        return "conditional " + (k.name.empty() ? std::string("?") : k.name);
      case NodeType::unknown:
        return k.name.empty() ? std::string("unknown") : k.name;
      default:
        return std::string(to_string(k.type));
    }
  }

 private:
  std::map<std::string, bool> seen_;
  std::map<std::string, size_t> count_;
};

void name_all(const StructureDiff& d, Namer& n) {
  for (const auto& g : d.removed) n.add(g.kind);
  for (const auto& g : d.added) n.add(g.kind);
  for (const auto& g : d.changed) n.add(g.kind);
  for (const auto* v : {&d.removed_edges, &d.added_edges, &d.retyped_edges})
    for (const auto& g : *v) n.add(g.from), n.add(g.to);
  for (const auto& s : d.nested) name_all(s.diff, n);
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
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
  char buf[1024];

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

  std::string counted(size_t n, const std::string& what, const std::string& rest) {
    std::snprintf(buf, sizeof buf, "%6zu  %-36s  %s", n, what.c_str(), rest.c_str());
    std::string s = buf;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }

  void structure(const StructureDiff& d, const std::string& indent) {
    section(indent, "nodes only in A (removed)", d.removed, [&](const NodeGroup& g) {
      std::string rest = examples("node", "nodes", g.nodes, [](uint32_t i) { return std::to_string(i); });
      if (g.nested_nodes) rest += ", with " + plural(g.nested_nodes, "nested node", "nested nodes");
      return counted(g.nodes.size(), name(g.kind), rest);
    });
    section(indent, "nodes only in B (added)", d.added, [&](const NodeGroup& g) {
      std::string rest = examples("node", "nodes", g.nodes, [](uint32_t i) { return std::to_string(i); });
      if (g.nested_nodes) rest += ", with " + plural(g.nested_nodes, "nested node", "nested nodes");
      return counted(g.nodes.size(), name(g.kind), rest);
    });
    section(indent, "changed nodes (A -> B)", d.changed, [&](const ChangeGroup& g) {
      std::string what;
      for (const auto& f : g.changes) what += (what.empty() ? "" : ", ") + f.field + " " + f.a + " -> " + f.b;
      return counted(g.nodes.size(), name(g.kind),
                     what + "  (" + examples("node", "nodes", g.nodes, pair_text) + ")");
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
  std::string s = std::string(side) + "  " + origin;
  std::string what = f.source_format;
  if (!f.name.empty()) what += (what.empty() ? "" : ", ") + std::string("graph ") + f.name;
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
  Writer w{namer, std::max<size_t>(1, max_lines), {}, {}};
  w.out += header("A", a_origin, d.a, d.root, true);
  w.out += header("B", b_origin, d.b, d.root, false);
  for (const auto& n : d.notes) w.out += "note: " + n + "\n";
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
  w.out += "\n";
  w.structure(d.root, "");
  return w.out;
}

// --- JSON ---

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
  w.key("of_added_nodes").value(uint64_t(d.added_node_edges)).end_object();
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
  w.key("root");
  structure_json(w, d.root);
  w.end_object();
  std::string s = w.take();
  s += "\n";
  return s;
}

}  // namespace graphscope
