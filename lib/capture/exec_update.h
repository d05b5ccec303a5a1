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

}  // namespace graphscope::capture
