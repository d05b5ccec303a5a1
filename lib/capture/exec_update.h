// Reading the driver calls that change an exec graph after instantiation
// (cuGraphExecUpdate and the per-node setters) from CUPTI's callbacks at
// their exit: which exec graph, and what changed, as lib/inspect's
// NodeUpdate (lib/inspect/model/exec_update.h decides what that does to a
// document). The runtime's cudaGraphExec* calls reach the driver's, so the
// driver domain sees both.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <optional>
#include <string>
#include <vector>

#include "inspect/model/exec_update.h"

namespace graphscope::capture {

/// The driver API callbacks to enable.
const std::vector<CUpti_CallbackId>& exec_change_callbacks();

/// What one such call did.
struct ExecChange {
  CUgraphExec exec = nullptr;
  CUgraph whole = nullptr;         // cuGraphExecUpdate: the graph whose parameters the exec now runs
  std::optional<NodeUpdate> node;  // a per-node setter
};

/// The change a callback reports: nullopt for other callbacks, for the
/// call's entry, and for calls that failed (they change nothing).
std::optional<ExecChange> exec_change(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);

/// A call that changes an exec graph and failed: the driver's error, and
/// for cuGraphExecUpdate its result and the nodes it names (errorNode, of
/// the offered graph; errorFromNode, of the exec graph). A setter's node is
/// from_node.
struct ExecFailure {
  CUgraphExec exec = nullptr;
  CUgraph offered = nullptr;
  std::string call;
  CUresult error = CUDA_SUCCESS;
  bool has_result = false;
  CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  CUgraphNode node = nullptr, from_node = nullptr;
};

/// The failure a callback reports: nullopt for other callbacks, entries,
/// and calls that succeeded.
std::optional<ExecFailure> exec_failure(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);

/// "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED"; null for a value this
/// version does not know.
const char* update_result_name(CUgraphExecUpdateResult r);

}  // namespace graphscope::capture
