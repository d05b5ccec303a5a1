// The monotonic clock in nanoseconds, for graphscope's own timers
// (GRAPHSCOPE_DEBUG_TIMES, the walk's phases): one vDSO call, no
// allocation, safe inside CUPTI's callbacks.
#pragma once

#include <time.h>

#include <cstdint>

namespace graphscope::capture {

inline uint64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec);
}

}  // namespace graphscope::capture
