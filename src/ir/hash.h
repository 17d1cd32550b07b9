#pragma once
#include <cstdint>
#include <cstring>

namespace xlite::ir {

// Mixes a value into a running hash (splitmix64 finaliser over a boost-style combine).
inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  v += 0x9e3779b97f4a7c15ull;
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
  v ^= v >> 31;
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

inline uint64_t hash_double(uint64_t h, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return hash_mix(h, bits);
}

}  // namespace xlite::ir
