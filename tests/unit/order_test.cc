// order_by and apply_order: a stable sort by a 64-bit key, whichever path
// (already sorted, comparator sort, radix sort) the input takes.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "inspect/core/order.h"

using namespace graphscope;

namespace {

struct Rec {
  uint64_t key;
  uint32_t arrival;
};

void check_sorts(std::vector<uint64_t> keys) {
  std::vector<Rec> recs(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) recs[i] = {keys[i], uint32_t(i)};
  std::vector<Rec> expected = recs;
  std::stable_sort(expected.begin(), expected.end(), [](const Rec& a, const Rec& b) { return a.key < b.key; });
  std::vector<uint32_t> order = order_by(recs.size(), [&](size_t i) { return recs[i].key; });
  REQUIRE(order.size() == recs.size());
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != expected[i].arrival) FAIL("position " << i << ": " << order[i] << " vs " << expected[i].arrival);
  apply_order(recs, order);
  for (size_t i = 0; i < recs.size(); ++i)
    if (recs[i].key != expected[i].key || recs[i].arrival != expected[i].arrival) FAIL("record " << i << " misplaced");
}

}  // namespace

TEST_CASE("order_by is a stable sort by key on every path") {
  std::mt19937_64 rng(5);
  check_sorts({});
  check_sorts({7});
  check_sorts({3, 1, 2});
  for (size_t n : {10u, 1023u, 1024u, 5000u, 300000u}) {
    CAPTURE(n);
    std::vector<uint64_t> sorted(n), ties(n), near(n), wide(n);
    for (size_t i = 0; i < n; ++i) {
      sorted[i] = 1'700'000'000'000'000'000ull + i;   // in order: nothing moves
      ties[i] = rng() % 7;                            // many equal keys: arrival decides
      near[i] = 1'000'000'000ull + i * 2000 + rng() % 20000;  // CUPTI's: nearly in order
      wide[i] = rng();                                // keys too far apart to pack with positions
    }
    check_sorts(sorted);
    check_sorts(ties);
    check_sorts(near);
    check_sorts(wide);
  }
}
