// Timing helpers for the benchmarks: wall-clock milliseconds, best and median
// of repeated runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace graphscope::bench {

template <typename F>
double time_ms(F&& f) {
  auto a = std::chrono::steady_clock::now();
  f();
  auto b = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Stats {
  double best, median;
};

inline Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2]};
}

}  // namespace graphscope::bench
