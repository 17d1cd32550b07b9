// Accuracy of long floating reductions (sum, mean, var, logsumexp, softmax, a gradient norm) at 10^3 to
// 10^8 elements, along the contiguous dim and along strided dims, against the same values computed on
// the host in long double. Both backends run the same graph: the compiled loops sum in blocks (see
// emit_reduction in src/backends/cpu/emitter.cpp), the reference sums with compensation.
//
// The bound. With u = 2^-24, a chain of k float additions errs by at most (k - 1) u times the sum of
// the |x| it adds. The compiled loops add at most 16 floats per chain along the contiguous dim (a block
// of 512 elements over 32 vector lanes, then a 5-level tree across the lanes) and at most 32 down a
// strided dim (32 rows of a column, or 32 elements of a middle dim), then each block into a double
// total (~n * 2^-53, nothing at these sizes): at most ~31 u = 15.5 eps_f32 times sum|x| however long
// the reduction. mean, var and softmax round a few more times (softmax's exp is within 1e-6 = 8.4 eps).
// With the positive data used here sum|x| = |sum x|, so every relative error must stay below
// kBound = 32 eps_f32, whatever n; the reference's compensated double sums are far inside it. A naive
// float running sum exceeds it from about 10^6 elements on: its error grows with n / lanes.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "compiler/cache.h"
#include "tensor/tensor_impl.h"
#include "lazy/graph_builder.h"

namespace xl = xlite;

namespace {

constexpr double kEps = 1.1920928955078125e-07;  // 2^-23, the spacing of floats in [1, 2)
constexpr double kBound = 32 * kEps;
// The reference backend (per-element index arithmetic, a buffer per op) runs up to this size.
constexpr int64_t kReferenceLimit = 1'000'000;

using LongVec = std::vector<long double>;

struct Runs {
  std::vector<float> cpu, reference;  // reference empty when it did not run
};

// Runs the pending value on the cpu backend and, below kReferenceLimit input elements, on the reference.
Runs run_both(const xl::Tensor& pending, int64_t elements) {
  auto built = xl::lazy::build_graph({pending.impl()->node()});
  auto read = [&](const char* backend) {
    auto out = xl::compiler::compile_with(built.graph, backend)->run(built.arguments);
    const float* p = out[0]->as<float>();
    return std::vector<float>(p, p + out[0]->bytes() / sizeof(float));
  };
  Runs runs{read("cpu"), {}};
  if (elements <= kReferenceLimit) runs.reference = read("reference");
  return runs;
}

double relative_error(double got, long double want) {
  return static_cast<double>(std::fabs(got - want) / std::fabs(want));
}

// Every element of both runs within kBound of want; reports the worst error so a reader sees the margin.
void expect_within_bound(const std::string& what, const Runs& runs, const LongVec& want) {
  for (const auto* got : {&runs.cpu, &runs.reference}) {
    if (got->empty()) continue;
    const char* backend = got == &runs.cpu ? "cpu" : "reference";
    ASSERT_EQ(got->size(), want.size()) << what << " on " << backend;
    double worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const double e = relative_error((*got)[i], want[i]);
      if (!(e <= worst)) worst = e, worst_at = i;
    }
    std::cout << "[ accuracy ] " << what << " " << backend << ": worst relative error " << worst / kEps << " eps\n";
    EXPECT_LE(worst, kBound) << what << " on " << backend << ": element " << worst_at << " is " << (*got)[worst_at]
                             << ", the exact value is " << static_cast<double>(want[worst_at]);
  }
}

// Uniform values in [1, 2) (all positive: no cancellation hides an accumulation error), on the device.
xl::Tensor data(const xl::Shape& shape, uint64_t seed) {
  xl::manual_seed(seed);
  xl::Tensor x = xl::rand(shape) + 1.0f;
  xl::sync({x});
  return x;
}

// The exact reductions of a host copy, over `reduced` (its dims split as [outer, reduced, inner]).
struct Layout {
  int64_t outer, reduced, inner;
  int64_t at(int64_t o, int64_t r, int64_t i) const { return (o * reduced + r) * inner + i; }
};
LongVec exact_sums(const std::vector<float>& x, Layout l) {
  LongVec s(l.outer * l.inner, 0.0L);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t r = 0; r < l.reduced; ++r)
      for (int64_t i = 0; i < l.inner; ++i) s[o * l.inner + i] += x[l.at(o, r, i)];
  return s;
}

// sum, mean and var of one input over dim `dim` of `shape`, each against the exact value.
void check_sum_mean_var(const xl::Shape& shape, int64_t dim) {
  const xl::Tensor x = data(shape, 1);
  const std::vector<float> hx = x.to_vector<float>();
  Layout l{1, shape[dim], 1};
  for (int64_t d = 0; d < dim; ++d) l.outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d) l.inner *= shape[d];
  const std::string where = xl::shape_str(shape) + " over dim " + std::to_string(dim);
  const int64_t n = xl::numel(shape);

  const LongVec sums = exact_sums(hx, l);
  expect_within_bound("sum " + where, run_both(xl::sum(x, {dim}), n), sums);
  LongVec means = sums;
  for (long double& m : means) m /= l.reduced;
  expect_within_bound("mean " + where, run_both(xl::mean(x, {dim}), n), means);
  LongVec vars(means.size(), 0.0L);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t r = 0; r < l.reduced; ++r)
      for (int64_t i = 0; i < l.inner; ++i) {
        const long double c = hx[l.at(o, r, i)] - means[o * l.inner + i];
        vars[o * l.inner + i] += c * c;
      }
  for (long double& v : vars) v /= l.reduced - 1;
  expect_within_bound("var " + where, run_both(xl::var(x, {dim}, 1), n), vars);
}

// logsumexp, softmax and the gradient norm of clip_grad_norm_ over all n elements of one vector.
void check_exp_sums_and_norm(int64_t n) {
  const xl::Tensor x = data({n}, 2);
  const std::vector<float> hx = x.to_vector<float>();
  const std::string where = "[" + std::to_string(n) + "]";
  long double max = hx[0], total = 0, squares = 0;
  for (float v : hx) max = std::max<long double>(max, v);
  for (float v : hx) total += std::exp(static_cast<double>(v - max));
  for (float v : hx) squares += static_cast<long double>(v) * v;
  expect_within_bound("logsumexp " + where, run_both(xl::logsumexp(x, {0}), n),
                      {max + std::log(static_cast<double>(total))});
  // Each softmax element is exp(x - max) / total: its error is the exp's (~1e-6 relative, within
  // the bound) plus the total's. Checked on every element.
  LongVec probabilities(hx.size());
  for (size_t i = 0; i < hx.size(); ++i) probabilities[i] = std::exp(static_cast<double>(hx[i] - max)) / total;
  expect_within_bound("softmax " + where, run_both(xl::softmax(x, 0), n), probabilities);
  // clip_grad_norm_ builds sqrt(sum(g * g)); the gradient of sum(w * w / 2) is w.
  xl::Tensor w = x.detach().requires_grad_();
  (w * w * 0.5f).sum().backward();
  xl::Tensor norm = xl::optim::clip_grad_norm_({w}, 1e30);
  expect_within_bound("clip_grad_norm_ " + where, run_both(norm, n), {std::sqrt(squares)});
}

}  // namespace

// The two cases of the issue: 2^25 ones per column saturated a float running sum at 2^24, and ten
// million copies of 3.7182817 summed to 37156900.
TEST(ReduceAccuracy, IssueExamplesAreExact) {
  const int64_t rows = int64_t{1} << 25;
  Runs ones = run_both(xl::sum(xl::ones({rows, 2}), {0}), 0);  // the reference too, whatever the size
  for (const auto* got : {&ones.cpu, &ones.reference}) EXPECT_EQ(*got, (std::vector<float>{33554432.0f, 33554432.0f}));

  const float value = 3.7182817f;
  const float want = static_cast<float>(10'000'000.0 * value);  // the float nearest the exact sum
  Runs full = run_both(xl::sum(xl::full({10'000'000}, value)), 0);
  for (const auto* got : {&full.cpu, &full.reference}) {
    ASSERT_EQ(got->size(), 1u);
    EXPECT_LE(std::fabs((*got)[0] - want), std::nextafter(want, INFINITY) - want) << (*got)[0] << " vs " << want;
  }
}

class ReduceAccuracySizes : public ::testing::TestWithParam<int64_t> {};

// Along the contiguous dim: one row of n, and 16 rows of n / 16 (row reductions fused into softmax).
TEST_P(ReduceAccuracySizes, ContiguousDim) {
  const int64_t n = GetParam();
  check_sum_mean_var({n}, 0);
  check_sum_mean_var({16, n / 16}, 1);
  check_exp_sums_and_norm(n);
}

// Along strided dims: columns of [n / 2, 2] and [n / 16, 16], and the middle dim of [4, n / 12, 3].
TEST_P(ReduceAccuracySizes, StridedDim) {
  const int64_t n = GetParam();
  check_sum_mean_var({n / 2, 2}, 0);
  check_sum_mean_var({n / 16, 16}, 0);
  check_sum_mean_var({4, n / 12, 3}, 1);
}

INSTANTIATE_TEST_SUITE_P(PowersOfTen, ReduceAccuracySizes,
                         ::testing::Values(1'000, 10'000, 100'000, 1'000'000, 10'000'000),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

// 10^8 floats (400 MB) once, for the plain sum along the contiguous dim.
TEST(ReduceAccuracy, HundredMillionElementSum) {
  const int64_t n = 100'000'000;
  const xl::Tensor x = data({n}, 3);
  const std::vector<float> hx = x.to_vector<float>();
  long double want = 0;
  for (float v : hx) want += v;
  expect_within_bound("sum [100000000]", run_both(xl::sum(x), n), {want});
}

// The reference's sums are compensated: its f64 sums are exact where a running double sum is not.
TEST(ReduceAccuracy, ReferenceSumsDoublesExactly) {
  auto reference_sum = [](const xl::Tensor& x) {
    auto built = xl::lazy::build_graph({xl::sum(x).impl()->node()});
    return xl::compiler::compile_with(built.graph, "reference")->run(built.arguments)[0]->as<double>()[0];
  };
  // A running sum loses each 1 against 1e100.
  EXPECT_EQ(reference_sum(xl::tensor(std::vector<double>{1.0, 1e100, 1.0, -1e100})), 2.0);
  // One running sum of ten million 0.1 ends at 999999.9998389754.
  EXPECT_EQ(reference_sum(xl::full({10'000'000}, 0.1, xl::DType::f64)), 1e6);
  // Infinities and NaN still win over the compensation.
  EXPECT_EQ(reference_sum(xl::tensor(std::vector<double>{1.0, INFINITY, 2.0})), INFINITY);
  EXPECT_TRUE(std::isnan(reference_sum(xl::tensor(std::vector<double>{INFINITY, -INFINITY}))));
}

// f64 sums take the same blocked loops in double (the partials too): columns, rows and everything.
TEST(ReduceAccuracy, DoubleSums) {
  xl::manual_seed(5);
  xl::Tensor x = xl::rand({5000, 3}, xl::DType::f64) + 1.0;
  xl::sync({x});
  const std::vector<double> hx = x.to_vector<double>();
  long double columns[3] = {0, 0, 0}, rows0 = 0, all = 0;
  for (int64_t r = 0; r < 5000; ++r)
    for (int64_t c = 0; c < 3; ++c) columns[c] += hx[r * 3 + c], all += hx[r * 3 + c];
  for (int64_t c = 0; c < 3; ++c) rows0 += hx[c];
  const std::vector<double> got_columns = xl::sum(x, {0}).to_vector<double>();
  for (int64_t c = 0; c < 3; ++c)
    EXPECT_NEAR(got_columns[c], static_cast<double>(columns[c]), 1e-14 * static_cast<double>(columns[c]));
  EXPECT_NEAR(xl::sum(x, {1}).to_vector<double>()[0], static_cast<double>(rows0), 1e-15 * static_cast<double>(rows0));
  EXPECT_NEAR(xl::sum(x).item<double>(), static_cast<double>(all), 1e-14 * static_cast<double>(all));
}

// The order of the additions depends only on the shape: 1, 3 and the default number of threads give
// the same bits for column sums (whose tiles then start at different columns), row sums and a full sum.
TEST(ReduceAccuracy, SameBitsForEveryThreadCount) {
  const xl::Tensor x = data({3000, 2048}, 4);
  auto sums = [&] {
    return std::vector<std::vector<float>>{xl::sum(x, {0}).to_vector<float>(), xl::sum(x, {1}).to_vector<float>(),
                                           xl::sum(x).to_vector<float>(),
                                           xl::sum(xl::reshape(x, {6, 1024000}), {1}).to_vector<float>()};
  };
  const int threads = omp_get_max_threads();
  const auto by_default = sums();
  omp_set_num_threads(1);
  const auto one = sums();
  omp_set_num_threads(3);
  const auto three = sums();
  omp_set_num_threads(threads);
  EXPECT_EQ(one, by_default);
  EXPECT_EQ(three, by_default);
}
