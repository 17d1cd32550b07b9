#include "compiler/cache.h"
#include "core/environment.h"
#include "core/runtime_context.h"

namespace xlite::compiler {

ExecutableCache::ExecutableCache(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

void ExecutableCache::insert(uint64_t hash, const ir::Graph& graph, std::shared_ptr<runtime::Executable> exe) {
  std::lock_guard lock(mutex_);
  lru_.push_front(Entry{hash, graph, std::move(exe)});
  index_.emplace(hash, lru_.begin());
  evict_locked();
}

void ExecutableCache::evict_locked() {
  while (lru_.size() > capacity_) {
    auto last = std::prev(lru_.end());
    auto [begin, end] = index_.equal_range(last->hash);
    for (auto it = begin; it != end; ++it) {
      if (it->second == last) {
        index_.erase(it);
        break;
      }
    }
    lru_.pop_back();
  }
}

size_t ExecutableCache::size() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

void ExecutableCache::set_capacity(size_t capacity) {
  std::lock_guard lock(mutex_);
  capacity_ = capacity == 0 ? 1 : capacity;
  evict_locked();
}

size_t ExecutableCache::capacity() const {
  std::lock_guard lock(mutex_);
  return capacity_;
}

void ExecutableCache::clear() {
  decltype(lru_) dropped;  // destroyed after the lock is released: freeing programs takes a while
  {
    std::lock_guard lock(mutex_);
    dropped.swap(lru_);
    index_.clear();
  }
}

namespace {
struct ProcessCache final : RuntimeState {
  ExecutableCache cache{static_cast<size_t>(env::settings().cache_size)};
  std::string describe() const override {
    return std::to_string(cache.size()) + " of " + std::to_string(cache.capacity()) + " programs";
  }
  void clear_cache() override { cache.clear(); }
};
}  // namespace

ExecutableCache& executable_cache() { return runtime_context::state<ProcessCache>("executable cache").cache; }

}  // namespace xlite::compiler
