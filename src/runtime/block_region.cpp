#include "runtime/block_region.h"

#include <sys/mman.h>

#include <iterator>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
// Free spans and the tail of a block past its request are poisoned, so that AddressSanitizer still reports a
// read past a buffer's end or after its release, which it cannot see inside one mapping of its own.
#define XLITE_POISON(addr, size) ASAN_POISON_MEMORY_REGION(addr, size)
#define XLITE_UNPOISON(addr, size) ASAN_UNPOISON_MEMORY_REGION(addr, size)
#else
#define XLITE_POISON(addr, size) ((void)(addr), (void)(size))
#define XLITE_UNPOISON(addr, size) ((void)(addr), (void)(size))
#endif

namespace xlite::runtime {
namespace {
constexpr size_t kHugePage = size_t{2} << 20;

size_t round_up(size_t bytes, size_t unit) { return (bytes + unit - 1) / unit * unit; }
}  // namespace

BlockRegion::BlockRegion(size_t reserve) : reserve_(round_up(reserve, kHugePage)) {}

BlockRegion::~BlockRegion() {
  if (base_) {
    XLITE_UNPOISON(base_, top_);
    munmap(base_, reserve_);
  }
}

bool BlockRegion::reserve() {
  if (base_ || reserve_failed_) return base_ != nullptr;
  // Address space only: the kernel commits a page when it is first touched. A 2 MiB start lets huge pages
  // (asked for over the whole range: the step's buffers are streamed through) back it from its first byte.
  // Where overcommit is strict the system may refuse a range this large: a smaller one still serves.
  constexpr size_t kSmallestReserve = size_t{256} << 20;
  void* mapped = MAP_FAILED;
  for (;;) {
    mapped =
        mmap(nullptr, reserve_ + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped != MAP_FAILED || reserve_ <= kSmallestReserve) break;
    reserve_ = round_up(reserve_ / 2, kHugePage);
  }
  if (mapped == MAP_FAILED) {
    reserve_failed_ = true;
    return false;
  }
  char* start = static_cast<char*>(mapped);
  char* aligned = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(start), kHugePage));
  if (aligned > start) munmap(start, static_cast<size_t>(aligned - start));
  if (size_t after = kHugePage - static_cast<size_t>(aligned - start); after > 0) munmap(aligned + reserve_, after);
  madvise(aligned, reserve_, MADV_HUGEPAGE);  // advice only: without huge pages the range works the same
  base_ = aligned;
  return true;
}

bool BlockRegion::owns(const void* data) const {
  const char* p = static_cast<const char*>(data);
  return base_ && p >= base_ && p < base_ + top_;
}

void BlockRegion::add_free(size_t offset, size_t size, bool resident) {
  Span span{size, true, resident, ++frees_};
  spans_[offset] = span;
  free_.insert(free_key(offset, span));
  if (resident) cached_bytes_ += size;
  XLITE_POISON(base_ + offset, size);
}

BlockRegion::Span BlockRegion::remove_free(size_t offset) {
  auto it = spans_.find(offset);
  Span span = it->second;
  free_.erase(free_key(offset, span));
  spans_.erase(it);
  if (span.resident) cached_bytes_ -= span.size;
  return span;
}

void BlockRegion::drop_pages(size_t offset, size_t size) {
  XLITE_UNPOISON(base_ + offset, size);  // the kernel zeroes the range; ASan must not see that as a write
  madvise(base_ + offset, size, MADV_DONTNEED);
  XLITE_POISON(base_ + offset, size);
}

BlockRegion::Block BlockRegion::take(size_t bytes) {
  if (bytes > reserve_ || !reserve()) return {};
  const size_t size = round_up(bytes, kGrain);
  size_t offset;
  auto fit = free_.lower_bound(FreeKey{size, 0, 0});
  if (fit != free_.end()) {
    offset = std::get<2>(*fit);
    Span span = remove_free(offset);
    if (span.size > size) add_free(offset + size, span.size - size, span.resident);
  } else {
    // Nothing fits: the range grows, from the free span at its top if there is one.
    offset = top_;
    if (!spans_.empty()) {
      auto last = std::prev(spans_.end());
      if (last->second.free) offset = last->first;
    }
    if (offset + size > reserve_) return {};
    if (offset < top_) remove_free(offset);
    top_ = offset + size;
  }
  spans_[offset] = Span{size, false, true, 0};
  XLITE_UNPOISON(base_ + offset, bytes);
  return {base_ + offset, size};
}

size_t BlockRegion::give_back(void* data) {
  const size_t offset = static_cast<size_t>(static_cast<char*>(data) - base_);
  auto it = spans_.find(offset);
  const size_t returned = it->second.size;
  size_t start = offset, end = offset + returned;
  bool resident = true;
  if (auto next = std::next(it); next != spans_.end() && next->second.free) {
    Span n = remove_free(next->first);
    end += n.size;
    resident = resident && n.resident;
  }
  it = spans_.find(offset);
  if (it != spans_.begin()) {
    if (auto prev = std::prev(it); prev->second.free) {
      start = prev->first;
      Span p = remove_free(start);
      resident = resident && p.resident;
    }
  }
  spans_.erase(offset);
  // A span's pages are all held or all given back: merged with pages given back, the rest go too.
  if (!resident) drop_pages(start, end - start);
  add_free(start, end - start, resident);
  return returned;
}

void BlockRegion::release_cached() {
  for (auto& [offset, span] : spans_) {
    if (!span.free || !span.resident) continue;
    free_.erase(free_key(offset, span));
    drop_pages(offset, span.size);
    cached_bytes_ -= span.size;
    span.resident = false;
    free_.insert(free_key(offset, span));
  }
}

}  // namespace xlite::runtime
