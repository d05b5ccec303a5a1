#include "profile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "demangle.h"
#include "error.h"
#include "json_writer.h"
#include "order.h"
#include "parallel.h"
#include "topology.h"

namespace graphscope {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::none: return "none";
    case Verdict::real: return "real";
    case Verdict::fake: return "fake";
  }
  return "none";
}

std::string describe(const Lane& l) {
  std::string s = l.channel_type == 1   ? "compute channel "
                  : l.channel_type == 2 ? "copy channel "
                  : l.channel_type == 0 ? "stream "
                                        : "channel type " + std::to_string(l.channel_type) + " id ";
  s += std::to_string(l.id);
  if (l.device) s += " (device " + std::to_string(l.device) + ")";
  return s;
}

namespace {

Lane lane_of(const Activity& a) {
  if (a.channel_type == 0) return Lane{a.device, 0, a.stream};
  return Lane{a.device, a.channel_type, a.channel_id};
}

double median(std::vector<double>& v) {
  if (v.empty()) return 0;
  size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(m), v.end());
  double hi = v[m];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + long(m));
  return (lo + hi) / 2;
}

// The root graph's dependency lists (each dependency's `from`) as flat
// arrays: a node is hundreds of bytes, and the analysis reads nothing else of
// it, once per replay.
struct DependencyLists {
  std::vector<size_t> begin;  // node i's are from[begin[i], begin[i + 1])
  std::vector<uint32_t> from;
  explicit DependencyLists(const Graph& g) : begin(g.nodes.size() + 1, 0) {
    for (size_t i = 0; i < g.nodes.size(); ++i) begin[i + 1] = begin[i] + g.nodes[i].dependencies.size();
    from.reserve(begin.back());
    for (const auto& node : g.nodes)
      for (const auto& d : node.dependencies) from.push_back(d.from);
  }
  const uint32_t* first(uint32_t i) const { return from.data() + begin[i]; }
  const uint32_t* last(uint32_t i) const { return from.data() + begin[i + 1]; }
};

// Whether the root graph has a path from a to b: a walk back along
// dependencies from b, never below a's level (the longest-path level from
// the roots: an ancestor's level is always smaller). Asked once per node,
// with b the node: nothing to cache.
class Reachability {
 public:
  Reachability(const DependencyLists& deps, const std::vector<uint32_t>& level)
      : deps_(deps), level_(level), mark_(level.size(), 0) {}
  bool path(uint32_t a, uint32_t b) {
    if (a == b) return false;
    if (level_[a] >= level_[b]) return false;
    for (const uint32_t* d = deps_.first(b); d != deps_.last(b); ++d)  // the common case
      if (*d == a) return true;
    ++stamp_;
    stack_.assign(1, b);
    bool found = false;
    while (!stack_.empty() && !found) {
      uint32_t x = stack_.back();
      stack_.pop_back();
      for (const uint32_t* d = deps_.first(x); d != deps_.last(x); ++d) {
        uint32_t p = *d;
        if (p == a) {
          found = true;
          break;
        }
        if (mark_[p] == stamp_ || level_[p] <= level_[a]) continue;
        mark_[p] = stamp_;
        stack_.push_back(p);
      }
    }
    return found;
  }

 private:
  const DependencyLists& deps_;
  const std::vector<uint32_t>& level_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> stack_;
};

constexpr uint32_t kNone = UINT32_MAX;

// Small dense ids for keys of up to 96 bits (a lane, a correlation id, a
// node's local id), numbered in order of first sight. Open addressing: this
// runs once per record, where std::unordered_map would allocate a node per
// key and chase a pointer per lookup.
class IdMap {
 public:
  struct Key {
    uint64_t hi = 0;
    uint32_t lo = 0;
    friend bool operator<(const Key& a, const Key& b) { return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo; }
    friend bool operator==(const Key& a, const Key& b) { return a.hi == b.hi && a.lo == b.lo; }
  };
  uint32_t id(uint64_t hi, uint32_t lo) {
    if (2 * (keys_.size() + 1) > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t h = hash(hi, lo) & mask;; h = (h + 1) & mask) {
      uint32_t s = slots_[h];
      if (s == kNone) {
        slots_[h] = uint32_t(keys_.size());
        keys_.push_back({hi, lo});
        return slots_[h];
      }
      if (keys_[s].hi == hi && keys_[s].lo == lo) return s;
    }
  }
  const std::vector<Key>& keys() const { return keys_; }

 private:
  static size_t hash(uint64_t hi, uint32_t lo) {
    uint64_t x = hi * 0x9e3779b97f4a7c15ull ^ (lo + 0x632be59bd9b4e019ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    return size_t(x ^ (x >> 29));
  }
  void grow() {
    std::vector<uint32_t> slots(std::max<size_t>(16, 2 * slots_.size()), kNone);
    const size_t mask = slots.size() - 1;
    for (uint32_t s = 0; s < keys_.size(); ++s) {
      size_t h = hash(keys_[s].hi, keys_[s].lo) & mask;
      while (slots[h] != kNone) h = (h + 1) & mask;
      slots[h] = s;
    }
    slots_.swap(slots);
  }
  std::vector<uint32_t> slots_;
  std::vector<Key> keys_;
};

IdMap::Key lane_key(const Activity& a) {
  Lane l = lane_of(a);
  return {uint64_t(l.device) << 8 | l.channel_type, l.id};
}

Lane lane_from(const IdMap::Key& k) { return Lane{uint32_t(k.hi >> 8), uint8_t(k.hi & 0xff), k.lo}; }

// A record as the blocker and lane searches read it: copied out of the
// trace, in end order per lane, so that a search reads neighbouring memory.
struct EndRecord {
  uint64_t end, start;
  uint32_t activity;
  uint32_t replay;  // kNone: not one of the exec graph's records
};

// The first position in [lo, hi) whose end(position) exceeds x, ends being
// in order (std::upper_bound), found by steps doubling away from `at`, a
// position near the answer (the searched record's own).
template <typename End>
size_t first_end_after(size_t lo, size_t hi, size_t at, uint64_t x, End end) {
  size_t l, r;  // the answer is in [l, r]; r == hi or end(r) > x
  if (end(at) > x) {
    r = at;
    size_t step = 1;
    while (r - lo > step && end(r - step) > x) r -= step, step *= 2;
    l = r - lo > step ? r - step + 1 : lo;
  } else {
    l = at + 1;
    size_t step = 1;
    while (hi - l > step && end(l + step - 1) <= x) l += step, step *= 2;
    r = hi - l > step ? l + step - 1 : hi;
  }
  while (l < r) {
    const size_t mid = l + (r - l) / 2;
    if (end(mid) > x) r = mid;
    else l = mid + 1;
  }
  return l;
}

// The distinct stream ids of the nodes' records: a handful, so a scan of the
// ones seen beats hashing once per record.
class FewValues {
 public:
  void insert(uint32_t v) {
    for (uint32_t x : few_)
      if (x == v) return;
    if (few_.size() < 32) few_.push_back(v);
    else many_.insert(v);
  }
  void add_to(std::vector<uint32_t>& out) const {
    out.insert(out.end(), few_.begin(), few_.end());
    out.insert(out.end(), many_.begin(), many_.end());
  }

 private:
  std::vector<uint32_t> few_;
  std::unordered_set<uint32_t> many_;
};

// A node's record in one replay: times in us from the replay's first
// activity, and where it ran.
struct Times {
  double start, end, ready;
  uint32_t lane, stream;
};

// The replay that represents a node, and its record there.
struct Representative {
  uint32_t activity = kNone, replay = 0, lane = 0;
  double delay = 0;
};

struct LaneUse {
  uint32_t lane;
  double activities, busy_us;
};

}  // namespace

ProfileReport analyze_profile(const GraphDocument& doc, const Trace& trace, const ProfileOptions& opt) {
  const Graph& g = doc.root;
  const size_t n = g.nodes.size();
  const double tol = opt.tolerance_us, thr = opt.threshold_us;
  const std::vector<Activity>& acts = trace.activities;
  const size_t N = acts.size();
  ProfileReport r;
  r.threshold_us = thr;
  r.tolerance_us = tol;
  if (N >= kNone) throw_input("trace", "more than " + std::to_string(kNone - 1) + " records");

  // One pass over the records, in slices: the records per graph id, and each
  // record's lane, numbered per slice (made global below).
  const unsigned scan_workers = worker_count(N, 100000);
  std::vector<std::map<uint32_t, size_t>> graphs_of(scan_workers);
  std::vector<IdMap> lanes_of(scan_workers);
  std::vector<uint32_t> lane(N);
  parallel_slices(N, scan_workers, [&](unsigned w, size_t begin, size_t end) {
    size_t* count = nullptr;  // of the previous record's graph: records come in runs
    uint32_t last = 0;
    for (size_t j = begin; j < end; ++j) {
      const Activity& a = acts[j];
      if (a.graph_id) {
        if (!count || *a.graph_id != last) last = *a.graph_id, count = &graphs_of[w][last];
        ++*count;
      }
      IdMap::Key k = lane_key(a);
      lane[j] = lanes_of[w].id(k.hi, k.lo);
    }
  });
  std::map<uint32_t, size_t> per_graph;
  for (const auto& m : graphs_of)
    for (const auto& [id, count] : m) per_graph[id] += count;

  // Which exec graph.
  auto listed = [&] {
    std::string s;
    for (const auto& [id, count] : per_graph)
      s += (s.empty() ? "" : ", ") + std::to_string(id) + " (" + std::to_string(count) + " records)";
    return s.empty() ? std::string("none: no record carries a graph id") : s;
  };
  uint32_t exec = 0;
  if (opt.exec_graph_id) exec = *opt.exec_graph_id;
  else if (doc.exec_graph_id && per_graph.count(*doc.exec_graph_id)) exec = *doc.exec_graph_id;
  else if (per_graph.size() == 1) exec = per_graph.begin()->first;
  else if (per_graph.empty())
    throw_input("trace", "no record belongs to a graph replay (no graph id in any record): nothing to join");
  else
    throw Error(ExitCode::usage, "several exec graphs in the trace",
                "pick one with --exec-graph-id; the trace has " + listed());
  if (!per_graph.count(exec))
    throw_input("trace", "no record of exec graph " + std::to_string(exec) + "; the trace has " + listed());
  r.exec_graph_id = exec;

  // Lanes numbered in (device, channel type, id) order: the order of the
  // report's lanes, and a device's lanes are consecutive.
  std::vector<IdMap::Key> lane_keys;
  for (const auto& m : lanes_of) lane_keys.insert(lane_keys.end(), m.keys().begin(), m.keys().end());
  std::sort(lane_keys.begin(), lane_keys.end());
  lane_keys.erase(std::unique(lane_keys.begin(), lane_keys.end()), lane_keys.end());
  const size_t L = lane_keys.size();
  std::vector<std::vector<uint32_t>> lane_ids(scan_workers);
  for (unsigned w = 0; w < scan_workers; ++w)
    for (const auto& k : lanes_of[w].keys())
      lane_ids[w].push_back(
          uint32_t(std::lower_bound(lane_keys.begin(), lane_keys.end(), k) - lane_keys.begin()));

  // Join: the low 32 bits of the record's graph node id are the node's local
  // id; the first node of a local id has it. Local ids are usually the
  // indices: then a table, else a hash map.
  uint32_t max_local = 0;
  for (const auto& node : g.nodes) max_local = std::max(max_local, node.node_id);
  const bool dense = n && max_local <= 4 * n + 1024;
  std::vector<uint32_t> node_by_local(dense ? size_t(max_local) + 1 : 0, kNone);
  std::unordered_map<uint32_t, uint32_t> by_local;
  for (const auto& node : g.nodes) {
    if (!dense) by_local.emplace(node.node_id, node.index);
    else if (node_by_local[node.node_id] == kNone) node_by_local[node.node_id] = node.index;
  }
  auto join = [&](uint32_t local) -> uint32_t {
    if (dense) return local < node_by_local.size() ? node_by_local[local] : kNone;
    auto it = by_local.find(local);
    return it == by_local.end() ? kNone : it->second;
  };

  // Second pass, same slices: global lane ids, each of the exec graph's
  // records' node (node_of) and correlation id, numbered per slice in
  // replay_of for now, with the earliest start of each.
  std::vector<uint32_t> node_of(N, kNone), replay_of(N, kNone);
  std::vector<size_t> others(scan_workers, 0);
  std::vector<IdMap> corrs_of(scan_workers);
  std::vector<std::vector<uint64_t>> first_of(scan_workers);
  parallel_slices(N, scan_workers, [&](unsigned w, size_t begin, size_t end) {
    auto& first = first_of[w];
    for (size_t j = begin; j < end; ++j) {
      lane[j] = lane_ids[w][lane[j]];
      const Activity& a = acts[j];
      if (!a.graph_id || *a.graph_id != exec) {
        ++others[w];
        continue;
      }
      if (a.graph_node_id) node_of[j] = join(uint32_t(*a.graph_node_id & 0xffffffffu));
      uint32_t c = corrs_of[w].id(0, a.correlation);
      if (c == first.size()) first.push_back(a.start_ns);
      else first[c] = std::min(first[c], a.start_ns);
      replay_of[j] = c;
    }
  });
  for (size_t o : others) r.other_records += o;
  bool have_corr = false;
  for (const auto& m : corrs_of)
    for (const auto& k : m.keys()) have_corr |= k.lo != 0;

  // Replays: the records of one graph launch share its correlation id.
  // Without correlation ids, a node's k-th record (by start, then position)
  // belongs to replay k. Either way each key's earliest start, in key order.
  std::vector<uint64_t> front;
  if (have_corr) {
    std::vector<uint32_t> corr;
    for (const auto& m : corrs_of)
      for (const auto& k : m.keys()) corr.push_back(k.lo);
    std::sort(corr.begin(), corr.end());
    corr.erase(std::unique(corr.begin(), corr.end()), corr.end());
    front.assign(corr.size(), UINT64_MAX);
    std::vector<std::vector<uint32_t>> key_of(scan_workers);
    for (unsigned w = 0; w < scan_workers; ++w)
      for (size_t c = 0; c < corrs_of[w].keys().size(); ++c) {
        uint32_t key =
            uint32_t(std::lower_bound(corr.begin(), corr.end(), corrs_of[w].keys()[c].lo) - corr.begin());
        key_of[w].push_back(key);
        front[key] = std::min(front[key], first_of[w][c]);
      }
    parallel_slices(N, scan_workers, [&](unsigned w, size_t begin, size_t end) {
      for (size_t j = begin; j < end; ++j)
        if (replay_of[j] != kNone) replay_of[j] = key_of[w][replay_of[j]];
    });
  } else {
    std::vector<uint32_t> mine;
    for (size_t j = 0; j < N; ++j)
      if (replay_of[j] != kNone) mine.push_back(uint32_t(j));
    IdMap locals;
    std::vector<uint32_t> seen;
    for (uint32_t p : order_by(mine.size(), [&](size_t p) { return acts[mine[p]].start_ns; })) {
      const Activity& a = acts[mine[p]];
      uint32_t local = a.graph_node_id ? uint32_t(*a.graph_node_id & 0xffffffffu) : 0xffffffffu;
      uint32_t id = locals.id(0, local);
      if (id == seen.size()) seen.push_back(0);
      uint32_t key = seen[id]++;
      if (key == front.size()) front.push_back(a.start_ns);  // the key's first record: the earliest
      replay_of[mine[p]] = key;
    }
  }
  // Replays in time order (by std::sort with the same comparisons, so ties
  // fall as they always have).
  std::vector<uint32_t> by_start(front.size());
  for (uint32_t k = 0; k < by_start.size(); ++k) by_start[k] = k;
  std::sort(by_start.begin(), by_start.end(), [&](uint32_t x, uint32_t y) { return front[x] < front[y]; });
  std::vector<uint32_t> replay_of_key(front.size());
  for (uint32_t k = 0; k < by_start.size(); ++k) replay_of_key[by_start[k]] = k;
  // Which replay each of the graph's records belongs to: records of the same
  // graph from another replay are ordered by the launch stream, not by this
  // replay's graph, and are never taken as a node's observed dependency.
  parallel_slices(N, scan_workers, [&](unsigned, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j)
      if (replay_of[j] != kNone) replay_of[j] = replay_of_key[replay_of[j]];
  });
  const size_t R = front.size();
  r.replays = uint32_t(R);

  Topology topo = topology(g, "nodes", "graph");
  const std::vector<uint32_t>& order = topo.order;
  const std::vector<uint32_t>& level = topo.level;  // for Reachability
  const DependencyLists deps(g);
  // Replays are independent: each worker times a share of them. Per node and
  // replay (replay-major): its record, the first by start (then position),
  // and its times. Which activity a node observably waited for is found
  // below, only in the replay that represents the node.
  std::vector<uint32_t> act_of(R * n, kNone);
  auto times = uninitialized<Times>(R * n);
  std::vector<double> makespans(R);
  std::vector<size_t> unmatched(R, 0);
  std::vector<std::vector<LaneUse>> lanes_per_replay(R);
  unsigned workers = worker_count(R * n, 100000);
  workers = std::min<unsigned>(workers, unsigned(std::max<size_t>(1, R)));
  std::vector<FewValues> streams_of(workers);
  parallel_slices(R, workers, [&](unsigned w, size_t first_replay, size_t last_replay) {
    const size_t mine = last_replay - first_replay;
    std::vector<uint64_t> t0(mine, UINT64_MAX), t1(mine, 0);
    for (size_t j = 0; j < N; ++j) {
      const uint32_t replay = replay_of[j];  // kNone outside the graph's replays
      if (replay < first_replay || replay >= last_replay) continue;
      const Activity& a = acts[j];
      const size_t k = replay - first_replay;
      t0[k] = std::min(t0[k], a.start_ns);
      t1[k] = std::max(t1[k], a.end_ns);
      if (node_of[j] == kNone) {
        ++unmatched[replay];
        continue;
      }
      uint32_t& b = act_of[replay * n + node_of[j]];
      if (b == kNone || a.start_ns < acts[b].start_ns) b = uint32_t(j);
    }
    std::vector<double> finish(n), ready(n);
    std::vector<double> count(L, 0), busy(L, 0);
    std::vector<uint32_t> touched;
    for (size_t replay = first_replay; replay < last_replay; ++replay) {
      const uint64_t first = t0[replay - first_replay], last = t1[replay - first_replay];
      auto us = [&](uint64_t ns) { return (double(ns) - double(first)) / 1000.0; };
      makespans[replay] = (double(last) - double(first)) / 1000.0;
      const uint32_t* act = &act_of[replay * n];
      // ready: the latest end among the predecessors' activities; nodes with no
      // record (host, empty) pass their own ready time on.
      for (uint32_t i : order) {
        double rd = 0;  // graph start
        for (const uint32_t* d = deps.first(i); d != deps.last(i); ++d) rd = std::max(rd, finish[*d]);
        ready[i] = rd;
        finish[i] = act[i] != kNone ? us(acts[act[i]].end_ns) : rd;
      }
      Times* row = &times[replay * n];
      for (uint32_t i = 0; i < n; ++i) {
        Times& s = row[i];
        if (act[i] == kNone) {
          s = Times{};  // read below, but never used
          continue;
        }
        const Activity& b = acts[act[i]];
        s.start = us(b.start_ns);
        s.end = us(b.end_ns);
        s.ready = ready[i];
        s.stream = b.stream;
        streams_of[w].insert(b.stream);
        const uint32_t l = s.lane = lane[act[i]];
        if (count[l] == 0) touched.push_back(l);
        count[l] += 1;
        busy[l] += s.end - s.start;
      }
      for (uint32_t l : touched) {
        lanes_per_replay[replay].push_back({l, count[l], busy[l]});
        count[l] = busy[l] = 0;
      }
      touched.clear();
    }
  });
  for (size_t u : unmatched) r.unmatched_records += u;

  // Per node: medians, and the replay that represents it (of median delay);
  // nodes are independent, so in slices too.
  r.nodes.resize(n);
  std::vector<double> duration(n, 0);
  std::vector<Representative> rep(n);
  parallel_slices(n, worker_count(n * R, 200000), [&](unsigned, size_t begin, size_t end) {
    std::vector<double> st, en, rd, dl, du;
    std::vector<std::pair<double, uint32_t>> by_delay;  // (delay, replay)
    // A block of nodes' rows at a time, copied out of the replay-major
    // arrays (replay by replay, in sequence) so that each node's replays
    // are near one another.
    const size_t block = std::clamp<size_t>(32768 / std::max<size_t>(R, 1), 1, 256);
    std::vector<uint32_t> block_act(block * R);
    std::vector<Times> block_times(block * R);
    for (size_t i = begin; i < end; ++i) {
      const size_t j = (i - begin) % block;
      if (!j)
        for (size_t k = 0; k < R; ++k) {
          const size_t count = std::min(block, end - i);
          std::copy_n(&act_of[k * n + i], count, &block_act[k * block]);
          std::copy_n(&times[k * n + i], count, &block_times[k * block]);
        }
      NodeProfile& p = r.nodes[i];
      p.index = uint32_t(i);
      st.clear(), en.clear(), rd.clear(), dl.clear(), du.clear();
      by_delay.clear();
      for (uint32_t k = 0; k < R; ++k) {
        if (block_act[k * block + j] == kNone) continue;
        const Times& s = block_times[k * block + j];
        const double delay = s.start - s.ready;
        st.push_back(s.start), en.push_back(s.end), rd.push_back(s.ready), dl.push_back(delay);
        du.push_back(s.end - s.start);
        by_delay.emplace_back(delay, k);
      }
      p.replays = uint32_t(st.size());
      if (st.empty()) continue;
      p.start_us = median(st), p.end_us = median(en), p.ready_us = median(rd), p.delay_us = median(dl);
      duration[i] = median(du);
      // The replay of median delay (the lower middle; the earlier replay on ties).
      const size_t m = (by_delay.size() - 1) / 2;
      std::nth_element(by_delay.begin(), by_delay.begin() + long(m), by_delay.end());
      const auto [delay, replay] = by_delay[m];
      const Times& s = block_times[replay * block + j];
      rep[i] = {block_act[replay * block + j], replay, s.lane, delay};
      p.lane = lane_from(lane_keys[s.lane]);
      p.stream = s.stream;
    }
  });

  // All records by end (then position) per lane, for the blocker and lane
  // predecessor searches (any activity can block, graph or not). Lanes are
  // numbered by device first: a device's lanes, and their records, are
  // consecutive.
  std::vector<uint32_t> device_of_lane(L);
  for (size_t l = 1; l < L; ++l)
    device_of_lane[l] = device_of_lane[l - 1] + (lane_keys[l].hi >> 8 != lane_keys[l - 1].hi >> 8);
  const size_t D = L ? device_of_lane[L - 1] + 1 : 0;
  std::vector<size_t> lane_begin(L + 1, 0), device_lanes(D + 1, 0);
  std::vector<size_t> next(scan_workers * L, 0);  // per slice, then where its share of each lane goes
  parallel_slices(N, scan_workers, [&](unsigned w, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) ++next[w * L + lane[j]];
  });
  for (size_t l = 0; l < L; ++l) {
    size_t at = lane_begin[l];
    for (unsigned w = 0; w < scan_workers; ++w) at += std::exchange(next[w * L + l], at);
    lane_begin[l + 1] = at;
    device_lanes[device_of_lane[l] + 1] = l + 1;
  }
  auto by_lane = uninitialized<EndRecord>(N);
  auto at_lane = uninitialized<uint32_t>(N);  // where each record is in it
  parallel_slices(N, scan_workers, [&](unsigned w, size_t begin, size_t end) {
    size_t* at = &next[w * L];
    for (size_t j = begin; j < end; ++j) {
      const size_t p = at[lane[j]]++;
      by_lane[p] = {acts[j].end_ns, acts[j].start_ns, uint32_t(j), replay_of[j]};
      at_lane[j] = uint32_t(p);
    }
  });
  // Each lane is now in record order, usually also end order (a lane runs
  // its work one after another); sorted where not.
  auto by_end = [](const EndRecord& a, const EndRecord& b) { return a.end < b.end; };
  parallel_slices(L, unsigned(std::min<size_t>(scan_workers, L)), [&](unsigned, size_t begin, size_t end) {
    for (size_t l = begin; l < end; ++l) {
      EndRecord* v = &by_lane[lane_begin[l]];
      const size_t size = lane_begin[l + 1] - lane_begin[l];
      if (std::is_sorted(v, v + size, by_end)) continue;
      const std::vector<uint32_t> in_order = order_by(size, [&](size_t p) { return v[p].end; });
      std::vector<EndRecord> sorted(size);
      for (size_t q = 0; q < size; ++q) sorted[q] = v[in_order[q]];
      for (size_t q = 0; q < size; ++q) {
        v[q] = sorted[q];
        at_lane[v[q].activity] = uint32_t(lane_begin[l] + q);
      }
    }
  });
  auto lane_end = [&](size_t p) { return by_lane[p].end; };

  // A blocker on another lane of B's device is searched lane by lane; where
  // many delayed nodes would search many lanes, instead in one list of the
  // device's records by end (then position), built for that.
  std::vector<size_t> delayed(D, 0);
  for (const Representative& x : rep)
    if (x.activity != kNone && x.delay > thr) ++delayed[device_of_lane[x.lane]];
  std::vector<char> indexed(D, 0);
  for (size_t d = 0; d < D; ++d) {
    const size_t lanes = device_lanes[d + 1] - device_lanes[d];
    const size_t records = lane_begin[device_lanes[d + 1]] - lane_begin[device_lanes[d]];
    indexed[d] = lanes > 1 && delayed[d] * (lanes - 1) * 16 > records;
  }
  std::unique_ptr<uint32_t[]> by_device, at_device;  // positions in by_lane; where each record is in it
  if (std::find(indexed.begin(), indexed.end(), 1) != indexed.end()) {
    by_device = uninitialized<uint32_t>(N);
    at_device = uninitialized<uint32_t>(N);
    std::vector<std::vector<uint32_t>> members(D);  // positions in by_lane, in record order
    for (size_t j = 0; j < N; ++j)
      if (indexed[device_of_lane[lane[j]]]) members[device_of_lane[lane[j]]].push_back(at_lane[j]);
    for (size_t d = 0; d < D; ++d) {
      if (!indexed[d]) continue;
      const auto& m = members[d];
      const std::vector<uint32_t> in_order = order_by(m.size(), [&](size_t p) { return by_lane[m[p]].end; });
      const size_t first = lane_begin[device_lanes[d]];
      for (size_t q = 0; q < m.size(); ++q) {
        by_device[first + q] = m[in_order[q]];
        at_device[by_lane[m[in_order[q]]].activity] = uint32_t(first + q);
      }
    }
  }
  auto device_end = [&](size_t q) { return by_lane[by_device[q]].end; };

  // What each node observably waited for in its representative replay.
  parallel_slices(n, worker_count(n, 10000), [&](unsigned, size_t begin, size_t end) {
    Reachability reach(deps, level);
    for (size_t i = begin; i < end; ++i) {
      const uint32_t bi = rep[i].activity, replay = rep[i].replay, bl = rep[i].lane;
      const double delay = rep[i].delay;
      if (bi == kNone) continue;
      NodeProfile& p = r.nodes[i];
      const size_t lb = lane_begin[bl], le = lane_begin[bl + 1];
      const uint64_t b_start = by_lane[at_lane[bi]].start;
      // The lane predecessor ended no later than B's start plus the
      // tolerance; the blocker within the tolerance before B's start. Neither
      // started after B.
      const double tol_ns = tol * 1000.0;
      uint64_t limit = uint64_t(std::max(0.0, double(b_start) + tol_ns));
      uint64_t block_floor = b_start > uint64_t(tol_ns) ? b_start - uint64_t(tol_ns) : 0;
      // Where in by_lane the latest record (by end, then position) below
      // `k` of a lane, or of the device list (`record` maps), is that ended
      // in [floor, B's start] and can block B: another record, of no replay
      // or of B's, not started after B. SIZE_MAX when none.
      auto blocker_before = [&](size_t lo, size_t k, auto record) {
        for (; k-- > lo;) {
          const size_t q = record(k);
          const EndRecord& a = by_lane[q];
          if (a.end < block_floor) break;
          if (a.activity == bi || a.start > b_start) continue;
          if (a.replay != kNone && a.replay != replay) continue;
          return q;
        }
        return SIZE_MAX;
      };
      auto in_lane = [](size_t k) { return k; };
      size_t blocker_at = SIZE_MAX;
      if (delay > thr) {
        // The blocker on B's own lane if any, else the latest on its device.
        blocker_at = blocker_before(lb, first_end_after(lb, le, at_lane[bi], b_start, lane_end), in_lane);
        const uint32_t dv = device_of_lane[bl];
        if (blocker_at == SIZE_MAX && indexed[dv]) {
          const size_t db = lane_begin[device_lanes[dv]], de = lane_begin[device_lanes[dv + 1]];
          blocker_at = blocker_before(db, first_end_after(db, de, at_device[bi], b_start, device_end),
                                      [&](size_t k) { return size_t(by_device[k]); });
        } else if (blocker_at == SIZE_MAX) {
          for (size_t l = device_lanes[dv]; l < device_lanes[dv + 1]; ++l) {
            if (l == bl) continue;
            const size_t ll = lane_begin[l], lr = lane_begin[l + 1];
            const size_t q = blocker_before(ll, first_end_after(ll, lr, ll, b_start, lane_end), in_lane);
            if (q == SIZE_MAX) continue;
            const EndRecord &x = by_lane[q], &y = by_lane[blocker_at == SIZE_MAX ? q : blocker_at];
            if (blocker_at == SIZE_MAX || x.end > y.end || (x.end == y.end && x.activity > y.activity))
              blocker_at = q;
          }
        }
      }
      const uint32_t blocker = blocker_at == SIZE_MAX ? kNone : by_lane[blocker_at].activity;
      uint32_t lane_pred = kNone;
      for (size_t k = first_end_after(lb, le, at_lane[bi], limit, lane_end); k-- > lb;) {
        const EndRecord& a = by_lane[k];
        if (a.activity == bi || a.start > b_start) continue;
        if (a.replay == kNone || a.replay == replay) lane_pred = a.activity;
        break;  // else an earlier replay: nothing before it counts
      }
      const uint32_t observed = blocker != kNone ? blocker : lane_pred;
      if (observed == kNone) continue;
      const uint32_t on = node_of[observed];
      const Activity& o = acts[observed];
      if (on != kNone) {
        p.observed_dependency = on;
        p.verdict = reach.path(on, uint32_t(i)) ? Verdict::real : Verdict::fake;
      } else {
        if (o.name != UINT32_MAX) p.observed_other = o.name < trace.names.size() ? trace.names[o.name] : "?";
        p.verdict = Verdict::fake;  // outside the graph: no graph path can explain it
      }
      if (blocker == kNone) continue;
      if (on != kNone) p.blocker = on;
      p.blocking = p.verdict == Verdict::fake;
      const bool own = lane[observed] == bl;
      const Activity& b = acts[bi];
      if (own && p.lane->channel_type != 0) p.cause = "same channel";
      else if (o.kind == ActivityKind::memcpy && b.kind == ActivityKind::memcpy && o.copy == b.copy)
        p.cause = "copy engine";
      else if (own) p.cause = "same stream";
      else p.cause = "other";
      // Did B start while other work still ran on its own lane? Then the
      // lane was not serializing B, and the blocker merely ended first:
      // the delay is dispatch, not a wait. Looks at the next activities
      // of the lane by end (enough for the overlap that matters).
      size_t k = first_end_after(lb, le, at_lane[bi], b_start, lane_end);
      for (size_t seen = 0; k < le && seen < 64 && !p.lane_busy; ++k, ++seen)
        p.lane_busy = by_lane[k].activity != bi && by_lane[k].start < b_start;
    }
  });
  for (const NodeProfile& p : r.nodes) {
    if (!p.replays) {
      ++r.nodes_without_records;
      ++r.none;
      continue;
    }
    switch (p.verdict) {
      case Verdict::real: ++r.real; break;
      case Verdict::fake: ++r.fake; break;
      case Verdict::none: ++r.none; break;
    }
    if (p.blocking) {
      ++r.blocking;
      r.time_lost_us += p.delay_us;
      if (p.lane_busy) ++r.blocking_lane_busy;
    }
  }
  r.makespan_us = median(makespans);

  // Critical path with measured (median) durations.
  std::vector<double> longest(n, 0);
  std::vector<int64_t> via(n, -1);
  for (uint32_t i : order) {
    double best = 0;
    for (const uint32_t* d = deps.first(i); d != deps.last(i); ++d)
      if (longest[*d] > best || via[i] < 0) {
        if (longest[*d] >= best) best = longest[*d], via[i] = *d;
      }
    longest[i] = best + duration[i];
  }
  if (n) {
    uint32_t end = uint32_t(std::max_element(longest.begin(), longest.end()) - longest.begin());
    r.critical_path_us = longest[end];
    for (int64_t x = end; x >= 0; x = via[size_t(x)]) r.critical_path.push_back(uint32_t(x));
    std::reverse(r.critical_path.begin(), r.critical_path.end());
  }
  // Lanes the nodes used: per replay that used them, in replay order.
  std::vector<std::vector<double>> lane_activities(L), lane_busy(L);
  for (const auto& used : lanes_per_replay)
    for (const LaneUse& u : used) {
      lane_activities[u.lane].push_back(u.activities);
      lane_busy[u.lane].push_back(u.busy_us);
    }
  for (size_t l = 0; l < L; ++l) {
    if (lane_activities[l].empty()) continue;
    LaneUsage u;
    u.lane = lane_from(lane_keys[l]);
    u.activities = uint32_t(std::lround(median(lane_activities[l])));
    u.busy_us = median(lane_busy[l]);
    r.lanes.push_back(u);
  }
  for (const auto& s : streams_of) s.add_to(r.streams);
  std::sort(r.streams.begin(), r.streams.end());
  r.streams.erase(std::unique(r.streams.begin(), r.streams.end()), r.streams.end());
  return r;
}

namespace {

std::string node_name(const GraphDocument& doc, uint32_t i) {
  const Node& n = doc.root.nodes[i];
  if (n.type == NodeType::kernel) return short_kernel_name(n.kernel_name, 36);
  return std::string(to_string(n.type));
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string format_profile(const ProfileReport& r, const GraphDocument& doc, size_t top) {
  std::string out;
  char buf[512];
  auto line = [&](const char* key, const std::string& value) {
    std::snprintf(buf, sizeof buf, "%-14s %s\n", key, value.c_str());
    out += buf;
  };
  line("profile", "exec graph " + std::to_string(r.exec_graph_id) + ", " + std::to_string(r.replays) +
                      " replays; delayed past " + fmt("%.3g", r.threshold_us) + " us, tolerance " +
                      fmt("%.3g", r.tolerance_us) + " us");
  std::string cp = fmt("%.1f", r.critical_path_us) + " us";
  if (r.makespan_us > 0) cp += " (" + fmt("%.0f", 100.0 * r.critical_path_us / r.makespan_us) + "% of the makespan)";
  line("makespan", fmt("%.1f", r.makespan_us) + " us (median over replays)");
  line("critical path", cp);
  line("dependencies", std::to_string(r.real) + " real, " + std::to_string(r.fake) + " fake (" +
                           std::to_string(r.blocking) + " blocking), " + std::to_string(r.none) + " none");
  line("time lost", fmt("%.1f", r.time_lost_us) + " us: delays of blocked nodes, summed (they may overlap)");
  if (r.blocking_lane_busy)
    line("note", std::to_string(r.blocking_lane_busy) + " of the " + std::to_string(r.blocking) +
                     " blocking nodes started while other work still ran on their own lane: that lane was not "
                     "serializing them, their blocker only ended first; their delay is dispatch (work launched one "
                     "by one), not a wait for the blocker");
  line("records", std::to_string(r.nodes_without_records) + " nodes without a record, " +
                      std::to_string(r.unmatched_records) + " records matching no node, " +
                      std::to_string(r.other_records) + " records of other work");
  // Worst delays first.
  std::vector<uint32_t> idx;
  for (const auto& p : r.nodes)
    if (p.replays) idx.push_back(p.index);
  std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    return r.nodes[a].delay_us != r.nodes[b].delay_us ? r.nodes[a].delay_us > r.nodes[b].delay_us : a < b;
  });
  if (idx.size() > top) idx.resize(top);
  out += "\nworst delays (us, medians)\n";
  std::snprintf(buf, sizeof buf, "  %5s  %-36s %9s %9s %9s  %-7s %s\n", "node", "name", "delay", "ready", "start",
                "verdict", "observed dependency");
  out += buf;
  for (uint32_t i : idx) {
    const auto& p = r.nodes[i];
    std::string obs = p.observed_dependency ? std::to_string(*p.observed_dependency) + " " + node_name(doc, *p.observed_dependency)
                      : !p.observed_other.empty() ? "(outside the graph) " + short_kernel_name(p.observed_other, 30)
                                                  : "-";
    if (p.blocking) obs += " [blocking, " + p.cause + (p.lane_busy ? ", lane busy" : "") + "]";
    std::snprintf(buf, sizeof buf, "  %5u  %-36s %9.2f %9.2f %9.2f  %-7s %s\n", i, node_name(doc, i).c_str(), p.delay_us,
                  p.ready_us, p.start_us, std::string(to_string(p.verdict)).c_str(), obs.c_str());
    out += buf;
  }
  bool any_fake = false;
  for (const auto& p : r.nodes) {
    if (p.verdict != Verdict::fake) continue;
    if (!any_fake) out += "\nfake dependencies (no graph path explains the order)\n";
    any_fake = true;
    std::string from = p.observed_dependency ? std::to_string(*p.observed_dependency) + " " + node_name(doc, *p.observed_dependency)
                                             : "(outside the graph) " + p.observed_other;
    std::snprintf(buf, sizeof buf, "  %5u %-36s after %-40s %s, delay %.2f us\n", p.index, node_name(doc, p.index).c_str(),
                  from.c_str(), p.blocking ? ("blocking: " + p.cause).c_str() : "ordering only", p.delay_us);
    out += buf;
  }
  out += "\ncritical path (" + fmt("%.1f", r.critical_path_us) + " us)\n  ";
  for (size_t k = 0; k < r.critical_path.size(); ++k) {
    if (k) out += " -> ";
    if (k == 12 && r.critical_path.size() > 16) {
      out += "... (" + std::to_string(r.critical_path.size() - 15) + " more) -> ";
      k = r.critical_path.size() - 3;
    }
    out += std::to_string(r.critical_path[k]) + " " + node_name(doc, r.critical_path[k]);
  }
  out += "\n\nlanes (per replay, medians)\n";
  for (const auto& u : r.lanes) {
    std::snprintf(buf, sizeof buf, "  %-28s %6u activities  busy %9.2f us\n", describe(u.lane).c_str(), u.activities,
                  u.busy_us);
    out += buf;
  }
  std::string st;
  for (uint32_t s : r.streams) st += (st.empty() ? "" : ", ") + std::to_string(s);
  out += "streams        " + (st.empty() ? std::string("-") : st) + "\n";
  return out;
}

DotOverlay profile_overlay(const ProfileReport& r) {
  DotOverlay o;
  double worst = 0;
  for (const auto& p : r.nodes)
    if (p.replays) worst = std::max(worst, p.delay_us);
  for (const auto& p : r.nodes) {
    if (!p.replays) {
      o.fill.emplace_back();
      o.note.push_back("no record");
      continue;
    }
    // White -> yellow -> red as the delay grows towards the worst one.
    double x = worst > 0 ? std::clamp(p.delay_us / worst, 0.0, 1.0) : 0;
    int g = int(std::lround(255 * (x < 0.5 ? 1.0 : 2 * (1 - x))));
    int b = int(std::lround(255 * (x < 0.5 ? 1 - 2 * x : 0.0)));
    char color[8];
    std::snprintf(color, sizeof color, "#ff%02x%02x", g, b);
    o.fill.push_back(color);
    std::string note = "delay " + fmt("%.2f", p.delay_us) + " us";
    if (p.verdict != Verdict::none) note += ", " + std::string(to_string(p.verdict));
    if (p.blocking) note += " (blocking: " + p.cause + ")";
    o.note.push_back(note);
  }
  o.legend.push_back("fill: median delay, white 0 to red " + fmt("%.2f", worst) + " us");
  o.legend.push_back(std::to_string(r.fake) + " fake dependencies (" + std::to_string(r.blocking) + " blocking), " +
                     std::to_string(r.replays) + " replays");
  return o;
}

namespace {

// describe() of the few lanes that all the nodes share, once each.
class LaneNames {
 public:
  const std::string& operator()(const Lane& l) {
    for (const auto& [lane, name] : seen_)
      if (lane == l) return name;
    if (seen_.size() == kMost) return other_ = describe(l);
    seen_.emplace_back(l, describe(l));
    return seen_.back().second;
  }

 private:
  static constexpr size_t kMost = 32;
  std::vector<std::pair<Lane, std::string>> seen_;
  std::string other_;
};

// One element of the report's "nodes" as JsonWriter writes it at that
// depth (compactly, on one line), formatted straight into a reused buffer:
// a report has a line per node, and the writer's bookkeeping per value (or
// a string's, per append) took most of their time.
class NodeLine : public JsonLine {
 public:
  std::string_view text() const { return view(); }
  void clear() {
    JsonLine::clear();
    first_ = true;
  }
  NodeLine& key(std::string_view k) {
    lit(first_ ? std::string_view("{\"") : std::string_view(", \""));
    first_ = false;
    lit(k);
    lit("\": ");
    return *this;
  }
  void value(uint64_t v) { u64(v); }
  void value(double v) { real(v); }
  void value(std::string_view s) { str(s); }
  void value(bool v) { lit(v ? "true" : "false"); }
  void null() { lit("null"); }
  void close() { lit(first_ ? "{}" : "}"); }

 private:
  bool first_ = true;
};

void write_node_line(NodeLine& w, const NodeProfile& p, const Node& n, LaneNames& lane_name) {
  w.key("index").value(uint64_t(p.index));
  w.key("tools_id");
  n.tools_id ? w.value(*n.tools_id) : w.null();
  w.key("kernel_name");
  n.type == NodeType::kernel ? w.value(std::string_view(n.kernel_name)) : w.null();
  w.key("node_type").value(to_string(n.type));
  w.key("replays").value(uint64_t(p.replays));
  auto num = [&](std::string_view k, double v) {
    w.key(k);
    p.replays ? w.value(v) : w.null();
  };
  num("start_us", p.start_us);
  num("end_us", p.end_us);
  num("ready_us", p.ready_us);
  num("delay_us", p.delay_us);
  w.key("observed_dependency");
  p.observed_dependency ? w.value(uint64_t(*p.observed_dependency)) : w.null();
  if (!p.observed_other.empty()) w.key("observed_other").value(std::string_view(p.observed_other));
  w.key("verdict").value(to_string(p.verdict));
  w.key("blocking").value(p.blocking);
  w.key("lane_busy").value(p.lane_busy);
  w.key("blocker");
  p.blocker ? w.value(uint64_t(*p.blocker)) : w.null();
  w.key("cause");
  p.cause.empty() ? w.null() : w.value(std::string_view(p.cause));
  if (p.lane) w.key("lane").value(std::string_view(lane_name(*p.lane)));
  if (p.stream) w.key("stream").value(uint64_t(*p.stream));
  w.close();
}

}  // namespace

std::string write_profile_json(const ProfileReport& r, const GraphDocument& doc) {
  JsonWriter w(2);
  w.begin_object();
  w.key("schema").value(kProfileSchema);
  w.key("exec_graph_id").value(r.exec_graph_id);
  if (doc.root.graph_id) w.key("template_graph_id").value(*doc.root.graph_id);
  if (!doc.name.empty()) w.key("name").value(doc.name);
  w.key("replays").value(r.replays);
  w.key("threshold_us").value(r.threshold_us);
  w.key("tolerance_us").value(r.tolerance_us);
  w.key("summary").begin_object();
  w.key("real").value(uint64_t(r.real)).key("fake").value(uint64_t(r.fake));
  w.key("blocking").value(uint64_t(r.blocking)).key("none").value(uint64_t(r.none));
  w.key("time_lost_us").value(r.time_lost_us);
  w.key("blocking_lane_busy").value(uint64_t(r.blocking_lane_busy));
  w.key("makespan_us").value(r.makespan_us);
  w.key("critical_path_us").value(r.critical_path_us);
  w.key("nodes_without_records").value(uint64_t(r.nodes_without_records));
  w.key("unmatched_records").value(uint64_t(r.unmatched_records));
  w.key("other_records").value(uint64_t(r.other_records));
  w.end_object();
  w.key("critical_path").begin_array();
  for (uint32_t i : r.critical_path) w.value(i);
  w.end_array();
  w.key("lanes").begin_array();
  for (const auto& u : r.lanes) {
    w.begin_object().key("lane").value(describe(u.lane)).key("device").value(u.lane.device);
    w.key("channel_type").value(uint32_t(u.lane.channel_type)).key("id").value(u.lane.id);
    w.key("activities").value(u.activities).key("busy_us").value(u.busy_us).end_object();
  }
  w.end_array();
  w.key("streams").begin_array();
  for (uint32_t s : r.streams) w.value(s);
  w.end_array();
  w.key("nodes").begin_array();
  // The document is the writer's text around the nodes' lines, which are
  // most of it. Each line depends on its node alone: they are formatted in
  // slices, in parallel, each with its separator and indentation; the first
  // slice after the head, with room for all, so that only the others' lines
  // are copied once more.
  const size_t n = r.nodes.size();
  const unsigned workers = worker_count(n, 10000);
  std::vector<std::string> parts(workers);
  parts[0].reserve(w.view().size() + n * 400 + 4096);
  parts[0] = w.view();
  const std::string pad(w.indent() + 2, ' ');
  parallel_slices(n, workers, [&](unsigned k, size_t begin, size_t end) {
    LaneNames lane_name;
    NodeLine line;
    std::string& out = parts[k];
    if (k) out.reserve((end - begin) * 400);
    for (size_t i = begin; i < end; ++i) {
      line.clear();
      line.lit(i ? ",\n" : "\n");
      line.lit(pad);
      write_node_line(line, r.nodes[i], doc.root.nodes[r.nodes[i].index], lane_name);
      out += line.text();
    }
  });
  // The writer closes the document: after one byte standing for the lines
  // (which makes the array non-empty, as the lines would).
  const size_t head = w.view().size();
  if (n) w.raw_elements(" ");
  w.end_array();
  w.end_object();
  const std::string closing = w.take();
  size_t size = closing.size();
  for (const auto& part : parts) size += part.size();
  parts[0].reserve(size);  // when the lines were longer than allowed for
  for (size_t k = 1; k < parts.size(); ++k) parts[0] += parts[k];
  parts[0].append(closing, head + (n ? 1 : 0), std::string::npos);
  return std::move(parts[0]);
}

}  // namespace graphscope
