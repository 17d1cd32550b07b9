// The persistent compilation cache (xlite/cache.h), across processes: ctest runs these tests in processes of
// their own with XLITE_CACHE_DIR and XLITE_TEST_CACHE_PHASE set (persistent_cache_*, in order: cold fills the
// folder, warm loads every kernel from it, corrupt damages the entries, readonly must not write, bounded keeps
// a small folder small, concurrent has processes write one folder at once). Without XLITE_CACHE_DIR they
// skip.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include <xlite/xlite.h>

extern char** environ;

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

namespace {
constexpr int kWriters = 4;
const int64_t kWriterWidths[] = {33, 40, 41, 42};

// Starts this test binary running only `test`, with XLITE_TEST_CACHE_PHASE set to `phase`.
pid_t SpawnSelf(const std::string& test, const std::string& phase) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("XLITE_TEST_CACHE_PHASE=", 0) != 0) env.emplace_back(*e);
  env.push_back("XLITE_TEST_CACHE_PHASE=" + phase);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = fs::read_symlink("/proc/self/exe").string(), filter = "--gtest_filter=" + test;
  char* argv[] = {exe.data(), filter.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  return pid;
}

// Beside the cache folder, which does not exist before the first compile.
std::string GoFile() {
  return (fs::path(std::getenv("XLITE_CACHE_DIR")).parent_path() / "xlite_cache_writers_go").string();
}
}  // namespace

// Processes that compile the same kernels at the same moment into one folder: each entry is written to a
// file of its own and renamed into place, so that a reader sees a whole entry or none, never a torn one.
TEST(PersistentCache, ProcessesWritingAtOnceLeaveWholeEntries) {
  if (Phase() != "concurrent") GTEST_SKIP() << "run by ctest (persistent_cache_concurrent)";
  std::remove(GoFile().c_str());
  std::vector<pid_t> writers;
  for (int w = 0; w < kWriters; ++w) writers.push_back(SpawnSelf("PersistentCache.AWriterProcess", "writer"));
  ASSERT_TRUE(std::ofstream(GoFile()) << "go");  // the writers start compiling together
  for (pid_t pid : writers) {
    ASSERT_GT(pid, 0) << "could not start a writer process";
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer process failed: status " << status;
  }
  std::remove(GoFile().c_str());
  // This process compiled nothing yet: every kernel must load from what the writers left.
  for (int64_t width : kWriterWidths) RunModelAndCheck(width);
  EXPECT_GT(Counter("PersistentCacheHit"), 0);
  EXPECT_EQ(Counter("PersistentCacheMiss"), 0);
  EXPECT_EQ(Counter("PersistentCacheBadEntry"), 0);
  for (const auto& item : fs::directory_iterator(std::getenv("XLITE_CACHE_DIR")))
    EXPECT_EQ(item.path().extension(), ".xpc") << "a temporary file was left: " << item.path();
}

// One of the writers above (phase "writer"): waits for the go file, then compiles every width, its threads
// racing each other as well as the other processes.
TEST(PersistentCache, AWriterProcess) {
  if (Phase() != "writer") GTEST_SKIP() << "started by PersistentCache.ProcessesWritingAtOnceLeaveWholeEntries";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(GoFile()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(fs::exists(GoFile())) << "no go file " << GoFile();
  std::vector<std::thread> threads;
  for (int64_t width : kWriterWidths) threads.emplace_back([width] { RunModelAndCheck(width); });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(Counter("PersistentCacheBadEntry"), 0);
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
