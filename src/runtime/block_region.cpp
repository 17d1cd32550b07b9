#include "runtime/block_region.h"

#include <sys/mman.h>

#include <initializer_list>
#include <iterator>

#include "core/address_sanitizer.h"
#include "core/check.h"

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
  if (base_ || reserve_ == 0) return base_ != nullptr;
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
    reserve_ = 0;
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

// Free spans and the tail of a block past its request are poisoned, so that AddressSanitizer still reports a
// read past a buffer's end or after its release inside the mapping.
void BlockRegion::add_free(size_t offset, size_t size, bool resident, uint64_t freed_at) {
  Span span{size, true, resident, freed_at};
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
  // With huge pages the kernel may give a partly dropped one back only later (when it splits it): the
  // cached count is what the region holds, not always what is resident.
  madvise(base_ + offset, size, MADV_DONTNEED);
  XLITE_POISON(base_ + offset, size);
}

size_t BlockRegion::best_fit(size_t size) const {
  for (bool cold : {false, true}) {
    auto fit = free_.lower_bound(FreeKey{cold, size, 0, 0});
    if (fit != free_.end() && std::get<0>(*fit) == cold) return std::get<3>(*fit);
  }
  return kNoFit;
}

bool BlockRegion::fits_cached(size_t bytes) const {
  auto fit = free_.lower_bound(FreeKey{false, block_size(bytes), 0, 0});
  return fit != free_.end() && !std::get<0>(*fit);
}

// Neighbouring free spans exist only where one holds its pages and the other does not: they become one span
// that does not (the held pages are given back), for a request that neither fits.
void BlockRegion::merge_free_runs() {
  for (auto it = spans_.begin(); it != spans_.end();) {
    auto next = std::next(it);
    if (!it->second.free || next == spans_.end() || !next->second.free) {
      it = next;
      continue;
    }
    const size_t start = it->first;
    size_t size = 0;
    while (it != spans_.end() && it->second.free) {
      const size_t at = it->first;
      ++it;
      Span span = remove_free(at);
      if (span.resident) drop_pages(at, span.size);
      size += span.size;
    }
    add_free(start, size, false, 0);
    it = spans_.upper_bound(start);
  }
}

BlockRegion::Block BlockRegion::take(size_t bytes) {
  if (bytes == 0 || bytes > reserve_ || !reserve()) return {};
  const size_t size = block_size(bytes);
  size_t offset = best_fit(size);
  if (offset == kNoFit) {
    merge_free_runs();
    offset = best_fit(size);
  }
  if (offset != kNoFit) {
    Span span = remove_free(offset);
    if (span.size > size) add_free(offset + size, span.size - size, span.resident, span.freed_at);
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
  XLITE_POISON(base_ + offset, size);  // the tail past the request, also where the block is new
  XLITE_UNPOISON(base_ + offset, bytes);
  return {base_ + offset, size};
}

size_t BlockRegion::give_back(void* data) {
  const size_t offset = static_cast<size_t>(static_cast<char*>(data) - base_);
  auto it = spans_.find(offset);
  XLITE_CHECK(it != spans_.end() && !it->second.free, "BlockRegion::give_back: not a block in use");
  const size_t returned = it->second.size;
  size_t start = offset, end = offset + returned;
  // The block's pages are held: it merges with free neighbours that hold theirs.
  if (auto next = std::next(it); next != spans_.end() && next->second.free && next->second.resident)
    end += remove_free(next->first).size;  // erases another entry: `it` stays valid
  if (it != spans_.begin()) {
    if (auto prev = std::prev(it); prev->second.free && prev->second.resident) {
      start = prev->first;
      remove_free(start);
    }
  }
  spans_.erase(offset);
  add_free(start, end - start, true, ++frees_);
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
  merge_free_runs();
}

}  // namespace xlite::runtime
