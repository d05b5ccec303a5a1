// The join of a trace to a graph, computed once: which records belong to
// the graph, which node each record is, and which replay (graph launch) it
// ran in. The profile analysis and the Chrome trace writer both read this
// result; neither matches records itself.
//
// Two ways, chosen by the trace:
// - By ids, when records carry graph ids (graphscope's own traces, CUPTI,
//   newer PyTorch profilers): the low 32 bits of a record's graph node id
//   are the node's local id, and its exec graph is "graph id" when present,
//   else the high 32 bits (SPEC.md). Replays are the records of one graph
//   launch (one correlation id); without correlation ids, a node's k-th
//   record belongs to replay k.
// - By launches, when no record has a graph id (PyTorch 2.11's profiler):
//   the records of one graph launch share its correlation id; inside a
//   launch, records go to nodes of the same kind, kernel name (mangled or
//   demangled), grid, block and byte count, in the graph's partial order
//   (join_launch.cc). Each node says how its records were assigned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../model/graph.h"
#include "../model/trace.h"

namespace graphscope {

inline constexpr uint32_t kNoNode = UINT32_MAX;

struct JoinOptions {
  /// Which exec graph's records; default: the document's when the trace has
  /// it, else the trace's only one.
  std::optional<uint32_t> exec_graph_id;
  /// Which graph launches, by correlation id; empty: every launch whose
  /// records match the graph.
  std::vector<uint32_t> launches;
  /// Without ids: how far a record may start before its predecessors'
  /// records end (timestamps of one clock; programmatic edges are exempt).
  uint64_t slack_ns = 100;
};

/// How a node's records were assigned to it (the worst over the replays).
enum class Assignment : uint8_t {
  id,               // by graph node id
  unique,           // the only node of its kind, name and geometry
  order,            // several such nodes; the graph's order decides
  interchangeable,  // an equivalent node (same kind, name and geometry, with
                    // equivalent predecessors and successors: the same
                    // branch repeated) could have had the record: no verdict
                    // changes
  ambiguous,        // another assignment fits the timings as well, and it
                    // could change a verdict
};
inline constexpr int kAssignmentCount = 5;
std::string_view to_string(Assignment a);
bool parse_assignment(std::string_view s, Assignment* out);

/// One graph launch of the trace (records of one correlation id), when
/// joined without ids.
struct LaunchUse {
  enum class Status : uint8_t { used, partial, skipped };
  uint32_t correlation = 0;
  uint64_t start_ns = 0;  // its first record's start
  uint32_t records = 0;
  Status status = Status::skipped;
  std::string why;  // partial and skipped: why not used
};
std::string_view to_string(LaunchUse::Status s);

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

  /// False: joined by launches (the trace has no graph ids).
  bool by_ids = true;
  /// Per root node: how its records were assigned; none for nodes with no
  /// record.
  std::vector<std::optional<Assignment>> how;
  /// Nodes per Assignment.
  size_t assigned[kAssignmentCount] = {0, 0, 0, 0, 0};
  /// Without ids: every launch seen, in time order.
  std::vector<LaunchUse> launches;
};

/// The exec graph of an activity: its graph id, else the high 32 bits of
/// its graph node id.
std::optional<uint32_t> exec_graph_of(const Activity& a);

/// Joins the trace to doc's root graph. Throws Error(bad_input) when no
/// record belongs to a graph replay, or none to the chosen exec graph, or
/// (without ids) no launch matches the graph (naming the first differences),
/// and Error(usage) when the trace has several exec graphs and neither the
/// options nor the document say which (naming the ones it has).
TraceJoin join_trace(const GraphDocument& doc, const Trace& trace, const JoinOptions& options = {});

/// The join without ids (used by join_trace when no record has a graph id).
TraceJoin join_by_launches(const GraphDocument& doc, const Trace& trace, const JoinOptions& options);

}  // namespace graphscope
