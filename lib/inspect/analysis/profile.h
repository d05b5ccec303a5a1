// Real versus fake dependencies (SPEC.md): joins a trace's activities to a
// graph's nodes by tools id, and for every node says which activity it
// observably waited for, whether the graph explains that ordering (real) or
// not (fake), and what it cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "account.h"
#include "findings.h"
#include "what_if.h"
#include "../model/graph.h"
#include "join.h"
#include "../model/lane.h"
#include "../model/trace.h"

namespace graphscope {

struct ProfileOptions {
  double threshold_us = 5.0;  // a node is delayed when delay exceeds this
  double tolerance_us = 2.0;  // how close an end must be to a start (or after ready) to count
  std::optional<uint32_t> exec_graph_id;  // which exec graph's records; default: the document's, else the only one
  std::vector<uint32_t> launches;         // which graph launches (correlation ids); default: all that match
};

/// The join's options (join.h) these profile options ask for.
JoinOptions join_options(const ProfileOptions& o);

enum class Verdict : uint8_t { none, real, fake };
std::string_view to_string(Verdict v);
/// Parses "none", "real" or "fake"; false for anything else.
bool parse_verdict(std::string_view s, Verdict* out);

struct NodeProfile {
  uint32_t index = 0;
  uint32_t replays = 0;  // replays in which the node had an activity
  // Medians over replays, microseconds from the replay's first activity.
  double start_us = 0, end_us = 0, ready_us = 0, delay_us = 0;
  std::optional<Lane> lane;
  std::optional<uint32_t> stream;
  std::optional<uint32_t> observed_dependency;  // node index
  std::string observed_other;  // name of an observed activity outside the graph
  Verdict verdict = Verdict::none;
  // Blocking: the node waited behind a fake dependency, by the makespan
  // account's rule (account.h, NodeWait), in the replay its delay is split
  // in (wait_replay: the account's for a node on its chain, else the
  // node's replay of median delay):
  // delayed past the threshold, its lane's (or, a copy, its copy engine's)
  // last activity before its start is no ancestor, ended more than the
  // tolerance after the node was ready, and nothing else ran on its lane
  // when it started. That activity is its blocker and observed dependency,
  // and fake_wait_us, from ready to the blocker's end, its cost: what the
  // account charges as a fake wait when the node is on the chain.
  bool blocking = false;
  // The blocker: a blocking node's; else, for a node delayed past the
  // threshold, the activity that ended last within the tolerance before its
  // start (its own lane preferred; SPEC.md's search), which only orders it.
  std::optional<uint32_t> blocker;  // node index
  std::string cause;                // "same channel", "copy engine", "same stream", "other"; empty without a blocker
  // With a blocker that does not block: other work was still running on the
  // node's own lane when it started, so the lane was not serializing it (a
  // dispatch delay: e.g. many branches launched one by one onto one
  // channel, overlapping).
  bool lane_busy = false;
  // The node's delay, split as the account splits it (NodeWait), in
  // wait_replay. A report read from JSON has no split (latency_us -1);
  // one of an older graphscope, no fake wait either: a blocking node's
  // fake_wait_us is then its delay.
  double fake_wait_us = 0;  // > 0 exactly when blocking
  double latency_us = -1, concurrent_us = 0, host_us = 0;
  std::optional<AccountCategory> wait;  // the largest part of its delay; none without a split
  uint32_t wait_replay = UINT32_MAX;    // the replay of the split; UINT32_MAX: none
  std::optional<Assignment> assignment;  // how its records were assigned (join.h)
  bool observed_unassigned = false;      // observed a record of the graph's launch that has no node
};

struct LaneUsage {
  Lane lane;
  uint32_t activities = 0;  // per replay, median
  double busy_us = 0;       // per replay, median
};

struct ProfileReport {
  uint32_t exec_graph_id = 0;
  uint32_t replays = 0;
  double threshold_us = 0, tolerance_us = 0;
  std::vector<NodeProfile> nodes;  // one per root-graph node, in index order
  // Totals.
  size_t real = 0, fake = 0, blocking = 0, none = 0;
  double time_lost_us = 0;  // the blocking nodes' fake waits, summed
  size_t lane_busy = 0;     // nodes with a fake blocker whose lane ran other work: dispatch, not blocking
  double makespan_us = 0;   // median over replays: first start to last end
  double critical_path_us = 0;  // longest path of the graph with measured durations
  std::vector<uint32_t> critical_path;
  size_t nodes_without_records = 0;  // host nodes, empty nodes, ...
  size_t unmatched_records = 0;      // records of the exec graph whose node id matches no node
  size_t other_records = 0;          // records of other graphs or outside graphs
  std::vector<LaneUsage> lanes;
  std::vector<uint32_t> streams;
  // The join: by graph ids, or (false) by launches, with how many nodes
  // were assigned each way and, by launches, every launch seen.
  bool by_ids = true;
  size_t assigned[kAssignmentCount] = {0, 0, 0, 0, 0};
  std::vector<LaunchUse> launches;
  // Where the makespan went (account.h).
  MakespanAccount account;
  // For the what-if model (simulate.h): per replay, each node's start and
  // end (us from the replay's first activity; start -1 without a record).
  // Every replay while nodes x replays stays within kReplayTimesLimit, else
  // only the replay of median makespan; empty for a report read from JSON.
  struct ReplayTimes {
    double makespan_us = 0;
    std::vector<float> start_us, end_us;
  };
  std::vector<ReplayTimes> replay_times;
  // Per node, the share of its device's SMs its kernel's grid holds
  // (sm_footprint, trace.h); empty when the trace has no SM counts.
  std::vector<float> sm_share;
  // What-if (simulate.h): the simulation made once by analyze_profile when
  // the account has replays, or the numbers a report read from JSON wrote
  // (fitted_us and replays_simulated absent in reports written before they
  // existed). Every output renders this one.
  std::optional<WhatIf> what_if;
  // What to try, from the account and the what-if (findings.h): made by
  // analyze_profile, or as a report read from JSON wrote them.
  std::vector<Finding> findings;
};
inline constexpr size_t kReplayTimesLimit = 500000;

/// Whether node i's verdict rests on an ambiguous assignment: its own
/// records', or its observed dependency's (join.h).
bool uncertain_verdict(const ProfileReport& r, uint32_t i);

/// Analyses the trace against the graph, joined by join_trace (join.h),
/// which throws Error(bad_input) when no record belongs to the graph (naming
/// the exec graph ids the trace has).
ProfileReport analyze_profile(const GraphDocument& doc, const Trace& trace, const ProfileOptions& options);

/// The same on a join already made (the trace writer reads the same join).
ProfileReport analyze_profile(const GraphDocument& doc, const Trace& trace, const TraceJoin& join,
                              const ProfileOptions& options);

/// join_trace, then analyze_profile on that join (kept in `join` for the
/// trace writer and the HTML report), as the commands do: an error about the
/// trace as a whole (no record of this graph) names it trace_name, the file
/// the user gave.
ProfileReport profile_trace(const GraphDocument& doc, const Trace& trace, const std::string& trace_name,
                            const ProfileOptions& options, TraceJoin& join);

/// A report read back: the report itself and what it says of the graph it
/// was made of.
struct ProfileDocument {
  ProfileReport report;
  std::optional<uint32_t> template_graph_id;
  std::string name;  // the graph's name, when it had one
  struct NodeIdentity {
    std::optional<uint64_t> tools_id;
    std::string kernel_name;  // mangled; empty for other nodes
    std::string node_type;    // "kernel", "memcpy", ... ("" when the report does not say)
  };
  std::vector<NodeIdentity> nodes;  // one per report node
};

}  // namespace graphscope
