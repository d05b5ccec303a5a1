// The what-if model's result (simulate.h makes it): kept in the profile
// report (profile.h), so every output renders the one simulation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace graphscope {

struct ScheduleModel {
  double latency_us = 0;   // a real predecessor's end to its dependent's start (median)
  double dispatch_us = 0;  // between successive starts of siblings: their starts' span over their gaps
  size_t latency_samples = 0, dispatch_samples = 0;
};

struct WhatIf {
  double measured_us = 0;         // the profile's makespan (median)
  double as_measured_us = 0;      // the model's makespan: its validation
  double without_fake_us = 0;     // copy engines no longer shared
  double zero_latency_us = 0;     // no dependency latency, no dispatch interval
  std::optional<double> fitted_us;  // the fitted latency and dispatch for every node, not its own delay
  ScheduleModel model;
  std::optional<uint64_t> replays_simulated;  // replays simulated one by one; 0: the medians over replays
  // Nodes without an activity record (host, memory alloc and free, event)
  // that the model gave the time their dependents measured after them (the
  // most over the replays simulated); absent in reports written before.
  std::optional<uint64_t> gap_nodes;
};

}  // namespace graphscope
