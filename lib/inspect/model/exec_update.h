// Exec graphs changed after instantiation: cudaGraphExecUpdate gives an exec
// graph the parameters of another graph of the same topology, and per-node
// setters (cudaGraphExecKernelNodeSetParams, ...MemsetNodeSetParams,
// cudaGraphNodeSetEnabled, ...) change one node. XLA's command buffers do
// this whenever buffer addresses move. The injection library reads each
// call's arguments (lib/capture/exec_update.h); what the change does to the
// document of the version before is decided here, without CUDA, so that it
// is unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph.h"

namespace graphscope {

/// One per-node setter call, as its arguments say.
struct NodeUpdate {
  std::string call;      // the driver call, e.g. "cuGraphExecKernelNodeSetParams"
  uint64_t node = 0;     // the node's handle in the graph the exec was instantiated from
  NodeType type = NodeType::unknown;  // what the call sets; unknown: cannot be read (not_recorded says why)
  std::string why_not;   // type == unknown: why the change cannot be recorded
  // kernel: the mangled name ("" when it could not be read) and its geometry
  std::string kernel_name, demangled;
  std::optional<KernelInfo> kernel;
  std::optional<MemsetInfo> memset;
  std::optional<MemcpyInfo> memcpy;
  std::optional<HostInfo> host;
  uint64_t event_ptr = 0;           // event record / wait
  std::optional<bool> enabled;      // cudaGraphNodeSetEnabled
};

enum class UpdateEffect {
  changed,       // the document now shows the change
  unchanged,     // nothing the document records changed (kernel arguments, say)
  not_recorded,  // the change happened but the document cannot show it (why in *why)
};

/// Applies u to node `index` of doc's root graph. A node of another type
/// than the call sets, or an index out of range, is not_recorded.
UpdateEffect apply_node_update(GraphDocument& doc, uint32_t index, const NodeUpdate& u, std::string* why);

/// After cudaGraphExecUpdate: `updated` is the walk of the graph the exec
/// now takes its parameters from; `instantiated` the version before. The
/// exec graph keeps the nodes it was instantiated with, and the GPU's
/// records name those (measured on the H100: kernel records' graph node ids
/// stay the instantiated graph's), so each node takes the ids of the node at
/// the same index of `instantiated` when both graphs have the same node
/// types in the same order. False (ids left as walked, *why set) otherwise.
bool carry_exec_node_ids(const GraphDocument& instantiated, GraphDocument& updated, std::string* why);

/// Whether two versions differ in anything a document records (node types,
/// edges, kernels and their geometry, copies, memsets, events, host
/// functions, enabled state), ignoring ids, handles and origins.
bool same_recorded_content(const GraphDocument& a, const GraphDocument& b);

}  // namespace graphscope
