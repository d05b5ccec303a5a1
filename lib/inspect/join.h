// The join of a trace to a graph, computed once: which exec graph's records
// belong to the graph, which node each record is, and which replay (graph
// launch) it ran in. The profile analysis and the Chrome trace writer both
// read this result; neither matches records itself.
//
// Records are assigned to nodes by their graph node id (the low 32 bits are
// the node's local id, SPEC.md). Replays are the records of one graph launch
// (one correlation id); without correlation ids, a node's k-th record
// belongs to replay k.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph.h"
#include "trace.h"

namespace graphscope {

inline constexpr uint32_t kNoNode = UINT32_MAX;

struct JoinOptions {
  /// Which exec graph's records; default: the document's when the trace has
  /// it, else the trace's only one.
  std::optional<uint32_t> exec_graph_id;
};

struct TraceJoin {
  uint32_t exec_graph_id = 0;
  /// Per activity: the root node it is, or kNoNode (other graphs' records,
  /// and the exec graph's records whose id matches no node).
  std::vector<uint32_t> node_of;
  /// Per activity of the exec graph: its replay, numbered in order of the
  /// replays' first starts; kNoNode for every other activity.
  std::vector<uint32_t> replay_of;
  size_t replays = 0;
  size_t other_records = 0;      // records of other graphs or outside graphs
  size_t unmatched_records = 0;  // the exec graph's records that match no node
};

/// The exec graph of an activity: its graph id, else the high 32 bits of
/// its graph node id.
std::optional<uint32_t> exec_graph_of(const Activity& a);

/// Joins the trace to doc's root graph. Throws Error(bad_input) when no
/// record belongs to a graph replay, or none to the chosen exec graph, and
/// Error(usage) when the trace has several exec graphs and neither the
/// options nor the document say which (naming the ones it has).
TraceJoin join_trace(const GraphDocument& doc, const Trace& trace, const JoinOptions& options = {});

}  // namespace graphscope
