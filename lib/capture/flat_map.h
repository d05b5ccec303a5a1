// FlatMap: facts by key in open addressing on a power-of-two table.
//
// Origins look up every frame's code object (tens per launch), a read's
// modules, names and origin, and record every node made; std::unordered_map
// pays a division and a chain of separately allocated nodes there (a cache
// miss each, an allocation each insertion). K is a pointer or a 64-bit key.
// Store keeps the values: a std::deque where a caller holds a value's
// address across insertions (erase is then not offered: it moves values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <type_traits>
#include <utility>
#include <vector>

namespace graphscope::capture {

template <typename K, typename V, typename Store = std::vector<V>>
class FlatMap {
 public:
  V* find(K k) {
    uint32_t tag;
    return find(k, tag);
  }
  // The value and the tag given at insertion, in one probe: the tag sits
  // beside the key, so a hot loop that needs only the tag never touches the
  // value.
  V* find(K k, uint32_t& tag) {
    const size_t i = slot_of(k);
    if (i == kNone) return nullptr;
    tag = slots_[i].tag;
    return &values_[slots_[i].value - 1];
  }
  // Inserts k, which must not be in the map.
  V& insert(K k, V v, uint32_t tag = 0) {
    if (2 * (values_.size() + 1) > slots_.size()) grow();
    size_t i = hash(k);
    while (slots_[i].value) i = next(i);
    slots_[i] = {k, uint32_t(values_.size() + 1), tag};
    values_.push_back(std::move(v));
    keys_.push_back(k);
    return values_.back();
  }
  // k's value, made (V{}) if there was none; and whether it was made.
  std::pair<V*, bool> try_emplace(K k) {
    if (V* v = find(k)) return {v, false};
    return {&insert(k, V{}), true};
  }
  V& operator[](K k) { return *try_emplace(k).first; }
  // Removes k's value, if any: the last value moves into its place, and the
  // slots after k's shift back over the hole (so no probe meets a
  // tombstone). Other values' addresses change; the map's size falls by one.
  bool erase(K k) {
    static_assert(std::is_same_v<Store, std::vector<V>>, "erase moves values: a vector store only");
    size_t hole = slot_of(k);
    if (hole == kNone) return false;
    const uint32_t gone = slots_[hole].value;  // index + 1
    const uint32_t last = uint32_t(values_.size());
    if (gone != last) {
      // The last value takes the erased one's place; its slot follows it.
      slots_[slot_of(keys_.back())].value = gone;
      values_[gone - 1] = std::move(values_.back());
      keys_[gone - 1] = keys_.back();
    }
    values_.pop_back();
    keys_.pop_back();
    // Backward shift: a later slot of the probe run moves into the hole
    // where its home is not between the hole and itself (cyclically).
    slots_[hole] = Slot{};
    for (size_t j = next(hole); slots_[j].value; j = next(j)) {
      const size_t home = hash(slots_[j].key);
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      slots_[j] = Slot{};
      hole = j;
    }
    return true;
  }
  void clear() {
    slots_.clear();
    values_.clear();
    keys_.clear();
  }
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  template <typename F>
  void each(F f) {
    for (size_t i = 0; i < values_.size(); ++i) f(keys_[i], values_[i]);
  }

 private:
  struct Slot {
    K key{};
    uint32_t value = 0;  // the value's index + 1; 0: an empty slot
    uint32_t tag = 0;
  };
  static constexpr size_t kNone = ~size_t(0);
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  size_t hash(K k) const {
    uint64_t bits;
    if constexpr (std::is_pointer_v<K>)
      bits = reinterpret_cast<uintptr_t>(k);
    else
      bits = k;
    return size_t((bits * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
  }
  size_t slot_of(K k) const {
    if (slots_.empty()) return kNone;
    for (size_t i = hash(k);; i = next(i)) {
      if (!slots_[i].value) return kNone;
      if (slots_[i].key == k) return i;
    }
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 256 : 2 * old.size(), Slot{});
    for (const Slot& s : old)
      if (s.value) {
        size_t i = hash(s.key);
        while (slots_[i].value) i = next(i);
        slots_[i] = s;
      }
  }
  std::vector<Slot> slots_;
  Store values_;
  std::vector<K> keys_;  // by value index: the slot of a value that moves
};

}  // namespace graphscope::capture
