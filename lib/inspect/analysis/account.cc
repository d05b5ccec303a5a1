#include "account.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <unordered_map>

#include "../model/origin_view.h"
#include "../core/parallel.h"
#include "../model/topology.h"

namespace graphscope {

namespace {

constexpr std::string_view kNames[kAccountCategories] = {
    "kernel work",  "memcpy work",           "memset work",          "host nodes",
    "other work",   "dependency latency",    "fake wait: same channel", "fake wait: copy engine",
    "fake wait: same stream", "fake wait: other work", "concurrent work", "unexplained"};
constexpr std::string_view kKeys[kAccountCategories] = {
    "kernel",  "memcpy", "memset", "host", "other_work", "latency", "fake_same_channel", "fake_copy_engine",
    "fake_same_stream", "fake_other", "concurrent", "unexplained"};

AccountCategory work_of(const Activity& a) {
  switch (a.kind) {
    case ActivityKind::kernel: return AccountCategory::kernel;
    case ActivityKind::memcpy: return AccountCategory::memcpy;
    case ActivityKind::memset: return AccountCategory::memset;
    case ActivityKind::host: return AccountCategory::host;
    default: return AccountCategory::other_work;
  }
}

// Where activities serialize: (device, channel type, channel), else the stream.
std::tuple<uint32_t, uint8_t, uint32_t> lane_of(const Activity& a) {
  if (a.channel_type != 0) return {a.device, a.channel_type, a.channel_id};
  return {a.device, 0, a.stream};
}

// Whether the graph has a path from a to b: a walk back from b, never below
// a's level (the longest path from a root: an ancestor's is always smaller).
class Ancestry {
 public:
  Ancestry(const Graph& g, const std::vector<uint32_t>& order) : g_(g), level_(g.nodes.size(), 0), mark_(g.nodes.size(), 0) {
    for (uint32_t i : order)
      for (const auto& d : g.nodes[i].dependencies)
        if (d.from < level_.size()) level_[i] = std::max(level_[i], level_[d.from] + 1);
  }
  bool path(uint32_t a, uint32_t b) {
    if (a == b || level_[a] >= level_[b]) return false;
    for (const auto& d : g_.nodes[b].dependencies)
      if (d.from == a) return true;
    ++stamp_;
    stack_.assign(1, b);
    while (!stack_.empty()) {
      const uint32_t x = stack_.back();
      stack_.pop_back();
      for (const auto& d : g_.nodes[x].dependencies) {
        if (d.from == a) return true;
        if (d.from < mark_.size() && mark_[d.from] != stamp_ && level_[d.from] > level_[a])
          mark_[d.from] = stamp_, stack_.push_back(d.from);
      }
    }
    return false;
  }

 private:
  const Graph& g_;
  std::vector<uint32_t> level_, mark_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> stack_;
};

struct ReplayAccount {
  int64_t makespan = 0;
  int64_t parts[kAccountCategories] = {};
};

// What one worker's replays reuse: when each node finished and what decided
// it, its activity, each lane's activities by end, and the path queries.
struct Scratch {
  Scratch(const Graph& g, const std::vector<uint32_t>& order, size_t n, size_t lanes_count)
      : act(n), src(n), fin(n), hosted(n), lanes(lanes_count), ancestry(g, order) {}
  std::vector<uint32_t> act, src;
  std::vector<int64_t> fin;
  std::vector<char> hosted;
  std::vector<std::vector<uint32_t>> lanes;
  Ancestry ancestry;
};

}  // namespace

std::string_view to_string(AccountCategory c) { return kNames[size_t(c)]; }
std::string_view account_key(AccountCategory c) { return kKeys[size_t(c)]; }
bool parse_account_key(std::string_view s, AccountCategory* out) {
  for (size_t i = 0; i < kAccountCategories; ++i)
    if (kKeys[i] == s) {
      *out = AccountCategory(i);
      return true;
    }
  return false;
}
bool is_fake_wait(AccountCategory c) {
  return c == AccountCategory::fake_same_channel || c == AccountCategory::fake_copy_engine ||
         c == AccountCategory::fake_same_stream || c == AccountCategory::fake_other;
}

AccountCategory NodeWait::largest() const {
  AccountCategory c = AccountCategory::latency;
  int64_t most = latency_ns;
  if (fake_ns > most) c = fake, most = fake_ns;
  if (concurrent_ns > most) c = AccountCategory::concurrent, most = concurrent_ns;
  if (host_ns > most) c = AccountCategory::host;
  return c;
}

MakespanAccount account_makespan(const Graph& g, const Trace& trace, const TraceJoin& join, double tolerance_us,
                                 double threshold_us, const std::vector<uint32_t>* wait_replays) {
  MakespanAccount out;
  const size_t n = g.nodes.size(), R = join.replays;
  const std::vector<Activity>& acts = trace.activities;
  if (R == 0 || n == 0) return out;
  const int64_t tol = int64_t(std::max(0.0, tolerance_us) * 1000.0);
  const int64_t thr = int64_t(std::max(0.0, threshold_us) * 1000.0);
  const std::vector<uint32_t> order = topological_order(g, "nodes", "graph");

  // Lanes, numbered; each lane's activities of no replay (other work), and
  // each replay's activities, by end.
  std::unordered_map<uint64_t, uint32_t> lane_ids;
  std::vector<uint32_t> lane(acts.size());
  for (size_t j = 0; j < acts.size(); ++j) {
    const auto [dev, type, id] = lane_of(acts[j]);
    const uint64_t key = (uint64_t(dev) << 40) ^ (uint64_t(type) << 32) ^ id;
    lane[j] = lane_ids.emplace(key, uint32_t(lane_ids.size())).first->second;
  }
  const size_t L = lane_ids.size();
  auto by_end = [&](uint32_t a, uint32_t b) { return acts[a].end_ns != acts[b].end_ns ? acts[a].end_ns < acts[b].end_ns : a < b; };
  std::vector<std::vector<uint32_t>> outside(L);
  std::vector<std::vector<uint32_t>> of_replay(R);
  for (size_t j = 0; j < acts.size() && j < join.replay_of.size(); ++j) {
    if (join.replay_of[j] == kNoNode) outside[lane[j]].push_back(uint32_t(j));
    else if (join.replay_of[j] < R) of_replay[join.replay_of[j]].push_back(uint32_t(j));
  }
  for (auto& v : outside) std::sort(v.begin(), v.end(), by_end);

  // The representative: the replay of median makespan (the lower one of
  // two middles), among replays with records; its nodes' accounts are kept.
  std::vector<ReplayAccount> accounts(R);
  std::vector<uint32_t> live;
  for (uint32_t r = 0; r < R; ++r) {
    if (of_replay[r].empty()) continue;
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (uint32_t j : of_replay[r])
      t0 = std::min<int64_t>(t0, int64_t(acts[j].start_ns)), t1 = std::max<int64_t>(t1, int64_t(acts[j].end_ns));
    accounts[r].makespan = t1 - t0;
    live.push_back(r);
  }
  if (live.empty()) return out;
  std::vector<uint32_t> by_makespan = live;
  std::stable_sort(by_makespan.begin(), by_makespan.end(),
                   [&](uint32_t a, uint32_t b) { return accounts[a].makespan < accounts[b].makespan; });
  const uint32_t rep = by_makespan[(by_makespan.size() - 1) / 2];
  // Which nodes' own delays each replay splits (waits); the chain's, as
  // the representative's walk split them.
  std::vector<std::vector<uint32_t>> wait_nodes(R);
  std::vector<NodeWait> chain_waits;
  out.waits.assign(n, NodeWait{});
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t want = wait_replays && i < wait_replays->size() ? (*wait_replays)[i] : UINT32_MAX;
    wait_nodes[want < R ? want : rep].push_back(i);
  }

  // Every replay walks the dependencies of every node, and its chain back
  // from the end: from compact arrays, not from the nodes (648 bytes each,
  // a cache miss per node per replay on a large graph).
  std::vector<uint32_t> dep_begin(n + 1, 0), dep_from;
  dep_from.reserve(n * 2);
  std::vector<char> is_host(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& d : g.nodes[i].dependencies)
      if (d.from < n) dep_from.push_back(d.from);
    dep_begin[i + 1] = uint32_t(dep_from.size());
    is_host[i] = g.nodes[i].type == NodeType::host;
  }
  auto deps_of = [&](uint32_t i) {
    return std::pair<const uint32_t*, const uint32_t*>(dep_from.data() + dep_begin[i], dep_from.data() + dep_begin[i + 1]);
  };
  auto one_replay = [&](size_t r, std::vector<uint32_t>& act, std::vector<uint32_t>& src,
                        std::vector<int64_t>& fin, std::vector<char>& hosted,
                        std::vector<std::vector<uint32_t>>& lanes, Ancestry& ancestry) {
    const std::vector<uint32_t>& mine = of_replay[r];
    if (mine.empty()) return;
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    std::fill(act.begin(), act.end(), kNoNode);
    for (uint32_t j : mine) {
      t0 = std::min<int64_t>(t0, int64_t(acts[j].start_ns));
      t1 = std::max<int64_t>(t1, int64_t(acts[j].end_ns));
      const uint32_t v = j < join.node_of.size() ? join.node_of[j] : kNoNode;
      if (v < n && (act[v] == kNoNode || acts[j].start_ns < acts[act[v]].start_ns)) act[v] = j;
    }
    ReplayAccount& ra = accounts[r];
    std::vector<NodeAccount> na(r == rep ? n : 0);
    std::vector<std::array<int64_t, kAccountCategories>> waits(na.size());
    // When each node finished, and the node with an activity that decided
    // it (nodes without one pass their predecessors' on).
    // hosted: a node without an activity that is, or passes on the time
    // of, a host node (host functions have no device record).
    for (uint32_t i : order) {
      int64_t ready = t0;
      uint32_t from = kNoNode, direct = kNoNode;
      for (auto [d, e] = deps_of(i); d != e; ++d)
        if (from == kNoNode || fin[*d] > ready) ready = std::max(ready, fin[*d]), from = src[*d], direct = *d;
      if (act[i] != kNoNode) {
        fin[i] = int64_t(acts[act[i]].end_ns), src[i] = i, hosted[i] = 0;
      } else {
        fin[i] = ready, src[i] = from;
        hosted[i] = is_host[i] || (direct != kNoNode && hosted[direct]);
      }
    }
    for (auto& l : lanes) l.clear();
    for (uint32_t j : mine) lanes[lane[j]].push_back(j);
    for (auto& l : lanes) std::sort(l.begin(), l.end(), by_end);
    // The latest-ending activity of lane l (this replay's or no replay's)
    // that ended by `limit` and started before `start`, other than `self`.
    auto lane_pred = [&](uint32_t l, int64_t limit, int64_t start, uint32_t self) {
      uint32_t best = kNoNode;
      for (const std::vector<uint32_t>* v : {&lanes[l], &outside[l]}) {
        auto it = std::upper_bound(v->begin(), v->end(), limit,
                                   [&](int64_t x, uint32_t a) { return x < int64_t(acts[a].end_ns); });
        while (it != v->begin()) {
          const uint32_t a = *--it;
          if (a == self || int64_t(acts[a].start_ns) >= start) continue;
          if (best == kNoNode || by_end(best, a)) best = a;
          break;
        }
      }
      return best;
    };
    // Whether other work of the lane was still running when `self` started:
    // then the lane was not holding it back (work dispatched one by one).
    auto lane_busy = [&](uint32_t l, int64_t start, uint32_t self) {
      const std::vector<uint32_t>& v = lanes[l];
      auto it = std::upper_bound(v.begin(), v.end(), start,
                                 [&](int64_t x, uint32_t a) { return x < int64_t(acts[a].end_ns); });
      for (size_t seen = 0; it != v.end() && seen < 64; ++it, ++seen)
        if (*it != self && int64_t(acts[*it].start_ns) < start) return true;
      return false;
    };
    // Where activities of the replay ran: their union, in order. A node's
    // own activity starts where the gap before it ends, so it never counts.
    std::vector<std::pair<int64_t, int64_t>> busy;
    {
      std::vector<std::pair<int64_t, int64_t>> iv;
      iv.reserve(mine.size());
      for (uint32_t j : mine) iv.push_back({int64_t(acts[j].start_ns), int64_t(acts[j].end_ns)});
      std::sort(iv.begin(), iv.end());
      for (const auto& [lo, hi] : iv) {
        if (!busy.empty() && lo <= busy.back().second)
          busy.back().second = std::max(busy.back().second, hi);
        else
          busy.push_back({lo, hi});
      }
    }
    // The parts of [lo, hi) during which something of the replay ran.
    auto covered = [&](int64_t lo, int64_t hi) {
      std::vector<std::pair<int64_t, int64_t>> out;
      auto it = std::upper_bound(busy.begin(), busy.end(), lo,
                                 [](int64_t x, const std::pair<int64_t, int64_t>& v) { return x < v.second; });
      for (; it != busy.end() && it->first < hi; ++it) out.push_back({std::max(lo, it->first), std::min(hi, it->second)});
      return out;
    };
    // [lo, hi) of the replay goes to category c (and to node's work or wait).
    auto add = [&](AccountCategory c, int64_t lo, int64_t hi, uint32_t node, bool work) {
      const int64_t ns = hi - lo;
      if (ns <= 0) return;
      ra.parts[size_t(c)] += ns;
      if (r == rep) out.segments.push_back({c, lo, hi, node});
      if (node == kNoNode || na.empty()) return;
      if (work) {
        na[node].work_ns += ns;
      } else {
        // The node's wait is named by its largest part.
        int64_t& part = waits[node][size_t(c)];
        part += ns;
        if (part > waits[node][size_t(na[node].wait)] || na[node].wait_ns == 0) na[node].wait = c;
        na[node].wait_ns += ns;
      }
    };
    // What bound node i's start: the latest end among its predecessors'
    // activities (nodes without one pass theirs on), which of them set it,
    // and through which direct predecessor.
    struct Bound {
      int64_t ready;
      uint32_t pred, direct;
    };
    auto bound = [&](uint32_t i) {
      Bound b{t0, kNoNode, kNoNode};
      for (auto [d, e] = deps_of(i); d != e; ++d)
        if ((b.pred == kNoNode || fin[*d] > b.ready) && src[*d] != kNoNode)
          b.ready = std::max(b.ready, fin[*d]), b.pred = src[*d], b.direct = *d;
      return b;
    };
    // Splits [ready, f) before node i's activity by what held it back:
    // emit(category, lo, hi) for each part; returns the activity of a fake
    // wait's blocker, else kNoNode. The one rule of the walk and of every
    // node's own delay (waits).
    auto split = [&](uint32_t i, int64_t ready, int64_t f, bool via_host, auto&& emit) {
      const Activity& a = acts[act[i]];
      // A fake dependency: the lane's activity that ended last before the
      // start, after the node was ready, and is not its ancestor.
      // A memcpy also waits for its copy engine: the latest memcpy of the
      // same direction on any lane of the device.
      const int64_t start = int64_t(a.start_ns);
      uint32_t q = lane_pred(lane[act[i]], start + tol, start, act[i]);
      if (a.kind == ActivityKind::memcpy && (q == kNoNode || int64_t(acts[q].end_ns) <= ready + tol))
        for (size_t l = 0; l < L; ++l) {
          if (l == lane[act[i]]) continue;
          const uint32_t x = lane_pred(uint32_t(l), start + tol, start, act[i]);
          if (x != kNoNode && acts[x].device == a.device && acts[x].kind == ActivityKind::memcpy && acts[x].copy == a.copy &&
              (q == kNoNode || by_end(q, x)))
            q = x;
        }
      bool fake = false, outside = false;
      if (f - ready > thr && q != kNoNode && int64_t(acts[q].end_ns) > ready + tol && !lane_busy(lane[act[i]], start, act[i])) {
        const uint32_t qn = q < join.node_of.size() ? join.node_of[q] : kNoNode;
        outside = qn >= n || join.replay_of[q] != r;
        fake = outside || !ancestry.path(qn, i);
      }
      if (fake) {
        const Activity& b = acts[q];
        const bool own = lane[q] == lane[act[i]];
        const bool copies = a.kind == ActivityKind::memcpy && b.kind == ActivityKind::memcpy;
        AccountCategory cause = !own || copies ? AccountCategory::fake_copy_engine
                                : outside      ? AccountCategory::fake_other
                                : a.channel_type != 0 ? AccountCategory::fake_same_channel
                                                      : AccountCategory::fake_same_stream;
        const int64_t qend = std::min<int64_t>(f, b.end_ns);
        emit(AccountCategory::latency, qend, f);
        emit(cause, ready, qend);
        return q;
      }
      // The gap after the predecessor: where other work of the replay ran,
      // concurrent work; the rest launch and dispatch (or a host node).
      const AccountCategory idle = via_host ? AccountCategory::host : AccountCategory::latency;
      int64_t at = ready;
      if (f - ready > tol)
        for (const auto& [lo, hi] : covered(ready, f)) {
          emit(idle, at, lo);
          emit(AccountCategory::concurrent, lo, hi);
          at = hi;
        }
      emit(idle, at, f);
      return uint32_t(kNoNode);
    };
    // A part of a node's delay, into its NodeWait.
    auto tally = [](NodeWait& w, AccountCategory c, int64_t lo, int64_t hi) {
      if (hi <= lo) return;
      if (is_fake_wait(c)) w.fake_ns += hi - lo, w.fake = c;
      else if (c == AccountCategory::concurrent) w.concurrent_ns += hi - lo;
      else if (c == AccountCategory::host) w.host_ns += hi - lo;
      else w.latency_ns += hi - lo;
    };
    // Every node's own delay, in the replay asked for.
    for (uint32_t i : wait_nodes[r]) {
      if (act[i] == kNoNode) continue;
      const Bound b = bound(i);
      const int64_t f = std::max<int64_t>(t0, int64_t(acts[act[i]].start_ns));
      const int64_t ready = std::min(b.ready, f);
      NodeWait& w = out.waits[i];
      w = NodeWait{};
      w.replay = uint32_t(r);
      w.blocker = split(i, ready, f, b.direct != kNoNode && hosted[b.direct],
                        [&](AccountCategory c, int64_t lo, int64_t hi) { tally(w, c, lo, hi); });
    }
    // The representative's chain nodes: their delay as the walk splits it
    // (what the account charges them), in place of the above once all
    // replays are done.
    std::vector<NodeWait> walked(r == rep ? n : 0);
    // The node whose activity ended last.
    uint32_t cur = kNoNode;
    for (uint32_t i = 0; i < n; ++i)
      if (act[i] != kNoNode && (cur == kNoNode || acts[act[i]].end_ns > acts[act[cur]].end_ns)) cur = i;
    int64_t f = t1;
    if (cur == kNoNode) {
      add(AccountCategory::unexplained, t0, t1, kNoNode, false);
      return;
    }
    add(AccountCategory::unexplained, int64_t(acts[act[cur]].end_ns), t1, kNoNode, false);
    f = std::min<int64_t>(f, acts[act[cur]].end_ns);
    for (size_t steps = 0; cur != kNoNode && f > t0 && steps <= n; ++steps) {
      const Activity& a = acts[act[cur]];
      if (!na.empty()) na[cur].on_chain = true;
      const int64_t s = std::max<int64_t>(t0, int64_t(a.start_ns));
      add(work_of(a), s, f, cur, true);
      f = std::min(f, s);
      if (f <= t0) break;
      const Bound b = bound(cur);
      const int64_t ready = std::min(b.ready, f);
      // A host node without a record in between: its time is the gap.
      NodeWait* w = walked.empty() ? nullptr : &walked[cur];
      if (w) w->replay = uint32_t(r);
      const uint32_t q = split(cur, ready, f, b.direct != kNoNode && hosted[b.direct],
                               [&](AccountCategory c, int64_t lo, int64_t hi) {
                                 add(c, lo, hi, cur, false);
                                 if (w) tally(*w, c, lo, hi);
                               });
      if (w) w->blocker = q;
      f = ready;
      if (b.pred == kNoNode) {
        add(AccountCategory::latency, t0, f, cur, false);  // the launch, before a root
        f = t0;
      }
      cur = b.pred;
    }
    if (f > t0) add(AccountCategory::unexplained, t0, f, kNoNode, false);
    if (r == rep) out.nodes = std::move(na), chain_waits = std::move(walked);
  };
  // The replays are independent: in parallel, each worker with its own
  // scratch (only the representative's writes out.nodes, out.segments and
  // chain_waits).
  const unsigned workers = worker_count(R * n, 100000, unsigned(R));
  parallel_slices(R, workers, [&](unsigned, size_t begin, size_t end) {
    Scratch s(g, order, n, L);
    for (size_t r = begin; r < end; ++r) one_replay(r, s.act, s.src, s.fin, s.hosted, s.lanes, s.ancestry);
  });

  for (uint32_t i = 0; i < n && i < chain_waits.size(); ++i)
    if (out.nodes[i].on_chain && chain_waits[i].replay != UINT32_MAX) out.waits[i] = chain_waits[i];
  out.replay = rep;
  out.replays = uint32_t(live.size());
  out.makespan_ns = accounts[rep].makespan;
  for (size_t c = 0; c < kAccountCategories; ++c) {
    std::vector<double> v;
    for (uint32_t r : live) v.push_back(double(accounts[r].parts[c]) / 1000.0);
    std::sort(v.begin(), v.end());
    AccountPart p;
    p.category = AccountCategory(c);
    p.ns = accounts[rep].parts[c];
    p.min_us = v.front();
    p.max_us = v.back();
    p.median_us = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    out.parts.push_back(p);
  }
  std::unordered_map<std::string, int64_t> by_module;
  bool any_module = false;
  for (uint32_t i = 0; i < n; ++i) {
    if (!out.nodes[i].on_chain) continue;
    ++out.chain_nodes;
    const std::string m = g.nodes[i].origin ? module_group(*g.nodes[i].origin) : "";
    any_module = any_module || !m.empty();
    by_module[m] += out.nodes[i].work_ns;
  }
  if (any_module) {
    for (auto& [m, ns] : by_module) out.modules.push_back({m, ns});
    std::sort(out.modules.begin(), out.modules.end(),
              [](const ModuleTime& a, const ModuleTime& b) { return a.ns != b.ns ? a.ns > b.ns : a.module < b.module; });
  }
  return out;
}

}  // namespace graphscope
