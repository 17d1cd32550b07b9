// XLITE_* variables parse with units and checks; garbage raises a clear error (see also the ctest
// entries environment_* in CMakeLists.txt, which set the variables for a whole process).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <xlite/xlite.h>

#include "core/environment.h"
#include "test_support.h"

namespace env = xlite::env;

namespace {

TEST(Environment, ByteSizesTakeTheUsualSuffixes) {
  EXPECT_EQ(env::parse_bytes("8G"), int64_t{8} << 30);
  EXPECT_EQ(env::parse_bytes("8g"), int64_t{8} << 30);
  EXPECT_EQ(env::parse_bytes("8GiB"), int64_t{8} << 30);
  EXPECT_EQ(env::parse_bytes("8GB"), int64_t{8'000'000'000});
  EXPECT_EQ(env::parse_bytes("512 MiB"), int64_t{512} << 20);
  EXPECT_EQ(env::parse_bytes("64k"), 65536);
  EXPECT_EQ(env::parse_bytes("1000000"), 1000000);
  EXPECT_EQ(env::parse_bytes("123B"), 123);
  EXPECT_EQ(env::parse_bytes("1.5G"), int64_t{3} << 29);
  EXPECT_EQ(env::parse_bytes("2T"), int64_t{2} << 40);
  for (const char* bad : {"", "G", "8X", "-8G", "8 G B", "1.2.3", "0.3B", "99999999999T", "1e9", "8G extra", "."})
    EXPECT_EQ(env::parse_bytes(bad), std::nullopt) << bad;
}

TEST(Environment, IntegersAndSwitchesAreChecked) {
  EXPECT_EQ(env::parse_int("2048", 1, 1 << 20), 2048);
  EXPECT_EQ(env::parse_int(" 7 ", 1, 10), 7);
  EXPECT_EQ(env::parse_int("0", 1, 10), std::nullopt);
  EXPECT_EQ(env::parse_int("12abc", 1, 100), std::nullopt);
  EXPECT_EQ(env::parse_int("99999999999999999999", 1, INT64_MAX), std::nullopt);
  EXPECT_EQ(env::parse_switch("1"), true);
  EXPECT_EQ(env::parse_switch("ON"), true);
  EXPECT_EQ(env::parse_switch("0"), false);
  EXPECT_EQ(env::parse_switch("2"), std::nullopt);
}

// Run by ctest with XLITE_MEMORY_LIMIT=8G (environment_memory_limit_suffix): the limit is 8 GiB, not 8
// bytes.
TEST(Environment, MemoryLimitFromTheEnvironment) {
  const char* value = std::getenv("XLITE_MEMORY_LIMIT");
  if (!value || std::string(value) != "8G") GTEST_SKIP() << "run with XLITE_MEMORY_LIMIT=8G";
  EXPECT_EQ(xlite::get_memory_info(xlite::Device{}).bytes_limit, int64_t{8} << 30);
  EXPECT_EQ(xlite::ones({4}).sum().item<float>(), 4.0f);
}

// Run by ctest with XLITE_MEMORY_LIMIT=8X (environment_garbage_is_refused): the first use says why.
TEST(Environment, GarbageIsRefusedOnFirstUse) {
  const char* value = std::getenv("XLITE_MEMORY_LIMIT");
  if (!value || std::string(value) != "8X") GTEST_SKIP() << "run with XLITE_MEMORY_LIMIT=8X";
  const std::string message = xlite_test::ErrorMessage([] { xlite::ones({4}).sum().item<float>(); });
  EXPECT_EQ(message.rfind("[environment] XLITE_MEMORY_LIMIT='8X' is not a size in bytes > 0", 0), 0u) << message;
  // And again: the error does not go away after the first report.
  EXPECT_EQ(xlite_test::ErrorMessage([] { xlite::get_memory_info(xlite::Device{}); }), message);
}

TEST(Environment, DeviceCountOutOfRangeIsRefused) {
  const char* value = std::getenv("XLITE_NUM_CPU_DEVICES");
  if (!value || std::string(value) != "65") GTEST_SKIP() << "run with XLITE_NUM_CPU_DEVICES=65";
  const std::string message = xlite_test::ErrorMessage([] { xlite::device_count(); });
  EXPECT_EQ(message.rfind("[environment] XLITE_NUM_CPU_DEVICES='65' is not a number of virtual CPU devices", 0), 0u)
      << message;
}

}  // namespace
