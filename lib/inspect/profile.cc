#include "profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "demangle.h"
#include "error.h"
#include "json_writer.h"
#include "parallel.h"
#include "validate.h"

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

// Whether the root graph has a path from a to b: a walk back along
// dependencies from b, never below a's level (the longest-path level from
// the roots: an ancestor's level is always smaller). Results are cached.
class Reachability {
 public:
  explicit Reachability(const Graph& g) : g_(g), level_(g.nodes.size(), 0) {
    std::vector<uint32_t> order = topological_order(g, "nodes", "graph");
    for (uint32_t i : order)
      for (const auto& d : g.nodes[i].dependencies) level_[i] = std::max(level_[i], level_[d.from] + 1);
    mark_.assign(g.nodes.size(), 0);
  }
  bool path(uint32_t a, uint32_t b) {
    if (a == b) return false;
    if (level_[a] >= level_[b]) return false;
    for (const auto& d : g_.nodes[b].dependencies)  // the common case, without the cache
      if (d.from == a) return true;
    uint64_t key = (uint64_t(a) << 32) | b;
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    ++stamp_;
    stack_.assign(1, b);
    bool found = false;
    while (!stack_.empty() && !found) {
      uint32_t x = stack_.back();
      stack_.pop_back();
      for (const auto& d : g_.nodes[x].dependencies) {
        uint32_t p = d.from;
        if (p == a) {
          found = true;
          break;
        }
        if (mark_[p] == stamp_ || level_[p] <= level_[a]) continue;
        mark_[p] = stamp_;
        stack_.push_back(p);
      }
    }
    cache_.emplace(key, found);
    return found;
  }

 private:
  const Graph& g_;
  std::vector<uint32_t> level_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> stack_;
  std::unordered_map<uint64_t, bool> cache_;
};

// One node's findings in one replay.
// Plain data only: there is one per node and replay (a million of them).
struct Sample {
  double start = 0, end = 0, ready = 0, delay = 0;  // us from the replay's start
  std::optional<uint32_t> observed;                 // node index
  uint32_t observed_other = UINT32_MAX;             // name of an activity outside the graph
  Verdict verdict = Verdict::none;
  bool blocking = false;
  std::optional<uint32_t> blocker;
  const char* cause = "";
  Lane lane;
  uint32_t stream = 0;
  bool present = false;  // the node had an activity in this replay
  bool lane_busy = false;  // blocked, yet other work ran on its lane at its start
};

struct Candidate {
  size_t activity;  // index into the trace
  double end;       // us
};

}  // namespace

ProfileReport analyze_profile(const GraphDocument& doc, const Trace& trace, const ProfileOptions& opt) {
  const Graph& g = doc.root;
  const size_t n = g.nodes.size();
  const double tol = opt.tolerance_us, thr = opt.threshold_us;
  ProfileReport r;
  r.threshold_us = thr;
  r.tolerance_us = tol;

  // Which exec graph.
  std::map<uint32_t, size_t> per_graph;
  for (const auto& a : trace.activities)
    if (a.graph_id) ++per_graph[*a.graph_id];
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

  // Join: the low 32 bits of the record's graph node id are the node's local id.
  std::unordered_map<uint32_t, uint32_t> by_local;
  by_local.reserve(n * 2);
  for (const auto& node : g.nodes) by_local.emplace(node.node_id, node.index);

  // Replays: the records of one graph launch share its correlation id.
  // Without correlation ids, a node's k-th record belongs to replay k.
  std::vector<size_t> mine;
  for (size_t i = 0; i < trace.activities.size(); ++i) {
    const auto& a = trace.activities[i];
    if (a.graph_id && *a.graph_id == exec) mine.push_back(i);
    else ++r.other_records;
  }
  bool have_corr = std::any_of(mine.begin(), mine.end(), [&](size_t i) { return trace.activities[i].correlation != 0; });
  std::map<uint64_t, std::vector<size_t>> replays_by_key;
  {
    std::unordered_map<uint32_t, uint32_t> seen;
    std::vector<size_t> sorted = mine;
    std::sort(sorted.begin(), sorted.end(), [&](size_t x, size_t y) {
      return trace.activities[x].start_ns != trace.activities[y].start_ns
                 ? trace.activities[x].start_ns < trace.activities[y].start_ns
                 : x < y;
    });
    for (size_t i : sorted) {
      const auto& a = trace.activities[i];
      uint64_t key;
      if (have_corr) {
        key = a.correlation;
      } else {
        uint32_t local = a.graph_node_id ? uint32_t(*a.graph_node_id & 0xffffffffu) : 0xffffffffu;
        key = seen[local]++;
      }
      replays_by_key[key].push_back(i);
    }
  }
  // Replays in time order.
  std::vector<std::vector<size_t>> replays;
  for (auto& [key, acts] : replays_by_key) replays.push_back(std::move(acts));
  std::sort(replays.begin(), replays.end(), [&](const auto& x, const auto& y) {
    return trace.activities[x.front()].start_ns < trace.activities[y.front()].start_ns;
  });
  r.replays = uint32_t(replays.size());
  // Which replay each of the graph's records belongs to: records of the same
  // graph from another replay are ordered by the launch stream, not by this
  // replay's graph, and are never taken as a node's observed dependency.
  std::vector<uint32_t> replay_of(trace.activities.size(), UINT32_MAX);
  for (uint32_t k = 0; k < replays.size(); ++k)
    for (size_t i : replays[k]) replay_of[i] = k;

  // Device-wide activities sorted by end, for blocker and lane-predecessor
  // searches (any activity can block, graph or not).
  std::vector<size_t> by_end(trace.activities.size());
  for (size_t i = 0; i < by_end.size(); ++i) by_end[i] = i;
  std::sort(by_end.begin(), by_end.end(), [&](size_t x, size_t y) {
    return trace.activities[x].end_ns != trace.activities[y].end_ns ? trace.activities[x].end_ns < trace.activities[y].end_ns
                                                                    : x < y;
  });
  std::vector<uint64_t> ends(by_end.size());
  for (size_t i = 0; i < by_end.size(); ++i) ends[i] = trace.activities[by_end[i]].end_ns;
  // The same per lane: (end, activity), sorted.
  std::map<std::tuple<uint32_t, uint8_t, uint32_t>, std::vector<std::pair<uint64_t, size_t>>> lanes_by_end;
  for (size_t i : by_end) {
    Lane l = lane_of(trace.activities[i]);
    lanes_by_end[{l.device, l.channel_type, l.id}].emplace_back(trace.activities[i].end_ns, i);
  }

  auto node_of = [&](size_t act) -> std::optional<uint32_t> {
    const auto& a = trace.activities[act];
    if (!a.graph_id || *a.graph_id != exec || !a.graph_node_id) return std::nullopt;
    auto it = by_local.find(uint32_t(*a.graph_node_id & 0xffffffffu));
    if (it == by_local.end()) return std::nullopt;
    return it->second;
  };

  std::vector<uint32_t> order = topological_order(g, "nodes", "graph");
  // Replays are independent: each worker analyses a share of them into its
  // own rows of `samples` (replay-major, one per node and replay).
  const size_t R = replays.size();
  std::vector<Sample> samples(R * n);
  std::vector<double> makespans(R);
  std::vector<size_t> unmatched(R, 0);
  using LaneKey = std::tuple<uint32_t, uint8_t, uint32_t>;
  std::vector<std::map<LaneKey, std::pair<double, double>>> lane_per_replay(R);
  unsigned workers = worker_count(R * n, 100000);
  workers = std::min<unsigned>(workers, unsigned(std::max<size_t>(1, R)));
  std::vector<std::unordered_set<uint32_t>> streams_of(workers);

  parallel_slices(R, workers, [&](unsigned w, size_t first_replay, size_t last_replay) {
  Reachability reach(g);
  std::vector<int64_t> act_of(n);
  std::vector<double> finish(n), ready(n);
  auto& streams = streams_of[w];
  for (uint32_t replay = uint32_t(first_replay); replay < last_replay; ++replay) {
    const auto& acts = replays[replay];
    std::fill(act_of.begin(), act_of.end(), -1);
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (size_t i : acts) {
      const auto& a = trace.activities[i];
      t0 = std::min(t0, a.start_ns);
      t1 = std::max(t1, a.end_ns);
      auto node = node_of(i);
      if (!node) {
        ++unmatched[replay];
        continue;
      }
      if (act_of[*node] < 0) act_of[*node] = int64_t(i);
    }
    auto us = [&](uint64_t ns) { return (double(ns) - double(t0)) / 1000.0; };
    makespans[replay] = (double(t1) - double(t0)) / 1000.0;
    // ready: the latest end among the predecessors' activities; nodes with no
    // record (host, empty) pass their own ready time on.
    for (uint32_t i : order) {
      double rd = 0;  // graph start
      for (const auto& d : g.nodes[i].dependencies) rd = std::max(rd, finish[d.from]);
      ready[i] = rd;
      finish[i] = act_of[i] >= 0 ? us(trace.activities[size_t(act_of[i])].end_ns) : rd;
    }
    auto& lane_now = lane_per_replay[replay];
    for (uint32_t i = 0; i < n; ++i) {
      if (act_of[i] < 0) continue;
      size_t bi = size_t(act_of[i]);
      const Activity& b = trace.activities[bi];
      Sample& s = samples[replay * n + i];
      s.present = true;
      s.start = us(b.start_ns);
      s.end = us(b.end_ns);
      s.ready = ready[i];
      s.delay = s.start - s.ready;
      s.lane = lane_of(b);
      s.stream = b.stream;
      streams.insert(b.stream);
      auto& ln = lane_now[{s.lane.device, s.lane.channel_type, s.lane.id}];
      ln.first += 1;
      ln.second += s.end - s.start;
      // The lane predecessor ended no later than B's start plus the
      // tolerance; the blocker within the tolerance before B's start. Neither
      // started after B.
      const double tol_ns = tol * 1000.0;
      uint64_t limit = uint64_t(std::max(0.0, double(b.start_ns) + tol_ns));
      uint64_t block_floor = b.start_ns > uint64_t(tol_ns) ? b.start_ns - uint64_t(tol_ns) : 0;
      std::optional<size_t> lane_pred, block_own, block_any;
      // B's lane, by end: once per node and replay (a map lookup).
      const auto& lane = lanes_by_end.at({s.lane.device, s.lane.channel_type, s.lane.id});
      // The blocker ended within the tolerance before B's start (not after it).
      size_t hi = size_t(std::upper_bound(ends.begin(), ends.end(), b.start_ns) - ends.begin());
      for (size_t k = hi; k-- > 0 && ends[k] >= block_floor;) {
        size_t ai = by_end[k];
        const Activity& a = trace.activities[ai];
        if (ai == bi || a.device != b.device || a.start_ns > b.start_ns) continue;
        if (replay_of[ai] != UINT32_MAX && replay_of[ai] != replay) continue;
        if (!block_any) block_any = ai;
        if (lane_of(a) == s.lane) {
          block_own = ai;
          break;
        }
      }
      {
        size_t k = size_t(std::upper_bound(lane.begin(), lane.end(), std::make_pair(limit, SIZE_MAX)) - lane.begin());
        while (k-- > 0) {
          size_t ai = lane[k].second;
          if (ai == bi || trace.activities[ai].start_ns > b.start_ns) continue;
          if (replay_of[ai] != UINT32_MAX && replay_of[ai] != replay) break;  // an earlier replay: nothing before it counts
          lane_pred = ai;
          break;
        }
      }
      std::optional<size_t> blocker;
      if (s.delay > thr) blocker = block_own ? block_own : block_any;
      std::optional<size_t> observed = blocker ? blocker : lane_pred;
      if (observed) {
        auto on = node_of(*observed);
        const Activity& o = trace.activities[*observed];
        if (on) {
          s.observed = on;
          s.verdict = reach.path(*on, i) ? Verdict::real : Verdict::fake;
        } else {
          s.observed_other = o.name;
          s.verdict = Verdict::fake;  // outside the graph: no graph path can explain it
        }
        if (blocker) {
          auto bn = node_of(*blocker);
          if (bn) s.blocker = bn;
          s.blocking = s.verdict == Verdict::fake;
          if (lane_of(o) == s.lane && s.lane.channel_type != 0) s.cause = "same channel";
          else if (o.kind == ActivityKind::memcpy && b.kind == ActivityKind::memcpy && o.copy == b.copy)
            s.cause = "copy engine";
          else if (lane_of(o) == s.lane) s.cause = "same stream";
          else s.cause = "other";
          // Did B start while other work still ran on its own lane? Then the
          // lane was not serializing B, and the blocker merely ended first:
          // the delay is dispatch, not a wait. Looks at the next activities
          // of the lane by end (enough for the overlap that matters).
          size_t k = size_t(std::upper_bound(lane.begin(), lane.end(), std::make_pair(b.start_ns, SIZE_MAX)) -
                            lane.begin());
          for (size_t seen = 0; k < lane.size() && seen < 64 && !s.lane_busy; ++k, ++seen) {
            size_t ai = lane[k].second;
            s.lane_busy = ai != bi && trace.activities[ai].start_ns < b.start_ns;
          }
        }
      }
    }
  }
  });
  std::map<LaneKey, std::pair<std::vector<double>, std::vector<double>>> lane_stats;
  for (const auto& lane_now : lane_per_replay)
    for (const auto& [key, v] : lane_now) {
      lane_stats[key].first.push_back(v.first);
      lane_stats[key].second.push_back(v.second);
    }
  for (size_t u : unmatched) r.unmatched_records += u;
  std::unordered_set<uint32_t> streams;
  for (const auto& st : streams_of) streams.insert(st.begin(), st.end());

  // Per node: medians, and the findings of its median-delay replay; nodes
  // are independent, so in slices too.
  r.nodes.resize(n);
  std::vector<double> duration(n, 0);
  parallel_slices(n, worker_count(n * R, 200000), [&](unsigned, size_t begin, size_t end) {
    std::vector<const Sample*> v;
    std::vector<double> st, en, rd, dl, du;
    for (size_t i = begin; i < end; ++i) {
      NodeProfile& p = r.nodes[i];
      p.index = uint32_t(i);
      v.clear();
      for (size_t k = 0; k < R; ++k)
        if (samples[k * n + i].present) v.push_back(&samples[k * n + i]);
      p.replays = uint32_t(v.size());
      if (v.empty()) continue;
      st.clear(), en.clear(), rd.clear(), dl.clear(), du.clear();
      for (const Sample* s : v) {
        st.push_back(s->start), en.push_back(s->end), rd.push_back(s->ready), dl.push_back(s->delay);
        du.push_back(s->end - s->start);
      }
      p.start_us = median(st), p.end_us = median(en), p.ready_us = median(rd), p.delay_us = median(dl);
      duration[i] = median(du);
      // The replay of median delay (the lower middle; the earlier replay on ties).
      std::stable_sort(v.begin(), v.end(), [](const Sample* a, const Sample* b) { return a->delay < b->delay; });
      const Sample& rep = *v[(v.size() - 1) / 2];
      p.lane = rep.lane;
      p.stream = rep.stream;
      p.observed_dependency = rep.observed;
      if (rep.observed_other != UINT32_MAX)
        p.observed_other = rep.observed_other < trace.names.size() ? trace.names[rep.observed_other] : "?";
      p.verdict = rep.verdict;
      p.blocking = rep.blocking;
      p.lane_busy = rep.lane_busy;
      p.blocker = rep.blocker;
      p.cause = rep.cause;
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
    for (const auto& d : g.nodes[i].dependencies)
      if (longest[d.from] > best || via[i] < 0) {
        if (longest[d.from] >= best) best = longest[d.from], via[i] = d.from;
      }
    longest[i] = best + duration[i];
  }
  if (n) {
    uint32_t end = uint32_t(std::max_element(longest.begin(), longest.end()) - longest.begin());
    r.critical_path_us = longest[end];
    for (int64_t x = end; x >= 0; x = via[size_t(x)]) r.critical_path.push_back(uint32_t(x));
    std::reverse(r.critical_path.begin(), r.critical_path.end());
  }
  for (auto& [key, v] : lane_stats) {
    LaneUsage u;
    u.lane = Lane{std::get<0>(key), std::get<1>(key), std::get<2>(key)};
    u.activities = uint32_t(std::lround(median(v.first)));
    u.busy_us = median(v.second);
    r.lanes.push_back(u);
  }
  r.streams.assign(streams.begin(), streams.end());
  std::sort(r.streams.begin(), r.streams.end());
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
  for (const auto& p : r.nodes) {
    const Node& n = doc.root.nodes[p.index];
    w.begin_object();
    w.key("index").value(p.index);
    w.key("tools_id");
    n.tools_id ? w.value(*n.tools_id) : w.null();
    w.key("kernel_name");
    n.type == NodeType::kernel ? w.value(n.kernel_name) : w.null();
    w.key("node_type").value(to_string(n.type));
    w.key("replays").value(p.replays);
    auto num = [&](const char* k, double v) {
      w.key(k);
      p.replays ? w.value(v) : w.null();
    };
    num("start_us", p.start_us);
    num("end_us", p.end_us);
    num("ready_us", p.ready_us);
    num("delay_us", p.delay_us);
    w.key("observed_dependency");
    p.observed_dependency ? w.value(*p.observed_dependency) : w.null();
    if (!p.observed_other.empty()) w.key("observed_other").value(p.observed_other);
    w.key("verdict").value(to_string(p.verdict));
    w.key("blocking").value(p.blocking);
    w.key("lane_busy").value(p.lane_busy);
    w.key("blocker");
    p.blocker ? w.value(*p.blocker) : w.null();
    w.key("cause");
    p.cause.empty() ? w.null() : w.value(p.cause);
    if (p.lane) w.key("lane").value(describe(*p.lane));
    if (p.stream) w.key("stream").value(*p.stream);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take();
}

}  // namespace graphscope
