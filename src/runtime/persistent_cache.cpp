#include "runtime/persistent_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "core/environment.h"
#include "core/runtime_context.h"
#include "xlite/cache.h"
#include "xlite/error.h"
#include "xlite/metrics.h"

namespace fs = std::filesystem;

namespace xlite::runtime::persistent_cache {
namespace {

// An entry: magic, key length, blob length, checksum of key and blob, then the key and the blob.
constexpr char kMagic[8] = {'X', 'L', 'I', 'T', 'E', 'P', 'C', '1'};
constexpr size_t kHeaderBytes = sizeof kMagic + 3 * sizeof(uint64_t);
constexpr const char* kSuffix = ".xpc";

uint64_t fnv1a(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string file_name(std::string_view key) {
  char name[40];
  // Two hashes with different seeds: 128 bits, so distinct keys practically never share a file (and one
  // that does is caught by the key stored inside).
  std::snprintf(name, sizeof name, "%016llx%016llx", static_cast<unsigned long long>(fnv1a(key)),
                static_cast<unsigned long long>(fnv1a(key, 0x84222325cbf29ce4ull)));
  return std::string(name) + kSuffix;
}

struct Store final : RuntimeState {
  std::mutex mutex;
  std::string dir;  // empty: no persistent cache
  bool readonly = false;
  int64_t max_bytes = env::settings().cache_max_bytes;
  std::atomic<uint64_t> temp_serial{0};
  Store() {
    if (!env::settings().cache_dir.empty()) open(env::settings().cache_dir, env::settings().cache_readonly);
  }
  void open(const std::string& path, bool read_only) {
    std::error_code error;
    if (!read_only) fs::create_directories(path, error);
    if (!fs::is_directory(path, error))
      throw Error("[initialize_cache] " + path + " is not a directory" +
                  (read_only ? " (a read-only cache is not made)" : "") + (error ? ": " + error.message() : ""));
    dir = path;
    readonly = read_only;
  }
  std::string describe() const override {
    return dir.empty() ? "off"
                       : dir + (readonly ? " (read-only)" : "") + ", at most " + std::to_string(max_bytes) + " B";
  }
};
Store& store_state() { return runtime_context::state<Store>("persistent compilation cache"); }

void count(const char* counter) { metrics::increment_counter(counter); }

// Oldest entries (by the time they were last used) go first until the folder holds at most max_bytes.
void evict(const Store& s) {
  struct Entry {
    fs::file_time_type used;
    uintmax_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code error;
  for (const auto& item : fs::directory_iterator(s.dir, error)) {
    if (item.path().extension() != kSuffix) continue;
    std::error_code e;
    Entry entry{item.last_write_time(e), item.file_size(e), item.path()};
    if (e) continue;  // removed by another process meanwhile
    total += entry.bytes;
    entries.push_back(std::move(entry));
  }
  if (total <= static_cast<uintmax_t>(s.max_bytes)) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& entry : entries) {
    if (total <= static_cast<uintmax_t>(s.max_bytes)) break;
    std::error_code e;
    if (fs::remove(entry.path, e)) total -= entry.bytes;
  }
}

}  // namespace

bool enabled() { return !store_state().dir.empty(); }

std::optional<std::string> load(std::string_view key) {
  Store& s = store_state();
  std::lock_guard lock(s.mutex);
  if (s.dir.empty()) return std::nullopt;
  const fs::path path = fs::path(s.dir) / file_name(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    count("PersistentCacheMiss");
    return std::nullopt;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&]() -> std::optional<std::string> {
    count("PersistentCacheBadEntry");
    count("PersistentCacheMiss");
    std::error_code e;
    if (!s.readonly) fs::remove(path, e);
    return std::nullopt;
  };
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return bad();
  uint64_t sizes[3];
  std::memcpy(sizes, bytes.data() + sizeof kMagic, sizeof sizes);
  const auto [key_bytes, blob_bytes, checksum] = sizes;
  if (key_bytes > bytes.size() || blob_bytes > bytes.size() || kHeaderBytes + key_bytes + blob_bytes != bytes.size())
    return bad();
  const std::string_view body = std::string_view(bytes).substr(kHeaderBytes);
  if (fnv1a(body) != checksum || body.substr(0, key_bytes) != key) return bad();
  count("PersistentCacheHit");
  if (!s.readonly) {
    std::error_code e;
    fs::last_write_time(path, fs::file_time_type::clock::now(), e);  // the access time eviction goes by
  }
  return std::string(body.substr(key_bytes));
}

void store(std::string_view key, std::string_view blob) {
  Store& s = store_state();
  std::lock_guard lock(s.mutex);
  if (s.dir.empty() || s.readonly) return;
  std::string body;
  body.reserve(key.size() + blob.size());
  body.append(key).append(blob);
  const uint64_t sizes[3] = {key.size(), blob.size(), fnv1a(body)};
  const fs::path path = fs::path(s.dir) / file_name(key);
  const fs::path temp = fs::path(s.dir) / (".tmp-" + std::to_string(getpid()) + "-" +
                                           std::to_string(s.temp_serial.fetch_add(1)) + kSuffix + ".part");
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(sizes), sizeof sizes);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    out.flush();
    if (!out) {  // a full disk or a folder that went away: the cache is an optimisation, so go on without it
      std::error_code e;
      fs::remove(temp, e);
      return;
    }
  }
  std::error_code error;
  fs::rename(temp, path, error);
  if (error) {
    fs::remove(temp, error);
    return;
  }
  count("PersistentCacheWrite");
  evict(s);
}

}  // namespace xlite::runtime::persistent_cache

namespace xlite {
void initialize_cache(const std::string& path, bool readonly) {
  runtime::persistent_cache::Store& s = runtime::persistent_cache::store_state();
  std::lock_guard lock(s.mutex);
  s.open(path, readonly);
}
}  // namespace xlite
