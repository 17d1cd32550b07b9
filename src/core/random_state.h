#pragma once
// The process-wide Philox generator state: a seed and a running offset in 128-bit blocks. Draws take
// their seed and offset as graph parameters, so a new draw never recompiles and a replayed step can
// feed the offsets it would have taken.
#include <cstdint>

namespace xlite::random_state {

struct Position {
  uint64_t seed;
  uint64_t offset;
};

Position current();
// The position for a draw of this many blocks; the generator moves past it.
Position take(uint64_t blocks);
void advance(uint64_t blocks);
void reseed(uint64_t seed);  // offset back to 0
// Back to a position current() gave earlier: gradient checkpointing draws again what its forward pass drew.
void seek(Position position);

}  // namespace xlite::random_state
