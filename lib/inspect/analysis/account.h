// Where a graph's makespan went (SPEC.md's trace terms): for one replay,
// every nanosecond of [graph start, graph end] in exactly one category,
// found by walking back from the activity that ended last along what bound
// each start, and the same for every replay, for medians and spread.
//
// The walk: the current node's activity is work (by node kind, and by
// module for the report). Before its start, what bound it:
//  - a fake dependency: the activity that ended last on its own lane before
//    it started (within the tolerance), not an ancestor in the graph, that
//    ended after the node was ready: the time from ready to that end is a
//    fake wait (by cause: same channel, copy engine, same stream, or other
//    work when the blocker is not of this replay), the rest
//    up to the start dependency latency;
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

struct MakespanAccount {
  uint32_t replay = 0;        // the representative replay: of median makespan
  int64_t makespan_ns = 0;    // its makespan: the parts add up to it exactly
  uint32_t replays = 0;
  std::vector<AccountPart> parts;     // one per category, in order
  std::vector<NodeAccount> nodes;     // per root node, in the representative replay
  std::vector<ModuleTime> modules;    // chain work by module, largest first (empty without origins)
  uint32_t chain_nodes = 0;           // nodes on the walked chain
  std::vector<AccountSegment> segments;  // the representative replay's, from its end back (not in JSON)
  int64_t part(AccountCategory c) const { return parts.empty() ? 0 : parts[size_t(c)].ns; }
};

/// The account of every replay of the join; the representative's in full.
/// Empty (replays 0) when the join has no replay.
MakespanAccount account_makespan(const Graph& g, const Trace& trace, const TraceJoin& join, double tolerance_us);

}  // namespace graphscope
