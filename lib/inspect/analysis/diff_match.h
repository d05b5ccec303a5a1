// The matcher of `graphscope diff` (internal to lib/inspect): each side's
// nodes with their labels, levels and compact edge lists (Side), what both
// documents record (Context), and the match itself. How it matches is
// described at the top of diff.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "diff.h"

namespace graphscope::diff_match {

constexpr uint32_t kNone = UINT32_MAX;

uint64_t combine(uint64_t h, uint64_t v);
uint64_t hash_text(std::string_view s);
/// Edge type and ports packed into one number.
uint64_t edge_bits(const Dependency& d);
/// The name in a node's kind (NodeKind): a view into the node.
std::string_view kind_name(const Node& n);

struct KindKey {
  NodeType type;
  std::string_view name;
  bool operator==(const KindKey& o) const { return type == o.type && name == o.name; }
};
struct KindKeyHash {
  size_t operator()(const KindKey& k) const { return size_t(combine(hash_text(k.name), uint64_t(k.type))); }
};

// What can be compared between the two documents: decided once, from what
// each side's format records, so that both sides hash the same attributes.
struct Context {
  DiffOptions options;
  bool geometry = true;      // both sides record launch geometry
  bool cluster = true;       // both record cluster dimensions (absent means none)
  bool edge_types = true;    // both record edge types and ports
  bool host_symbols = true;  // both record host function symbols
  bool memset_shape = true;  // both record memset element size, width and height
  // Kinds by id; the keys view the documents' strings, which outlive this.
  std::unordered_map<KindKey, uint32_t, KindKeyHash> kind_ids;
  std::vector<NodeKind> kinds;

  uint32_t kind_id(const Node& n) {
    std::string_view name = kind_name(n);
    auto [it, fresh] = kind_ids.emplace(KindKey{n.type, name}, uint32_t(kinds.size()));
    if (fresh) kinds.push_back({n.type, std::string(name)});
    return it->second;
  }
};

// One side of a graph pair, with everything the matcher needs. The edges
// are copied into compact arrays once: the passes below then never touch
// the (large) Node objects.
struct Side {
  const Graph& g;
  explicit Side(const Graph& graph) : g(graph) {}
  size_t size() const { return g.nodes.size(); }
  std::vector<uint32_t> kind;
  std::vector<uint64_t> label;
  std::vector<uint32_t> level, rlevel;
  // Signatures, most specific first (see the top of the file): pos_label
  // always, the others only when pos_label leaves nodes unmatched.
  std::vector<uint64_t> pos_label, local2, local1, pos_kind, local_kind, kind_sig, type_sig;
  std::vector<uint32_t> partner;
  // Dependencies of node v: dep_from etc. [dep_start[v], dep_start[v + 1]),
  // sorted by upstream node; dep_pos is the position in v's dependencies.
  std::vector<uint32_t> dep_start, dep_from, dep_pos;
  std::vector<uint32_t> dep_bits;  // edge_bits() when edge types count, else 0
  // Dependents of node u: succ_to [succ_start[u], succ_start[u + 1]), with
  // the edge's bits.
  std::vector<uint32_t> succ_start, succ_to, succ_bits;
  size_t edges = 0;
  size_t depth = 0, width = 0, width_level = 0;
  // Per node, the copy of a repeated block (fold.h) it lies in, as
  // (repeat << 32 | copy), or kNoCopy; empty when not known. slide() reads it.
  std::vector<uint64_t> copy;
};

constexpr uint64_t kNoCopy = UINT64_MAX;

// One round of colour refinement: a node's colour with the multisets of its
// neighbours' colours (sums of mixed hashes are order-free), edge types
// included where both sides record them.

/// Fills a side's labels, levels, edge arrays and first signatures.
void prepare(Context& c, Side& s);
/// Pairs the nodes of a and b (Side::partner: the partner's index or kNone).
void match(Side& a, Side& b);
/// Moves each run of nodes that only one side has, where it lies on a
/// chain whose labels repeat around it, to the place where it is whole
/// copies of a repeated block of its side (Side::copy): two layers against
/// eight then read as six layers inserted, not as a run that starts inside
/// one layer and ends inside another. The counts per kind stay the same
/// (the run only slides along equal labels); without copies nothing moves.
void slide(Side& a, Side& b);
/// The position of edge u -> v among v's sorted dependencies, or kNone.
uint32_t find_edge(const Side& s, uint32_t u, uint32_t v);
/// The k-th sorted dependency of v, as the document has it.
const Dependency& edge_at(const Side& s, uint32_t v, uint32_t k);

}  // namespace graphscope::diff_match
