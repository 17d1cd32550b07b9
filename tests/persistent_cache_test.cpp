// The persistent compilation cache (xlite/cache.h), across processes: ctest runs these tests in processes of
// their own with XLITE_CACHE_DIR and XLITE_TEST_CACHE_PHASE set (persistent_cache_*, in order: cold fills the
// folder, warm loads every kernel from it, corrupt damages the entries, readonly must not write, bounded keeps
// a small folder small). Without XLITE_CACHE_DIR they skip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include <xlite/xlite.h>

namespace xl = xlite;
namespace fs = std::filesystem;

namespace {
std::string Phase() {
  const char* dir = std::getenv("XLITE_CACHE_DIR");
  const char* phase = std::getenv("XLITE_TEST_CACHE_PHASE");
  return dir && phase ? phase : "";
}

int64_t Counter(const char* name) { return xl::metrics::counter_value(name); }

struct Folder {
  int64_t entries = 0;
  uintmax_t bytes = 0;
};
Folder FolderNow() {
  Folder f;
  for (const auto& item : fs::directory_iterator(std::getenv("XLITE_CACHE_DIR"))) {
    if (item.path().extension() != ".xpc") continue;
    ++f.entries;
    f.bytes += item.file_size();
  }
  return f;
}

// A few kernels of different kinds (elementwise, reductions, a GEMM), with results known on the host.
void RunModelAndCheck(int64_t width) {
  std::vector<float> host(static_cast<size_t>(4 * width));
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  xl::Tensor x = xl::tensor(host, {4, width});
  xl::Tensor y = xl::tanh(x * 2.0) + 1.0;
  xl::Tensor rows = xl::sum(xl::exp(y), {1});
  xl::Tensor gram = xl::matmul(x, xl::transpose(x, 0, 1));
  std::vector<float> got_rows = rows.to_vector<float>();
  std::vector<float> got_gram = gram.to_vector<float>();
  for (int64_t r = 0; r < 4; ++r) {
    double want = 0;
    for (int64_t c = 0; c < width; ++c) want += std::exp(std::tanh(2.0 * host[r * width + c]) + 1.0);
    EXPECT_NEAR(got_rows[r], want, 1e-4 * want) << "row " << r;
    for (int64_t s = 0; s < 4; ++s) {
      double dot = 0;
      for (int64_t c = 0; c < width; ++c) dot += double(host[r * width + c]) * host[s * width + c];
      EXPECT_NEAR(got_gram[r * 4 + s], dot, 1e-4 * (1 + std::abs(dot)));
    }
  }
}
}  // namespace

TEST(PersistentCache, ACacheFilledByOneProcessServesTheNext) {
  const std::string phase = Phase();
  if (phase != "cold" && phase != "warm") GTEST_SKIP() << "run by ctest (persistent_cache_cold, _warm)";
  RunModelAndCheck(33);
  // Threads compiling at once write whole entries.
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([t] { RunModelAndCheck(40 + t); });
  for (auto& thread : threads) thread.join();
  if (phase == "cold") {
    EXPECT_GT(Counter("PersistentCacheWrite"), 0);
    EXPECT_EQ(Counter("PersistentCacheHit"), 0);
    EXPECT_EQ(Counter("PersistentCacheWrite"), FolderNow().entries);
  } else {
    // Every kernel came from the folder: LLVM compiled nothing, so nothing was written.
    EXPECT_GT(Counter("PersistentCacheHit"), 0);
    EXPECT_EQ(Counter("PersistentCacheMiss"), 0);
    EXPECT_EQ(Counter("PersistentCacheWrite"), 0);
  }
  EXPECT_EQ(Counter("PersistentCacheBadEntry"), 0);
}

TEST(PersistentCache, DamagedEntriesAreDetectedAndCompiledAgain) {
  if (Phase() != "corrupt") GTEST_SKIP() << "run by ctest (persistent_cache_corrupt)";
  // Each entry damaged a different way: truncated, a flipped byte, emptied, or garbage.
  int k = 0;
  for (const auto& item : fs::directory_iterator(std::getenv("XLITE_CACHE_DIR"))) {
    if (item.path().extension() != ".xpc") continue;
    const uintmax_t size = item.file_size();
    switch (k++ % 4) {
      case 0: fs::resize_file(item.path(), size / 2); break;
      case 1: {
        std::fstream f(item.path(), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(size - 3));
        f.put('\x5a');
        break;
      }
      case 2: fs::resize_file(item.path(), 0); break;
      case 3: std::ofstream(item.path(), std::ios::binary | std::ios::trunc) << "not an entry at all"; break;
    }
  }
  ASSERT_GE(k, 4);
  RunModelAndCheck(33);
  EXPECT_GT(Counter("PersistentCacheBadEntry"), 0);
  EXPECT_GT(Counter("PersistentCacheWrite"), 0);  // compiled again and written whole
  EXPECT_EQ(Counter("PersistentCacheHit"), 0);
}

TEST(PersistentCache, AReadOnlyCacheIsNeverWritten) {
  if (Phase() != "readonly") GTEST_SKIP() << "run by ctest (persistent_cache_readonly)";
  const Folder before = FolderNow();
  RunModelAndCheck(33);  // cached by the earlier phases
  RunModelAndCheck(57);  // new kernels: compiled, not written
  EXPECT_GT(Counter("PersistentCacheHit"), 0);
  EXPECT_GT(Counter("PersistentCacheMiss"), 0);
  EXPECT_EQ(Counter("PersistentCacheWrite"), 0);
  EXPECT_EQ(FolderNow().entries, before.entries);
  EXPECT_EQ(FolderNow().bytes, before.bytes);
}

TEST(PersistentCache, TheFolderStaysWithinItsBound) {
  if (Phase() != "bounded") GTEST_SKIP() << "run by ctest (persistent_cache_bounded)";
  const uintmax_t bound = std::strtoull(std::getenv("XLITE_CACHE_MAX_BYTES"), nullptr, 10);
  for (int64_t width = 20; width < 30; ++width) RunModelAndCheck(width);
  EXPECT_GT(Counter("PersistentCacheWrite"), FolderNow().entries);  // some were evicted
  EXPECT_LE(FolderNow().bytes, bound);
  EXPECT_GT(FolderNow().entries, 0);
}

TEST(PersistentCache, ABadFolderIsRefused) {
  const std::string file = testing::TempDir() + "/xlite_cache_not_a_folder";
  std::ofstream(file) << "x";
  try {
    xl::initialize_cache(file + "/inside");
    FAIL() << "a folder under a file was accepted";
  } catch (const xl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("[initialize_cache]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(xl::initialize_cache(testing::TempDir() + "/xlite_no_such_folder", /*readonly=*/true), xl::Error);
}
