// Small statistics the analyses share.
#pragma once

#include <algorithm>
#include <vector>

namespace graphscope {

/// The median (the mean of the middle two for an even count); 0 when empty.
/// Reorders v.
inline double median(std::vector<double>& v) {
  if (v.empty()) return 0;
  const size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(m), v.end());
  const double hi = v[m];
  if (v.size() % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + long(m));
  return (lo + hi) / 2;
}

}  // namespace graphscope
