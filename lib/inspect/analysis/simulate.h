// What-if: replays a graph on a model of the GPU's schedule, with the
// durations a profile measured and a dispatch model fitted from it, and
// predicts the makespan: as measured (the model's validation), without fake
// dependencies, with zero dependency latency.
//
// The model: a node is ready when its predecessors end (a programmatic
// edge: when the predecessor starts, plus the offset measured); it starts
// its own measured delay later (the launch latency per dependent node, as
// the trace showed it), except where that delay was a wait for a blocker on
// a lane that was not busy, or came after a node without a record: there
// `latency_us` after ready (the mean of the dependents' delays) and at least
// `dispatch_us` after the node dispatched before it; it then runs for its
// measured (median) duration. Copies of one direction share a copy engine and run
// one after another; nothing else serializes them: on the H100 the
// recorded samples ran in the same time with one hardware connection as
// with eight (BENCHMARKS.md), so channels are not modelled. Host nodes, which
// have no record, last the gap their dependents measured after them.
#pragma once

#include <optional>
#include <string>

#include "../model/graph.h"
#include "profile.h"
#include "what_if.h"

namespace graphscope {

/// Fits the model to a profile of doc's graph.
ScheduleModel fit_schedule_model(const GraphDocument& doc, const ProfileReport& r);

/// The predictions for doc's graph from its profile: simulated on the
/// profile's replays, or r.what_if as a report read back wrote it.
/// analyze_profile keeps the result in r.what_if; renderers read it there.
WhatIf what_if(const GraphDocument& doc, const ProfileReport& r);

/// The what-if section of the text report.
std::string format_what_if(const WhatIf& w);

}  // namespace graphscope
