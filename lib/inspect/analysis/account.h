// Where a graph's makespan went (SPEC.md's trace terms): for one replay,
// every nanosecond of [graph start, graph end] in exactly one category,
// found by walking back from the activity that ended last along what bound
// each start, and the same for every replay, for medians and spread.
//
// The walk: the current node's activity is work (by node kind, and by
// module for the report). Before its start, what bound it:
//  - a fake dependency (fake_wait below): the node was delayed past the
//    threshold, and the activity that ended last on its own lane before it
//    started (within the tolerance; for a memcpy also the last copy of its
//    direction on any lane), not an ancestor in the graph, ended after the
//    node was ready (plus the tolerance), and nothing else of the replay
//    still ran on its lane when it started: the time from ready to that end
//    is a fake wait (by cause: same channel, copy engine, same stream, or
//    other work when the blocker is not of this replay), the rest up to the
//    start dependency latency;
//  - else its real predecessor that ended last (nodes without an activity,
//    host or empty, pass their own predecessors' time on): the gap after
//    it is dependency latency (launch and dispatch) up to the tolerance;
//    beyond it, the part covered by other activities of the same replay is
//    concurrent work (the GPU busy with the graph's other branches), the
//    rest unexplained;
// then the walk goes on from the real predecessor. Before a root node, the
// time from graph start is dependency latency (the launch). After the last
// node's end, records the join left without a node may run on: unexplained.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../model/graph.h"
#include "join.h"
#include "../model/trace.h"

namespace graphscope {

/// The categories, in report order.
enum class AccountCategory : uint8_t {
  kernel,              // work on the chain: kernel nodes
  memcpy,              // memcpy nodes
  memset,              // memset nodes
  host,                // host nodes
  other_work,          // other node kinds with a record
  latency,             // dependency latency: launch and dispatch after a predecessor ended
  fake_same_channel,   // waits behind fake dependencies, by cause
  fake_copy_engine,
  fake_same_stream,
  fake_other,          // behind work outside this replay (another graph, a previous replay, eager work)
  concurrent,          // the GPU busy with the same graph's other work
  unexplained,
};
inline constexpr size_t kAccountCategories = 12;
/// "kernel work", "dependency latency", "fake wait: same channel", ...
std::string_view to_string(AccountCategory c);
/// The JSON key of a category: "kernel", "latency", "fake_same_channel", ...
std::string_view account_key(AccountCategory c);
/// Parses a JSON key; false for anything else.
bool parse_account_key(std::string_view s, AccountCategory* out);
/// Whether the category is a fake wait.
bool is_fake_wait(AccountCategory c);

struct AccountPart {
  AccountCategory category = AccountCategory::unexplained;
  int64_t ns = 0;  // in the representative replay
  double median_us = 0, min_us = 0, max_us = 0;  // over all replays
};

struct NodeAccount {
  bool on_chain = false;  // the walk passed through it in the representative replay
  int64_t work_ns = 0;    // its activity's time counted as work
  int64_t wait_ns = 0;    // the time before its start counted to it
  AccountCategory wait = AccountCategory::latency;  // the largest part of that wait
};

struct ModuleTime {
  std::string module;  // module group (origin_view.h), "" without origins
  int64_t ns = 0;      // chain work in the representative replay
};

struct AccountSegment {
  AccountCategory category = AccountCategory::unexplained;
  int64_t start_ns = 0, end_ns = 0;  // on the trace's clock
  uint32_t node = UINT32_MAX;        // whose work or wait it is; none after the last node
};

/// How one node's delay (ready to start) splits by the walk's rule, in one
/// replay, whether or not the node is on the chain: what profile.cc's
/// per-node verdicts rest on, so that a node the walk charges a fake wait
/// to is blocking, with that wait as its cost.
struct NodeWait {
  uint32_t replay = UINT32_MAX;  // the replay it was split in; UINT32_MAX: none (no record)
  int64_t fake_ns = 0;           // behind a fake dependency: from ready to the blocker's end
  AccountCategory fake = AccountCategory::fake_other;  // its cause, when fake_ns > 0
  uint32_t blocker = UINT32_MAX;                        // that activity (trace index)
  int64_t latency_ns = 0, concurrent_ns = 0, host_ns = 0;  // the rest of the delay
  /// The category of its largest part; latency when it has none.
  AccountCategory largest() const;
};

struct MakespanAccount {
  uint32_t replay = 0;        // the representative replay: of median makespan
  int64_t makespan_ns = 0;    // its makespan: the parts add up to it exactly
  uint32_t replays = 0;
  std::vector<AccountPart> parts;     // one per category, in order
  std::vector<NodeAccount> nodes;     // per root node, in the representative replay
  std::vector<ModuleTime> modules;    // chain work by module, largest first (empty without origins)
  uint32_t chain_nodes = 0;           // nodes on the walked chain
  std::vector<AccountSegment> segments;  // the representative replay's, from its end back (not in JSON)
  // Per root node, its delay split by the same rule: a node on the chain
  // as the walk split it in the representative replay (what the parts
  // charge it), any other in the replay asked for (account_makespan's
  // wait_replays), else the representative. Not in JSON: the profile's
  // nodes carry it.
  std::vector<NodeWait> waits;
  int64_t part(AccountCategory c) const { return parts.empty() ? 0 : parts[size_t(c)].ns; }
};

/// The account of every replay of the join; the representative's in full.
/// Empty (replays 0) when the join has no replay. A fake wait needs a delay
/// past threshold_us and a blocker that ended more than tolerance_us after
/// the node was ready. wait_replays (per root node, a replay of the join;
/// UINT32_MAX or absent: the representative) says in which replay the
/// delay of each node off the chain is split into `waits`.
MakespanAccount account_makespan(const Graph& g, const Trace& trace, const TraceJoin& join, double tolerance_us,
                                 double threshold_us, const std::vector<uint32_t>* wait_replays = nullptr);

}  // namespace graphscope
