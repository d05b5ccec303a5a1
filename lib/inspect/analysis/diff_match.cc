#include "diff_match.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "../core/hash.h"
#include "../model/topology.h"

namespace graphscope::diff_match {

uint64_t mix(uint64_t x) { return hash_mix(x); }
uint64_t combine(uint64_t h, uint64_t v) {
  return mix(h ^ (v + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2)));
}
uint64_t hash_text(std::string_view s) { return ::graphscope::hash_text(s); }
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


void match(Side& a, Side& b) { Matcher(a, b).run(); }

namespace {

// A node's only predecessor (successor), or kNone.
uint32_t only_pred(const Side& s, uint32_t v) {
  return s.dep_start[v + 1] - s.dep_start[v] == 1 ? s.dep_from[s.dep_start[v]] : kNone;
}
uint32_t only_succ(const Side& s, uint32_t v) {
  return s.succ_start[v + 1] - s.succ_start[v] == 1 ? s.succ_to[s.succ_start[v]] : kNone;
}

// Slides the runs of x's unmatched nodes (y: the other side). A run r_0 ..
// r_{L-1} sits on a chain of x between matched p and q, whose partners are
// joined by an edge on y: a run inserted into that edge. With the chain
// around it as c (c(-1) = p, c(0) = r_0, c(L) = q), moving the run by o
// (to c(o) .. c(o + L - 1)) keeps every label paired with an equal one when
// c(i) and c(i + L) have equal labels for each i passed over, and every
// matched node passed over is chained on y the same way.
void slide_side(Side& x, Side& y, size_t& budget) {
  if (x.copy.empty()) return;
  auto item = [&](uint32_t v) { return combine(x.label[v], x.dep_bits[x.dep_start[v]]); };
  // u -> w on x and their partners' edge on y, both the only edge out of u and into w.
  auto chained = [&](uint32_t u, uint32_t w) {
    return u != kNone && w != kNone && x.partner[u] != kNone && x.partner[w] != kNone && only_succ(x, u) == w &&
           only_pred(x, w) == u && only_succ(y, x.partner[u]) == x.partner[w] &&
           only_pred(y, x.partner[w]) == x.partner[u];
  };
  std::vector<uint32_t> back, fwd;  // c(-1), c(-2), ...; c(0), c(1), ...
  for (uint32_t s0 = 0; s0 < x.size() && budget; ++s0) {
    if (x.partner[s0] != kNone) continue;
    const uint32_t p = only_pred(x, s0);
    if (p == kNone || x.partner[p] == kNone || only_succ(x, p) != s0) continue;
    fwd.assign(1, s0);
    uint32_t q = kNone;
    while (budget) {
      --budget;
      const uint32_t v = fwd.back(), w = only_succ(x, v);
      if (w == kNone || only_pred(x, w) != v) break;
      if (x.partner[w] != kNone) {
        q = w;
        break;
      }
      fwd.push_back(w);
    }
    if (q == kNone || only_succ(y, x.partner[p]) != x.partner[q] || only_pred(y, x.partner[q]) != x.partner[p])
      continue;
    const int64_t L = int64_t(fwd.size());
    fwd.push_back(q);
    back.assign(1, p);
    auto c = [&](int64_t i) { return i < 0 ? back[size_t(-i - 1)] : fwd[size_t(i)]; };
    // Down: c(i) and c(i + L) equal for i < d, c(L + d) the run's new end's successor.
    int64_t d = 0;
    while (budget && chained(fwd.back(), only_succ(x, fwd.back())) && item(c(d)) == item(c(d + L))) {
      --budget;
      fwd.push_back(only_succ(x, fwd.back()));
      ++d;
    }
    // Up: c(-1 - j) and c(L - 1 - j) equal for j < u, c(-1 - u) the new start's predecessor.
    int64_t u = 0;
    while (budget && chained(only_pred(x, back.back()), back.back()) && item(c(-1 - u)) == item(c(L - 1 - u))) {
      --budget;
      back.push_back(only_pred(x, back.back()));
      ++u;
    }
    // The furthest place where the run is whole copies of one repeat.
    auto whole = [&](int64_t o) {
      const uint64_t first = x.copy[c(o)], last = x.copy[c(o + L - 1)];
      return first != kNoCopy && last != kNoCopy && first >> 32 == last >> 32 && x.copy[c(o - 1)] != first &&
             x.copy[c(o + L)] != last;
    };
    int64_t to = 0;
    bool found = false;
    for (int64_t o = d; o >= -u && !found; --o)
      if (whole(o)) to = o, found = true;
    if (!found || to == 0) continue;
    // Hand the partners over along the chain: down, c(i) takes c(i + L)'s.
    auto move = [&](uint32_t from, uint32_t into) {
      const uint32_t pt = x.partner[from];
      x.partner[from] = kNone;
      x.partner[into] = pt;
      y.partner[pt] = into;
    };
    if (to > 0)
      for (int64_t i = 0; i < to; ++i) move(c(i + L), c(i));
    else
      for (int64_t i = -1; i >= to; --i) move(c(i), c(i + L));
  }
}

}  // namespace

void slide(Side& a, Side& b) {
  size_t budget = 8 * (a.size() + b.size() + a.edges + b.edges) + 1024;
  slide_side(a, b, budget);
  slide_side(b, a, budget);
}

}  // namespace graphscope::diff_match
