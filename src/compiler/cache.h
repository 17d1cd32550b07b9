#pragma once
// Compiled programs by structural graph hash, least recently used evicted first. The size comes from
// XLITE_COMPILATION_CACHE_SIZE (default 2048). A hit compares the whole graph, so a hash collision can
// never run the wrong program. Thread-safe.
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ir/graph.h"
#include "runtime/executable.h"

namespace xlite::compiler {

class ExecutableCache {
 public:
  explicit ExecutableCache(size_t capacity);
  std::shared_ptr<runtime::Executable> find(uint64_t hash, const ir::Graph& graph) {
    return find_if(hash, [&](const ir::Graph& cached) { return cached == graph; });
  }
  // The program whose graph `matches` accepts, for callers that have the graph's hash and a way to
  // recognise it but have not built it (lazy::PendingGraph).
  template <class Matches>
  std::shared_ptr<runtime::Executable> find_if(uint64_t hash, const Matches& matches) {
    std::lock_guard lock(mutex_);
    auto [begin, end] = index_.equal_range(hash);
    for (auto it = begin; it != end; ++it) {
      if (matches(it->second->graph)) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return lru_.front().exe;
      }
    }
    return nullptr;
  }
  void insert(uint64_t hash, const ir::Graph& graph, std::shared_ptr<runtime::Executable> exe);
  size_t size() const;
  size_t capacity() const;
  void set_capacity(size_t capacity);
  void clear();

 private:
  struct Entry {
    uint64_t hash;
    ir::Graph graph;
    std::shared_ptr<runtime::Executable> exe;
  };
  void evict_locked();

  size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recent first
  std::unordered_multimap<uint64_t, std::list<Entry>::iterator> index_;
};

ExecutableCache& executable_cache();

// Verifies and compiles a graph with the selected backend (XLITE_BACKEND, default "cpu").
std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph);
std::string backend_name();
// Verifies and compiles with a named backend ("reference", ...); throws xlite::Error for an unknown name.
std::shared_ptr<runtime::Executable> compile_with(const ir::Graph& graph, const std::string& backend);
std::vector<std::string> backend_names();

}  // namespace xlite::compiler
