#pragma once
// Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"): a counter-based
// generator, so element i of a draw is a pure function of (seed, offset, i) and any backend can compute
// it in any order. Every backend must produce the same bits.
#include <array>
#include <cmath>
#include <cstdint>

namespace xlite::philox {

using Block = std::array<uint32_t, 4>;

inline Block philox4x32_10(Block counter, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{0xD2511F53u} * counter[0];
    uint64_t p1 = uint64_t{0xCD9E8D57u} * counter[2];
    counter = {static_cast<uint32_t>(p1 >> 32) ^ counter[1] ^ key[0], static_cast<uint32_t>(p1),
               static_cast<uint32_t>(p0 >> 32) ^ counter[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += 0x9E3779B9u;
    key[1] += 0xBB67AE85u;
  }
  return counter;
}

// The block of random bits for block number `index` of a draw that starts at `offset` blocks.
inline Block block(uint64_t seed, uint64_t offset, uint64_t index) {
  uint64_t c = offset + index;
  return philox4x32_10({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

// Uniform draws: element i uses lane i % 4 of block i / 4. Values in [0, 1).
inline uint64_t uniform_blocks(int64_t n) { return static_cast<uint64_t>((n + 3) / 4); }
inline float uniform_f32(uint32_t bits) { return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f); }
inline double uniform_f64(uint32_t hi, uint32_t lo) {
  return static_cast<double>(((static_cast<uint64_t>(hi) << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}

// Normal draws: element i uses block i, Box-Muller on its first two lanes.
inline uint64_t normal_blocks(int64_t n) { return static_cast<uint64_t>(n); }
inline double normal(const Block& b) {
  double u1 = (static_cast<double>(b[0] >> 8) + 1.0) * (1.0 / 16777216.0);  // (0, 1]: log is finite
  double u2 = static_cast<double>(b[1] >> 8) * (1.0 / 16777216.0);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace xlite::philox
