// `graphscope diff A B`: the structural difference between two graph
// documents of any accepted format. Nodes are matched as a multiset by what
// they do (node type and kernel name, conditional type, ...), never by ids or
// handles, which change with every capture; among nodes of the same kind the
// match prefers the same position and the same neighbours. The result says
// which nodes only one side has (grouped by kind, with counts), which matched
// nodes launch or copy differently, which edges between matched nodes appear,
// disappear or change type, and how depth and width moved. Nested child
// graphs and conditional bodies of matched nodes are compared the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../model/graph.h"

namespace graphscope {

struct Folding;

struct DiffOptions {
  bool ignore_geometry = false;  // grid, block, cluster and shared memory are not compared
  bool ignore_sizes = false;     // memcpy, memset and allocation sizes and memset values are not compared
};

/// What a node is for matching: its type plus the one name that says what it
/// runs (the mangled kernel name, the conditional type, the spelling of an
/// unknown type). Nodes of different kinds never match.
struct NodeKind {
  NodeType type = NodeType::unknown;
  std::string name;
  friend bool operator==(const NodeKind& a, const NodeKind& b) {
    return a.type == b.type && a.name == b.name;
  }
  friend bool operator!=(const NodeKind& a, const NodeKind& b) { return !(a == b); }
};

/// Nodes of one kind that only one side has: indices into that side's graph.
struct NodeGroup {
  NodeKind kind;
  std::vector<uint32_t> nodes;
  size_t nested_nodes = 0;  // nodes inside their child graphs and bodies
  std::string origin;       // what the nodes share of their origins (origin_view.h's shared_origin), or ""
};

/// One attribute of a matched pair that differs ("grid", "bytes", ...), as
/// text for people and as JSON values.
struct FieldChange {
  std::string field;
  std::string a, b;            // "256x1x1", "HtoD", "16384"
  std::string a_json, b_json;  // "[256, 1, 1]", "\"HtoD\"", "16384"
  friend bool operator==(const FieldChange& x, const FieldChange& y) {
    return x.field == y.field && x.a_json == y.a_json && x.b_json == y.b_json;
  }
};

/// Matched pairs of one kind that changed in exactly the same way.
struct ChangeGroup {
  NodeKind kind;
  std::vector<FieldChange> changes;
  std::vector<std::pair<uint32_t, uint32_t>> nodes;  // (index in A, index in B)
  std::string origin;                                 // as NodeGroup's, of the nodes in A
};

/// Edges between matched nodes that only one side has, or whose type changed,
/// grouped by the kinds of their ends and their edge data.
struct EdgeGroup {
  NodeKind from, to;
  // The edge data in A and in B, spelled "default", "programmatic (ports
  // 1->0)"; the other side's is empty for an edge only one side has.
  std::string a_edge, b_edge;
  // (from, to) indices in A for removed and retyped edges, in B for added ones.
  std::vector<std::pair<uint32_t, uint32_t>> edges;
};

struct NestedDiff;

/// The difference of one graph pair: the root graphs, or two nested bodies of
/// matched nodes. Counts are of this graph's own nodes and edges.
struct StructureDiff {
  size_t a_nodes = 0, b_nodes = 0, matched_nodes = 0;
  size_t a_edges = 0, b_edges = 0, matched_edges = 0;
  size_t a_depth = 0, b_depth = 0;  // nodes on the longest path
  size_t a_width = 0, b_width = 0;  // most nodes on one level
  size_t a_width_level = 0, b_width_level = 0;
  std::vector<NodeGroup> removed, added;  // only in A, only in B; most nodes first
  std::vector<ChangeGroup> changed;
  std::vector<EdgeGroup> removed_edges, added_edges, retyped_edges;
  size_t removed_node_edges = 0, added_node_edges = 0;  // edges touching an unmatched node
  // Edges between matched nodes that the other side runs through nodes only
  // it has, neither removed nor added: (from, to) in A for the edges of A
  // that B runs through added nodes (the nodes were inserted into them), in
  // B for the edges of B that A ran through removed nodes (what a removal
  // leaves behind).
  std::vector<std::pair<uint32_t, uint32_t>> edges_through_added, edges_through_removed;
  size_t geometry_unknown = 0;     // matched kernel pairs whose geometry one side does not record
  // Kernel arguments: compared where both sides record them; an address
  // (an 8-byte word of 4 GiB or more, alone or 8-byte aligned inside a
  // larger argument) that moved is counted here, not a change (addresses
  // move from run to run and from capture to capture). All depths.
  size_t moved_addresses = 0, moved_address_nodes = 0;
  size_t args_unknown = 0;  // matched kernel pairs that one side records without arguments
  size_t nested_compared = 0;      // body pairs compared below this graph (all depths)
  std::vector<NestedDiff> nested;  // the body pairs that differ, in A's node order
  // The match: for every node of A the index of its partner in B, or -1.
  std::vector<int64_t> a_to_b;

  /// Nothing differs here or in any nested body (depth and width follow).
  bool same() const;
};

struct NestedDiff {
  NodeKind kind;                    // child_graph, or conditional and its type
  uint32_t a_node = 0, b_node = 0;  // the matched child graph or conditional nodes
  uint32_t body = 0;                // which of their bodies
  StructureDiff diff;
};

/// What the report says of each document as a whole.
struct DocumentFacts {
  std::string source_format, name;
  size_t nodes = 0, edges = 0, nested_graphs = 0;  // nested bodies included
};

struct GraphDiff {
  DocumentFacts a, b;
  DiffOptions options;
  bool edge_types_compared = true;  // false when one side cannot record them
  std::vector<std::string> notes;   // what could not be compared, and why
  /// Where the root graph's differences lie, when that is in one copy of a
  /// repeated block (fold.h) of a side: "in B, ... the copy that differs".
  std::vector<std::string> where;
  StructureDiff root;
  bool same() const { return root.same(); }
};

/// Fills d.where from the documents' repeats (diff_graphs calls it):
/// fold_a and fold_b when the command found them already (fold.h), else
/// found here for a side with differences.
void locate_in_repeats(const GraphDocument& a, const GraphDocument& b, GraphDiff& d,
                       const Folding* fold_a = nullptr, const Folding* fold_b = nullptr);

/// Compares two graph documents (validated, as load_graph returns them);
/// fold_a and fold_b as locate_in_repeats takes them.
GraphDiff diff_graphs(const GraphDocument& a, const GraphDocument& b, const DiffOptions& options = {},
                      const Folding* fold_a = nullptr, const Folding* fold_b = nullptr);

}  // namespace graphscope
