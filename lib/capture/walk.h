// Walking a live CUDA graph into lib/inspect's model. Used by `graphscope
// capture` and, unchanged, by the injection library that attaches to
// unmodified applications: it needs nothing but a cudaGraph_t (and, once
// instantiated, its exec), and calls no CUDA API that would disturb the
// application (no synchronization, no allocation).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inspect/model/graph.h"
#include "walk_options.h"

namespace graphscope::capture {

/// Walks g (recursing into child graphs; conditional bodies per options)
/// into a document with template ids: tools_id = (template_graph_id << 32)
/// | local id, exec_graph_id null. Ids come from CUDA 13.1's calls, else
/// CUPTI, else (another tool holds CUPTI) cudaGraphDebugDotPrint, with a
/// warning in the document. Throws Error(device) on a CUDA error.
GraphDocument walk_graph(cudaGraph_t g, const WalkOptions& options = {});

/// A walk in two halves: query_graph asks the driver everything (and looks
/// up origins) while the graph exists, on the calling thread; build() then
/// makes the document from the answers alone, calling nothing of CUDA's,
/// on any thread (an attached graphscope makes it off the application's).
/// walk_graph is both at once.
class QueriedGraph {
 public:
  QueriedGraph();
  QueriedGraph(QueriedGraph&&) noexcept;
  QueriedGraph& operator=(QueriedGraph&&) noexcept;
  ~QueriedGraph();
  /// The root graph's nodes; with every child graph's (not conditional
  /// bodies, which only the built document has).
  size_t nodes() const;
  size_t nodes_with_bodies() const;
  bool has_conditional() const;
  /// The mangled names of the root graph's first `most` kernel nodes.
  std::vector<std::string> first_kernel_names(size_t most) const;
  /// The document (once: it takes the answers). phases: where the model's
  /// time goes (WalkPhases::fill), when set.
  GraphDocument build(WalkPhases* phases = nullptr) &&;

 private:
  friend QueriedGraph query_graph(cudaGraph_t g, const WalkOptions& options);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The first half of walk_graph (options as there; their origin_of,
/// root_handles and phases are used here only).
QueriedGraph query_graph(cudaGraph_t g, const WalkOptions& options = {});

/// The id of an instantiated graph: CUDA 13.1's cuGraphExecGetId when the
/// driver has it, else CUPTI's cuptiGetGraphExecId (the same number); none
/// on CUDA 13.0 while another tool holds CUPTI.
std::optional<uint32_t> exec_graph_id(cudaGraphExec_t exec);

/// Remaps the root graph's ids to the exec graph, as PyTorch's
/// get_graph_data does: graph_id = exec id, tools_id = (exec << 32) | local
/// id, which is what CUPTI's activity records carry. Nested bodies are
/// renumbered by instantiation with no API to say how: their tools_id stays
/// null (records of them must be reported as unmatched, never guessed).
void assign_exec_ids(GraphDocument& doc, uint32_t exec_id);

/// A kernel's argument layout: (offset, size) of each argument, as the
/// driver gives it (cuFuncGetParamInfo, cuKernelGetParamInfo), kept for the
/// process by its function or kernel handle. Null when the driver has no
/// such call or refused it.
using ParamLayout = std::vector<std::pair<uint32_t, uint32_t>>;
const ParamLayout* param_layout(CUfunction f, CUkernel k);
/// A launch's argument buffer laid out as l says, from its kernelParams (a
/// pointer per argument) or its extra (CU_LAUNCH_PARAM_BUFFER_POINTER);
/// false when neither holds them.
bool read_arguments(const ParamLayout& l, void** params, void** extra, std::string& out);
/// The arguments of such a buffer, their values as KernelArg writes them
/// and their bytes (raw).
std::vector<KernelArg> kernel_args(const ParamLayout& l, const std::string& buf);

/// The model's type of a driver node type.
NodeType node_type_of(CUgraphNodeType t);

/// 'D' for device or managed memory, 'H' otherwise (host, unknown, null):
/// a copy's side where its kind does not say.
char pointer_side(const void* p);

}  // namespace graphscope::capture
