#pragma once
// A caching allocator per device. Freed blocks are kept and reused, because first-touch page faults dominate
// run time on these machines (see MACHINE_FACTS.md): large ones in a region that splits and merges them
// (block_region.h), small ones in lists per size class. Thread-safe.
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "core/buffer.h"
#include "runtime/block_region.h"
#include "xlite/memory.h"

namespace xlite::runtime {

class CachingAllocator final : public BufferReleaser {
 public:
  // region_bytes: the address space to reserve for large blocks (by default twice the memory limit).
  explicit CachingAllocator(Device device, std::optional<size_t> region_bytes = std::nullopt);
  ~CachingAllocator() override;

  // Throws xlite::Error when the request would pass the limit even after the cache is emptied.
  BufferPtr allocate(size_t bytes);
  void release(void* data, size_t capacity) override;

  MemoryInfo info() const;
  Device device() const { return device_; }
  void reset_peak();
  void empty_cache();

 private:
  static size_t size_class(size_t bytes);
  void free_cached_locked();
  int64_t cached_locked() const;
  // Throws when `capacity` more would pass the limit; first gives the cache back where the request needs new
  // memory and the cache and it together would pass the limit.
  void make_room_locked(size_t capacity, bool needs_new_memory);
  // The cached blocks to take a request of this size class from; cached_.end() for none.
  std::map<size_t, std::vector<void*>>::iterator reusable(size_t capacity);

  Device device_;
  mutable std::mutex mutex_;
  // Small blocks: capacity -> free blocks of that capacity, most recently freed last (reused first, while still in
  // cache). The lists keep their storage, so a steady state allocates nothing to track blocks.
  std::map<size_t, std::vector<void*>> cached_;
  int64_t bytes_used_ = 0;
  int64_t small_cached_ = 0;
  int64_t peak_ = 0;
  int64_t limit_;
  BlockRegion region_;
};

CachingAllocator& allocator(Device device);

}  // namespace xlite::runtime
