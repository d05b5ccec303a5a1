#include "fold.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "../core/demangle.h"
#include "../core/hash.h"
#include "../core/text.h"

namespace graphscope {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
// A repeat covers at least this many nodes (2 x 2 is too small to help).
constexpr size_t kMinCovered = 6;

uint64_t mix(uint64_t x) { return hash_mix(x); }
// Names compared within one process: the library's string hash, which reads
// a word at a time (core's hash_text reads a byte, and kernel names are long).
uint64_t name_key(std::string_view s) { return std::hash<std::string_view>{}(s); }

// What a node is, as far as folding cares: its kind, name and sizes.
uint64_t label_of(const Node& n) {
  uint64_t h = mix(uint64_t(n.type) + 1);
  if (n.type == NodeType::unknown) h = mix(h ^ name_key(n.type_spelling));
  if (!n.kernel_name.empty()) h = mix(h ^ name_key(n.kernel_name));
  if (n.kernel && n.kernel->geometry_known) {
    const KernelInfo& k = *n.kernel;
    h = mix(h ^ (uint64_t(k.grid.x) << 32 | k.grid.y));
    h = mix(h ^ (uint64_t(k.grid.z) << 32 | k.block.x));
    h = mix(h ^ (uint64_t(k.block.y) << 32 | k.block.z));
    h = mix(h ^ k.shared_mem_bytes);
  }
  if (n.memcpy) h = mix(h ^ name_key(n.memcpy->kind) ^ mix(n.memcpy->bytes));
  if (n.memset) h = mix(h ^ mix(n.memset->bytes + 7));
  if (n.host) h = mix(h ^ name_key(n.host->symbol));
  if (n.mem_alloc) h = mix(h ^ mix(n.mem_alloc->bytes + 11));
  return h;
}

// A topological order that follows each chain as far as it goes (Kahn's
// with a stack), so that a branch's nodes stand together: four branches of
// three nodes read A1 B1 C1 A2 B2 C2 ..., not A1 A2 A3 A4 B1 ...
// `edges`: how many edges it counted, for the caller's room.
std::vector<uint32_t> chain_order(const Graph& g, size_t* edges) {
  const size_t n = g.nodes.size();
  std::vector<uint32_t> indegree(n, 0), order, stack;
  *edges = 0;
  for (const Node& x : g.nodes)
    for (const auto& d : x.dependencies)
      if (d.from < n) ++indegree[x.index], ++*edges;
  for (size_t i = n; i-- > 0;)
    if (!indegree[i]) stack.push_back(uint32_t(i));
  order.reserve(n);
  while (!stack.empty()) {
    const uint32_t v = stack.back();
    stack.pop_back();
    order.push_back(v);
    const auto& out = g.nodes[v].dependents;
    for (size_t k = out.size(); k-- > 0;)
      if (out[k] < n && --indegree[out[k]] == 0) stack.push_back(out[k]);
  }
  return order;  // shorter than n in a graph with a cycle: what is there folds
}

struct Candidate {
  uint32_t start, period, count;
  size_t covered() const { return size_t(period) * count; }
};

// Whether a candidate ranks below another: fewer nodes covered, then a
// longer period, then a later start.
bool ranks_below(const Candidate& a, const Candidate& b) {
  return a.covered() != b.covered() ? a.covered() < b.covered()
                                    : (a.period != b.period ? a.period > b.period : a.start > b.start);
}

// A candidate waiting in the queue. `family`: it stands for that family's
// members from it on (Family, below). `hint`: a family that the candidate's
// clean copies may join when it is cut (the search's push_clean).
struct Queued {
  Candidate c;
  uint32_t family = kNone, hint = kNone;
};

// The candidates, best first: a bucket per number of nodes covered, each a
// list in one pool. Most candidates pushed while the search runs rank
// below the one it came from, so the buckets are visited once, from the
// top down, each sorted when its turn comes; what comes in at or above the
// bucket in use (a run's copies counted from elsewhere, which may cover
// more) waits in a heap beside it. A candidate pushed a second time is
// dropped: the first will be tried, the second could only be passed over.
class CandidateQueue {
 public:
  explicit CandidateQueue(size_t most) : head_(most + 1, kNone), recent_(1024) {}
  void push(const Candidate& c, uint32_t hint = kNone) {
    if (c.count < 2 || c.covered() < kMinCovered) return;  // nothing to try
    Candidate& seen = recent_[(c.start * 0x9E3779B1u ^ c.count * 0x85EBCA77u ^ c.period) % recent_.size()];
    if (same(seen, c)) return;
    seen = c;
    add({c, kNone, hint});
  }
  void push_family(const Candidate& head, uint32_t family) {  // head can be tried
    add({head, family, kNone});
  }
  bool empty() {
    for (;;) {
      if (!loaded_) {
        current_.clear();
        for (uint32_t e = head_[top_], next; e != kNone; e = next) {
          current_.push_back(entry(e).q);
          next = entry(e).next;
          entry(e).next = free_, free_ = e;
        }
        head_[top_] = kNone;
        if (current_.size() > 1) {
          std::sort(current_.begin(), current_.end(), below);  // the first to pop last
          current_.erase(std::unique(current_.begin(), current_.end(),
                                     [](const Queued& a, const Queued& b) {
                                       return a.family == kNone && b.family == kNone && same(a.c, b.c);
                                     }),
                         current_.end());
        }
        loaded_ = true;
      }
      if (!current_.empty() || !late_.empty()) return false;
      if (top_ == 0) return true;
      --top_, loaded_ = false;
    }
  }
  Queued pop() {  // after empty() said false
    if (!late_.empty() && (current_.empty() || below(current_.back(), late_.front()))) {
      std::pop_heap(late_.begin(), late_.end(), below);
      const Queued q = late_.back();
      late_.pop_back();
      return q;
    }
    const Queued q = current_.back();
    current_.pop_back();
    return q;
  }

 private:
  static bool same(const Candidate& a, const Candidate& b) {
    return a.start == b.start && a.period == b.period && a.count == b.count;
  }
  static bool below(const Queued& a, const Queued& b) { return ranks_below(a.c, b.c); }
  void add(const Queued& q) {
    const size_t k = q.c.covered();
    if (loaded_ && k >= top_) {
      late_.push_back(q);
      std::push_heap(late_.begin(), late_.end(), below);
      return;
    }
    uint32_t e = free_;
    if (e != kNone) {
      free_ = entry(e).next;
    } else {
      if (entries_ % kChunk == 0) chunks_.emplace_back(new Entry[kChunk]);
      e = entries_++;
    }
    entry(e) = {q, head_[k]};
    head_[k] = e;
    top_ = std::max(top_, k);  // (before the search: the candidates as found)
  }
  struct Entry {
    Queued q;
    uint32_t next;
  };
  static constexpr uint32_t kChunk = 1 << 12;  // entries in one allocation: the pool grows without moving
  Entry& entry(uint32_t e) { return chunks_[e / kChunk][e % kChunk]; }
  std::vector<uint32_t> head_;  // per number of nodes covered: its list's first entry
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  uint32_t entries_ = 0;
  uint32_t free_ = kNone;         // entries free for reuse, listed
  std::vector<Queued> current_;   // the bucket in use, sorted
  std::vector<Queued> late_;      // pushed at or above the bucket in use
  std::vector<Candidate> recent_;  // candidates pushed lately, by a hash
  size_t top_ = 0;
  bool loaded_ = false;
};

// Candidates with one end whose starts follow each other by a period, each
// one copy shorter than the one before: {start + i * period, count - i}
// for i < n. A run's leading clean copies, each cut again from one copy
// later (the search), come in such families; each waits in the queue as
// its first member, and once one member's copies are all taken so are the
// others' (`taken`: nothing left to try).
struct Family {
  uint32_t start, period, count, n;
  bool taken = false;
};

// The candidates tried: each once, however often it comes back. Grouped by
// period and end, where the pieces of one run's candidates fall together,
// their starts held as ranges.
class Tried {
 public:
  bool insert(const Candidate& c) {  // false: tried before
    const uint64_t key = uint64_t(c.period) << 32 | (c.start + c.count * c.period);
    std::map<uint32_t, uint32_t>& starts = key == recent_key_ ? *recent_ : groups_[key];
    recent_key_ = key, recent_ = &starts;
    // the ranges [first, last] of starts, one period apart, by first
    auto next = starts.upper_bound(c.start);
    if (next != starts.begin()) {
      auto at = std::prev(next);
      if (c.start <= at->second) return false;
      if (c.start == at->second + c.period) {
        at->second = c.start;
        if (next != starts.end() && next->first == c.start + c.period) at->second = next->second, starts.erase(next);
        return true;
      }
    }
    if (next != starts.end() && next->first == c.start + c.period) {
      const uint32_t last = next->second;
      starts.erase(next);
      starts.emplace(c.start, last);
      return true;
    }
    starts.emplace_hint(next, c.start, c.start);
    return true;
  }

 private:
  std::unordered_map<uint64_t, std::map<uint32_t, uint32_t>> groups_;
  uint64_t recent_key_ = ~uint64_t(0);
  std::map<uint32_t, uint32_t>* recent_ = nullptr;
};

// The edges into each position of `order`, from positions of `order`.
struct Edges {
  struct Edge {
    uint32_t from;
    uint8_t type;
  };
  std::vector<uint32_t> begin;  // per position, and one past the last
  std::vector<Edge> edges;
};

// Positions [begin, end) of `order` whose label repeats one period later.
struct Run {
  uint32_t begin, end;
};

// The copies of one period laid from `base` over a run, each compared once
// with the copy before it: what a candidate's clean copies depend on, for
// every candidate of that run and grid (the pieces one is cut into reuse it).
// Copy k holds the positions [base + k * period, base + (k + 1) * period).
class CopyTable {
 public:
  // How many leading copies of the candidate's repeat cleanly (at least 1):
  // the same edges inside each copy, none skipping a copy, and the same
  // edges from each copy to the next but for the last; chained when its
  // first copy feeds the next.
  uint32_t clean(uint32_t start, uint32_t count, bool* chained) const {
    const uint32_t c0 = (start - base_) / period_, c1 = c0 + count;
    if (leaves_ && minimum(c0, c0 + 1) < c1) return 1;  // its first copy feeds a later one than the next
    uint32_t k = std::min({count, same_inside_[c0], same_next_[c0] + 1});
    if (leaves_) {
      const uint32_t a = first_below(1, 0, leaves_, c0 + 1, c0 + k, c1);
      if (a != kNone) k = a - c0;
    }
    *chained = feeds_next_[c0] && k >= 2;
    return k;
  }

 private:
  friend CopyTable copy_table(const Edges&, uint32_t, uint32_t, uint32_t, size_t&);
  // The smallest skip_ in [lo, hi), and the first index in [lo, hi) whose
  // skip_ is below x (a segment tree of skip_: node 1 the root).
  uint32_t minimum(uint32_t lo, uint32_t hi) const {
    uint32_t v = kNone;
    for (size_t a = lo + leaves_, b = hi + leaves_; a < b; a /= 2, b /= 2) {
      if (a & 1) v = std::min(v, skip_[a++]);
      if (b & 1) v = std::min(v, skip_[--b]);
    }
    return v;
  }
  uint32_t first_below(size_t node, size_t nl, size_t nr, uint32_t lo, uint32_t hi, uint32_t x) const {
    if (nr <= lo || hi <= nl || skip_[node] >= x) return kNone;
    if (nr - nl == 1) return uint32_t(nl);
    const size_t mid = (nl + nr) / 2;
    const uint32_t a = first_below(2 * node, nl, mid, lo, hi, x);
    return a != kNone ? a : first_below(2 * node + 1, mid, nr, lo, hi, x);
  }
  uint32_t base_ = 0, period_ = 1;
  std::vector<uint32_t> same_inside_;  // per copy: how many copies from it on have its edges inside
  std::vector<uint32_t> same_next_;    // per copy: how many from it on have its edges to their next copy
  std::vector<char> feeds_next_;       // per copy: some edge goes from it to the next copy
  std::vector<uint32_t> skip_;         // the segment tree over copies: the first copy beyond the next one it feeds
  size_t leaves_ = 0;                  // 0: no copy feeds one beyond the next
};

// The table of the `copies` whole copies of `period` from `base` that end
// by `end`; `work` counts the edges looked at.
CopyTable copy_table(const Edges& e, uint32_t base, uint32_t end, uint32_t period, size_t& work) {
  using EdgeKey = std::tuple<uint32_t, uint32_t, uint8_t>;  // from place, to place, type
  const uint32_t copies = (end - base) / period;
  CopyTable t;
  t.base_ = base, t.period_ = period;
  std::vector<char> same_inside(copies, 0), same_next(copies, 0);
  t.feeds_next_.assign(copies, 0);
  std::vector<uint32_t> skip(copies, kNone);
  bool skips = false;
  std::vector<EdgeKey> inside, inside_before, next, next_before;  // next: from copy k - 1 to copy k
  for (uint32_t k = 0; k < copies; ++k) {
    inside.clear(), next.clear();
    for (uint32_t j = 0; j < period; ++j) {
      const uint32_t q = base + k * period + j;
      for (uint32_t x = e.begin[q]; x < e.begin[q + 1]; ++x) {
        ++work;
        if (e.edges[x].from < base) continue;
        const uint32_t qu = e.edges[x].from - base;
        const uint32_t cu = qu / period, ju = qu % period;
        if (cu == k) inside.emplace_back(ju, j, e.edges[x].type);
        else if (cu + 1 == k) next.emplace_back(ju, j, e.edges[x].type);
        else if (cu < k) skip[cu] = std::min(skip[cu], k), skips = true;
      }
    }
    std::sort(inside.begin(), inside.end());
    same_inside[k] = k > 0 && inside == inside_before;
    inside.swap(inside_before);
    if (k > 0) {
      std::sort(next.begin(), next.end());
      t.feeds_next_[k - 1] = !next.empty();
      same_next[k - 1] = k > 1 && next == next_before;
      next.swap(next_before);
    }
  }
  // From each copy on, how many agree with it in a row.
  t.same_inside_.assign(copies, 1);
  t.same_next_.assign(copies, 1);
  for (uint32_t k = copies - 1; k-- > 0;) {
    if (same_inside[k + 1]) t.same_inside_[k] = t.same_inside_[k + 1] + 1;
    if (k + 2 < copies && same_next[k + 1]) t.same_next_[k] = t.same_next_[k + 1] + 1;
  }
  if (skips) {
    t.leaves_ = 1;
    while (t.leaves_ < copies) t.leaves_ *= 2;
    t.skip_.assign(2 * t.leaves_, kNone);
    std::copy(skip.begin(), skip.end(), t.skip_.begin() + t.leaves_);
    for (size_t i = t.leaves_; i-- > 1;) t.skip_[i] = std::min(t.skip_[2 * i], t.skip_[2 * i + 1]);
  }
  return t;
}

// The smallest o in [1, p) with x[i] == b[(i + o) % p] for every i (x is b
// turned by o), else 0: x searched for in b twice over (Knuth-Morris-Pratt).
uint32_t first_rotation(const uint64_t* x, const uint64_t* b, uint32_t p) {
  std::vector<uint32_t> fail(p, 0);
  for (uint32_t i = 1, k = 0; i < p; ++i) {
    while (k && x[i] != x[k]) k = fail[k - 1];
    if (x[i] == x[k]) ++k;
    fail[i] = k;
  }
  for (uint32_t i = 0, k = 0; i + 1 < 2 * p; ++i) {
    const uint64_t y = b[i % p];
    while (k && y != x[k]) k = fail[k - 1];
    if (y == x[k]) ++k;
    if (k == p) {
      const uint32_t o = i + 1 - p;
      if (o >= 1) return o;
      k = fail[k - 1];
    }
  }
  return 0;
}

std::string node_name(const Node& n) {
  if (n.type == NodeType::kernel) {
    const std::string full = n.kernel && !n.kernel->demangled.empty() ? n.kernel->demangled : demangle(n.kernel_name);
    return full.empty() ? std::string("kernel") : short_kernel_name(full, 48);
  }
  return std::string(to_string(n.type));
}

// The longest common subsequence of a and b, as the pairs it matches.
std::vector<std::pair<uint32_t, uint32_t>> common(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<uint32_t> t((n + 1) * (m + 1), 0);
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      t[i * (m + 1) + j] = a[i] == b[j] ? t[(i + 1) * (m + 1) + j + 1] + 1
                                        : std::max(t[(i + 1) * (m + 1) + j], t[i * (m + 1) + j + 1]);
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (size_t i = 0, j = 0; i < n && j < m;) {
    if (a[i] == b[j]) out.emplace_back(uint32_t(i++), uint32_t(j++));
    else if (t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1]) ++i;
    else ++j;
  }
  return out;
}

// The length of the longest common subsequence of `block` and each stretch
// of `a` that starts at its first element (prefixes: lcs[len]), or, with
// `suffixes`, that ends at its last (lcs[len] for a's last len elements):
// one table for every length, two rows of it at a time.
std::vector<uint32_t> common_lengths(const uint64_t* a, size_t n, const uint64_t* block, size_t p, bool suffixes) {
  std::vector<uint32_t> lcs(n + 1, 0), row(p + 1, 0), next(p + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    // Prefixes: row j holds LCS(a[..i), block[..j)). Suffixes: the same on
    // both read backwards, LCS(a[n-i..), block[p-j..)).
    const uint64_t x = suffixes ? a[n - i] : a[i - 1];
    next[0] = 0;
    for (size_t j = 1; j <= p; ++j) {
      const uint64_t y = suffixes ? block[p - j] : block[j - 1];
      next[j] = x == y ? row[j - 1] + 1 : std::max(row[j], next[j - 1]);
    }
    std::swap(row, next);
    lcs[i] = row[p];
  }
  return lcs;
}

// Next to each repeat, a stretch of about one block's length that matches
// at least three quarters of the block in order, and is no repeat itself:
// a copy that differs. Of the lengths that qualify, the best match wins,
// then the length nearest the block's, then the shorter.
void find_odd_copies(const Graph& g, const std::vector<uint32_t>& order, const std::vector<uint64_t>& label,
                     const std::vector<char>& taken, const std::vector<uint32_t>& starts, Folding& f) {
  const size_t m = order.size();
  std::unordered_set<uint32_t> fronts;  // the first nodes of the odd copies found
  for (uint32_t r = 0; r < f.repeats.size(); ++r) {
    const Repeat& rp = f.repeats[r];
    const uint32_t p = rp.size;
    if (p < 2 || p > 2000) continue;
    const uint64_t* block = &label[starts[r]];
    const uint32_t slack = std::max<uint32_t>(1, p / 8);
    const uint32_t shortest = p > slack ? p - slack : 1;
    for (bool before : {false, true}) {
      const size_t edge = before ? starts[r] : starts[r] + size_t(p) * rp.count;
      // The stretch must be free of repeats: as far as that goes from the edge.
      const size_t room = before ? edge : m - edge;
      size_t free = 0;
      while (free < p + slack && free < room && !taken[before ? edge - 1 - free : edge + free]) ++free;
      if (free < shortest) continue;
      const uint64_t* stretch = &label[before ? edge - free : edge];
      const std::vector<uint32_t> lcs = common_lengths(stretch, free, block, p, before);
      auto distance = [p](size_t len) { return len > p ? len - p : p - len; };
      size_t best_len = 0, best_score = 0;
      for (size_t len = shortest; len <= free; ++len) {
        const uint64_t* seg = before ? stretch + (free - len) : stretch;
        if (len == p && std::equal(seg, seg + p, block)) continue;  // a clean copy the search did not take
        const size_t score = size_t(lcs[len]) * 4;
        if (score < size_t(p) * 3) continue;
        if (score > best_score || (score == best_score && distance(len) < distance(best_len)))
          best_score = score, best_len = len;
      }
      if (!best_len) continue;
      const size_t from = before ? edge - best_len : edge;
      // The gap between two repeats of one block, seen from the other side.
      if (!fronts.insert(order[from]).second) continue;
      const auto best_match = common(std::vector<uint64_t>(&label[from], &label[from] + best_len),
                                     std::vector<uint64_t>(block, block + p));
      OddCopy odd;
      odd.repeat = r;
      odd.before = before;
      odd.nodes.assign(order.begin() + from, order.begin() + from + best_len);
      // What differs: nodes of this copy the block lacks, and the reverse.
      std::vector<char> in_seg(best_len, 0), in_block(p, 0);
      for (const auto& [i, j] : best_match) in_seg[i] = 1, in_block[j] = 1;
      std::vector<std::string> extra, missing;
      for (size_t i = 0; i < best_len; ++i)
        if (!in_seg[i]) extra.push_back(node_name(g.nodes[order[from + i]]));
      for (size_t j = 0; j < p; ++j)
        if (!in_block[j]) missing.push_back(node_name(g.nodes[rp.copies[0][j]]));
      auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (size_t k = 0; k < v.size() && k < 3; ++k) s += (k ? ", " : "") + v[k];
        if (v.size() > 3) s += ", ...";
        return s;
      };
      if (!extra.empty()) odd.difference = "+" + plural(extra.size(), "node", "nodes") + " (" + list(extra) + ")";
      if (!missing.empty())
        odd.difference += std::string(odd.difference.empty() ? "" : ", ") + "-" +
                          plural(missing.size(), "node", "nodes") + " (" + list(missing) + ")";
      if (odd.difference.empty()) odd.difference = "other edges";
      f.odd.push_back(std::move(odd));
    }
  }
}

// The deepest module every node of the copy (that has modules) lies in.
const ModuleFrame* copy_module(const Graph& g, const std::vector<uint32_t>& copy) {
  const std::vector<ModuleFrame>* common = nullptr;
  size_t depth = 0;
  for (uint32_t v : copy) {
    const auto& o = g.nodes[v].origin;
    if (!o || o->modules.empty()) continue;
    if (!common) {
      common = &o->modules;
      depth = common->size();
      continue;
    }
    size_t k = 0;
    while (k < depth && k < o->modules.size() && o->modules[k].name == (*common)[k].name) ++k;
    depth = k;
  }
  return common && depth ? &(*common)[depth - 1] : nullptr;
}

// "model.layers.3" -> "model.layers.#": digit runs as one mark.
std::string without_digits(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += s[i];
    }
  }
  return out;
}

// Names a repeat by its copies' modules when each copy lies in one module,
// all of one class, named alike but for an index: the decoder layers.
bool name_by_modules(const Graph& g, Repeat& r) {
  std::vector<std::string> names;
  std::string type, shape;
  for (const auto& copy : r.copies) {
    const ModuleFrame* m = copy_module(g, copy);
    if (!m || m->name.empty()) return false;
    if (names.empty()) type = m->type, shape = without_digits(m->name);
    else if (m->type != type || without_digits(m->name) != shape) return false;
    names.push_back(m->name);
  }
  if (names.size() < 2 || names.front() == names.back() || type.empty()) return false;
  // model.layers.0 ... model.layers.7 -> model.layers.{0..7}
  const std::string& a = names.front();
  const std::string& b = names.back();
  size_t p = 0;
  while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
  while (p > 0 && std::isdigit(static_cast<unsigned char>(a[p - 1]))) --p;
  size_t ea = p, eb = p;
  while (ea < a.size() && std::isdigit(static_cast<unsigned char>(a[ea]))) ++ea;
  while (eb < b.size() && std::isdigit(static_cast<unsigned char>(b[eb]))) ++eb;
  if (ea > p && eb > p && a.substr(ea) == b.substr(eb))
    r.module = a.substr(0, p) + "{" + a.substr(p, ea - p) + ".." + b.substr(p, eb - p) + "}" + a.substr(ea);
  else
    r.module = a + " ... " + b;
  r.module_type = type;
  r.copy_module = std::move(names);
  return true;
}

}  // namespace

size_t Folding::folded_nodes() const {
  size_t n = 0;
  for (const auto& r : repeats) n += size_t(r.count) * r.size;
  return n;
}

Folding find_repeats(const Graph& g) {
  Folding f;
  const size_t n = g.nodes.size();
  f.repeat_of.assign(n, kNone);
  f.copy_of.assign(n, kNone);
  f.place_of.assign(n, kNone);
  size_t edge_count = 0;
  const std::vector<uint32_t> order = chain_order(g, &edge_count);
  const size_t m = order.size();
  if (m < 2) return f;
  // Each node's label, its place in the order and its edges from earlier
  // places (edges from nodes outside the order left out: they never count),
  // in one pass over the nodes.
  std::vector<uint64_t> label(m);
  std::vector<uint32_t> pos(n, kNone);
  Edges edges;
  edges.edges.reserve(edge_count);
  edges.begin.reserve(m + 1);
  edges.begin.push_back(0);
  for (size_t i = 0; i < m; ++i) {
    const Node& x = g.nodes[order[i]];
    label[i] = label_of(x);
    pos[order[i]] = uint32_t(i);
    for (const auto& d : x.dependencies)
      if (d.from < n && pos[d.from] != kNone) edges.edges.push_back({pos[d.from], uint8_t(d.type)});
    edges.begin.push_back(uint32_t(edges.edges.size()));
  }

  // The periods worth trying: the distances between one node and the next
  // of the same kind and name, the most frequent first (a block's length
  // shows up once per node of each copy), and all short ones.
  std::vector<uint32_t> periods;
  {
    std::unordered_map<uint64_t, uint32_t> ids;  // per label, a number from 0
    std::vector<uint32_t> last;                  // per number: where its label was last seen
    std::unordered_map<uint32_t, uint32_t> gaps;
    for (uint32_t i = 0; i < m; ++i) {
      const auto [it, added] = ids.emplace(label[i], uint32_t(ids.size()));
      if (added) {
        last.push_back(i);
        continue;
      }
      const uint32_t gap = i - last[it->second];
      if (gap <= m / 2) ++gaps[gap];
      last[it->second] = i;
    }
    std::vector<std::pair<uint32_t, uint32_t>> by_count;  // (count, gap)
    for (const auto& [gap, count] : gaps)
      if (count >= 2 || gap <= 8) by_count.emplace_back(count, gap);
    std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (size_t p = 1; p <= std::min<size_t>(8, m / 2); ++p) periods.push_back(uint32_t(p));
    for (size_t k = 0; k < by_count.size() && periods.size() < 72; ++k)
      if (by_count[k].second > 8) periods.push_back(by_count[k].second);
  }
  // Runs of one period: positions i with label[i] == label[i + p] in a row.
  // Every candidate, and every piece it is cut into, lies in one such run
  // at least a period long (`runs`, per period, in order).
  std::vector<Candidate> cands;
  std::vector<std::vector<Run>> runs(periods.size());
  for (uint32_t k = 0; k < periods.size(); ++k) {
    const size_t p = periods[k];
    size_t i = 0;
    while (i + p < m) {
      if (label[i] != label[i + p]) {
        ++i;
        continue;
      }
      size_t b = i;
      while (b + p < m && label[b] == label[b + p]) ++b;
      if (b - i >= p) runs[k].push_back({uint32_t(i), uint32_t(b)});
      const size_t count = (b - i + p) / p;
      if (count >= 2 && count * p >= kMinCovered) cands.push_back({uint32_t(i), uint32_t(p), uint32_t(count)});
      i = b;
    }
  }
  std::unordered_map<uint32_t, uint32_t> period_index;
  std::vector<size_t> run_first(periods.size(), 0);  // runs of the periods before, for one number per run
  for (uint32_t k = 0; k < periods.size(); ++k) {
    period_index.emplace(periods[k], k);
    if (k) run_first[k] = run_first[k - 1] + runs[k - 1].size();
  }
  // The run of `period` that holds position q (q's copy and the next agree), or null.
  auto run_at = [&](uint32_t period, uint32_t q) -> const Run* {
    const std::vector<Run>& v = runs[period_index.at(period)];
    auto it = std::upper_bound(v.begin(), v.end(), q, [](uint32_t x, const Run& r) { return x < r.begin; });
    if (it == v.begin() || q >= (--it)->end) return nullptr;
    return &*it;
  };

  // The edges inside one copy, and from one copy to the next, must be the
  // same for every copy; anything else crossing copies breaks the repeat.
  // Each run's copies are compared once per grid (CopyTable); a candidate
  // reads how many of its leading copies repeat cleanly (at least 1).
  size_t work = 0;  // edges looked at, bounded
  const size_t max_work = size_t(50) << 20;
  std::unordered_map<uint64_t, CopyTable> tables;
  const CopyTable* recent = nullptr;  // the last one used, and its key
  uint64_t recent_key = ~uint64_t(0);
  auto clean_prefix = [&](const Candidate& c, bool* chained) -> uint32_t {
    const uint32_t k = period_index.at(c.period);
    const Run* run = run_at(c.period, c.start);
    const uint32_t phase = c.start % c.period;
    const uint64_t key = uint64_t(run_first[k] + (run - runs[k].data())) << 32 | phase;
    if (key != recent_key) {
      auto it = tables.find(key);
      if (it == tables.end()) {
        const uint32_t base = run->begin + (phase + c.period - run->begin % c.period) % c.period;
        it = tables.emplace(key, copy_table(edges, base, run->end + c.period, c.period, work)).first;
      }
      recent = &it->second, recent_key = key;
    }
    return recent->clean(c.start, c.count, chained);
  };

  // Largest first; what does not repeat cleanly, or overlaps a repeat
  // taken, comes back as the pieces that might.
  CandidateQueue queue(m);
  for (const Candidate& c : cands) queue.push(c);
  Tried tried;
  std::vector<Family> families;
  std::vector<char> taken(m, 0);
  std::map<uint32_t, uint32_t> taken_runs;  // the repeats' [first, end) positions in `order`
  // Whether every position of [a, b) is in a repeat.
  auto all_taken = [&](uint32_t a, uint32_t b) {
    auto it = taken_runs.upper_bound(a);
    if (it == taken_runs.begin()) return false;
    for (--it; it != taken_runs.end() && it->first <= a && a < b; ++it) a = std::max(a, it->second);
    return a >= b;
  };
  std::vector<uint32_t> starts;  // per repeat: its first position in `order`
  // The repeats' blocks by size and labels in any order: a block that is
  // another's rotation has the same labels. One repeat per distinct block.
  std::vector<uint64_t> label_sum(m + 1, 0);
  for (size_t i = 0; i < m; ++i) label_sum[i + 1] = label_sum[i] + mix(label[i]);
  auto block_key = [&](uint32_t start, uint32_t p) { return mix(label_sum[start + p] - label_sum[start]) ^ p; };
  std::unordered_map<uint64_t, std::vector<uint32_t>> blocks;
  // The clean copies of a candidate cut from a candidate's copies after its
  // first (hint: the family of the first one's clean copies): one more
  // member of that family when it is its next, else a family of their own.
  // Returns the family they are in (kNone: nothing to try).
  auto push_clean = [&](const Candidate& a, uint32_t hint) -> uint32_t {
    if (a.count < 2 || a.covered() < kMinCovered) return kNone;
    if (hint != kNone) {
      Family& fam = families[hint];
      if (fam.period == a.period && fam.start + fam.n * fam.period == a.start && fam.count - fam.n == a.count) {
        if (fam.taken) return hint;  // inside copies taken: nothing to try
        if (fam.n > 0) {
          ++fam.n;
          return hint;
        }
      }
    }
    families.push_back({a.start, a.period, a.count, 1});
    queue.push_family(a, uint32_t(families.size() - 1));
    return uint32_t(families.size() - 1);
  };
  // A candidate that repeats cleanly: a repeat.
  auto take = [&](const Candidate& c, bool chained) {
    const uint32_t end = uint32_t(c.start + c.covered());
    const uint32_t count = c.count;
    Repeat r;
    r.count = count;
    r.size = c.period;
    r.chained = chained;
    r.copies.resize(count);
    const uint32_t id = uint32_t(f.repeats.size());
    for (uint32_t k = 0; k < count; ++k) {
      r.copies[k].reserve(c.period);
      for (uint32_t j = 0; j < c.period; ++j) {
        const uint32_t q = c.start + k * c.period + j;
        const uint32_t v = order[q];
        taken[q] = 1;
        r.copies[k].push_back(v);
        f.repeat_of[v] = id, f.copy_of[v] = k, f.place_of[v] = j;
      }
    }
    taken_runs.emplace(c.start, end);
    const Node& first = g.nodes[r.copies[0].front()];
    const Node& last_node = g.nodes[r.copies[0].back()];
    r.label = r.size == 1 ? node_name(first)
                          : "block of " + std::to_string(r.size) + " nodes (" + node_name(first) + " ... " +
                                node_name(last_node) + ")";
    if (name_by_modules(g, r))
      r.label = r.module_type + " (" + std::to_string(r.size) + (r.size == 1 ? " node" : " nodes") + " each)";
    f.repeats.push_back(std::move(r));
    starts.push_back(c.start);
    // Its block, unless a repeat before it has the same one (that one would
    // be found first for every candidate).
    std::vector<uint32_t>& same = blocks[block_key(c.start, c.period)];
    bool known = false;
    for (uint32_t o : same)
      known = known || (f.repeats[o].size == c.period &&
                        std::equal(&label[starts[o]], &label[starts[o]] + c.period, &label[c.start]));
    if (!known) same.push_back(id);
  };
  while (!queue.empty() && work < max_work) {
    const Queued q = queue.pop();
    const Candidate c = q.c;
    const uint32_t end = uint32_t(c.start + c.covered());
    // One candidate, tried; then the next member of its family, if any.
    [&] {
      if (!tried.insert(c)) return;
      // Overlapping a repeat taken: the copies before it, and those after.
      uint32_t first_taken = kNone;
      {
        auto it = taken_runs.upper_bound(c.start);
        if (it != taken_runs.begin() && std::prev(it)->second > c.start) first_taken = c.start;
        else if (it != taken_runs.end() && it->first < end) first_taken = it->first;
      }
      if (first_taken != kNone) {
        const uint32_t before = (first_taken - c.start) / c.period;
        queue.push({c.start, c.period, before});
        uint32_t resume = first_taken;
        for (auto it = std::prev(taken_runs.upper_bound(resume)); it != taken_runs.end() && it->first <= resume; ++it)
          resume = std::max(resume, it->second);
        resume = std::min(resume, end);
        const uint32_t skip = (resume - c.start + c.period - 1) / c.period;
        if (skip < c.count) queue.push({c.start + skip * c.period, c.period, c.count - skip});
        return;
      }
      // A run of a block taken already, started elsewhere in the block
      // (after a copy that differs): its copies begin where the block's begin.
      uint32_t shift = 0;
      if (auto it = blocks.find(block_key(c.start, c.period)); it != blocks.end())
        for (size_t k = 0; k < it->second.size() && !shift; ++k) {
          const Repeat& r = f.repeats[it->second[k]];
          if (r.size != c.period) continue;
          const uint32_t o = first_rotation(&label[c.start], &label[starts[it->second[k]]], c.period);
          if (o) shift = c.period - o;
        }
      if (shift) {
        // As many whole copies as follow from there.
        const uint32_t from = c.start + shift;
        const Run* run = run_at(c.period, from);
        queue.push({from, c.period, run ? 1 + (run->end - from) / c.period : 1});
        return;
      }
      bool chained = false;
      const uint32_t clean = clean_prefix(c, &chained);
      if (clean < c.count) {
        // The clean copies, those after them, and all but the first (the
        // first copy may be the odd one: a chain's head).
        const uint32_t cut = std::max<uint32_t>(clean, 1);
        const uint32_t family = clean >= 2 ? push_clean({c.start, c.period, clean}, q.hint) : kNone;
        queue.push({c.start + cut * c.period, c.period, c.count - cut});
        if (cut > 1) queue.push({c.start + c.period, c.period, c.count - 1}, family);
        return;
      }
      take(c, chained);
    }();
    if (q.family == kNone) continue;
    Family& fam = families[q.family];
    if (all_taken(c.start, end)) fam.taken = true;  // and so are the later members'
    else if (--fam.n > 0) queue.push_family({fam.start += fam.period, fam.period, --fam.count}, q.family);
  }
  find_odd_copies(g, order, label, taken, starts, f);
  return f;
}


std::string describe_folding(const Folding& f, size_t nodes) {
  if (f.repeats.empty()) return "";
  std::string s;
  for (size_t k = 0; k < f.repeats.size() && k < 4; ++k) {
    const Repeat& r = f.repeats[k];
    if (k) s += " + ";
    s += std::to_string(r.count) + " x " + r.label + (r.chained ? "" : " side by side");
  }
  if (f.repeats.size() > 4) s += " + " + std::to_string(f.repeats.size() - 4) + " more repeats";
  const size_t other = nodes - f.folded_nodes();
  s += " + " + plural(other, "other node", "other nodes");
  for (size_t k = 0; k < f.odd.size() && k < 3; ++k) {
    const OddCopy& o = f.odd[k];
    s += "; next to the " + std::to_string(f.repeats[o.repeat].count) + " x, one copy differs: " + o.difference +
         " (nodes " + std::to_string(o.nodes.front()) + ".." + std::to_string(o.nodes.back()) + ")";
  }
  return s;
}

}  // namespace graphscope
