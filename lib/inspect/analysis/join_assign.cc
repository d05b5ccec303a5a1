// One launch's records assigned to the graph's nodes in time (join.h, the
// join without graph ids): see join_launch_parts.h.
#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>

#include "join_launch_parts.h"

namespace graphscope::join_detail {
namespace {

// Next free position at or after i in a bucket (taken positions are
// skipped in near-constant time).
struct FreeList {
  std::vector<uint32_t> next;
  void reset(size_t n) {
    next.resize(n + 1);
    std::iota(next.begin(), next.end(), 0u);
  }
  uint32_t find(uint32_t i) {
    uint32_t r = i;
    while (next[r] != r) r = next[r];
    while (next[i] != r) {
      uint32_t up = next[i];
      next[i] = r;
      i = up;
    }
    return r;
  }
  void take(uint32_t i) { next[i] = i + 1; }
};

// At most this many (node, record) pairs are narrowed per launch; beyond,
// only nodes alone in their class, and twins, are told apart.
constexpr size_t kPropagateWork = size_t(4) << 20;

// One launch's assignment, made in time: the launch's records in start
// order, each to a node of its class whose predecessors' records had ended
// by then (within the slack); where several could take it, the one the
// driver keeps on that stream (the node's stream in the first launch, else
// its predecessor's), else the one ready longest.
class Assigner {
 public:
  struct Result {
    std::vector<uint32_t> rec_of;  // per node: activity index, or kNone
    std::vector<char> forced;      // no node was ready for its record
  };

  Assigner(const Launch& l, const GraphDocument& doc, const Adjacency& adj, const std::vector<Activity>& acts,
           const std::vector<uint32_t>& rec_class, const Classes& c, uint64_t slack,
           const std::vector<uint32_t>* hints)
      : l_(l), g_(doc.root), adj_(adj), acts_(acts), c_(c), slack_(int64_t(slack)), hints_(hints) {
    C_ = c.coarse_nodes.size();
    for (uint32_t rec : l.records) {
      const uint32_t u = class_of_record(rec, rec_class[rec]);
      if (u == kNone) continue;
      auto [it, added] = slot_.emplace(u, uint32_t(sizes_.size()));
      if (added) sizes_.push_back(0);
      ++sizes_[it->second];
      records_.push_back({rec, it->second});
    }
  }

  uint32_t class_of(uint32_t v) const {
    const uint32_t cc = c_.coarse_of[v];
    if (cc == kNone) return kNone;
    return l_.fine[cc] ? uint32_t(C_) + c_.fine_of[v] : cc;
  }
  size_t class_size(uint32_t u) const { return u >= C_ ? c_.fine_nodes[u - C_].size() : c_.coarse_nodes[u].size(); }
  bool twins(uint32_t a, uint32_t b) const { return c_.up[a] == c_.up[b] && c_.down[a] == c_.down[b]; }

  /// Narrows each node's possible records by what must hold in any
  /// assignment that fits: a record starts after its predecessors' records
  /// can have ended and ends before its successors' can have started; no
  /// two nodes share a record, and every record has a node; with `links`,
  /// a node that is its predecessor's only successor and has no other
  /// predecessor runs on that predecessor's stream (the driver keeps a
  /// chain on one stream). False when nothing fits (then no domains), or
  /// the work would exceed `budget`.
  bool propagate(const std::vector<uint32_t>& order, bool links, size_t budget) {
    const size_t n = g_.nodes.size();
    dom_.assign(n, {});
    std::vector<uint32_t> slot_of(n, kNone);
    std::vector<std::vector<uint32_t>> recs(sizes_.size()), nodes(sizes_.size());
    for (const auto& [rec, slot] : records_) recs[slot].push_back(rec);
    size_t total = 0;
    for (uint32_t v = 0; v < n; ++v) {
      const uint32_t u = class_of(v);
      auto it = u == kNone ? slot_.end() : slot_.find(u);
      if (it == slot_.end()) continue;
      slot_of[v] = it->second;
      nodes[it->second].push_back(v);
      total += recs[it->second].size();
    }
    if (total > budget) return false;
    for (uint32_t v = 0; v < n; ++v)
      if (slot_of[v] != kNone) dom_[v] = recs[slot_of[v]];
    auto start = [&](uint32_t rec) { return int64_t(acts_[rec].start_ns); };
    auto end = [&](uint32_t rec) { return int64_t(acts_[rec].end_ns); };
    std::vector<int64_t> min_end(n), min_start(n), max_start(n), pass(n);
    bool changed = true;
    for (int iteration = 0; changed && iteration < 64; ++iteration) {
      changed = false;
      auto keep = [&](uint32_t v, auto pred) {
        auto& d = dom_[v];
        const size_t before = d.size();
        d.erase(std::remove_if(d.begin(), d.end(), [&](uint32_t r) { return !pred(r); }), d.end());
        changed |= d.size() != before;
        return !d.empty();
      };
      for (uint32_t v : order) {
        int64_t lo = INT64_MIN;
        for (const Edge& e : adj_.in(v)) {
          const uint32_t p = e.node;
          lo = std::max(lo, slot_of[p] == kNone ? pass[p] : e.type == EdgeType::standard ? min_end[p] : min_start[p]);
        }
        if (slot_of[v] == kNone) {
          pass[v] = lo;
          continue;
        }
        if (lo != INT64_MIN && !keep(v, [&](uint32_t r) { return start(r) + slack_ >= lo; })) return fail();
        min_end[v] = INT64_MAX, min_start[v] = INT64_MAX;
        for (uint32_t r : dom_[v]) min_end[v] = std::min(min_end[v], end(r)), min_start[v] = std::min(min_start[v], start(r));
      }
      for (size_t k = order.size(); k-- > 0;) {
        const uint32_t v = order[k];
        int64_t hi = INT64_MAX;
        for (const Edge& e : adj_.out(v)) {
          const uint32_t s = e.node;
          if (e.type == EdgeType::standard) hi = std::min(hi, slot_of[s] == kNone ? pass[s] : max_start[s]);
        }
        if (slot_of[v] == kNone) {
          pass[v] = hi;
          continue;
        }
        if (hi != INT64_MAX && !keep(v, [&](uint32_t r) { return end(r) <= hi + slack_; })) return fail();
        max_start[v] = INT64_MIN;
        for (uint32_t r : dom_[v]) max_start[v] = std::max(max_start[v], start(r));
      }
      // (pass[] now holds the backward bound of nodes without records; the
      // forward pass sets it again first.)
      if (links)
        for (uint32_t v = 0; v < n; ++v) {
          if (slot_of[v] == kNone || adj_.in(v).size() != 1) continue;
          const uint32_t p = adj_.in(v).begin()->node;
          if (slot_of[p] == kNone || adj_.out(p).size() != 1) continue;
          std::unordered_set<uint32_t> sp, sv;
          for (uint32_t r : dom_[p]) sp.insert(acts_[r].stream);
          for (uint32_t r : dom_[v]) sv.insert(acts_[r].stream);
          if (!keep(v, [&](uint32_t r) { return sp.count(acts_[r].stream) > 0; })) return fail();
          if (!keep(p, [&](uint32_t r) { return sv.count(acts_[r].stream) > 0; })) return fail();
        }
      // One node per record, one record per node.
      for (size_t sl = 0; sl < nodes.size(); ++sl) {
        if (nodes[sl].size() < 2) continue;
        std::unordered_map<uint32_t, uint32_t> holders, holder;  // record -> how many domains, one of them
        for (uint32_t v : nodes[sl])
          for (uint32_t r : dom_[v]) ++holders[r], holder[r] = v;
        for (uint32_t v : nodes[sl]) {
          if (dom_[v].size() == 1) {
            const uint32_t only = dom_[v][0];
            for (uint32_t w : nodes[sl])
              if (w != v && !keep(w, [&](uint32_t r) { return r != only; })) return fail();
            continue;
          }
          for (uint32_t r : dom_[v])
            if (holders[r] == 1 && holder[r] == v) {
              keep(v, [&](uint32_t x) { return x == r; });
              break;
            }
        }
        for (uint32_t r : recs[sl])
          if (!holders.count(r)) return fail();  // a record no node can have
      }
    }
    for (auto& d : dom_) std::sort(d.begin(), d.end());
    have_domains_ = true;
    return true;
  }
  /// The records left to node v (all of its class's without domains).
  size_t domain_size(uint32_t v) const { return have_domains_ ? dom_[v].size() : SIZE_MAX; }

  Result run() {
    const size_t n = g_.nodes.size();
    Result r;
    r.rec_of.assign(n, kNone);
    r.forced.assign(n, 0);
    remaining_.assign(n, 0);
    enable_.assign(n, INT64_MIN);
    pref_end_.assign(n, INT64_MIN);
    pref_stream_.assign(n, kNone);
    stream_of_.assign(n, kNone);
    pending_.assign(sizes_.size(), {});
    ready_.assign(sizes_.size(), {});
    for (uint32_t v = 0; v < n; ++v) remaining_[v] = uint32_t(adj_.in(v).size());
    for (uint32_t v = 0; v < n; ++v)
      if (!remaining_[v]) activate(v);
    for (const auto& [rec, slot] : records_) {
      const Activity& a = acts_[rec];
      const int64_t now = int64_t(a.start_ns) + slack_;
      auto& pend = pending_[slot];
      auto& ready = ready_[slot];
      while (!pend.empty() && pend.front().first <= now) {
        std::pop_heap(pend.begin(), pend.end(), std::greater<>());
        ready.push_back(pend.back().second);
        pend.pop_back();
      }
      size_t at = SIZE_MAX;
      if (ready.empty()) {
        // No node of the class was ready: out of the graph's order. The
        // one ready soonest takes it.
        if (pend.empty()) continue;
        std::pop_heap(pend.begin(), pend.end(), std::greater<>());
        ready.push_back(pend.back().second);
        pend.pop_back();
        at = 0;
        r.forced[ready[0]] = 1;
      }
      if (at == SIZE_MAX) {
        // Among the ready nodes that may have this record (their domain).
        for (size_t k = 0; k < ready.size(); ++k)
          if (allows(ready[k], rec) && (at == SIZE_MAX || prefer(ready[k], ready[at], a))) at = k;
        if (at == SIZE_MAX) {
          at = 0;
          r.forced[ready[0]] = 1;
        }
      }
      const uint32_t v = ready[at];
      ready[at] = ready.back();
      ready.pop_back();
      r.rec_of[v] = rec;
      complete(v, int64_t(a.start_ns), int64_t(a.end_ns), a.stream);
    }
    return r;
  }

 private:
  bool fail() {
    dom_.clear();
    have_domains_ = false;
    return false;
  }
  bool allows(uint32_t v, uint32_t rec) const {
    return !have_domains_ || std::binary_search(dom_[v].begin(), dom_[v].end(), rec);
  }
  // Whether node x rather than y takes record a.
  bool prefer(uint32_t x, uint32_t y, const Activity& a) const {
    auto rank = [&](uint32_t v) {
      if (hints_ && (*hints_)[v] != kNone) return (*hints_)[v] == a.stream ? 0 : 3;
      if (pref_stream_[v] == a.stream) return 1;
      for (const Edge& d : adj_.in(v))
        if (stream_of_[d.node] == a.stream) return 2;
      return 3;
    };
    const int rx = rank(x), ry = rank(y);
    if (rx != ry) return rx < ry;
    if (enable_[x] != enable_[y]) return enable_[x] < enable_[y];
    return x < y;
  }
  // All of v's predecessors are done: v waits for its record, or (a node
  // that makes none) is done at once.
  void activate(uint32_t v) {
    const uint32_t u = class_of(v);
    auto it = u == kNone ? slot_.end() : slot_.find(u);
    if (it == slot_.end()) {
      complete(v, enable_[v], enable_[v], kNone);
      return;
    }
    auto& pend = pending_[it->second];
    pend.emplace_back(enable_[v], v);
    std::push_heap(pend.begin(), pend.end(), std::greater<>());
  }
  void complete(uint32_t v, int64_t start, int64_t end, uint32_t stream) {
    stream_of_[v] = stream;
    for (const Edge& e : adj_.out(v)) {
      const uint32_t s = e.node;
      enable_[s] = std::max(enable_[s], e.type == EdgeType::standard ? end : start);
      if (stream != kNone && end > pref_end_[s]) pref_end_[s] = end, pref_stream_[s] = stream;
      if (--remaining_[s] == 0) activate(s);
    }
  }
  uint32_t class_of_record(uint32_t rec, uint32_t cc) const {
    if (cc >= C_) return kNone;
    if (!l_.fine[cc]) return cc;
    auto it = c_.fine_id.find(c_.fine_key(cc, geometry_key(acts_[rec])));
    return it == c_.fine_id.end() ? kNone : uint32_t(C_) + it->second;
  }

  const Launch& l_;
  const Graph& g_;
  const Adjacency& adj_;
  const std::vector<Activity>& acts_;
  const Classes& c_;
  int64_t slack_;
  const std::vector<uint32_t>* hints_;
  size_t C_ = 0;
  std::unordered_map<uint32_t, uint32_t> slot_;           // class -> slot
  std::vector<uint32_t> sizes_;                           // records per slot
  std::vector<std::pair<uint32_t, uint32_t>> records_;    // (record, slot), by start
  std::vector<uint32_t> remaining_, pref_stream_, stream_of_;
  std::vector<int64_t> enable_, pref_end_;
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> pending_;  // min-heaps by enable time
  std::vector<std::vector<uint32_t>> ready_;
  std::vector<std::vector<uint32_t>> dom_;  // per node: records it may have (activity indices, sorted)
  bool have_domains_ = false;
};

}  // namespace

// Assigns one used launch's records to nodes (node_of) and says how each
// node's was made (how).
void assign_launch(const Launch& l, const GraphDocument& doc, const Adjacency& adj, const std::vector<Activity>& acts,
                   const std::vector<uint32_t>& rec_class, const Classes& c, const std::vector<uint32_t>& order,
                   uint64_t slack, const std::vector<uint32_t>* hints, std::vector<uint32_t>& node_of,
                   std::vector<uint8_t>& how) {
  const Graph& g = doc.root;
  const size_t n = g.nodes.size();
  Assigner as(l, doc, adj, acts, rec_class, c, slack, hints);
  // What must hold narrows each node's records; with the driver's streams
  // first, else by time alone.
  if (!as.propagate(order, true, kPropagateWork)) as.propagate(order, false, kPropagateWork);
  const Assigner::Result best = as.run();
  // Twins whose records the trace cannot tell apart are interchangeable
  // when swapping them (with their whole branch) changes nothing else: each
  // of their predecessors and successors is shared with a twin, or
  // interchangeable itself.
  std::vector<char> swappable(n, 0);
  for (uint32_t v = 0; v < n; ++v)
    swappable[v] = c.has_twin[v] && as.domain_size(v) != 1 && as.class_of(v) != kNone;
  {
    auto holds = [&](uint32_t v) {
      for (size_t k = adj.pred_at[v]; k < adj.pred_at[v + 1]; ++k)
        if (!adj.pred_shared[k] && !swappable[adj.preds[k].node]) return false;
      for (size_t k = adj.succ_at[v]; k < adj.succ_at[v + 1]; ++k)
        if (!adj.succ_shared[k] && !swappable[adj.succs[k].node]) return false;
      return true;
    };
    // A node that stops being swappable can only change its neighbours.
    std::vector<uint32_t> work;
    for (uint32_t v = 0; v < n; ++v)
      if (swappable[v]) work.push_back(v);
    while (!work.empty()) {
      const uint32_t v = work.back();
      work.pop_back();
      if (!swappable[v] || holds(v)) continue;
      swappable[v] = 0;
      for (const Edge& d : adj.in(v))
        if (swappable[d.node]) work.push_back(d.node);
      for (const Edge& e : adj.out(v))
        if (swappable[e.node]) work.push_back(e.node);
    }
  }
  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t rec = best.rec_of[v];
    const uint32_t u = as.class_of(v);
    if (rec == kNone) {
      if (u != kNone) how[v] = uint8_t(Assignment::ambiguous);  // left without a record: out of order
      continue;
    }
    node_of[rec] = v;
    Assignment a = Assignment::ambiguous;
    if (as.class_size(u) == 1) a = Assignment::unique;
    else if (best.forced[v]) a = Assignment::ambiguous;
    else if (as.domain_size(v) == 1) a = Assignment::order;
    else if (swappable[v]) a = Assignment::interchangeable;
    how[v] = std::max(how[v], uint8_t(a));
  }
}

}  // namespace graphscope::join_detail
