// The human summary of `graphscope dump FILE`: counts by node type, edges,
// depth (longest path), widest level, top kernels by count.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../model/graph.h"

namespace graphscope {

struct Folding;

struct GraphSummary {
  size_t nodes = 0;         // all nodes, nested bodies included
  size_t top_nodes = 0;     // nodes of the root graph
  size_t edges = 0;         // all edges, nested bodies included
  size_t nested_graphs = 0; // child graph and conditional bodies
  size_t depth = 0;         // nodes on the longest path of the root graph
  size_t width = 0;         // most nodes on one level (level = longest path from a root)
  size_t width_level = 0;
  size_t roots = 0, leaves = 0;
  size_t collectives = 0;   // collective kernels (collective.h), nested bodies included
  std::vector<std::pair<std::string, size_t>> by_type;       // non-zero counts, fixed order
  std::vector<std::pair<std::string, size_t>> edge_types;    // non-default edge types
  std::vector<std::pair<std::string, size_t>> top_kernels;   // mangled name, count; most first
  // top_kernels' names as shown: KernelNamer (demangle.h) over every kernel
  // of the document, so that no two different kernels read the same.
  std::vector<std::string> top_kernel_names;
};

/// How wide the summary's kernel names are at most.
constexpr size_t kSummaryNameWidth = 60;

GraphSummary summarize(const GraphDocument& doc, size_t top = 10);

/// The text block printed by `graphscope dump FILE`, with what repeats in
/// the root graph: `folding` (find_repeats(doc.root), fold.h) when the
/// command has it already, else found here.
std::string format_summary(const GraphDocument& doc, const GraphSummary& s,
                           const std::string& origin, const Folding* folding = nullptr);

}  // namespace graphscope
