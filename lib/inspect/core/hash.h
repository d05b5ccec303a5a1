// Small hashes shared by the matchers (diff, folding, the join without
// ids): fixed, the same on every platform, for keys and signatures held in
// memory only.
#pragma once

#include <cstdint>
#include <string_view>

namespace graphscope {

/// splitmix64's finalizer: spreads every input bit over the output.
inline uint64_t hash_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// FNV-1a of a string.
inline uint64_t hash_text(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace graphscope
