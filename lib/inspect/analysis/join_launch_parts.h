// The join without graph ids, in two files: join_launch.cc groups records
// by launch and classifies nodes and records; join_assign.cc assigns one
// launch's records to nodes in time. What they share. Private to
// lib/inspect/analysis.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../core/hash.h"
#include "../model/graph.h"
#include "../model/trace.h"
#include "join.h"

namespace graphscope::join_detail {

inline constexpr uint32_t kNone = UINT32_MAX;

inline uint64_t mix(uint64_t x) { return hash_mix(x); }

/// A record's geometry as the classes key it (join_launch.cc).
uint64_t geometry_key(const Activity& a);

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

// One launch's records and what became of them.
struct Launch {
  uint32_t correlation = 0;
  std::vector<uint32_t> records;  // activity indices, by start
  LaunchUse::Status status = LaunchUse::Status::skipped;
  std::string why;
  uint32_t replay = kNone;
  std::vector<char> fine;  // per coarse class: matched by geometry in this launch
};

/// Assigns one used launch's records to nodes (node_of) and says how each
/// node's was made (how).
void assign_launch(const Launch& l, const GraphDocument& doc, const Adjacency& adj, const std::vector<Activity>& acts,
                   const std::vector<uint32_t>& rec_class, const Classes& c, const std::vector<uint32_t>& order,
                   uint64_t slack, const std::vector<uint32_t>* hints, std::vector<uint32_t>& node_of,
                   std::vector<uint8_t>& how);

}  // namespace graphscope::join_detail
