#pragma once
// One contiguous range of reserved address space, carved into blocks: a request takes the smallest free
// block that holds it (of equal sizes, the one freed last, still warm in cache), splits off what it does not
// need, and a freed block merges with free neighbours, so that memory freed as several small buffers can
// serve one large one. The range grows at its top only when no free block fits. A training step frees its
// forward activations (a few MiB each) and then asks for its larger backward buffers: with blocks of one
// size class each, as before, chargpt at batch 64 held 230 MiB for 206 MiB of live values.
//
// Pages are committed by the kernel on first touch and kept when a block is freed (first-touch faults are
// what the cache avoids); release_cached() gives free spans' pages back. A span's pages are held or not as a
// whole: a freed block merges only with neighbours that hold theirs, and a request that no span fits first
// merges the free runs that differ (giving back their pages). Not thread-safe: the caching allocator calls it
// under its lock.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

namespace xlite::runtime {

class BlockRegion {
 public:
  // Blocks start on and are sized in multiples of this.
  static constexpr size_t kGrain = 4096;
  // The size of the block take(bytes) hands out.
  static size_t block_size(size_t bytes) { return (bytes + kGrain - 1) / kGrain * kGrain; }

  // Reserves `reserve` bytes of address space on the first take, none before (less where the system refuses
  // that much; none for 0). take() returns no block when the reservation cannot hold a request.
  explicit BlockRegion(size_t reserve);
  ~BlockRegion();
  BlockRegion(const BlockRegion&) = delete;
  BlockRegion& operator=(const BlockRegion&) = delete;

  struct Block {
    void* data = nullptr;  // nullptr: the reservation cannot hold the request
    size_t size = 0;       // a multiple of kGrain, at least the request
  };
  // Spans whose pages are held are taken before those that would fault theirs in again.
  Block take(size_t bytes);
  // Whether take(bytes) would be served from pages the region holds.
  bool fits_cached(size_t bytes) const;
  // Returns the block's size.
  size_t give_back(void* data);
  bool owns(const void* data) const;

  // Free bytes whose pages the region holds.
  size_t cached_bytes() const { return cached_bytes_; }
  // The extent of the range that has been handed out at some time: an upper bound on its resident pages.
  size_t top() const { return top_; }
  void release_cached();

 private:
  struct Span {
    size_t size;
    bool free;
    bool resident;  // false once its pages were given back, until it is taken again
    uint64_t freed_at;
  };
  // Free spans: those holding their pages first, then by size, the most recently freed first, then offset.
  using FreeKey = std::tuple<bool, size_t, uint64_t, size_t>;
  static FreeKey free_key(size_t offset, const Span& span) {
    return {!span.resident, span.size, ~span.freed_at, offset};
  }
  static constexpr size_t kNoFit = ~size_t{0};

  bool reserve();
  size_t best_fit(size_t size) const;
  void add_free(size_t offset, size_t size, bool resident, uint64_t freed_at);
  Span remove_free(size_t offset);
  void merge_free_runs();
  void drop_pages(size_t offset, size_t size);

  size_t reserve_;  // 0 once the system refused every reservation tried
  char* base_ = nullptr;
  size_t top_ = 0;
  size_t cached_bytes_ = 0;
  uint64_t frees_ = 0;
  std::map<size_t, Span> spans_;  // offset -> span; the spans tile [0, top_)
  std::set<FreeKey> free_;
};

}  // namespace xlite::runtime
