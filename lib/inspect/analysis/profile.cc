#include "profile.h"
#include "simulate.h"

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

#include "../core/demangle.h"
#include "../core/error.h"
#include "../core/id_map.h"
#include "join.h"
#include "../core/json_writer.h"
#include "../core/order.h"
#include "../core/parallel.h"
#include "../core/stats.h"
#include "../model/topology.h"

namespace graphscope {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::none: return "none";
    case Verdict::real: return "real";
    case Verdict::fake: return "fake";
  }
  return "none";
}

bool parse_verdict(std::string_view s, Verdict* out) {
  if (s == "none") *out = Verdict::none;
  else if (s == "real") *out = Verdict::real;
  else if (s == "fake") *out = Verdict::fake;
  else return false;
  return true;
}

namespace {

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


// The records' lanes, numbered in (device, channel type, id) order: the
// order of the report's lanes, and a device's lanes are consecutive.
struct LaneNumbers {
  unsigned workers = 1;          // the slices the records are read in
  std::vector<uint32_t> of;      // per record
  std::vector<IdMap::Key> keys;  // per lane number
};

LaneNumbers number_lanes(const std::vector<Activity>& acts) {
  const size_t N = acts.size();
  LaneNumbers ln;
  // Each record's lane, in slices, numbered per slice (made global below).
  const unsigned scan_workers = ln.workers = worker_count(N, 100000);
  std::vector<IdMap> lanes_of(scan_workers);
  std::vector<uint32_t>& lane = ln.of;
  lane.resize(N);
  parallel_slices(N, scan_workers, [&](unsigned w, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) {
      IdMap::Key k = lane_key(acts[j]);
      lane[j] = lanes_of[w].id(k.hi, k.lo);
    }
  });
  // Lanes numbered in (device, channel type, id) order: the order of the
  // report's lanes, and a device's lanes are consecutive.
  std::vector<IdMap::Key>& lane_keys = ln.keys;
  for (const auto& m : lanes_of) lane_keys.insert(lane_keys.end(), m.keys().begin(), m.keys().end());
  std::sort(lane_keys.begin(), lane_keys.end());
  lane_keys.erase(std::unique(lane_keys.begin(), lane_keys.end()), lane_keys.end());
  std::vector<std::vector<uint32_t>> lane_ids(scan_workers);
  for (unsigned w = 0; w < scan_workers; ++w)
    for (const auto& k : lanes_of[w].keys())
      lane_ids[w].push_back(
          uint32_t(std::lower_bound(lane_keys.begin(), lane_keys.end(), k) - lane_keys.begin()));

  parallel_slices(N, scan_workers, [&](unsigned w, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) lane[j] = lane_ids[w][lane[j]];
  });

  return ln;
}

// Each replay timed: per node and replay (replay-major) its record, the
// first by start (then position), and its times; the replays' makespans;
// the lanes the nodes used.
struct ReplayTimes {
  std::vector<uint32_t> act_of;
  std::unique_ptr<Times[]> times;
  std::vector<double> makespans;
  std::vector<std::vector<LaneUse>> lanes_per_replay;
  std::vector<uint32_t> streams;
};

ReplayTimes time_replays(const Graph& g, const std::vector<Activity>& acts, const TraceJoin& join,
                         const std::vector<uint32_t>& lane, size_t L, const std::vector<uint32_t>& order,
                         const DependencyLists& deps) {
  const size_t n = g.nodes.size(), N = acts.size(), R = join.replays;
  const std::vector<uint32_t>& node_of = join.node_of;
  const std::vector<uint32_t>& replay_of = join.replay_of;
  ReplayTimes rt;
  // Replays are independent: each worker times a share of them. Per node and
  // replay (replay-major): its record, the first by start (then position),
  // and its times. Which activity a node observably waited for is found
  // below, only in the replay that represents the node.
  std::vector<uint32_t>& act_of = rt.act_of;
  act_of.assign(R * n, kNone);
  rt.times = uninitialized<Times>(R * n);
  Times* times = rt.times.get();
  std::vector<double>& makespans = rt.makespans;
  makespans.resize(R);
  std::vector<std::vector<LaneUse>>& lanes_per_replay = rt.lanes_per_replay;
  lanes_per_replay.resize(R);
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
      if (node_of[j] == kNone) continue;  // counted by the join
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
  for (const auto& s : streams_of) s.add_to(rt.streams);
  return rt;
}

// The replays' node times the what-if model simulates: every replay, or
// above kReplayTimesLimit the one of median makespan.
void keep_replay_times(const ReplayTimes& rt, size_t n, size_t R, ProfileReport& r) {
  std::vector<uint32_t> keep;
  if (n * R <= kReplayTimesLimit) {
    for (uint32_t k = 0; k < R; ++k) keep.push_back(k);
  } else if (R) {
    std::vector<std::pair<double, uint32_t>> by(R);
    for (uint32_t k = 0; k < R; ++k) by[k] = {rt.makespans[k], k};
    std::nth_element(by.begin(), by.begin() + long((R - 1) / 2), by.end());
    keep.push_back(by[(R - 1) / 2].second);
  }
  r.replay_times.resize(keep.size());
  for (size_t j = 0; j < keep.size(); ++j) {
    const uint32_t k = keep[j];
    ProfileReport::ReplayTimes& t = r.replay_times[j];
    t.makespan_us = rt.makespans[k];
    t.start_us.assign(n, -1.0f);
    t.end_us.assign(n, -1.0f);
    for (size_t i = 0; i < n; ++i) {
      if (rt.act_of[k * n + i] == kNone) continue;
      t.start_us[i] = float(rt.times[k * n + i].start);
      t.end_us[i] = float(rt.times[k * n + i].end);
    }
  }
}

// Per node: the medians over replays, its median duration, and the replay
// that represents it (of median delay); nodes are independent, so in
// slices.
void node_medians(const ReplayTimes& rt, size_t n, size_t R, const std::vector<IdMap::Key>& lane_keys,
                  ProfileReport& r, std::vector<double>& duration, std::vector<Representative>& rep) {
  const std::vector<uint32_t>& act_of = rt.act_of;
  const Times* times = rt.times.get();
  r.nodes.resize(n);
  duration.assign(n, 0);
  rep.assign(n, Representative{});
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

}

// Every record by end (then position) per lane, for the blocker and lane
// predecessor searches (any activity can block, graph or not), and, where
// many delayed nodes would search many lanes, per device.
struct EndIndex {
  std::vector<uint32_t> device_of_lane;
  std::vector<size_t> lane_begin, device_lanes;  // lane l's records: by_lane[lane_begin[l], lane_begin[l + 1])
  std::unique_ptr<EndRecord[]> by_lane;
  std::unique_ptr<uint32_t[]> at_lane;                // where each record is in by_lane
  std::vector<char> indexed;                          // per device: by_device is built
  std::unique_ptr<uint32_t[]> by_device, at_device;  // positions in by_lane; where each record is in it
};

EndIndex index_by_end(const std::vector<Activity>& acts, const LaneNumbers& lanes,
                      const std::vector<uint32_t>& replay_of, const std::vector<Representative>& rep, double thr) {
  const size_t N = acts.size(), L = lanes.keys.size();
  const unsigned scan_workers = lanes.workers;
  const std::vector<uint32_t>& lane = lanes.of;
  const std::vector<IdMap::Key>& lane_keys = lanes.keys;
  EndIndex x;
  // Lanes are numbered by device first: a device's lanes, and their
  // records, are consecutive.
  std::vector<uint32_t>& device_of_lane = x.device_of_lane;
  device_of_lane.assign(L, 0);
  for (size_t l = 1; l < L; ++l)
    device_of_lane[l] = device_of_lane[l - 1] + (lane_keys[l].hi >> 8 != lane_keys[l - 1].hi >> 8);
  const size_t D = L ? device_of_lane[L - 1] + 1 : 0;
  std::vector<size_t>& lane_begin = x.lane_begin;
  std::vector<size_t>& device_lanes = x.device_lanes;
  lane_begin.assign(L + 1, 0);
  device_lanes.assign(D + 1, 0);
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
  x.by_lane = uninitialized<EndRecord>(N);
  EndRecord* by_lane = x.by_lane.get();
  x.at_lane = uninitialized<uint32_t>(N);
  uint32_t* at_lane = x.at_lane.get();
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

  // A blocker on another lane of B's device is searched lane by lane; where
  // many delayed nodes would search many lanes, instead in one list of the
  // device's records by end (then position), built for that.
  std::vector<size_t> delayed(D, 0);
  for (const Representative& x : rep)
    if (x.activity != kNone && x.delay > thr) ++delayed[device_of_lane[x.lane]];
  std::vector<char>& indexed = x.indexed;
  indexed.assign(D, 0);
  for (size_t d = 0; d < D; ++d) {
    const size_t lanes = device_lanes[d + 1] - device_lanes[d];
    const size_t records = lane_begin[device_lanes[d + 1]] - lane_begin[device_lanes[d]];
    indexed[d] = lanes > 1 && delayed[d] * (lanes - 1) * 16 > records;
  }
  std::unique_ptr<uint32_t[]>& by_device = x.by_device;
  std::unique_ptr<uint32_t[]>& at_device = x.at_device;
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

  return x;
}

// The cause of a fake wait, as the report names it.
const char* cause_of(AccountCategory c) {
  switch (c) {
    case AccountCategory::fake_same_channel: return "same channel";
    case AccountCategory::fake_copy_engine: return "copy engine";
    case AccountCategory::fake_same_stream: return "same stream";
    default: return "other";
  }
}

// The account's split of each node's delay (NodeWait: in the account's
// replay for a node on its chain, else in the node's replay of median
// delay) onto its profile: a fake wait makes it blocking, behind that
// activity, with that wait as its cost.
void apply_waits(const MakespanAccount& a, const Trace& trace, const TraceJoin& join, ProfileReport& r) {
  const std::vector<Activity>& acts = trace.activities;
  for (size_t i = 0; i < r.nodes.size() && i < a.waits.size(); ++i) {
    const NodeWait& w = a.waits[i];
    NodeProfile& p = r.nodes[i];
    if (!p.replays || w.replay == UINT32_MAX) continue;
    p.wait_replay = w.replay;
    p.fake_wait_us = double(w.fake_ns) / 1000.0;
    p.latency_us = double(w.latency_ns) / 1000.0;
    p.concurrent_us = double(w.concurrent_ns) / 1000.0;
    p.host_us = double(w.host_ns) / 1000.0;
    if (w.fake_ns + w.latency_ns + w.concurrent_ns + w.host_ns > 0) p.wait = w.largest();
    if (w.fake_ns <= 0 || w.blocker >= acts.size()) continue;
    p.blocking = true;
    p.lane_busy = false;  // the rule's: nothing else ran on its lane
    p.cause = cause_of(w.fake);
    p.verdict = Verdict::fake;
    const uint32_t on = w.blocker < join.node_of.size() ? join.node_of[w.blocker] : kNone;
    const uint32_t replay = w.blocker < join.replay_of.size() ? join.replay_of[w.blocker] : kNone;
    if (on != kNone && on < r.nodes.size() && replay == w.replay) {
      p.observed_dependency = p.blocker = on;
      p.observed_other.clear();
      p.observed_unassigned = false;
    } else {
      const Activity& o = acts[w.blocker];
      p.observed_dependency.reset();
      p.blocker.reset();
      p.observed_other = o.name < trace.names.size() ? trace.names[o.name] : "?";
      p.observed_unassigned = !join.by_ids && replay != kNone;
    }
  }
}

// The totals of the verdicts, and the time lost to blocking nodes.
void count_verdicts(ProfileReport& r) {
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
      r.time_lost_us += p.fake_wait_us;
    } else if (p.blocker && p.verdict == Verdict::fake && p.lane_busy) {
      ++r.lane_busy;
    }
  }
}

// The longest path of the graph with measured (median) durations.
void critical_path(const std::vector<uint32_t>& order, const DependencyLists& deps,
                   const std::vector<double>& duration, ProfileReport& r) {
  const size_t n = duration.size();
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
}

// The lanes the nodes used: per replay that used them, in replay order.
void lane_usage(const std::vector<std::vector<LaneUse>>& lanes_per_replay, const std::vector<IdMap::Key>& lane_keys,
                ProfileReport& r) {
  const size_t L = lane_keys.size();
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
}
}  // namespace

bool uncertain_verdict(const ProfileReport& r, uint32_t i) {
  auto ambiguous = [&](uint32_t k) {
    return k < r.nodes.size() && r.nodes[k].assignment && *r.nodes[k].assignment == Assignment::ambiguous;
  };
  if (i >= r.nodes.size()) return false;
  const NodeProfile& p = r.nodes[i];
  return ambiguous(i) || (p.observed_dependency && ambiguous(*p.observed_dependency)) || p.observed_unassigned;
}

JoinOptions join_options(const ProfileOptions& o) {
  JoinOptions j;
  j.exec_graph_id = o.exec_graph_id;
  j.launches = o.launches;
  return j;
}

ProfileReport analyze_profile(const GraphDocument& doc, const Trace& trace, const ProfileOptions& opt) {
  return analyze_profile(doc, trace, join_trace(doc, trace, join_options(opt)), opt);
}

ProfileReport analyze_profile(const GraphDocument& doc, const Trace& trace, const TraceJoin& join,
                              const ProfileOptions& opt) {
  const Graph& g = doc.root;
  const size_t n = g.nodes.size();
  const double tol = opt.tolerance_us, thr = opt.threshold_us;
  const std::vector<Activity>& acts = trace.activities;
  ProfileReport r;
  r.threshold_us = thr;
  r.tolerance_us = tol;

  const LaneNumbers lanes = number_lanes(acts);
  const std::vector<uint32_t>& lane = lanes.of;
  const std::vector<IdMap::Key>& lane_keys = lanes.keys;
  const size_t L = lane_keys.size();

  // The join (join.h): each record's node and replay.
  r.exec_graph_id = join.exec_graph_id;
  r.other_records = join.other_records;
  const std::vector<uint32_t>& node_of = join.node_of;
  const std::vector<uint32_t>& replay_of = join.replay_of;
  const size_t R = join.replays;
  r.replays = uint32_t(R);
  r.by_ids = join.by_ids;
  std::copy(join.assigned, join.assigned + kAssignmentCount, r.assigned);
  r.launches = join.launches;

  // Every replay is timed node by node (R x n cells). Records scattered
  // over far more replays than they could fill (each with a correlation id
  // of its own, say) would make that quadratic in the trace: a 50,000-node
  // graph and 50,000 such records asked for 2.5 billion cells. Refused past
  // 64 cells a record, once over 50 million cells.
  {
    size_t records = 0;
    for (uint32_t x : replay_of) records += x != kNone;
    const uint64_t cells = uint64_t(R) * uint64_t(n);
    if (cells > 50000000u && cells > 64 * uint64_t(records))
      throw_input("trace", std::to_string(records) + " records of the graph spread over " + std::to_string(R) +
                               " replays of its " + std::to_string(n) +
                               " nodes: too sparse to be its replays (is each record a launch of its own?)");
  }

  Topology topo = topology(g, "nodes", "graph");
  const std::vector<uint32_t>& order = topo.order;
  const std::vector<uint32_t>& level = topo.level;  // for Reachability
  const DependencyLists deps(g);
  ReplayTimes rt = time_replays(g, acts, join, lane, L, order, deps);
  std::vector<double>& makespans = rt.makespans;
  const std::vector<std::vector<LaneUse>>& lanes_per_replay = rt.lanes_per_replay;
  r.unmatched_records = join.unmatched_records;

  std::vector<double> duration;
  std::vector<Representative> rep;
  node_medians(rt, n, R, lane_keys, r, duration, rep);
  keep_replay_times(rt, n, R, r);
  if (!trace.devices.empty()) {
    r.sm_share.assign(n, 0.0f);
    for (size_t i = 0; i < n; ++i)
      if (rep[i].activity != kNone) {
        const Activity& a = acts[rep[i].activity];
        r.sm_share[i] = float(sm_footprint(a, trace.sm_count(a.device)));
      }
  }
  for (size_t i = 0; i < n && i < join.how.size(); ++i) r.nodes[i].assignment = join.how[i];

  const EndIndex ends = index_by_end(acts, lanes, replay_of, rep, thr);
  const std::vector<uint32_t>& device_of_lane = ends.device_of_lane;
  const std::vector<size_t>& lane_begin = ends.lane_begin;
  const std::vector<size_t>& device_lanes = ends.device_lanes;
  const EndRecord* by_lane = ends.by_lane.get();
  const uint32_t* at_lane = ends.at_lane.get();
  const std::vector<char>& indexed = ends.indexed;
  const uint32_t *by_device = ends.by_device.get(), *at_device = ends.at_device.get();
  auto lane_end = [&](size_t p) { return by_lane[p].end; };
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
        // A record of the graph's own launch that the join left without a
        // node (joined without ids, out of the graph's order).
        p.observed_unassigned = !join.by_ids && replay_of[observed] != kNone;
        p.verdict = Verdict::fake;  // outside the graph: no graph path can explain it
      }
      if (blocker == kNone) continue;
      // The blocker SPEC.md's search finds; whether the node waited behind
      // it (blocking) is the account's rule (apply_waits below).
      if (on != kNone) p.blocker = on;
      const bool own = lane[observed] == bl;
      const Activity& b = acts[bi];
      if (own && p.lane->channel_type != 0) p.cause = "same channel";
      else if (o.kind == ActivityKind::memcpy && b.kind == ActivityKind::memcpy && o.copy == b.copy)
        p.cause = "copy engine";
      else if (own) p.cause = "same stream";
      else p.cause = "other";
      // Did B start while other work still ran on its own lane? Then the
      // lane was not serializing B, and the blocker merely ended first:
      // the delay is dispatch, not a wait (the account's rule says the
      // same). Looks at the next activities of the lane by end (enough for
      // the overlap that matters).
      size_t k = first_end_after(lb, le, at_lane[bi], b_start, lane_end);
      for (size_t seen = 0; k < le && seen < 64 && !p.lane_busy; ++k, ++seen)
        p.lane_busy = by_lane[k].activity != bi && by_lane[k].start < b_start;
    }
  });
  // The account, with each node's delay split in its replay of median
  // delay (a node on the account's chain: in the account's replay).
  std::vector<uint32_t> wait_replays(n, UINT32_MAX);
  for (size_t i = 0; i < n; ++i)
    if (rep[i].activity != kNone) wait_replays[i] = rep[i].replay;
  r.account = account_makespan(g, trace, join, tol, thr, &wait_replays);
  apply_waits(r.account, trace, join, r);
  count_verdicts(r);
  r.makespan_us = median(makespans);

  critical_path(order, deps, duration, r);
  lane_usage(lanes_per_replay, lane_keys, r);
  r.streams = rt.streams;
  std::sort(r.streams.begin(), r.streams.end());
  r.streams.erase(std::unique(r.streams.begin(), r.streams.end()), r.streams.end());
  // The what-if model, once, for every output to render.
  if (r.account.replays) r.what_if = what_if(doc, r);
  size_t compute_channels = 0;
  for (const LaneUsage& u : r.lanes) compute_channels += u.lane.channel_type == 1;
  r.findings = find_findings(r.account, r.what_if ? &*r.what_if : nullptr, compute_channels);
  return r;
}

ProfileReport profile_trace(const GraphDocument& doc, const Trace& trace, const std::string& trace_name,
                            const ProfileOptions& options, TraceJoin& join) {
  try {
    join = join_trace(doc, trace, join_options(options));
    return analyze_profile(doc, trace, join, options);
  } catch (const Error& e) {
    if (e.subject() != "trace") throw;
    throw Error(e.code(), trace_name, e.reason());
  }
}

}  // namespace graphscope
