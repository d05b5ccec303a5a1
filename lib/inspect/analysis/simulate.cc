#include "simulate.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <vector>

#include "../core/stats.h"
#include "../core/text.h"
#include "../model/topology.h"

namespace graphscope {

namespace {

bool timed(const ProfileReport& r, uint32_t i) { return i < r.nodes.size() && r.nodes[i].replays > 0; }

// One replay's measured times (or the medians over replays): per node,
// whether it has a record, its start and end.
struct Measured {
  std::vector<char> has;
  std::vector<double> start, end;
};

// The latest measured end among i's predecessors, passing through nodes
// without a record (their own predecessors' end); -1 when none has one.
double ready_of(const Graph& g, const Measured& m, uint32_t i, std::vector<double>& memo) {
  double ready = -1;
  for (const auto& d : g.nodes[i].dependencies) {
    if (d.from >= g.nodes.size()) continue;
    double e;
    if (m.has[d.from]) {
      e = m.end[d.from];
    } else {
      if (memo[d.from] == -2) memo[d.from] = ready_of(g, m, d.from, memo);
      e = memo[d.from];
    }
    ready = std::max(ready, e);
  }
  return ready;
}

struct Schedule {
  const Graph& g;
  std::vector<double> duration;  // per node; 0 for nodes that take no time
  std::vector<char> runs;        // has a device activity (counts for the makespan)
  std::vector<char> dispatched;  // goes through the dispatcher (kernels, copies, memsets, host)
  std::vector<std::string> engine;  // copy direction for memcpy nodes, "" otherwise
  std::vector<double> latency;      // per node: its own measured delay, or the model's where it waited
  std::vector<double> start;        // measured starts, for programmatic edges' offsets
  std::vector<char> has;            // has a measured record
  // SM occupancy: a kernel's share of the SMs (0: not modelled, it runs
  // for its duration) and its work, the time it would take with the SMs to
  // itself. Kernels with a share run together at 1/D of their own speed
  // while their shares add up to D > 1.
  std::vector<double> share, work;
  size_t gap_nodes = 0;  // nodes without a record given their measured gap
};

// Event by event, in time order: a node is ready when its predecessors end
// (a programmatic edge: when the predecessor starts, plus the offset
// measured); ready nodes are dispatched in order of readiness (ties by
// index), each at its own measured delay (own_latency) or the model's
// latency, no sooner than `dispatch` after the node dispatched before it;
// copies of one direction wait for their copy engine (share_engines);
// kernels with an SM share progress at 1/D while the running shares add up
// to D > 1.
double simulate(const Schedule& s, double latency, double dispatch, bool share_engines, bool own_latency) {
  const Graph& g = s.g;
  const size_t n = g.nodes.size();
  std::vector<uint32_t> waiting(n, 0);
  std::vector<double> ready(n, 0), begin(n, 0);
  std::vector<char> has_pred(n, 0), programmatic_only(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    bool standard = false;
    for (const auto& d : g.nodes[i].dependencies)
      if (d.from < n) ++waiting[i], has_pred[i] = 1, standard = standard || d.type == EdgeType::standard;
    programmatic_only[i] = has_pred[i] && !standard;  // its measured offset holds the latency
  }
  using Item = std::pair<double, uint32_t>;
  using Heap = std::priority_queue<Item, std::vector<Item>, std::greater<Item>>;
  Heap readies, starts, ends;  // by time, then index
  Heap shared_ends;            // by virtual time: when the shared kernel's work is done
  for (uint32_t i = 0; i < n; ++i)
    if (!waiting[i]) readies.push({0.0, i});
  double dispatcher = -std::numeric_limits<double>::infinity();
  std::map<std::string, double> engine_free;
  double first = std::numeric_limits<double>::infinity(), last = -std::numeric_limits<double>::infinity();
  // Shared kernels all run at one speed, 1/max(1, D): virtual time v is
  // the work any of them has done since v = 0.
  double now = 0, v = 0, demand = 0;
  const double inf = std::numeric_limits<double>::infinity();
  auto speed = [&] { return 1.0 / std::max(1.0, demand); };
  auto release = [&](uint32_t k, double at) {
    if (--waiting[k] == 0) readies.push({std::max(ready[k], at), k});
  };
  auto programmatic_edge = [&](uint32_t i, uint32_t k) {
    for (const auto& d : g.nodes[k].dependencies)
      if (d.from == i && d.type != EdgeType::standard) return true;
    return false;
  };
  for (;;) {
    const double t_end = ends.empty() ? inf : ends.top().first;
    const double t_shared = shared_ends.empty() ? inf : now + (shared_ends.top().first - v) / speed();
    const double t_ready = readies.empty() ? inf : readies.top().first;
    const double t_start = starts.empty() ? inf : starts.top().first;
    const double t = std::min({t_end, t_shared, t_ready, t_start});
    if (t == inf) break;
    if (t > now) v += (t - now) * speed(), now = t;
    // Ends first (their dependents may be ready now), then readies, then starts.
    if (t_end <= t || t_shared <= t) {
      uint32_t i;
      if (t_end <= t) {
        i = ends.top().second;
        ends.pop();
      } else {
        i = shared_ends.top().second;
        shared_ends.pop();
        demand = shared_ends.empty() ? 0 : std::max(0.0, demand - s.share[i]);
      }
      if (s.runs[i]) last = std::max(last, now);
      for (uint32_t k : g.nodes[i].dependents)
        if (k < n && !programmatic_edge(i, k)) ready[k] = std::max(ready[k], now), release(k, now);
      continue;
    }
    if (t_ready <= t) {
      const auto [rd, i] = readies.top();
      readies.pop();
      double start = rd;
      if (s.dispatched[i]) {
        // A node's own delay; the model's latency for dependents only (a
        // root's own delay is its dispatch after the graph's start).
        // Without shared engines, a copy's measured delay (mostly the
        // engine's) is not its own: the model's latency instead.
        const bool own = own_latency && s.latency[i] >= 0 && (share_engines || s.engine[i].empty());
        const double l = own ? s.latency[i] : has_pred[i] && !programmatic_only[i] ? latency : 0.0;
        start = own ? rd + l : std::max(rd + l, dispatcher + dispatch);
        // A measured delay may hold a wait (for a copy engine, the SMs)
        // that the model makes itself: it paces no other node.
        if (!own) dispatcher = start;
      }
      starts.push({std::max(start, now), i});
      continue;
    }
    const uint32_t i = starts.top().second;
    starts.pop();
    // A copy takes its engine in the order the copies would start (each
    // replay's own delays encode the order they took it in), else waits.
    if (share_engines && !s.engine[i].empty()) {
      auto& free = engine_free[s.engine[i]];
      if (free > now) {
        starts.push({free, i});
        continue;
      }
      free = now + s.duration[i];
    }
    begin[i] = now;
    if (s.runs[i]) first = std::min(first, now);
    if (s.share[i] > 0) {
      demand += s.share[i];
      shared_ends.push({v + s.work[i], i});
    } else {
      ends.push({now + s.duration[i], i});
    }
    // A programmatic edge lets the dependent launch while i runs.
    for (uint32_t k : g.nodes[i].dependents) {
      if (k >= n || !programmatic_edge(i, k)) continue;
      const double offset = s.has[i] && s.has[k] ? std::max(0.0, s.start[k] - s.start[i]) : 0.0;
      ready[k] = std::max(ready[k], now + offset);
      release(k, now + offset);
    }
  }
  return last > first ? last - first : 0;
}

// Per node (medians), whether the other kernels running when it was ready
// held every SM (their shares add up to 1 or more); empty without shares.
std::vector<char> sms_held_at_ready(const ProfileReport& r) {
  const size_t n = r.nodes.size();
  if (r.sm_share.size() != n) return {};
  std::vector<std::pair<double, double>> starts, ends;  // (time, share)
  std::vector<std::pair<double, uint32_t>> queries;
  for (const NodeProfile& p : r.nodes) {
    if (!p.replays || p.index >= n) continue;
    if (r.sm_share[p.index] > 0) starts.push_back({p.start_us, r.sm_share[p.index]}), ends.push_back({p.end_us, r.sm_share[p.index]});
    queries.push_back({p.ready_us, p.index});
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  std::sort(queries.begin(), queries.end());
  std::vector<char> held(n, 0);
  size_t a = 0, b = 0;
  double d = 0;
  for (const auto& [t, i] : queries) {
    // Running at t: started before t, not ended by t.
    while (a < starts.size() && starts[a].first < t) d += starts[a++].second;
    while (b < ends.size() && ends[b].first <= t) d -= ends[b++].second;
    held[i] = d >= 1.0 - 1e-9;
  }
  return held;
}

}  // namespace

ScheduleModel fit_schedule_model(const GraphDocument& doc, const ProfileReport& r) {
  const Graph& g = doc.root;
  ScheduleModel m;
  // The mean delay of nodes whose predecessors all have records (a host
  // node's time is not latency), with a real observed dependency; with SM
  // shares, not those ready while other kernels held every SM (their delay
  // was a wait for SMs, which the shares model).
  const std::vector<char> held = sms_held_at_ready(r);
  double sum = 0;
  for (const NodeProfile& p : r.nodes) {
    if (!p.replays || p.index >= g.nodes.size() || g.nodes[p.index].dependencies.empty() || p.verdict == Verdict::fake ||
        p.blocking || p.delay_us < 0)
      continue;
    bool direct = true;
    for (const auto& d : g.nodes[p.index].dependencies) direct = direct && timed(r, d.from) && d.type == EdgeType::standard;
    if (!direct || (!held.empty() && held[p.index])) continue;
    sum += p.delay_us;
    ++m.latency_samples;
  }
  m.latency_us = m.latency_samples ? sum / double(m.latency_samples) : 0;
  // Siblings (the same predecessors, or roots), by start: the span of their
  // starts over their count is the dispatcher's pace. Nodes that waited for
  // a blocker on a lane that was not busy (a copy engine) do not count.
  std::map<std::vector<uint32_t>, std::vector<double>> siblings;
  for (const NodeProfile& p : r.nodes) {
    if (!p.replays || p.index >= g.nodes.size() || (p.blocking && !p.lane_busy)) continue;
    std::vector<uint32_t> preds;
    for (const auto& d : g.nodes[p.index].dependencies) preds.push_back(d.from);
    std::sort(preds.begin(), preds.end());
    siblings[preds].push_back(p.start_us);
  }
  // Their starts' span over their gaps, at most the latency: a slower pace
  // was a wait for something else (the SMs, an engine), not the dispatcher.
  double span = 0;
  for (auto& [preds, starts] : siblings) {
    if (starts.size() < 2) continue;
    std::sort(starts.begin(), starts.end());
    span += starts.back() - starts.front();
    m.dispatch_samples += starts.size() - 1;
  }
  m.dispatch_us = m.dispatch_samples ? span / double(m.dispatch_samples) : 0;
  if (m.latency_samples) m.dispatch_us = std::min(m.dispatch_us, m.latency_us);
  return m;
}

namespace {

// The SM shares of the kernels that ran, and their work: their measured
// time at the speed the model gives them there, 1/D while the shares of
// the kernels running at the same time add up to D > 1 (so that the model
// replays the measured times exactly, and spreads the work anew where the
// schedule changes).
void shared_work(const ProfileReport& r, const Measured& m, Schedule& s) {
  const size_t n = s.share.size();
  if (r.sm_share.size() != n) return;
  std::vector<std::pair<double, double>> events;  // (time, change of D)
  for (size_t i = 0; i < n; ++i)
    if (m.has[i] && r.sm_share[i] > 0 && m.end[i] > m.start[i]) {
      s.share[i] = r.sm_share[i];
      events.push_back({m.start[i], s.share[i]});
      events.push_back({m.end[i], -s.share[i]});
    }
  if (events.empty()) return;
  std::sort(events.begin(), events.end());
  // progress[k]: the work done at full share by events[k].first.
  std::vector<double> times, progress;
  double d = 0, p = 0;
  for (size_t k = 0; k < events.size(); ++k) {
    if (k) p += (events[k].first - events[k - 1].first) / std::max(1.0, d);
    d = std::max(0.0, d + events[k].second);
    if (times.empty() || times.back() != events[k].first) times.push_back(events[k].first), progress.push_back(p);
    else progress.back() = p;
  }
  auto at = [&](double t) { return progress[size_t(std::lower_bound(times.begin(), times.end(), t) - times.begin())]; };
  for (size_t i = 0; i < n; ++i)
    if (s.share[i] > 0) s.work[i] = at(m.end[i]) - at(m.start[i]);
}

// Per node without a record (host, memory alloc and free, event, empty
// nodes): the time the model gives it, the gap its dependents measured
// after it was ready, less the model's latency after it (a host node,
// dispatched like a kernel, also less the latency before it), so that the
// model as measured reproduces the gap and the other predictions keep it.
// In topological order, ready when its predecessors end in the model: a
// chain of such nodes (a host node, then an event record) shares one gap.
std::vector<double> gaps_without_records(const Graph& g, const Measured& m, const ScheduleModel& model) {
  const size_t n = g.nodes.size();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<uint32_t> order = topological_order(g, "nodes", "");
  // The first measured start after each node, through dependents without a
  // record (their own next), in reverse topological order.
  std::vector<double> next(n, inf);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (uint32_t k : g.nodes[*it].dependents)
      if (k < n) next[*it] = std::min(next[*it], m.has[k] ? m.start[k] : next[k]);
  std::vector<double> gap(n, 0), end(n, 0);
  for (uint32_t i : order) {
    if (m.has[i]) {
      end[i] = m.end[i];
      continue;
    }
    const Node& node = g.nodes[i];
    double ready = 0;
    for (const auto& d : node.dependencies)
      if (d.from < n) ready = std::max(ready, end[d.from]);
    const bool host = node.type == NodeType::host;
    if (next[i] != inf) gap[i] = std::max(0.0, next[i] - ready - (host ? 2 : 1) * model.latency_us);
    end[i] = ready + (host ? model.latency_us : 0.0) + gap[i];
  }
  return gap;
}

// The schedule of one set of measured times: durations, and each node's
// own delay after its predecessors (from this replay's times) unless that
// delay was a wait for a copy engine (the model makes those).
Schedule schedule_of(const Graph& g, const ProfileReport& r, const Measured& m, const ScheduleModel& model) {
  const size_t n = g.nodes.size();
  Schedule s{g, std::vector<double>(n, 0), std::vector<char>(n, 0), std::vector<char>(n, 0), std::vector<std::string>(n),
             std::vector<double>(n, -1), m.start, m.has, std::vector<double>(n, 0), std::vector<double>(n, 0)};
  shared_work(r, m, s);
  const std::vector<double> gap = gaps_without_records(g, m, model);
  std::vector<double> memo(n, -2);
  for (uint32_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    if (m.has[i]) {
      s.duration[i] = std::max(0.0, m.end[i] - m.start[i]);
      bool direct = true;
      for (const auto& d : node.dependencies) direct = direct && d.from < n && m.has[d.from] && d.type == EdgeType::standard;
      const NodeProfile* p = i < r.nodes.size() ? &r.nodes[i] : nullptr;
      const double ready = node.dependencies.empty() ? 0.0 : ready_of(g, m, i, memo);
      const double delay = m.start[i] - std::max(0.0, ready);
      // A wait for a copy engine the model makes itself (share_engines);
      // any other wait stays the node's own delay.
      const bool engine_wait = p && p->blocking && !p->lane_busy && p->cause == "copy engine";
      if (direct && !engine_wait && delay >= 0) s.latency[i] = delay;
      s.runs[i] = s.dispatched[i] = 1;
      if (node.type == NodeType::memcpy) s.engine[i] = node.memcpy && !node.memcpy->kind.empty() ? node.memcpy->kind : "copy";
    } else {
      s.duration[i] = gap[i];
      s.dispatched[i] = node.type == NodeType::host;
      if (gap[i] > 0) ++s.gap_nodes;
    }
  }
  return s;
}


}  // namespace

WhatIf what_if(const GraphDocument& doc, const ProfileReport& r) {
  const Graph& g = doc.root;
  const size_t n = g.nodes.size();
  WhatIf w;
  w.measured_us = r.makespan_us;
  if (r.replay_times.empty() && r.what_if) {  // read from JSON: as written
    w = *r.what_if;
    w.measured_us = r.makespan_us;
    return w;
  }
  w.model = fit_schedule_model(doc, r);
  // Each replay on its own (replays disagree: which branch waited for the
  // SMs changes from one to the next, and per-node medians of different
  // replays do not make a schedule), the median of each prediction; a
  // report read back from JSON has only the medians.
  std::vector<Measured> sets;
  for (const auto& t : r.replay_times) {
    if (t.start_us.size() != n || t.end_us.size() != n) continue;
    Measured m{std::vector<char>(n, 0), std::vector<double>(n, 0), std::vector<double>(n, 0)};
    for (size_t i = 0; i < n; ++i)
      if (t.start_us[i] >= 0) m.has[i] = 1, m.start[i] = t.start_us[i], m.end[i] = t.end_us[i];
    sets.push_back(std::move(m));
  }
  if (sets.empty()) {
    Measured m{std::vector<char>(n, 0), std::vector<double>(n, 0), std::vector<double>(n, 0)};
    for (uint32_t i = 0; i < n && i < r.nodes.size(); ++i)
      if (timed(r, i)) m.has[i] = 1, m.start[i] = r.nodes[i].start_us, m.end[i] = r.nodes[i].end_us;
    sets.push_back(std::move(m));
  }
  std::vector<double> as, without, zero, fitted;
  uint64_t gap_nodes = 0;
  for (const Measured& m : sets) {
    const Schedule s = schedule_of(g, r, m, w.model);
    gap_nodes = std::max<uint64_t>(gap_nodes, s.gap_nodes);
    as.push_back(simulate(s, w.model.latency_us, w.model.dispatch_us, true, true));
    without.push_back(simulate(s, w.model.latency_us, w.model.dispatch_us, false, true));
    zero.push_back(simulate(s, 0, 0, true, false));
    fitted.push_back(simulate(s, w.model.latency_us, w.model.dispatch_us, true, false));
  }
  w.as_measured_us = median(as);
  w.without_fake_us = median(without);
  w.zero_latency_us = median(zero);
  w.fitted_us = median(fitted);
  w.replays_simulated = sets.size() == r.replay_times.size() ? sets.size() : 0;
  w.gap_nodes = gap_nodes;
  return w;
}

std::string format_what_if(const WhatIf& w) {
  std::string out = std::string("what-if (simulated") +
                    (w.replays_simulated.value_or(0) > 1 ? " replay by replay, medians of " + std::to_string(*w.replays_simulated) : std::string()) +
                    ": measured durations and each node's own delay; where that delay was a wait, "
                    "latency " + fmt("%.2f", w.model.latency_us) + " us after a predecessor and dispatch every " +
                    fmt("%.2f", w.model.dispatch_us) + " us)\n";
  if (w.gap_nodes.value_or(0) > 0)
    out += "  " + plural(*w.gap_nodes, "node", "nodes") + " without an activity record (host, memory alloc or free, event) " +
           (*w.gap_nodes == 1 ? "lasts" : "last") + " the gap measured after " + (*w.gap_nodes == 1 ? "it" : "them") +
           ", less the latency\n";
  char buf[256];
  auto row = [&](const char* what, double us) {
    std::snprintf(buf, sizeof buf, "  %-44s %10.1f us", what, us);
    out += buf;
    if (w.as_measured_us > 0 && us != w.as_measured_us)
      out += " (" + signed_percent(100.0 * (us - w.as_measured_us) / w.as_measured_us, 0) + " of the model as measured)";
    out += "\n";
  };
  std::snprintf(buf, sizeof buf, "  %-44s %10.1f us\n", "measured makespan (median)", w.measured_us);
  out += buf;
  std::snprintf(buf, sizeof buf, "  %-44s %10.1f us", "the model, as measured", w.as_measured_us);
  out += buf;
  if (w.measured_us > 0)
    out += " (" + signed_percent(100.0 * (w.as_measured_us - w.measured_us) / w.measured_us, 1) + " of the measured: the model's error)";
  out += "\n";
  if (w.fitted_us) row("the fitted model alone (no node's own delay)", *w.fitted_us);
  row("without fake dependencies (copy engines free)", w.without_fake_us);
  row("with zero dependency latency and dispatch", w.zero_latency_us);
  out += "  with CUDA_DEVICE_MAX_CONNECTIONS=N: as measured (channels did not hold graph work back on the H100)\n";
  return out;
}

}  // namespace graphscope
