// Folding: structure that repeats in a graph (decoder layers, unrolled
// loops, per-microbatch copies, branches side by side), found from the graph
// alone, so that a cudaGraphDebugDotPrint file or an old document folds too.
// A view: the document keeps every node; the summary, the JSON's "repeats"
// section and the folded pictures read this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../model/graph.h"

namespace graphscope {

/// One repeated block: `count` copies of `size` nodes each. copies[c][j] is
/// the node of copy c in the place of copies[0][j]; copies are in order
/// (topological order of their first nodes).
struct Repeat {
  uint32_t count = 0, size = 0;
  std::vector<std::vector<uint32_t>> copies;
  bool chained = false;  // each copy feeds the next (layers), else side by side (branches)
  std::string label;     // what the block does: its module's class, else its first and last nodes' names
  // From origins, when each copy lies in one module and the copies' modules
  // differ only by an index: the class ("LlamaDecoderLayer"), the names
  // ("model.layers.{0..7}") and each copy's module ("model.layers.3").
  std::string module_type, module;
  std::vector<std::string> copy_module;
};

/// A copy of a repeat's block that differs from the others: the nodes
/// right after its last copy (or right before its first) look like one more
/// copy but are not one (a layer with an extra kernel, or one missing).
struct OddCopy {
  uint32_t repeat = 0;          // the repeat it would belong to
  bool before = false;          // before its first copy, else after its last
  std::vector<uint32_t> nodes;  // in order
  std::string difference;       // "+1 node (kernel X)", "-2 nodes (...)", "other kernels"
};

struct Folding {
  std::vector<Repeat> repeats;  // largest first
  std::vector<OddCopy> odd;     // copies that differ from their siblings
  /// Per root node: its repeat (index into repeats) or UINT32_MAX, its copy
  /// and its place in the copy.
  std::vector<uint32_t> repeat_of, copy_of, place_of;
  size_t folded_nodes() const;  // nodes inside repeats
};

/// The repeats of the root graph: runs of consecutive copies of one block
/// in topological order, with the same node kinds, names and geometry in
/// each, and the same edges inside each copy (and from each copy to the
/// next, for chained ones). Greedy by nodes covered; at most one level.
Folding find_repeats(const Graph& g);

/// "4 x block of 44 nodes (rms_norm ... add) + 40 other nodes", and the
/// copies that differ; "" when nothing repeats.
std::string describe_folding(const Folding& f, size_t nodes);

}  // namespace graphscope
