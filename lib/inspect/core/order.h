// Ordering many records by a 64-bit key (a time) fast: shared by the
// analysis (records per lane by end) and the CUPTI collector (records by
// start), where a comparator sort of indices would miss the cache on nearly
// every comparison.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "parallel.h"

namespace graphscope {

inline unsigned bit_width(uint64_t x) {
  unsigned b = 0;
  for (; x; x >>= 1) ++b;
  return b;
}

// An array left uninitialized: where every element read has been written
// before, zeroing them first would be one more pass over memory.
template <typename T>
std::unique_ptr<T[]> uninitialized(size_t n) {
  return std::unique_ptr<T[]>(new T[n]);
}

// Positions [0, n) in the order of (key(position), position), as a stable
// sort by key would leave them. Records usually come in time order already:
// that is checked first. Else an LSD radix sort of (key - min, position)
// packed into 64 bits, which reads and writes memory in sequence, where
// sorting indices with a comparator would miss the cache on nearly every
// comparison.
template <typename Key>
std::vector<uint32_t> order_by(size_t n, Key key) {
  std::vector<uint32_t> order(n);
  bool sorted = true;
  uint64_t lo = n ? key(0) : 0, hi = lo;
  for (size_t i = 1; i < n; ++i) {
    const uint64_t k = key(i);
    sorted &= k >= hi;
    lo = std::min(lo, k), hi = std::max(hi, k);
  }
  if (sorted) {
    for (size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
    return order;
  }
  const unsigned pos_bits = bit_width(n - 1), total = pos_bits + bit_width(hi - lo);
  if (n < 1024 || total > 64) {  // few, or keys too far apart to pack with their position
    std::vector<std::pair<uint64_t, uint32_t>> pairs(n);
    for (size_t i = 0; i < n; ++i) pairs[i] = {key(i), uint32_t(i)};
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < n; ++i) order[i] = pairs[i].second;
    return order;
  }
  // Each pass in slices: a count of digits per slice, then each slice moves
  // its elements to its own share of each digit's place (stable).
  constexpr unsigned kDigit = 11;
  constexpr size_t kValues = size_t(1) << kDigit;
  const unsigned workers = worker_count(n, 200000);
  auto a = uninitialized<uint64_t>(n), b = uninitialized<uint64_t>(n);
  parallel_slices(n, workers, [&](unsigned, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) a[i] = (key(i) - lo) << pos_bits | i;
  });
  std::vector<size_t> count(workers * kValues);  // [worker][digit]
  for (unsigned shift = 0; shift < total; shift += kDigit) {
    auto digit = [shift](uint64_t x) { return size_t(x >> shift) & (kValues - 1); };
    parallel_slices(n, workers, [&](unsigned w, size_t begin, size_t end) {
      size_t* c = &count[w * kValues];
      std::fill(c, c + kValues, 0);
      for (size_t i = begin; i < end; ++i) ++c[digit(a[i])];
    });
    size_t sum = 0;
    bool moves = true;
    for (size_t d = 0; d < kValues; ++d) {
      size_t at = sum;
      for (unsigned w = 0; w < workers; ++w) sum += std::exchange(count[w * kValues + d], sum);
      if (sum - at == n) moves = false;  // one value of this digit: nothing moves
    }
    if (!moves) continue;
    parallel_slices(n, workers, [&](unsigned w, size_t begin, size_t end) {
      size_t* c = &count[w * kValues];
      for (size_t i = begin; i < end; ++i) b[c[digit(a[i])]++] = a[i];
    });
    a.swap(b);
  }
  const uint64_t pos_mask = pos_bits ? ~uint64_t(0) >> (64 - pos_bits) : 0;
  parallel_slices(n, workers, [&](unsigned, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) order[i] = uint32_t(a[i] & pos_mask);
  });
  return order;
}

/// Rearranges v so that v[i] becomes what v[order[i]] was (order: a
/// permutation, as order_by gives; it is consumed). In place, cycle by
/// cycle: no second array to fault in, and records that barely move (nearly
/// sorted input) stay in cache.
template <typename T>
void apply_order(std::vector<T>& v, std::vector<uint32_t>& order) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    T held = std::move(v[i]);
    size_t j = i;
    for (;;) {
      const size_t from = order[j];
      order[j] = uint32_t(j);
      if (from == i) {
        v[j] = std::move(held);
        break;
      }
      v[j] = std::move(v[from]);
      j = from;
    }
  }
}

}  // namespace graphscope
