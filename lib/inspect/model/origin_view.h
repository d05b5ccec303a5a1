// Reading origins (graph.h's Origin) for people: which part of the model a
// node belongs to, how many nodes carry which kind of origin, and nodes (or
// their time) summed by module. Used by the summary, the profile report,
// the diff and the pictures.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "graph.h"

namespace graphscope {

/// The module a node is counted under: the outermost module on its stack
/// whose name has an index ("model.layers.3" -> "model.layers.*"), else the
/// one two levels in ("model.norm", "lm_head"); "" without modules.
std::string module_group(const Origin& o);

struct OriginCounts {
  size_t nodes = 0, with_origin = 0, with_module = 0, with_python = 0, with_nvtx = 0, with_native = 0;
  size_t kernels = 0, kernels_with_module = 0;
};
/// Counts over the root graph's nodes.
OriginCounts count_origins(const Graph& g);

struct ModuleShare {
  std::string group;           // module_group(), or the NVTX ranges' group
  std::string type;            // its class, when all agree
  size_t instances = 0;        // distinct modules (8 layers) or ranges in the group
  bool none = false;           // the nodes without a module (or range)
  bool range = false;          // a group of NVTX ranges, not of modules
  size_t nodes = 0;
  double time_us = 0;          // summed over its nodes, when times were given
};
/// Root nodes summed by module_group(), largest first (by time when `time`
/// is given: one entry per node, negative for none), nodes without a module
/// last as "(no module)". When no node has a module (a native program that
/// annotates), by NVTX ranges instead: the ranges from the outermost down
/// to the first numbered one, numbers as "*" ("forward / layer *"), else
/// down to the second; nodes without ranges last as "(no NVTX range)".
std::vector<ModuleShare> by_module(const Graph& g, const std::vector<double>* time = nullptr);

/// What by_module() groups by: "module", "NVTX range", or "" (neither).
std::string group_kind(const Graph& g);

/// "model.layers.* (8 x LlamaDecoderLayer)", "lm_head (Linear)",
/// "forward / layer * (4 ranges)".
std::string describe_share(const ModuleShare& s);

/// The module nodes have in common, as a prefix ("model.layers.5.mlp"),
/// when at least one of them has a module; "" otherwise.
std::string common_module(const Graph& g, const std::vector<uint32_t>& nodes);

/// What nodes share of their origins, in one line for a list of nodes
/// (diff, ranks): the op and the module, "aten::gelu, model.layers.0.mlp.act_fn",
/// where a module index differs among them "*" ("model.layers.*.mlp.act_fn");
/// without either, the innermost Python frame ("ranks_app.py:40 in forward"),
/// else the NVTX ranges ("forward / layer 3"), else the native function.
/// "" when they share none of these, or a node has no origin.
std::string shared_origin(const Graph& g, const std::vector<uint32_t>& nodes);

/// "origins" and "by module" summary lines: "" when no node has an origin.
std::string format_origins(const Graph& g);

}  // namespace graphscope
