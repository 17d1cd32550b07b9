// Sizes that do not fit in 64 bits raise xlite::Error naming the op and the shape when the op is called
// (ir/sizes.h), instead of wrapping into silent zeros, negative dims or crashes downstream; legal but huge
// sizes fail cleanly as out of memory on every backend.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "backend_support.h"
#include "passes/memory_plan.h"
#include "ir/graph.h"
#include "runtime/allocator.h"
#include "test_support.h"

namespace {
namespace xl = xlite;
using namespace xlite_test;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k62 = int64_t{1} << 62;

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

#define EXPECT_ERROR_STARTS(expr, prefix)                             \
  do {                                                                \
    std::string message_ = ErrorMessage([&] { (void)(expr); });       \
    EXPECT_TRUE(StartsWith(message_, prefix)) << "got: " << message_; \
  } while (0)

TEST(Sizes, FactoryWhoseElementCountOverflowsNamesTheOpAndShape) {
  // Used to sum to 0: 2^64 elements wrapped to none.
  EXPECT_ERROR_STARTS(xl::ones({k62, 4}).sum().item<float>(),
                      "[ones] shape [4611686018427387904,4] of f32 is too large");
  EXPECT_ERROR_STARTS(xl::zeros({kMax}), "[zeros] shape [9223372036854775807] of f32 is too large");
  EXPECT_ERROR_STARTS(xl::full({int64_t{1} << 61, 2}, 1.0, DType::f64), "[full] shape [2305843009213693952,2] of f64");
  EXPECT_ERROR_STARTS(xl::rand({int64_t{1} << 62}), "[rand] shape [4611686018427387904] of f32");
  EXPECT_ERROR_STARTS(xl::arange(0, k62), "[arange] shape [4611686018427387904] of i64");
  EXPECT_ERROR_STARTS(xl::eye(int64_t{1} << 32), "[eye] shape [4294967296,4294967296] of i64");
  // An empty shape whose other dims overflow: the strides of its layout would wrap.
  EXPECT_ERROR_STARTS(xl::zeros({0, int64_t{1} << 32, int64_t{1} << 32}), "[zeros] shape [0,4294967296,4294967296]");
  // Host data: a wrapped count of 0 matched an empty vector.
  EXPECT_ERROR_STARTS(xl::tensor(std::vector<float>{}, {int64_t{1} << 32, int64_t{1} << 32}), "[tensor] shape");
  // What fits is fine: 2^62 bytes of u8 is a legal (if unallocatable) shape.
  EXPECT_EQ(xl::zeros({k62}, DType::u8).shape(), (Shape{k62}));
}

TEST(Sizes, ShapeOpsWhoseResultOverflowsNameTheOpAndShape) {
  auto one = xl::ones({1, 1});
  EXPECT_ERROR_STARTS(xl::expand(one, {int64_t{1} << 32, int64_t{1} << 32}).sum().item<float>(),
                      "[expand] shape [4294967296,4294967296] of f32 is too large");
  // Used to give shape [2]: 4 + 2 * INT64_MAX wrapped.
  EXPECT_ERROR_STARTS(xl::pad(xl::arange(4), {kMax, kMax}),
                      "[pad] padding [9223372036854775807,9223372036854775807] of dim 0 of size 4");
  EXPECT_ERROR_STARTS(xl::pad(xl::arange(4), {kMin, kMax}), "[pad] padding [-9223372036854775808,9223372036854775807]");
  EXPECT_ERROR_STARTS(xl::pad(xl::arange(4), {-6, 5}), "[pad] padding [-6,5] crops more than dim 0 of size 4");
  // Used to give a negative dim: two halves of 2^63 elements.
  auto half = xl::expand(xl::ones({1}, DType::u8), {k62});
  EXPECT_ERROR_STARTS(xl::concat({half, half}),
                      "[concat] dim 0 of the result overflows: 4611686018427387904 + 4611686018427387904");
  EXPECT_ERROR_STARTS(xl::reshape(xl::zeros({0}), {int64_t{1} << 32, int64_t{1} << 32}),
                      "[reshape] shape [4294967296,4294967296] is invalid for input [0] of size 0");
  EXPECT_ERROR_STARTS(xl::reshape(xl::zeros({0}), {-1, int64_t{1} << 32, int64_t{1} << 32}),
                      "[reshape] shape [-1,4294967296,4294967296] is invalid");
  EXPECT_ERROR_STARTS(xl::narrow(xl::arange(10), 0, 2, kMax), "[narrow] start 2 and length 9223372036854775807 exceed");
  // INT64_MAX + INT64_MAX + 2 wrapped to 0, the size of the dim.
  EXPECT_ERROR_STARTS(xl::split(xl::zeros({0}), std::vector<int64_t>{kMax, kMax, 2}, 0),
                      "[split] split sizes [9223372036854775807,9223372036854775807,2] do not add up");
  // A stride past the end takes one element; the size used to be computed as limit - start + stride - 1.
  for (const std::string& backend : Backends())
    EXPECT_EQ(ValuesOn<int64_t>(xl::slice(xl::arange(10), 0, 2, 10, kMax), backend), (std::vector<int64_t>{2}))
        << backend;
}

TEST(Sizes, MatmulAndOneHotWhoseResultOverflowsNameTheOp) {
  // Operands of 2^32 floats each, a product of 2^64: it used to be zero elements.
  auto column = xl::expand(xl::ones({1, 1}), {int64_t{1} << 32, 1});
  auto row = xl::expand(xl::ones({1, 1}), {1, int64_t{1} << 32});
  EXPECT_ERROR_STARTS(xl::matmul(column, row), "[matmul] shape [4294967296,4294967296] of f32 is too large");
  EXPECT_ERROR_STARTS(xl::matmul(xl::expand(xl::ones({1, 1, 1}), {k62, 2, 2}), xl::ones({2, 2})),
                      "[expand] shape [4611686018427387904,2,2] of f32");
  EXPECT_ERROR_STARTS(xl::one_hot(I64({0, 1}), k62), "[one_hot] shape [2,4611686018427387904] of i64 is too large");
  EXPECT_ERROR_STARTS(xl::one_hot(I64({0, kMax})), "[one_hot] class value 9223372036854775807 leaves no class count");
}

TEST(Sizes, ArangeCountsExactly) {
  // (INT64_MAX - INT64_MIN) / INT64_MAX rounds up to 3; the count used to wrap to 0.
  auto r = xl::arange(kMin, kMax, kMax);
  EXPECT_EQ(r.shape(), (Shape{3}));
  for (const std::string& backend : Backends())
    EXPECT_EQ(ValuesOn<int64_t>(r, backend), (std::vector<int64_t>{kMin, -1, kMax - 1})) << backend;
  auto down = xl::arange(kMax, kMin, kMin);
  for (const std::string& backend : Backends())
    EXPECT_EQ(ValuesOn<int64_t>(down, backend), (std::vector<int64_t>{kMax, -1})) << backend;
  EXPECT_ERROR_STARTS(xl::arange(kMin, kMax),
                      "[arange] the range from -9223372036854775808 to 9223372036854775807 by 1 has more elements");
  EXPECT_ERROR_STARTS(xl::arange(0.0, 1.0, 1e-30),
                      "[arange] the range from 0 to 1 by 1e-30 has more elements than 64-bit sizes count");
  EXPECT_ERROR_STARTS(xl::arange(-1e308, 1e308, 1e-300), "[arange] the range from -1e+308 to 1e+308");
  // The bounds compared as doubles were equal; as integers they are inconsistent with the step.
  EXPECT_ERROR_STARTS(xl::arange(kMax, kMax - 1),
                      "[arange] upper bound 9223372036854775806 and lower bound 9223372036854775807 are inconsistent");
  EXPECT_ERROR_STARTS(xl::arange(0, -1, 3), "[arange] upper bound -1 and lower bound 0 are inconsistent");
  EXPECT_EQ(xl::arange(0, 10, 3).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(xl::arange(10, 0, -4).to_vector<int64_t>(), (std::vector<int64_t>{10, 6, 2}));
}

TEST(Sizes, HugeResultsOfATraceRaiseBeforeAnythingRuns) {
  // Both used to crash in JIT code or the GEMM call (2^80 elements; output bytes wrapped to 0).
  EXPECT_ERROR_STARTS(xl::sync({xl::zeros({int64_t{1} << 40, int64_t{1} << 40}) + 1}),
                      "[zeros] shape [1099511627776,1099511627776] of f32 is too large");
  EXPECT_ERROR_STARTS(xl::sum(xl::matmul(xl::expand(xl::ones({1, 1}), {int64_t{1} << 31, int64_t{1} << 31}),
                                         xl::expand(xl::ones({1, 1}), {int64_t{1} << 31, int64_t{1} << 31}))),
                      "[expand] shape [2147483648,2147483648] of f32 is too large");
  // Used to loop forever rounding the request up to a size class.
  EXPECT_ERROR_STARTS(xl::sync({xl::zeros({kMax})}), "[zeros] shape [9223372036854775807] of f32 is too large");
}

TEST(Sizes, LegalButHugeGraphsRunOutOfMemoryOnEveryBackend) {
  const std::vector<Tensor> graphs = {
      xl::zeros({int64_t{1} << 40}) + 1,  // 4 TiB
      xl::zeros({kMax}, DType::u8),       // 2^63 - 1 bytes, past every size class
      // 2^44 floats out, 2^66 multiply-adds: the GEMM's work count must not wrap either.
      xl::sum(xl::matmul(xl::expand(xl::ones({1, 1}), {int64_t{1} << 22, int64_t{1} << 22}),
                         xl::expand(xl::ones({1, 1}), {int64_t{1} << 22, int64_t{1} << 22}))),
  };
  for (const Tensor& t : graphs)
    for (const std::string& backend : Backends()) {
      std::string error = RunOn({t}, backend).error;
      EXPECT_TRUE(StartsWith(error, "[allocate] out of memory")) << backend << ": " << error;
    }
}

TEST(Sizes, AllocatorRefusesRequestsNoSizeClassHolds) {
  auto& allocator = xl::runtime::allocator(xl::Device{});
  // Each used to loop forever: the power of two above the request overflowed to 0.
  for (size_t bytes : {(size_t{1} << 63) + 1, std::numeric_limits<size_t>::max(), size_t{1} << 63})
    EXPECT_ERROR_STARTS(allocator.allocate(bytes),
                        "[allocate] out of memory on cpu:0: requested " + std::to_string(bytes));
  EXPECT_EQ(allocator.allocate(100)->bytes(), 100u);
}

TEST(Sizes, VerifierRejectsShapesThatDoNotFit) {
  auto graph_of = [](const std::string& text) { return ErrorMessage([&] { xl::ir::parse_graph(text); }); };
  EXPECT_TRUE(StartsWith(graph_of("%0 = parameter(index=0) : f32[4611686018427387904,4]\nreturn %0\n"),
                         "[verify] %0 parameter: [parameter] shape [4611686018427387904,4] of f32 is too large"));
  EXPECT_TRUE(
      StartsWith(graph_of("%0 = parameter(index=0) : f32[1]\n"
                          "%1 = broadcast(%0, shape=[4294967296,4294967296], dims=[1]) : f32[4294967296,4294967296]\n"
                          "return %1\n"),
                 "[verify] %1 broadcast: [broadcast] shape [4294967296,4294967296] of f32 is too large"));
  xl::ir::Graph iota;
  xl::ir::Instr instr{xl::ir::OpId::iota, {}, {}, {-1}, DType::i64};
  instr.attrs.set_ints(xl::ir::AttrKey::shape, {-1})
      .set_int(xl::ir::AttrKey::dim, 0)
      .set_dtype(xl::ir::AttrKey::dtype, DType::i64);
  iota.instrs.push_back(instr);
  iota.outputs = {0};
  EXPECT_TRUE(StartsWith(ErrorMessage([&] { xl::ir::verify(iota); }),
                         "[verify] %0 iota: [iota] shape [-1] has a negative dim -1"));
}

TEST(Sizes, MemoryPlanTotalsSaturateInsteadOfWrapping) {
  // Values of 2^62 bytes each, every total past 2^63: three arguments (two of them returned as they are),
  // two outputs, and two temporaries alive at once.
  xl::ir::Graph graph = xl::ir::parse_graph(
      "%0 = parameter(index=0) : u8[4611686018427387904]\n"
      "%1 = parameter(index=1) : u8[4611686018427387904]\n"
      "%2 = parameter(index=2) : u8[4611686018427387904]\n"
      "%3 = neg(%0) : u8[4611686018427387904]\n"
      "%4 = neg(%0) : u8[4611686018427387904]\n"
      "%5 = add(%3, %4) : u8[4611686018427387904]\n"
      "%6 = neg(%0) : u8[4611686018427387904]\n"
      "return %1, %2, %5, %6\n");
  auto stats = xl::passes::plan_memory(graph, {3, 4, 5, 6}, {{0}, {0}, {3, 4}, {0}});
  EXPECT_EQ(stats.argument_bytes, kMax);
  EXPECT_EQ(stats.alias_bytes, kMax);
  EXPECT_EQ(stats.output_bytes, kMax);
  EXPECT_EQ(stats.temp_bytes, kMax);
  // Below the limit the totals are exact.
  auto small = xl::passes::plan_memory(xl::ir::parse_graph("%0 = parameter(index=0) : f32[3]\n%1 = neg(%0) : f32[3]\n"
                                                           "%2 = neg(%1) : f32[3]\nreturn %2\n"),
                                       {1, 2}, {{0}, {1}});
  EXPECT_EQ(small.argument_bytes, 12);
  EXPECT_EQ(small.output_bytes, 12);
  EXPECT_EQ(small.temp_bytes, 12);
}

}  // namespace
