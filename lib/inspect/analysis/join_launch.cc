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
#include "../core/parallel.h"
#include "../core/text.h"
#include "../model/topology.h"

namespace graphscope {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

uint64_t mix(uint64_t x) { return hash_mix(x); }

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

uint64_t geometry_key(const Activity& a) {
  if (a.kind == ActivityKind::kernel && a.has_geometry())
    return (mix(mix(mix(a.grid[0]) ^ a.grid[1]) ^ (uint64_t(a.grid[2]) << 32)) ^
            mix(a.block[0] | uint64_t(a.block[1]) << 21 | uint64_t(a.block[2]) << 42)) |
           1;
  if ((a.kind == ActivityKind::memcpy || a.kind == ActivityKind::memset) && a.bytes) return mix(a.bytes) | 1;
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

// The root graph's nodes by what a record can say about them.
struct Classes {
  // Coarse classes: kind and name (a kernel's) or direction (a copy's).
  // Fine classes: and geometry.
  std::unordered_map<uint64_t, uint32_t> coarse_id;  // coarse_key -> id
  std::vector<std::vector<uint32_t>> coarse_nodes;
  std::vector<char> coarse_known;  // every node of the class knows its geometry
  std::vector<std::string> coarse_label;
  std::unordered_map<uint64_t, uint32_t> fine_id;  // (coarse, geometry) hashed
  std::vector<std::vector<uint32_t>> fine_nodes;
  std::vector<uint32_t> coarse_of, fine_of;  // per root node; kNone for nodes without records
  std::vector<uint64_t> geometry;            // per root node
  std::vector<uint64_t> up, down;            // per root node: structure hashes
  std::vector<char> has_twin;                // another node of its class has its hashes
  std::unordered_set<uint64_t> nested;       // keys of nodes inside child graphs and bodies
  bool directions = true;                    // every memcpy node knows its direction
  size_t producing = 0;                      // root nodes that make records

  static uint64_t coarse_key(ActivityKind k, uint32_t name) { return uint64_t(k) << 32 | name; }
  uint64_t fine_key(uint32_t coarse, uint64_t g) const { return mix(coarse) ^ g; }
};

// The root graph's edges in flat arrays (a Node is large: walking them
// per record would miss the cache), each with its type.
struct Edge {
  uint32_t node;
  EdgeType type;
};
struct Adjacency {
  std::vector<uint32_t> pred_at, succ_at;  // n + 1 offsets
  std::vector<Edge> preds, succs;
  explicit Adjacency(const Graph& g) {
    const size_t n = g.nodes.size();
    pred_at.assign(n + 1, 0);
    succ_at.assign(n + 1, 0);
    for (const Node& x : g.nodes) {
      pred_at[x.index + 1] = uint32_t(x.dependencies.size());
      for (const auto& d : x.dependencies) ++succ_at[d.from + 1];
    }
    for (size_t v = 0; v < n; ++v) pred_at[v + 1] += pred_at[v], succ_at[v + 1] += succ_at[v];
    preds.resize(pred_at[n]);
    succs.resize(succ_at[n]);
    std::vector<uint32_t> fill(succ_at.begin(), succ_at.end() - 1);
    for (const Node& x : g.nodes) {
      uint32_t k = pred_at[x.index];
      for (const auto& d : x.dependencies) {
        preds[k++] = {d.from, d.type};
        succs[fill[d.from]++] = {x.index, d.type};
      }
    }
  }
  struct Range {
    const Edge* b;
    const Edge* e;
    const Edge* begin() const { return b; }
    const Edge* end() const { return e; }
    size_t size() const { return size_t(e - b); }
  };
  // Per edge: a twin of the node has the same neighbour on that side.
  std::vector<char> pred_shared, succ_shared;
  void share(const std::vector<uint64_t>& group, const std::vector<char>& has_twin) {
    std::unordered_map<uint64_t, uint32_t> count;
    auto key = [&](uint32_t v, uint32_t nb, uint64_t side) { return mix(group[v] ^ mix(uint64_t(nb) << 1 | side)); };
    const size_t n = pred_at.size() - 1;
    for (uint32_t v = 0; v < n; ++v) {
      if (!has_twin[v]) continue;
      for (size_t k = pred_at[v]; k < pred_at[v + 1]; ++k) ++count[key(v, preds[k].node, 0)];
      for (size_t k = succ_at[v]; k < succ_at[v + 1]; ++k) ++count[key(v, succs[k].node, 1)];
    }
    pred_shared.assign(preds.size(), 0);
    succ_shared.assign(succs.size(), 0);
    for (uint32_t v = 0; v < n; ++v) {
      if (!has_twin[v]) continue;
      for (size_t k = pred_at[v]; k < pred_at[v + 1]; ++k) pred_shared[k] = count[key(v, preds[k].node, 0)] > 1;
      for (size_t k = succ_at[v]; k < succ_at[v + 1]; ++k) succ_shared[k] = count[key(v, succs[k].node, 1)] > 1;
    }
  }
  Range in(uint32_t v) const { return {preds.data() + pred_at[v], preds.data() + pred_at[v + 1]}; }
  Range out(uint32_t v) const { return {succs.data() + succ_at[v], succs.data() + succ_at[v + 1]}; }
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

// One launch's records and what became of them.
struct Launch {
  uint32_t correlation = 0;
  std::vector<uint32_t> records;  // activity indices, by start
  LaunchUse::Status status = LaunchUse::Status::skipped;
  std::string why;
  uint32_t replay = kNone;
  std::vector<char> fine;  // per coarse class: matched by geometry in this launch
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

}  // namespace

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
