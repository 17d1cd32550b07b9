// Buffer reuse inside a compiled program: a loop writes its value over an intermediate that dies there
// (passes::in_place_writes), and the schedule orders steps so that fewer large values are alive at once
// (compiler/schedule.h). Each case checks the plan's bytes, what the allocator held, and the values against
// the reference backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>
#include <xlite/xlite.h>

#include "compiler/cache.h"
#include "lazy/graph_builder.h"
#include "tensor/tensor_impl.h"

namespace xl = xlite;

namespace {
constexpr int64_t kN = 256;
constexpr int64_t kSquare = kN * kN * 4;  // bytes of one [kN, kN] f32 value

struct Compiled {
  std::shared_ptr<xl::runtime::Executable> exe;
  std::vector<xl::BufferPtr> arguments;
  std::vector<xl::BufferPtr> want;
};

Compiled compile(const std::vector<xl::Tensor>& outputs) {
  std::vector<std::shared_ptr<const xl::ir::Node>> roots;
  for (const xl::Tensor& t : outputs) roots.push_back(t.impl()->node());
  auto built = xl::lazy::build_graph(roots);
  Compiled c{xl::compiler::compile_with(built.graph, "cpu"), built.arguments, {}};
  c.want = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
  return c;
}

// Runs the program and compares every output with the reference's; returns the most bytes the run held at
// once beyond what was in use before it.
int64_t run_and_compare(const Compiled& c) {
  const xl::Device cpu{};
  xl::empty_cache(cpu);  // a cached block larger than asked for would count whole
  const int64_t before = xl::get_memory_info(cpu).bytes_used;
  xl::reset_peak_memory(cpu);
  const std::vector<xl::BufferPtr> got = c.exe->run(c.arguments);
  const int64_t held = xl::get_memory_info(cpu).peak_bytes_used - before;
  EXPECT_EQ(got.size(), c.want.size());
  for (size_t o = 0; o < got.size() && o < c.want.size(); ++o) {
    const size_t n = got[o]->bytes() / sizeof(float);
    size_t first_wrong = n;
    for (size_t i = 0; i < n && first_wrong == n; ++i) {
      const float want = c.want[o]->as<float>()[i];
      if (!(std::abs(got[o]->as<float>()[i] - want) <= 1e-3f * (1 + std::abs(want)))) first_wrong = i;
    }
    EXPECT_EQ(first_wrong, n) << "output " << o << " differs from the reference's";
  }
  return held;
}

// Compiles `outputs`, expects the plan's peak of intermediates, runs it against the reference; returns what the
// run held.
int64_t expect_planned_and_run(const std::vector<xl::Tensor>& outputs, int64_t planned_temp_bytes) {
  const Compiled c = compile(outputs);
  EXPECT_EQ(c.exe->memory_stats().temp_bytes, planned_temp_bytes);
  return run_and_compare(c);
}

// x and w: [kN, kN] random; v: a column of ones. On the device before the case traces from them.
struct Operands {
  xl::Tensor x, w, v;
};
Operands operands(uint64_t seed) {
  xl::manual_seed(seed);
  Operands o{xl::randn({kN, kN}) * 0.1f, xl::randn({kN, kN}) * 0.1f, xl::ones({kN, 1})};
  xl::sync();
  return o;
}
}  // namespace

// a = x w (a GEMM's result), b = relu(a) + 1 (a loop that reads a only at the element it writes). Where b is
// a's last reader, b takes a's buffer: one [kN, kN] intermediate at a time, not two. Where a is read after
// b, or b reads a at other elements than its own, b gets a buffer of its own.
TEST(BufferReuse, ALoopWritesOverTheIntermediateItReadsLastAtItsOwnElements) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "about the default cpu backend";
  const auto [x, w, v] = operands(1);
  const xl::Tensor a = xl::matmul(x, w);
  const xl::Tensor b = xl::relu(a) + 1.0f;
  EXPECT_LT(expect_planned_and_run({xl::matmul(b, v)}, kSquare), 2 * kSquare);     // a, b in its place, 1 KiB
  EXPECT_LT(expect_planned_and_run({xl::matmul(b, v), b}, kSquare), 2 * kSquare);  // an output may take it
  // a, b and b w at once: a is read last, by the sum.
  EXPECT_GE(expect_planned_and_run({xl::sum(a * xl::matmul(b, w))}, 3 * kSquare), 3 * kSquare);
  const xl::Tensor rolled = xl::relu(xl::roll(a, {1}, {1})) + 1.0f;  // element (i, j) reads a at (i, j - 1)
  EXPECT_GE(expect_planned_and_run({xl::matmul(rolled, v)}, 2 * kSquare), 2 * kSquare);
}

// h = relu(x w) is read by two GEMMs: h w, at the start of a chain of large values, and h^T u, a small
// product traced after the chain. Run in the traced order, h lives through the chain (h, b and c at once);
// the schedule runs h^T u first, so that h dies where the chain starts.
TEST(BufferReuse, TheScheduleRunsASmallLastReaderEarlySoThatALargeValueDies) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "about the default cpu backend";
  const auto [x, w, u] = operands(5);
  auto h = xl::relu(xl::matmul(x, w));
  auto a = xl::matmul(h, w);
  auto b = xl::tanh(a) * 2.0f;
  auto c = xl::matmul(b, w);
  auto total = xl::sum(xl::exp(c * 0.01f));
  auto late = xl::matmul(xl::transpose(h, 0, 1), u);
  EXPECT_LT(expect_planned_and_run({total, late}, 2 * kSquare), 3 * kSquare);
}

// A relu layer's backward, with g the gradient arriving from above: the activation's gradient reads the
// activation h only through h > 0, which is kept in a byte per element (fusion's compact mask), so h dies
// after the weight gradient h^T g instead of living until the activation's gradient is computed.
TEST(BufferReuse, AReluGradientKeepsItsMaskSoThatTheActivationDiesEarly) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "about the default cpu backend";
  const auto [x, w, v] = operands(9);
  const xl::Tensor g = operands(10).x;
  const xl::Tensor h = xl::relu(xl::matmul(x, w));
  const xl::Tensor y = xl::matmul(h, w);
  const xl::Tensor weight_gradient = xl::matmul(xl::transpose(h, 0, 1), g);
  const xl::Tensor input_gradient = xl::matmul(xl::where(h > 0.0f, xl::matmul(g, w), 0.0f), v);
  // h and its mask, then the mask and g w (the activation's gradient written over it); 2 * kSquare without.
  // The run also holds its outputs y and h^T g.
  EXPECT_LT(expect_planned_and_run({y, weight_gradient, input_gradient}, kSquare + kSquare / 4),
            2 * kSquare + kSquare * 3 / 2);
}
