#include "simulate.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <vector>

#include "text.h"

namespace graphscope {

namespace {

bool timed(const ProfileReport& r, uint32_t i) { return i < r.nodes.size() && r.nodes[i].replays > 0; }

// The latest measured end among i's predecessors, passing through nodes
// without a record (their own predecessors' end); -1 when none has one.
double ready_of(const Graph& g, const ProfileReport& r, uint32_t i, std::vector<double>& memo) {
  double ready = -1;
  for (const auto& d : g.nodes[i].dependencies) {
    if (d.from >= g.nodes.size()) continue;
    double e;
    if (timed(r, d.from)) {
      e = r.nodes[d.from].end_us;
    } else {
      if (memo[d.from] == -2) memo[d.from] = ready_of(g, r, d.from, memo);
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
  const ProfileReport& r;           // for programmatic edges: the measured offset of the dependent's start
};

// List scheduling in order of readiness (ties by index).
// own_latency: each node's own measured delay where it has one (as
// measured); else the model's latency for all.
double simulate(const Schedule& s, double latency, double dispatch, bool share_engines, bool own_latency) {
  const Graph& g = s.g;
  const size_t n = g.nodes.size();
  std::vector<uint32_t> waiting(n, 0);
  std::vector<double> ready(n, 0), end(n, 0);
  std::vector<char> has_pred(n, 0), programmatic_only(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    bool standard = false;
    for (const auto& d : g.nodes[i].dependencies)
      if (d.from < n) ++waiting[i], has_pred[i] = 1, standard = standard || d.type == EdgeType::standard;
    programmatic_only[i] = has_pred[i] && !standard;  // its measured offset holds the latency
  }
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  for (uint32_t i = 0; i < n; ++i)
    if (!waiting[i]) heap.push({0.0, i});
  double dispatcher = -std::numeric_limits<double>::infinity();
  std::map<std::string, double> engine_free;
  double first = std::numeric_limits<double>::infinity(), last = -std::numeric_limits<double>::infinity();
  while (!heap.empty()) {
    const auto [rd, i] = heap.top();
    heap.pop();
    double start = rd;
    if (s.dispatched[i]) {
      // A node's own delay; the model's latency for dependents only (a
      // root's own delay is its dispatch after the graph's start).
      const bool own = own_latency && s.latency[i] >= 0;
      const double l = own ? s.latency[i] : has_pred[i] && !programmatic_only[i] ? latency : 0.0;
      start = own ? rd + l : std::max(rd + l, dispatcher + dispatch);
      dispatcher = start;
    }
    if (share_engines && !s.engine[i].empty()) {
      auto& free = engine_free[s.engine[i]];
      start = std::max(start, free);
      free = start + s.duration[i];
    }
    end[i] = start + s.duration[i];
    if (s.runs[i]) first = std::min(first, start), last = std::max(last, end[i]);
    for (uint32_t k : g.nodes[i].dependents) {
      if (k >= n) continue;
      // A programmatic edge lets the dependent launch while i runs.
      bool programmatic = false;
      for (const auto& d : g.nodes[k].dependencies)
        if (d.from == i && d.type != EdgeType::standard) programmatic = true;
      const double offset = programmatic && timed(s.r, i) && timed(s.r, k)
                                ? std::max(0.0, s.r.nodes[k].start_us - s.r.nodes[i].start_us)
                                : 0.0;
      ready[k] = std::max(ready[k], programmatic ? start + offset : end[i]);
      if (--waiting[k] == 0) heap.push({ready[k], k});
    }
  }
  return last > first ? last - first : 0;
}

}  // namespace

ScheduleModel fit_schedule_model(const GraphDocument& doc, const ProfileReport& r) {
  const Graph& g = doc.root;
  ScheduleModel m;
  // The mean delay of nodes whose predecessors all have records (a host
  // node's time is not latency), with a real observed dependency.
  double sum = 0;
  for (const NodeProfile& p : r.nodes) {
    if (!p.replays || p.index >= g.nodes.size() || g.nodes[p.index].dependencies.empty() || p.verdict == Verdict::fake ||
        p.blocking || p.delay_us < 0)
      continue;
    bool direct = true;
    for (const auto& d : g.nodes[p.index].dependencies) direct = direct && timed(r, d.from) && d.type == EdgeType::standard;
    if (!direct) continue;
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
  double span = 0;
  for (auto& [preds, starts] : siblings) {
    if (starts.size() < 2) continue;
    std::sort(starts.begin(), starts.end());
    span += starts.back() - starts.front();
    m.dispatch_samples += starts.size() - 1;
  }
  m.dispatch_us = m.dispatch_samples ? span / double(m.dispatch_samples) : 0;
  return m;
}

WhatIf what_if(const GraphDocument& doc, const ProfileReport& r) {
  const Graph& g = doc.root;
  const size_t n = g.nodes.size();
  WhatIf w;
  w.measured_us = r.makespan_us;
  w.model = fit_schedule_model(doc, r);
  Schedule s{g, std::vector<double>(n, 0), std::vector<char>(n, 0), std::vector<char>(n, 0), std::vector<std::string>(n), std::vector<double>(n, -1), r};
  std::vector<double> memo(n, -2);
  for (uint32_t i = 0; i < n && i < r.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    if (timed(r, i)) {
      const NodeProfile& p = r.nodes[i];
      s.duration[i] = std::max(0.0, p.end_us - p.start_us);
      // Its own delay, unless that was a wait for a blocker on a lane that
      // was not busy (a copy engine, a channel): the model makes those.
      bool direct = true;
      for (const auto& d : node.dependencies) direct = direct && timed(r, d.from) && d.type == EdgeType::standard;
      if (direct && !(p.blocking && !p.lane_busy) && p.delay_us >= 0) s.latency[i] = p.delay_us;
      s.runs[i] = s.dispatched[i] = 1;
      if (node.type == NodeType::memcpy) s.engine[i] = node.memcpy && !node.memcpy->kind.empty() ? node.memcpy->kind : "copy";
    } else if (node.type == NodeType::host) {
      // The gap its dependents measured after it was ready.
      const double ready = std::max(0.0, ready_of(g, r, i, memo));
      double next = std::numeric_limits<double>::infinity();
      std::vector<uint32_t> todo(node.dependents.begin(), node.dependents.end());
      std::vector<char> seen(n, 0);
      while (!todo.empty()) {  // through dependents without a record
        const uint32_t k = todo.back();
        todo.pop_back();
        if (k >= n || seen[k]) continue;
        seen[k] = 1;
        if (timed(r, k)) next = std::min(next, r.nodes[k].start_us);
        else todo.insert(todo.end(), g.nodes[k].dependents.begin(), g.nodes[k].dependents.end());
      }
      if (next != std::numeric_limits<double>::infinity())
        s.duration[i] = std::max(0.0, next - ready - 2 * w.model.latency_us);
      s.dispatched[i] = 1;
    }
  }
  w.as_measured_us = simulate(s, w.model.latency_us, w.model.dispatch_us, true, true);
  w.without_fake_us = simulate(s, w.model.latency_us, w.model.dispatch_us, false, true);
  w.zero_latency_us = simulate(s, 0, 0, true, false);
  return w;
}

std::string format_what_if(const WhatIf& w) {
  std::string out = "what-if (simulated: measured durations and each node's own delay; where that delay was a wait, "
                    "latency " + fmt("%.2f", w.model.latency_us) + " us after a predecessor and dispatch every " +
                    fmt("%.2f", w.model.dispatch_us) + " us)\n";
  char buf[256];
  auto row = [&](const char* what, double us) {
    std::snprintf(buf, sizeof buf, "  %-44s %10.1f us", what, us);
    out += buf;
    if (w.as_measured_us > 0 && us != w.as_measured_us)
      out += fmt(" (%+.0f%% of the model as measured)", 100.0 * (us - w.as_measured_us) / w.as_measured_us);
    out += "\n";
  };
  std::snprintf(buf, sizeof buf, "  %-44s %10.1f us\n", "measured makespan (median)", w.measured_us);
  out += buf;
  std::snprintf(buf, sizeof buf, "  %-44s %10.1f us", "the model, as measured", w.as_measured_us);
  out += buf;
  if (w.measured_us > 0) out += fmt(" (%+.1f%% of the measured: the model's error)", 100.0 * (w.as_measured_us - w.measured_us) / w.measured_us);
  out += "\n";
  row("without fake dependencies (copy engines free)", w.without_fake_us);
  row("with zero dependency latency and dispatch", w.zero_latency_us);
  out += "  with CUDA_DEVICE_MAX_CONNECTIONS=N: as measured (channels did not hold graph work back on the H100)\n";
  return out;
}

}  // namespace graphscope
