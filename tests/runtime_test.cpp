// Runtime pieces: memory info, the compile cache, metrics, dtype helpers and the generator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <xlite/xlite.h>

#include "compiler/cache.h"
#include "core/half.h"
#include "core/philox.h"
#include "ir/graph.h"
#include "ops/op_support.h"

namespace xl = xlite;

TEST(MemoryInfo, ReportsUseOfLiveTensors) {
  auto before = xl::get_memory_info(xl::device()).bytes_used;
  {
    auto t = xl::zeros({1024, 256});
    xl::sync();
    EXPECT_GE(xl::get_memory_info(xl::device()).bytes_used, before + 1024 * 256 * 4);
    EXPECT_GE(xl::get_memory_info(xl::device()).peak_bytes_used, before + 1024 * 256 * 4);
  }
  EXPECT_EQ(xl::get_memory_info(xl::device()).bytes_used, before);
  EXPECT_GT(xl::get_memory_info(xl::device()).bytes_limit, 0);
}

TEST(CompileCache, EvictsLeastRecentlyUsed) {
  xl::compiler::ExecutableCache cache(2);
  auto graph_of = [](int64_t n) {
    return xl::ir::parse_graph("%0 = parameter(index=0) : f32[" + std::to_string(n) + "]\nreturn %0\n");
  };
  auto g1 = graph_of(1), g2 = graph_of(2), g3 = graph_of(3);
  auto exe = xl::compiler::compile(g1);
  cache.insert(g1.hash(), g1, exe);
  cache.insert(g2.hash(), g2, exe);
  EXPECT_NE(cache.find(g1.hash(), g1), nullptr);  // g1 is now the most recent
  cache.insert(g3.hash(), g3, exe);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(cache.find(g1.hash(), g1), nullptr);
  EXPECT_EQ(cache.find(g2.hash(), g2), nullptr);
  EXPECT_NE(cache.find(g3.hash(), g3), nullptr);
  // A colliding hash with another graph is a miss, never the wrong program.
  EXPECT_EQ(cache.find(g1.hash(), g3), nullptr);
}

TEST(CompileCache, DefaultCapacityIs2048) {
  if (std::getenv("XLITE_COMPILATION_CACHE_SIZE")) GTEST_SKIP() << "capacity set by the environment";
  EXPECT_EQ(xl::compiler::executable_cache().capacity(), 2048u);
}

// A metric keeps its last 1024 samples, oldest first, however many were recorded.
TEST(Metrics, RecentSamplesAreTheLastOnesInOrder) {
  xl::metrics::clear_all();
  for (int i = 0; i < 2500; ++i) xl::metrics::add_sample("Many", i);
  auto data = xl::metrics::metric_data("Many");
  EXPECT_EQ(data.samples, 2500);
  ASSERT_EQ(data.recent.size(), 1024u);
  for (size_t k = 0; k < data.recent.size(); ++k) ASSERT_EQ(data.recent[k], 2500 - 1024 + static_cast<double>(k)) << k;
}

TEST(Metrics, CountersAndSamples) {
  xl::metrics::clear_all();
  EXPECT_EQ(xl::metrics::counter_value("NeverTouched"), 0);
  xl::metrics::increment_counter("MyCounter", 3);
  xl::metrics::add_sample("MyTime", 10);
  xl::metrics::add_sample("MyTime", 30);
  EXPECT_EQ(xl::metrics::counter_value("MyCounter"), 3);
  auto data = xl::metrics::metric_data("MyTime");
  EXPECT_EQ(data.samples, 2);
  EXPECT_DOUBLE_EQ(data.total, 40);
  EXPECT_EQ(data.recent, (std::vector<double>{10, 30}));
  auto names = xl::metrics::counter_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "MyCounter"), names.end());
  std::string report = xl::metrics::metrics_report();
  EXPECT_NE(report.find("Counter: MyCounter"), std::string::npos);
  EXPECT_NE(report.find("Metric: MyTime"), std::string::npos);
  auto t = xl::exp(xl::tensor(1.0f));
  xl::sync();
  EXPECT_GT(xl::metrics::counter_value("UncachedCompile") + xl::metrics::counter_value("CachedCompile"), 0);
  for (const char* name : {"CreateTensor", "TransferToDevice", "Sync", "Execute"})
    EXPECT_GT(xl::metrics::counter_value(name), 0) << name;
  xl::metrics::clear_all();
  EXPECT_EQ(xl::metrics::counter_value("MyCounter"), 0);
}

TEST(Dtype, NamesSizesAndParsing) {
  for (auto d : {xl::DType::f32, xl::DType::f64, xl::DType::f16, xl::DType::bf16, xl::DType::i32, xl::DType::i64,
                 xl::DType::u8, xl::DType::bool_})
    EXPECT_EQ(xl::dtype_from_name(xl::dtype_name(d)), d);
  EXPECT_EQ(xl::dtype_size(xl::DType::bf16), 2);
  EXPECT_EQ(xl::dtype_size(xl::DType::i64), 8);
  EXPECT_THROW(xl::dtype_from_name("f128"), xl::Error);
  EXPECT_EQ(xl::shape_str({2, 3}), "[2,3]");
  EXPECT_EQ(xl::device().str(), "cpu:0");
  const char* devices = std::getenv("XLITE_NUM_CPU_DEVICES");  // ctest sets 4
  EXPECT_EQ(xl::device_count(), devices ? std::atoi(devices) : 1);
  EXPECT_THROW(xl::device(xl::device_count()), xl::Error);
  EXPECT_THROW(xl::device(-1), xl::Error);
}

TEST(Dtype, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(xl::float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(xl::float_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(xl::float_to_f16(65520.0f), 0x7c00);  // rounds to inf
  EXPECT_EQ(xl::float_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(xl::float_to_f16(5.9604645e-08f), 0x0001);      // smallest subnormal
  EXPECT_EQ(xl::float_to_f16(1.0f + 1.0f / 2048), 0x3c00);  // a tie rounds to even
  EXPECT_EQ(xl::float_to_f16(1.0f + 3.0f / 2048), 0x3c02);
  EXPECT_TRUE(std::isnan(xl::f16_to_float(xl::float_to_f16(NAN))));
  EXPECT_FLOAT_EQ(xl::f16_to_float(0x3555), 0.333251953125f);
  EXPECT_FLOAT_EQ(xl::f16_to_float(0x0001), 5.9604645e-08f);
  EXPECT_EQ(xl::float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(xl::float_to_bf16(1.0f + 1.0f / 256), 0x3f80);  // tie to even
  EXPECT_EQ(xl::float_to_bf16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_FLOAT_EQ(xl::bf16_to_float(0x4049), 3.140625f);
  for (float f : {0.1f, -2.5f, 1000.0f, 1e-3f})
    EXPECT_NEAR(xl::f16_to_float(xl::float_to_f16(f)), f, std::fabs(f) * 1e-3);
}

TEST(Dtype, PromotionFollowsPyTorch) {
  using xl::DType;
  using xl::ops::promote_types;
  EXPECT_EQ(promote_types(DType::u8, DType::i32), DType::i32);
  EXPECT_EQ(promote_types(DType::i64, DType::f16), DType::f16);
  EXPECT_EQ(promote_types(DType::f16, DType::bf16), DType::f32);
  EXPECT_EQ(promote_types(DType::bool_, DType::u8), DType::u8);
  EXPECT_EQ(promote_types(DType::f32, DType::f64), DType::f64);
  auto i = xl::tensor(std::vector<int32_t>{1});
  auto h = xl::tensor(std::vector<float>{1}).to(DType::f16);
  auto d0 = xl::full({}, 2.0, DType::f64);  // 0-dim f64
  EXPECT_EQ((i + 2.5).dtype(), DType::f32);
  EXPECT_EQ((i + 2).dtype(), DType::i32);
  EXPECT_EQ((h * 2.5).dtype(), DType::f16);
  EXPECT_EQ((h * d0).dtype(), DType::f16);  // a 0-dim tensor does not widen a dimensioned one
  EXPECT_EQ((i * d0).dtype(), DType::f64);  // but a higher category wins
  EXPECT_EQ((xl::tensor(std::vector<bool>{true}) + 1).dtype(), DType::i64);
  EXPECT_EQ((i / i).dtype(), DType::f32);
  EXPECT_EQ(xl::sum(i).dtype(), DType::i64);
}

TEST(Philox, MatchesTheKnownAnswerVector) {
  // Random123's known-answer test for philox4x32-10 with a zero counter and key.
  auto r = xl::philox::philox4x32_10({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(r, (xl::philox::Block{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
}
