// The join without graph ids (join.h): records grouped by the correlation id
// of their graph launch, and inside each launch given to the graph's nodes
// by kind, kernel name, geometry and the graph's partial order.
#include <algorithm>
#include <functional>
#include <optional>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "../core/demangle.h"
#include "../core/error.h"
#include "../core/hash.h"
#include "join.h"
#include "join_launch_parts.h"
#include "../core/parallel.h"
#include "../core/text.h"
#include "../model/topology.h"

namespace graphscope {
namespace {

using namespace join_detail;
using join_detail::geometry_key;  // beside the node overload below


// The kind of record a node of this type makes; other for none. Host
// nodes run on the CPU: no device record.
ActivityKind record_kind(NodeType t) {
  switch (t) {
    case NodeType::kernel: return ActivityKind::kernel;
    case NodeType::memcpy: return ActivityKind::memcpy;
    case NodeType::memset: return ActivityKind::memset;
    default: return ActivityKind::other;
  }
}

// A copy's direction as a class key (1..5); 0 unknown.
uint32_t direction(std::string_view kind) {
  return kind == "HtoD" ? 1 : kind == "DtoH" ? 2 : kind == "DtoD" ? 3 : kind == "HtoH" ? 4 : 0;
}
uint32_t direction(CopyKind k) {
  switch (k) {
    case CopyKind::htod: return 1;
    case CopyKind::dtoh: return 2;
    case CopyKind::dtod: return 3;
    case CopyKind::htoh: return 4;
    case CopyKind::other: return 5;
    case CopyKind::none: return 0;
  }
  return 0;
}

// What tells nodes of one kind and name apart in a record: a kernel's grid
// and block, a copy's or memset's bytes. 0: unknown.
uint64_t geometry_key(const Node& n) {
  if (n.type == NodeType::kernel && n.kernel && n.kernel->geometry_known) {
    const KernelInfo& k = *n.kernel;
    return (mix(mix(mix(k.grid.x) ^ k.grid.y) ^ (uint64_t(k.grid.z) << 32)) ^
            mix(k.block.x | uint64_t(k.block.y) << 21 | uint64_t(k.block.z) << 42)) |
           1;
  }
  if (n.type == NodeType::memcpy && n.memcpy && n.memcpy->bytes) return mix(n.memcpy->bytes) | 1;
  if (n.type == NodeType::memset && n.memset && n.memset->bytes) return mix(n.memset->bytes) | 1;
  return 0;
}


// Names by every spelling a trace may use (mangled, demangled), merged
// where two kernels share one (a name id per group).
class KernelNames {
 public:
  uint32_t add(const std::vector<std::string>& spellings) {
    uint32_t id = kNone;
    for (const auto& s : spellings) {
      auto it = id_.find(s);
      if (it == id_.end()) continue;
      if (id == kNone) id = find(it->second);
      else unite(id, it->second), id = find(id);
    }
    if (id == kNone) {
      id = uint32_t(parent_.size());
      parent_.push_back(id);
    }
    for (const auto& s : spellings)
      if (!s.empty()) id_.emplace(s, id);
    return id;
  }
  uint32_t lookup(std::string_view s) const {
    auto it = id_.find(std::string(s));
    return it == id_.end() ? kNone : find(it->second);
  }
  uint32_t find(uint32_t x) const {
    while (parent_[x] != x) x = parent_[x];
    return x;
  }

 private:
  void unite(uint32_t a, uint32_t b) { parent_[find(b)] = find(a); }
  std::unordered_map<std::string, uint32_t> id_;
  std::vector<uint32_t> parent_;
};


uint32_t name_of(KernelNames& names, const Node& n,
                 const std::unordered_map<std::string_view, std::string_view>& table) {
  // Kernels repeat: each mangled name is demangled once.
  if (!n.kernel_name.empty() && !(n.kernel && !n.kernel->demangled.empty())) {
    const uint32_t known = names.lookup(n.kernel_name);
    if (known != kNone) return known;
  }
  std::vector<std::string> s;
  if (!n.kernel_name.empty()) {
    s.push_back(n.kernel_name);
    auto it = table.find(n.kernel_name);
    if (it != table.end()) s.emplace_back(it->second);
    s.push_back(demangle(n.kernel_name));
  }
  if (n.kernel && !n.kernel->demangled.empty()) s.push_back(n.kernel->demangled);
  if (s.empty()) s.push_back("");  // an unnamed kernel: its own class
  return names.add(s);
}

// A node's coarse key, or nullopt for nodes that make no record.
std::optional<uint64_t> node_key(const Node& n, KernelNames& names, bool directions,
                                 const std::unordered_map<std::string_view, std::string_view>& table) {
  const ActivityKind k = record_kind(n.type);
  if (k == ActivityKind::other) return std::nullopt;
  uint32_t name = 0;
  if (k == ActivityKind::kernel) name = name_of(names, n, table);
  else if (k == ActivityKind::memcpy && directions && n.memcpy) name = direction(n.memcpy->kind);
  return Classes::coarse_key(k, name);
}

void add_nested(const Graph& g, KernelNames& names, const std::unordered_map<std::string_view, std::string_view>& table,
                Classes& c) {
  for (const Node& n : g.nodes) {
    if (auto key = node_key(n, names, c.directions, table)) c.nested.insert(*key);
    for (const Graph& b : n.bodies) add_nested(b, names, table, c);
  }
}

Classes classify(const GraphDocument& doc, KernelNames& names, const std::vector<uint32_t>& order) {
  const Graph& g = doc.root;
  const size_t n = g.nodes.size();
  std::unordered_map<std::string_view, std::string_view> table;
  for (const auto& [m, d] : doc.kernel_names) table.emplace(m, d);
  Classes c;
  for (const Node& x : g.nodes)
    if (x.type == NodeType::memcpy && (!x.memcpy || direction(x.memcpy->kind) == 0)) c.directions = false;
  c.coarse_of.assign(n, kNone);
  c.fine_of.assign(n, kNone);
  c.geometry.assign(n, 0);
  for (const Node& x : g.nodes) {
    auto key = node_key(x, names, c.directions, table);
    if (!key) continue;
    ++c.producing;
    auto [it, added] = c.coarse_id.emplace(*key, uint32_t(c.coarse_nodes.size()));
    if (added) {
      c.coarse_nodes.emplace_back();
      c.coarse_known.push_back(1);
      std::string label(to_string(record_kind(x.type)));
      if (x.type == NodeType::kernel) {
        std::string full = x.kernel && !x.kernel->demangled.empty() ? x.kernel->demangled : demangle(x.kernel_name);
        label += " " + short_kernel_name(full.empty() ? std::string("(unnamed)") : full, 60);
      } else if (x.type == NodeType::memcpy && c.directions) {
        label += " " + x.memcpy->kind;
      }
      c.coarse_label.push_back(label);
    }
    const uint32_t cc = it->second;
    c.coarse_of[x.index] = cc;
    c.coarse_nodes[cc].push_back(x.index);
    c.geometry[x.index] = geometry_key(x);
    if (!c.geometry[x.index]) c.coarse_known[cc] = 0;
  }
  for (const Node& x : g.nodes) {
    const uint32_t cc = c.coarse_of[x.index];
    if (cc == kNone || !c.coarse_known[cc]) continue;
    auto [it, added] = c.fine_id.emplace(c.fine_key(cc, c.geometry[x.index]), uint32_t(c.fine_nodes.size()));
    if (added) c.fine_nodes.emplace_back();
    c.fine_of[x.index] = it->second;
    c.fine_nodes[it->second].push_back(x.index);
  }
  for (const Node& x : g.nodes)
    for (const Graph& b : x.bodies) add_nested(b, names, table, c);

  // Structure hashes: a node's kind, name and geometry with those of
  // everything above it (up) and below it (down). Equal in both: twins.
  auto sig = [&](const Node& x) {
    return mix(uint64_t(x.type) << 40 ^ (c.coarse_of[x.index] == kNone ? 0 : c.coarse_of[x.index] + 1)) ^
           c.geometry[x.index];
  };
  c.up.assign(n, 0);
  c.down.assign(n, 0);
  for (uint32_t v : order) {
    uint64_t sum = 0;
    for (const auto& d : g.nodes[v].dependencies) sum += mix(c.up[d.from] + uint64_t(d.type));
    c.up[v] = mix(sig(g.nodes[v]) ^ mix(sum + g.nodes[v].dependencies.size()));
  }
  for (size_t k = order.size(); k-- > 0;) {
    const uint32_t v = order[k];
    uint64_t sum = 0;
    for (uint32_t s : g.nodes[v].dependents) sum += mix(c.down[s]);
    c.down[v] = mix(sig(g.nodes[v]) ^ mix(sum + g.nodes[v].dependents.size() * 0x9e37));
  }
  std::unordered_map<uint64_t, uint32_t> alike;
  auto key = [&](uint32_t v) { return mix(c.up[v] ^ mix(c.down[v] + c.coarse_of[v])); };
  for (uint32_t v = 0; v < n; ++v)
    if (c.coarse_of[v] != kNone) ++alike[key(v)];
  c.has_twin.assign(n, 0);
  for (uint32_t v = 0; v < n; ++v)
    if (c.coarse_of[v] != kNone) c.has_twin[v] = alike[key(v)] > 1;
  return c;
}

constexpr uint32_t kAbsent = UINT32_MAX - 1;  // a record the graph has no node for
constexpr uint32_t kNested = UINT32_MAX - 2;  // a record of a node inside a child graph or body
constexpr uint32_t kIgnored = UINT32_MAX - 3;  // not a device record a node makes

// Each record's coarse class (or kAbsent, kNested, kIgnored), by its kind
// and name: kernels the driver runs for memset and memcpy nodes ("memset32",
// "memcpy32_post") count as those.
class RecordClasses {
 public:
  RecordClasses(const Trace& trace, const Classes& c, const KernelNames& names) : c_(c) {
    kernel_.resize(trace.names.size(), kAbsent);
    for (size_t k = 0; k < trace.names.size(); ++k) {
      const std::string& s = trace.names[k];
      const uint32_t id = names.lookup(s);
      const uint64_t key = Classes::coarse_key(ActivityKind::kernel, id);
      if (id != kNone && c.coarse_id.count(key)) kernel_[k] = c.coarse_id.at(key);
      else if (id != kNone && c.nested.count(key)) kernel_[k] = kNested;
      else if (s.rfind("memset", 0) == 0) kernel_[k] = lookup(ActivityKind::memset, 0);
      else if (s.rfind("memcpy", 0) == 0) kernel_[k] = lookup(ActivityKind::memcpy, c.directions ? 3 : 0);
    }
  }
  uint32_t operator()(const Activity& a) const {
    switch (a.kind) {
      case ActivityKind::kernel: return a.name < kernel_.size() ? kernel_[a.name] : kAbsent;
      case ActivityKind::memcpy: return lookup(ActivityKind::memcpy, c_.directions ? direction(a.copy) : 0);
      case ActivityKind::memset: return lookup(ActivityKind::memset, 0);
      default: return kIgnored;
    }
  }

 private:
  uint32_t lookup(ActivityKind k, uint32_t name) const {
    const uint64_t key = Classes::coarse_key(k, name);
    auto it = c_.coarse_id.find(key);
    if (it != c_.coarse_id.end()) return it->second;
    return c_.nested.count(key) ? kNested : kAbsent;
  }
  const Classes& c_;
  std::vector<uint32_t> kernel_;
};


std::string describe_record(const Activity& a, const Trace& trace) {
  std::string s(to_string(a.kind));
  if (a.kind == ActivityKind::kernel)
    s += " " + short_kernel_name(a.name < trace.names.size() ? trace.names[a.name] : "?", 60);
  if (a.has_geometry())
    s += " <<<(" + std::to_string(a.grid[0]) + "," + std::to_string(a.grid[1]) + "," + std::to_string(a.grid[2]) +
         "), (" + std::to_string(a.block[0]) + "," + std::to_string(a.block[1]) + "," + std::to_string(a.block[2]) +
         ")>>>";
  else if (a.bytes)
    s += " of " + std::to_string(a.bytes) + " bytes";
  return s;
}

// A launch's records against the graph: used, partial (some of the graph's
// records missing, none extra) or skipped (records the graph does not
// have), with why.
void check_launch(Launch& l, const std::vector<Activity>& acts, const std::vector<uint32_t>& rec_class,
                  const Classes& c, const Trace& trace, bool at_edge) {
  const size_t C = c.coarse_nodes.size();
  std::vector<uint32_t> coarse_count(C, 0);
  l.fine.assign(C, 1);
  std::string absent;
  size_t extra = 0, matched = 0, missing = 0, had = 0;
  for (uint32_t rec : l.records) {
    const uint32_t cc = rec_class[rec];
    if (cc == kNested || cc == kIgnored) continue;
    ++had;
    if (cc == kAbsent) {
      ++extra;
      if (absent.empty()) absent = describe_record(acts[rec], trace);
      continue;
    }
    ++coarse_count[cc];
    if (!geometry_key(acts[rec])) l.fine[cc] = 0;
  }
  for (size_t cc = 0; cc < C; ++cc) l.fine[cc] = l.fine[cc] && c.coarse_known[cc];
  // Counts per class in use: fine where this launch can, else coarse.
  std::vector<uint32_t> fine_count(c.fine_nodes.size(), 0);
  for (uint32_t rec : l.records) {
    const uint32_t cc = rec_class[rec];
    if (cc >= C || !l.fine[cc]) continue;
    auto it = c.fine_id.find(c.fine_key(cc, geometry_key(acts[rec])));
    if (it == c.fine_id.end()) {
      ++extra;
      --coarse_count[cc];
      if (absent.empty()) absent = describe_record(acts[rec], trace);
      continue;
    }
    ++fine_count[it->second];
  }
  std::string surplus;
  auto compare = [&](uint32_t have, size_t want, const std::string& label) {
    if (have > want) {
      extra += have - want;
      if (surplus.empty())
        surplus = std::to_string(have) + " records of " + label + ", the graph " + std::to_string(want);
    } else {
      missing += want - have;
    }
    matched += std::min<size_t>(have, want);
  };
  for (size_t cc = 0; cc < C; ++cc) {
    if (!l.fine[cc]) {
      compare(coarse_count[cc], c.coarse_nodes[cc].size(), c.coarse_label[cc]);
      continue;
    }
    std::unordered_set<uint32_t> seen;
    for (uint32_t v : c.coarse_nodes[cc]) {
      const uint32_t f = c.fine_of[v];
      if (seen.insert(f).second) compare(fine_count[f], c.fine_nodes[f].size(), c.coarse_label[cc] + " (one geometry)");
    }
  }
  if (extra) {
    l.status = LaunchUse::Status::skipped;
    l.why = "launch " + std::to_string(l.correlation) + " has " + plural(had, "record", "records") + ", the graph " +
            std::to_string(c.producing) + "; " +
            (!absent.empty() ? "first absent from the graph: " + absent : "it has " + surplus);
  } else if (missing) {
    l.status = LaunchUse::Status::partial;
    l.why = std::to_string(matched) + " of the graph's " + plural(c.producing, "record", "records") +
            (at_edge ? " (cut by the profiler's window)" : " (records missing)");
  } else {
    l.status = LaunchUse::Status::used;
  }
}

}  // namespace

uint64_t join_detail::geometry_key(const Activity& a) {
  if (a.kind == ActivityKind::kernel && a.has_geometry())
    return (mix(mix(mix(a.grid[0]) ^ a.grid[1]) ^ (uint64_t(a.grid[2]) << 32)) ^
            mix(a.block[0] | uint64_t(a.block[1]) << 21 | uint64_t(a.block[2]) << 42)) |
           1;
  if ((a.kind == ActivityKind::memcpy || a.kind == ActivityKind::memset) && a.bytes) return mix(a.bytes) | 1;
  return 0;
}

TraceJoin join_by_launches(const GraphDocument& doc, const Trace& trace, const JoinOptions& opt) {
  const std::vector<Activity>& acts = trace.activities;
  const size_t N = acts.size();
  const Graph& g = doc.root;
  const size_t n = g.nodes.size();
  TraceJoin j;
  j.by_ids = false;
  j.exec_graph_id = doc.exec_graph_id.value_or(0);
  j.node_of.assign(N, kNoNode);
  j.replay_of.assign(N, kNoNode);
  j.how.assign(n, std::nullopt);

  const std::vector<uint32_t> order = topological_order(g, "nodes", "graph");
  KernelNames names;
  const Classes c = classify(doc, names, order);
  const RecordClasses class_of(trace, c, names);

  // The launches: device records of one correlation id, where the trace's
  // API calls say it was a graph launch (when it has them).
  std::unordered_set<uint32_t> graph_launches;
  for (const GraphLaunch& l : trace.launches) graph_launches.insert(l.correlation);
  std::unordered_set<uint32_t> wanted(opt.launches.begin(), opt.launches.end());
  std::unordered_map<uint32_t, uint32_t> launch_of;
  std::vector<Launch> launches;
  std::vector<uint32_t> rec_class(N, kIgnored);
  uint32_t last_corr = 0, last_launch = kNone;
  for (size_t k = 0; k < N; ++k) {
    const Activity& a = acts[k];
    const uint32_t cc = class_of(a);
    rec_class[k] = cc;
    if (cc == kIgnored || a.correlation == 0 || (!graph_launches.empty() && !graph_launches.count(a.correlation))) {
      ++j.other_records;
      continue;
    }
    if (last_launch == kNone || a.correlation != last_corr) {
      auto [it, added] = launch_of.emplace(a.correlation, uint32_t(launches.size()));
      if (added) launches.emplace_back().correlation = a.correlation;
      last_corr = a.correlation, last_launch = it->second;
    }
    launches[last_launch].records.push_back(uint32_t(k));
  }
  for (uint32_t w : opt.launches)
    if (!launch_of.count(w))
      throw_input("trace", "no device records of a graph launch with correlation id " + std::to_string(w));
  if (launches.empty())
    throw_input("trace", graph_launches.empty()
                             ? "no record has a graph id or a correlation id: nothing to join"
                             : "no device record belongs to a graph launch (" +
                                   plural(graph_launches.size(), "graph launch call", "graph launch calls") +
                                   " in the trace)");
  auto by_start = [&](uint32_t x, uint32_t y) {
    return acts[x].start_ns != acts[y].start_ns ? acts[x].start_ns < acts[y].start_ns : acts[x].end_ns < acts[y].end_ns;
  };
  for (Launch& l : launches)
    if (!std::is_sorted(l.records.begin(), l.records.end(), by_start))
      std::stable_sort(l.records.begin(), l.records.end(), by_start);
  std::stable_sort(launches.begin(), launches.end(),
                   [&](const Launch& x, const Launch& y) { return acts[x.records[0]].start_ns < acts[y.records[0]].start_ns; });

  const unsigned workers = worker_count(N, 50000);
  parallel_slices(launches.size(), workers, [&](unsigned, size_t b, size_t e) {
    for (size_t k = b; k < e; ++k) {
      Launch& l = launches[k];
      if (!wanted.empty() && !wanted.count(l.correlation)) {
        l.status = LaunchUse::Status::skipped;
        l.why = "not asked for";
        continue;
      }
      check_launch(l, acts, rec_class, c, trace, k == 0 || k + 1 == launches.size());
    }
  });
  uint32_t replays = 0;
  for (Launch& l : launches)
    if (l.status == LaunchUse::Status::used) l.replay = replays++;
  if (replays == 0) {
    // The launch most like the graph says what differs.
    const Launch* best = nullptr;
    auto distance = [&](const Launch& l) {
      const size_t have = l.records.size();
      return have > c.producing ? have - c.producing : c.producing - have;
    };
    for (const Launch& l : launches)
      if (l.why != "not asked for" && (!best || distance(l) < distance(*best))) best = &l;
    if (!best) best = &launches[0];
    throw_input("trace", "no graph launch of the trace matches the graph (" +
                             plural(launches.size(), "launch", "launches") + "); " +
                             (best->status == LaunchUse::Status::partial
                                  ? "launch " + std::to_string(best->correlation) + " has " + best->why
                                  : best->why));
  }

  // Each used launch's records to nodes: the first alone, whose streams
  // per node then guide the others (in parallel).
  std::vector<std::vector<uint8_t>> how_of(launches.size());
  Adjacency adj(g);
  {
    std::vector<uint64_t> group(n, 0);
    for (uint32_t v = 0; v < n; ++v) group[v] = mix(c.up[v] ^ mix(c.down[v] + c.coarse_of[v]));
    adj.share(group, c.has_twin);
  }
  size_t first = 0;
  while (launches[first].status != LaunchUse::Status::used) ++first;
  auto assign = [&](size_t k, const std::vector<uint32_t>* hints) {
    const Launch& l = launches[k];
    how_of[k].assign(n, 0);
    assign_launch(l, doc, adj, acts, rec_class, c, order, opt.slack_ns, hints, j.node_of, how_of[k]);
    for (uint32_t rec : l.records) j.replay_of[rec] = l.replay;
  };
  assign(first, nullptr);
  std::vector<uint32_t> stream_of(n, kNone);
  for (uint32_t rec : launches[first].records)
    if (j.node_of[rec] != kNoNode) stream_of[j.node_of[rec]] = acts[rec].stream;
  parallel_slices(launches.size(), workers, [&](unsigned, size_t b, size_t e) {
    for (size_t k = b; k < e; ++k)
      if (k != first && launches[k].status == LaunchUse::Status::used) assign(k, &stream_of);
  });
  std::vector<uint8_t> worst(n, 0);
  std::vector<char> seen(n, 0);
  for (size_t k = 0; k < launches.size(); ++k) {
    const Launch& l = launches[k];
    if (l.status != LaunchUse::Status::used) {
      j.other_records += l.records.size();
      continue;
    }
    for (uint32_t rec : l.records) {
      const uint32_t v = j.node_of[rec];
      if (v == kNoNode) {
        ++j.unmatched_records;
        continue;
      }
      seen[v] = 1;
    }
    for (uint32_t v = 0; v < n; ++v) worst[v] = std::max(worst[v], how_of[k][v]);
  }
  for (uint32_t v = 0; v < n; ++v)
    if (seen[v] || worst[v] == uint8_t(Assignment::ambiguous)) {
      j.how[v] = Assignment(worst[v]);
      ++j.assigned[worst[v]];
    }
  j.replays = replays;
  for (const Launch& l : launches) {
    LaunchUse u;
    u.correlation = l.correlation;
    u.start_ns = acts[l.records[0]].start_ns;
    u.records = uint32_t(l.records.size());
    u.status = l.status;
    u.why = l.why;
    j.launches.push_back(std::move(u));
  }
  return j;
}

}  // namespace graphscope
