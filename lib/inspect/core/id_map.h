// IdMap: small dense ids for keys of up to 96 bits, for the passes over a
// million records (the join's correlation ids, the analysis's lanes).
// Internal to lib/inspect.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace graphscope {

// Small dense ids for keys of up to 96 bits (a lane, a correlation id, a
// node's local id), numbered in order of first sight. Open addressing: this
// runs once per record, where std::unordered_map would allocate a node per
// key and chase a pointer per lookup.
class IdMap {
 public:
  static constexpr uint32_t kFree = UINT32_MAX;
  struct Key {
    uint64_t hi = 0;
    uint32_t lo = 0;
    friend bool operator<(const Key& a, const Key& b) { return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo; }
    friend bool operator==(const Key& a, const Key& b) { return a.hi == b.hi && a.lo == b.lo; }
  };
  uint32_t id(uint64_t hi, uint32_t lo) {
    if (2 * (keys_.size() + 1) > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t h = hash(hi, lo) & mask;; h = (h + 1) & mask) {
      uint32_t s = slots_[h];
      if (s == kFree) {
        slots_[h] = uint32_t(keys_.size());
        keys_.push_back({hi, lo});
        return slots_[h];
      }
      if (keys_[s].hi == hi && keys_[s].lo == lo) return s;
    }
  }
  const std::vector<Key>& keys() const { return keys_; }

 private:
  static size_t hash(uint64_t hi, uint32_t lo) {
    uint64_t x = hi * 0x9e3779b97f4a7c15ull ^ (lo + 0x632be59bd9b4e019ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    return size_t(x ^ (x >> 29));
  }
  void grow() {
    std::vector<uint32_t> slots(std::max<size_t>(16, 2 * slots_.size()), kFree);
    const size_t mask = slots.size() - 1;
    for (uint32_t s = 0; s < keys_.size(); ++s) {
      size_t h = hash(keys_[s].hi, keys_[s].lo) & mask;
      while (slots[h] != kFree) h = (h + 1) & mask;
      slots[h] = s;
    }
    slots_.swap(slots);
  }
  std::vector<uint32_t> slots_;
  std::vector<Key> keys_;
};

}  // namespace graphscope
