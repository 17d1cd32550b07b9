#pragma once
// The persistent compilation cache (PyTorch/XLA's torch_xla.runtime.initialize_cache): compiled kernels kept
// on disk as object code, so that a second process compiling the same model loads them instead of running
// LLVM. XLITE_CACHE_DIR=path does the same as calling initialize_cache(path) before the first compilation;
// XLITE_CACHE_MAX_BYTES bounds its size (least recently used entries go first). Counters:
// PersistentCacheHit, PersistentCacheMiss, PersistentCacheWrite, PersistentCacheBadEntry.
#include <string>

namespace xlite {

// Uses `path` (made if missing) from now on. A read-only cache is never written: no new entries, no
// access-time updates, no eviction. Raises xlite::Error when the path cannot be made or is not a directory.
void initialize_cache(const std::string& path, bool readonly = false);

}  // namespace xlite
