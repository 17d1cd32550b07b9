#pragma once
// The persistent compilation cache's store: blobs on disk by key, one file each. Target-neutral: a target
// puts in its key everything the blob depends on (the region's text, versions, CPU features) and decides
// what the blob holds. An entry is checked before it is used (its length, a checksum and the whole key):
// a corrupt, truncated or colliding one is counted as PersistentCacheBadEntry, removed (unless read-only)
// and reported as a miss. Writes go to a temporary file renamed into place, so a reader never sees half an
// entry and concurrent writers of one key leave one whole entry.
#include <optional>
#include <string>
#include <string_view>

namespace xlite::runtime::persistent_cache {

bool enabled();
std::optional<std::string> load(std::string_view key);
void store(std::string_view key, std::string_view blob);

}  // namespace xlite::runtime::persistent_cache
