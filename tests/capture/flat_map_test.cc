// FlatMap (lib/capture/flat_map.h) against std::unordered_map under random
// use: insertions, lookups and erasures mixed, with keys crowded into few
// home slots so that probe runs are long and wrap around the table's end.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>

#include "capture/flat_map.h"

using graphscope::capture::FlatMap;

namespace {

// Every key's value and tag as the reference has them, and nothing else.
template <typename M>
void same(M& flat, std::unordered_map<uint64_t, std::pair<std::string, uint32_t>>& ref) {
  REQUIRE(flat.size() == ref.size());
  for (auto& [k, v] : ref) {
    uint32_t tag = 0;
    const std::string* got = flat.find(k, tag);
    REQUIRE(got != nullptr);
    CHECK(*got == v.first);
    CHECK(tag == v.second);
  }
  size_t seen = 0;
  flat.each([&](uint64_t k, std::string& v) {
    ++seen;
    auto it = ref.find(k);
    REQUIRE(it != ref.end());
    CHECK(v == it->second.first);
  });
  CHECK(seen == ref.size());
}

}  // namespace

TEST_CASE("flat map: random insertions, lookups and erasures agree with unordered_map") {
  for (uint64_t spread : {uint64_t(300), uint64_t(5000), uint64_t(1) << 40}) {
    std::mt19937_64 rng(spread);
    FlatMap<uint64_t, std::string> flat;
    std::unordered_map<uint64_t, std::pair<std::string, uint32_t>> ref;
    for (int step = 0; step < 60000; ++step) {
      // Node handles are addresses: multiples of 8 here, as theirs.
      const uint64_t k = 8 * (rng() % spread);
      switch (rng() % 4) {
        case 0:
        case 1:
          if (!ref.count(k)) {
            const std::string v = std::to_string(step);
            flat.insert(k, v, uint32_t(step));
            ref[k] = {v, uint32_t(step)};
          }
          break;
        case 2:
          CHECK(flat.erase(k) == (ref.erase(k) == 1));
          break;
        default: {
          const std::string* got = flat.find(k);
          auto it = ref.find(k);
          REQUIRE((got != nullptr) == (it != ref.end()));
          if (got) CHECK(*got == it->second.first);
        }
      }
      if (step % 5000 == 0) same(flat, ref);
    }
    same(flat, ref);
    // Emptied key by key, then filled again: no slot left behind.
    std::vector<uint64_t> keys;
    for (auto& kv : ref) keys.push_back(kv.first);
    for (uint64_t k : keys) {
      CHECK(flat.erase(k));
      ref.erase(k);
    }
    CHECK(flat.empty());
    CHECK(flat.find(keys.empty() ? 0 : keys[0]) == nullptr);
    for (uint64_t k : keys) {
      flat[k] = "again";
      ref[k] = {"again", 0};
    }
    same(flat, ref);
  }
}

TEST_CASE("flat map: operator[] makes a value once") {
  FlatMap<const void*, int> m;
  int a = 0, b = 0;
  m[&a] = 1;
  m[&a] += 1;
  m[&b] = 5;
  CHECK(m.size() == 2);
  CHECK(*m.find(&a) == 2);
  CHECK(*m.find(&b) == 5);
  CHECK(m.try_emplace(&a).second == false);
}
