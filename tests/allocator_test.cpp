// The caching allocator (runtime/allocator.h) and the region its large blocks come from (runtime/block_region.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "core/address_sanitizer.h"
#include "runtime/allocator.h"
#include "runtime/block_region.h"

namespace xl = xlite;
using xl::runtime::BlockRegion;

namespace {
constexpr size_t kMiB = size_t{1} << 20;
char* at(const BlockRegion::Block& block) { return static_cast<char*>(block.data); }
}  // namespace

TEST(Allocator, ReusesFreedBlocksAndTracksPeak) {
  xl::runtime::CachingAllocator alloc(xl::device());
  void* first = nullptr;
  {
    auto b = alloc.allocate(1000);
    first = b->data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    EXPECT_GE(alloc.info().bytes_used, 1000);
  }
  EXPECT_EQ(alloc.info().bytes_used, 0);
  EXPECT_GT(alloc.info().bytes_cached, 0);
  auto again = alloc.allocate(1000);
  EXPECT_EQ(again->data(), first);  // no new pages touched
  auto big = alloc.allocate(1 << 20);
  EXPECT_GE(alloc.info().peak_bytes_used, (1 << 20) + 1000);
  big.reset();
  alloc.empty_cache();
  EXPECT_EQ(alloc.info().bytes_cached, 0);
}

// A small request with no cached block of its size class takes a cached block of a larger class up to 1.6x
// its own, rather than new memory; a block more than that larger stays for requests of its size.
TEST(Allocator, AMissTakesACachedBlockALittleLargerButNotMuchLarger) {
  xl::runtime::CachingAllocator alloc(xl::device());
  void* larger = nullptr;
  void* much_larger = nullptr;
  {
    auto a = alloc.allocate(15000);  // size class 15360
    auto b = alloc.allocate(40000);  // 40960
    larger = a->data();
    much_larger = b->data();
  }
  const int64_t cached = alloc.info().bytes_cached;
  auto taken = alloc.allocate(10000);  // class 10240: 15360 is 1.5x it
  EXPECT_EQ(taken->data(), larger);
  EXPECT_EQ(alloc.info().bytes_used, 15360);  // the block counts as what it is
  EXPECT_EQ(alloc.info().bytes_cached, cached - 15360);
  auto fresh = alloc.allocate(20000);  // class 20480: 40960 is 2x it
  EXPECT_NE(fresh->data(), much_larger);
  taken.reset();
  auto same = alloc.allocate(15000);  // the block went back to its own class
  EXPECT_EQ(same->data(), larger);
}

// A training step frees its forward's activations and then asks for larger backward buffers: the freed
// blocks, merged, serve them without new memory. With a list per size class the step held both.
TEST(Allocator, BuffersFreedTogetherServeALargerOne) {
  xl::runtime::CachingAllocator alloc(xl::device());
  {
    std::vector<xl::BufferPtr> activations;
    for (int i = 0; i < 4; ++i) activations.push_back(alloc.allocate(2 * kMiB));
  }
  EXPECT_EQ(alloc.info().bytes_cached, static_cast<int64_t>(8 * kMiB));
  auto gradient = alloc.allocate(8 * kMiB);
  EXPECT_EQ(alloc.info().bytes_used, static_cast<int64_t>(8 * kMiB));
  EXPECT_EQ(alloc.info().bytes_cached, 0);
  std::memset(gradient->data(), 1, 8 * kMiB);  // the whole block is usable
  EXPECT_EQ(static_cast<unsigned char*>(gradient->data())[8 * kMiB - 1], 1);
}

// Large buffers start on page boundaries (the region's first block on a huge page's), small ones on 64 bytes.
TEST(Allocator, LargeBuffersStartOnPageBoundaries) {
  xl::runtime::CachingAllocator alloc(xl::device());
  auto first = alloc.allocate(24 * kMiB);
  auto odd = alloc.allocate(3 * kMiB + 5);
  auto next = alloc.allocate(100000);
  auto small = alloc.allocate(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first->data()) % (2 * kMiB), 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(odd->data()) % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(next->data()) % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small->data()) % 64, 0u);
  // Large blocks count as whole pages, small ones as their size class.
  EXPECT_EQ(alloc.info().bytes_used, static_cast<int64_t>(24 * kMiB + (3 * kMiB + 4096) + 102400 + 1024));
}

TEST(Allocator, OverTheLimitRaisesError) {
  xl::runtime::CachingAllocator alloc(xl::device());
  int64_t limit = alloc.info().bytes_limit;
  try {
    alloc.allocate(static_cast<size_t>(limit) + 4096);
    FAIL() << "expected out of memory";
  } catch (const xl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("[allocate] out of memory"), std::string::npos) << e.what();
  }
}

TEST(Allocator, HugeTensorRaisesErrorNotCrash) {
  EXPECT_THROW((xl::zeros({1 << 20, 1 << 20, 1 << 10}).to_vector<float>()), xl::Error);
}

// Of free blocks that fit, the smallest; of equal ones, the one freed last (still in cache).
TEST(BlockRegion, TakesTheSmallestFitFreedLast) {
  BlockRegion region(64 * kMiB);
  // Live 4 KiB blocks between them keep them from merging.
  BlockRegion::Block a = region.take(kMiB);
  region.take(4096);
  BlockRegion::Block b = region.take(kMiB);
  region.take(4096);
  BlockRegion::Block c = region.take(2 * kMiB);
  region.take(4096);
  region.give_back(c.data);
  region.give_back(a.data);
  region.give_back(b.data);
  EXPECT_EQ(region.take(kMiB).data, b.data);
  EXPECT_EQ(region.take(kMiB - 4096).data, a.data);  // split: 4096 bytes stay free
  EXPECT_EQ(region.take(kMiB + 1).data, c.data);
  EXPECT_EQ(region.take(4096).data, at(a) + kMiB - 4096);
  EXPECT_EQ(region.top(), 4 * kMiB + 3 * 4096);
}

// A freed block merges with free neighbours on both sides; the merged span serves a request none of them could.
TEST(BlockRegion, FreedNeighboursMerge) {
  BlockRegion region(64 * kMiB);
  BlockRegion::Block a = region.take(kMiB), b = region.take(kMiB), c = region.take(kMiB);
  region.take(4096);
  region.give_back(a.data);
  region.give_back(c.data);
  EXPECT_EQ(region.give_back(b.data), kMiB);
  EXPECT_EQ(region.cached_bytes(), 3 * kMiB);
  BlockRegion::Block whole = region.take(3 * kMiB);
  EXPECT_EQ(whole.data, a.data);
  EXPECT_EQ(whole.size, 3 * kMiB);
  EXPECT_EQ(region.top(), 3 * kMiB + 4096);
  EXPECT_EQ(region.cached_bytes(), 0u);
}

// With no free block large enough, a free span at the top grows in place rather than being left behind.
TEST(BlockRegion, GrowsFromAFreeSpanAtItsTop) {
  BlockRegion region(64 * kMiB);
  BlockRegion::Block a = region.take(kMiB), b = region.take(kMiB);
  region.give_back(b.data);
  BlockRegion::Block grown = region.take(3 * kMiB);
  EXPECT_EQ(grown.data, at(a) + kMiB);
  EXPECT_EQ(region.top(), 4 * kMiB);
}

TEST(BlockRegion, RefusesWhatItsReservationCannotPlace) {
  BlockRegion region(4 * kMiB);
  BlockRegion::Block all = region.take(4 * kMiB);
  ASSERT_NE(all.data, nullptr);
  EXPECT_EQ(region.take(4096).data, nullptr);
  EXPECT_EQ(region.take(size_t{1} << 40).data, nullptr);
  region.give_back(all.data);
  EXPECT_NE(region.take(4096).data, nullptr);
}

// release_cached gives free spans' pages back. A block freed next to such a span keeps its pages (a step that
// runs on after empty_cache() caches again); a request neither fits merges them, giving the held pages back.
TEST(BlockRegion, ReleasedPagesStayOutOfTheCachedCount) {
  BlockRegion region(64 * kMiB);
  BlockRegion::Block a = region.take(2 * kMiB), b = region.take(2 * kMiB);
  region.take(4096);
  std::memset(a.data, 7, 2 * kMiB);
  std::memset(b.data, 7, 2 * kMiB);
  region.give_back(a.data);
  EXPECT_EQ(region.cached_bytes(), 2 * kMiB);
  region.release_cached();
  EXPECT_EQ(region.cached_bytes(), 0u);
  region.give_back(b.data);
  EXPECT_EQ(region.cached_bytes(), 2 * kMiB);
  EXPECT_TRUE(region.fits_cached(2 * kMiB));
  EXPECT_FALSE(region.fits_cached(2 * kMiB + 1));
  BlockRegion::Block again = region.take(4 * kMiB);
  ASSERT_EQ(again.data, a.data);
  EXPECT_EQ(region.cached_bytes(), 0u);
  EXPECT_EQ(at(again)[0], 0);  // given-back pages come back zeroed, and are usable
  std::memset(again.data, 1, 4 * kMiB);
  region.give_back(again.data);
  EXPECT_EQ(region.cached_bytes(), 4 * kMiB);
  EXPECT_EQ(region.top(), 4 * kMiB + 4096);
}

// After a release, the blocks a repeated step takes come back cached every time: they are carved from the
// released span once and then reused, held.
TEST(BlockRegion, CachesAgainAfterARelease) {
  BlockRegion region(64 * kMiB);
  {
    std::vector<BlockRegion::Block> warmup;
    for (int i = 0; i < 4; ++i) warmup.push_back(region.take(8 * kMiB));
    for (const BlockRegion::Block& block : warmup) region.give_back(block.data);
  }
  region.release_cached();
  std::vector<void*> first;
  for (int step = 0; step < 3; ++step) {
    std::vector<BlockRegion::Block> blocks;
    for (int i = 0; i < 3; ++i) {
      if (step > 0) {
        EXPECT_TRUE(region.fits_cached(2 * kMiB));
      }
      blocks.push_back(region.take(2 * kMiB));
    }
    for (const BlockRegion::Block& block : blocks) region.give_back(block.data);
    EXPECT_EQ(region.cached_bytes(), 6 * kMiB);
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (step == 0) first.push_back(blocks[i].data);
      EXPECT_EQ(blocks[i].data, first[i]);
    }
  }
  EXPECT_EQ(region.top(), 32 * kMiB);
}

TEST(BlockRegion, RefusesAnEmptyRequestAndAZeroReservation) {
  BlockRegion region(64 * kMiB);
  EXPECT_EQ(region.take(0).data, nullptr);
  BlockRegion none(0);
  EXPECT_EQ(none.take(4096).data, nullptr);
  EXPECT_FALSE(none.owns(nullptr));
}

#if XLITE_ADDRESS_SANITIZER
// Inside its own mapping AddressSanitizer sees no allocations: the region poisons free spans and the tail of a
// block past its request, so a read after release or past the end is still reported.
TEST(BlockRegion, PoisonsFreeSpansAndTailsForAddressSanitizer) {
  BlockRegion region(64 * kMiB);
  BlockRegion::Block fresh = region.take(100000);  // new growth
  EXPECT_FALSE(__asan_address_is_poisoned(at(fresh) + 99999));
  EXPECT_TRUE(__asan_address_is_poisoned(at(fresh) + 100000));
  region.take(4096);
  region.give_back(fresh.data);
  EXPECT_TRUE(__asan_address_is_poisoned(at(fresh)));
  BlockRegion::Block reused = region.take(50000);  // from the freed span
  EXPECT_EQ(reused.data, fresh.data);
  EXPECT_FALSE(__asan_address_is_poisoned(at(reused) + 49999));
  EXPECT_TRUE(__asan_address_is_poisoned(at(reused) + 50000));
}
#endif

// A request the region cannot place (its reservation used up, or refused by the system) gets a block of its
// own, as small ones do, instead of failing.
TEST(Allocator, WhatTheRegionCannotPlaceComesFromTheSystem) {
  xl::runtime::CachingAllocator alloc(xl::device(), size_t{4} * kMiB);
  auto in_region = alloc.allocate(3 * kMiB);
  auto outside = alloc.allocate(3 * kMiB);
  ASSERT_NE(outside->data(), nullptr);
  EXPECT_NE(outside->data(), in_region->data());
  std::memset(outside->data(), 1, 3 * kMiB);
  void* outside_data = outside->data();
  outside.reset();
  auto again = alloc.allocate(3 * kMiB);  // from the list of its size class
  EXPECT_EQ(again->data(), outside_data);
  EXPECT_EQ(alloc.info().bytes_used, static_cast<int64_t>(6 * kMiB));
}
