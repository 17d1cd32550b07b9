// The built-in grouped matmuls (kernels::gmm, kernels::tgmm) against the same products written as a loop of
// matmuls over the groups, their gradients against autodiff of that loop and finite differences, and the
// group sizes that must raise.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "test_support.h"

namespace xl = xlite;
namespace k = xlite::kernels;
using xlite_test::ErrorMessage;

namespace {

xl::Tensor Data(const xl::Shape& shape, double phase) {
  std::vector<float> v(static_cast<size_t>(xl::numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.61 + phase));
  return xl::tensor(v, shape);
}

xl::Tensor Sizes(const std::vector<int32_t>& sizes) { return xl::tensor(sizes); }

// gmm as matmuls: each group's rows of lhs times its matrix.
xl::Tensor GmmLoop(const xl::Tensor& lhs, const xl::Tensor& rhs, const std::vector<int32_t>& sizes) {
  std::vector<xl::Tensor> parts;
  int64_t row = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    const xl::Tensor w = xl::reshape(xl::narrow(rhs, 0, static_cast<int64_t>(g), 1), {rhs.shape()[1], rhs.shape()[2]});
    parts.push_back(xl::matmul(xl::narrow(lhs, 0, row, sizes[g]), w));
    row += sizes[g];
  }
  return xl::cat(parts, 0);
}

// tgmm as matmuls: each group's columns of lhs times its rows of rhs, stacked.
xl::Tensor TgmmLoop(const xl::Tensor& lhs, const xl::Tensor& rhs, const std::vector<int32_t>& sizes) {
  std::vector<xl::Tensor> parts;
  int64_t row = 0;
  for (int32_t size : sizes) {
    parts.push_back(xl::matmul(xl::narrow(lhs, 1, row, size), xl::narrow(rhs, 0, row, size)));
    row += size;
  }
  return xl::stack(parts, 0);
}

void ExpectNear(const xl::Tensor& got, const xl::Tensor& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> a = got.to_vector<float>(), b = want.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], tolerance * (1 + std::fabs(b[i]))) << what << " at " << i;
}

const std::vector<std::vector<int32_t>> kGroupings = {
    {4, 4, 4, 4}, {13, 1, 1, 1}, {0, 8, 0, 8}, {16, 0, 0, 0}, {0, 0, 0, 16}, {3, 5, 2, 6},
};

}  // namespace

TEST(GroupedMatmul, GmmMatchesAMatmulPerGroup) {
  const xl::Tensor lhs = Data({16, 24}, 0.1), rhs = Data({4, 24, 12}, 0.7);
  for (size_t c = 0; c < kGroupings.size(); ++c)
    ExpectNear(k::gmm(lhs, rhs, Sizes(kGroupings[c])), GmmLoop(lhs, rhs, kGroupings[c]), 1e-5,
               "gmm grouping " + std::to_string(c));
}

TEST(GroupedMatmul, TgmmMatchesAMatmulPerGroupAndEmptyGroupsAreZero) {
  const xl::Tensor lhs = Data({10, 16}, 0.3), rhs = Data({16, 7}, 0.9);
  for (const auto& sizes : kGroupings) {
    const xl::Tensor out = k::tgmm(lhs, rhs, Sizes(sizes));
    EXPECT_EQ(out.shape(), xl::Shape({4, 10, 7}));
    for (size_t g = 0; g < sizes.size(); ++g) {
      const xl::Tensor group = xl::narrow(out, 0, static_cast<int64_t>(g), 1);
      if (sizes[g] == 0)
        EXPECT_EQ(xl::max(xl::abs(group)).item<float>(), 0.0f);
      else
        ExpectNear(xl::reshape(group, {10, 7}),
                   xl::reshape(xl::narrow(TgmmLoop(lhs, rhs, std::vector<int32_t>(sizes.begin(), sizes.end())), 0,
                                          static_cast<int64_t>(g), 1),
                               {10, 7}),
                   1e-5, "tgmm group " + std::to_string(g));
    }
  }
}

TEST(GroupedMatmul, GroupSizesThatDoNotSplitTheRowsRaise) {
  const xl::Tensor lhs = Data({6, 4}, 0.2), rhs = Data({2, 4, 3}, 0.4);
  EXPECT_EQ(ErrorMessage([&] { k::gmm(lhs, rhs, Sizes({2, 3})).to_vector<float>(); }),
            "[gmm] group sizes sum to 5, not the 6 rows to split");
  EXPECT_EQ(ErrorMessage([&] { k::gmm(lhs, rhs, Sizes({7, -1})).to_vector<float>(); }),
            "[gmm] group 1 has a negative size -1");
  EXPECT_EQ(
      ErrorMessage([&] { k::tgmm(xl::transpose(lhs, 0, 1), Data({6, 3}, 0.1), Sizes({1, 1})).to_vector<float>(); }),
      "[tgmm] group sizes sum to 2, not the 6 rows to split");
  // Bad types are refused when the call is made.
  EXPECT_NE(ErrorMessage([&] {
              k::gmm(lhs, rhs, xl::tensor(std::vector<int64_t>{3, 3}));
            }).find("[gmm] group_sizes must be i32[2]"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([&] { k::gmm(lhs, Data({2, 5, 3}, 0.1), Sizes({3, 3})); }).find("[gmm] needs lhs f32[m, k]"),
            std::string::npos);
  // The runtime goes on.
  ExpectNear(k::gmm(lhs, rhs, Sizes({3, 3})), GmmLoop(lhs, rhs, {3, 3}), 1e-5, "after the errors");
}

TEST(GroupedMatmul, GradientsMatchTheMatmulLoop) {
  const std::vector<int32_t> sizes = {3, 0, 5, 2};
  const xl::Tensor weights = Data({10, 6}, 1.1);  // a linear loss: sum(out * weights)
  auto grads_of = [&](auto product, const xl::Tensor& a, const xl::Tensor& b) {
    return xl::grad([&](const std::vector<xl::Tensor>& in) { return xl::sum(product(in[0], in[1]) * weights); },
                    {a, b});
  };
  const xl::Tensor lhs = Data({10, 8}, 0.5), rhs = Data({4, 8, 6}, 1.5);
  const auto kernel =
      grads_of([&](const xl::Tensor& a, const xl::Tensor& b) { return k::gmm(a, b, Sizes(sizes)); }, lhs, rhs);
  const auto loop = grads_of([&](const xl::Tensor& a, const xl::Tensor& b) { return GmmLoop(a, b, sizes); }, lhs, rhs);
  ExpectNear(kernel[0], loop[0], 1e-5, "gmm d lhs");
  ExpectNear(kernel[1], loop[1], 1e-5, "gmm d rhs");

  const xl::Tensor weights3 = Data({4, 5, 6}, 0.2);
  auto tgrads_of = [&](auto product, const xl::Tensor& a, const xl::Tensor& b) {
    return xl::grad([&](const std::vector<xl::Tensor>& in) { return xl::sum(product(in[0], in[1]) * weights3); },
                    {a, b});
  };
  const xl::Tensor tl = Data({5, 10}, 0.8), tr = Data({10, 6}, 2.1);
  const auto tkernel =
      tgrads_of([&](const xl::Tensor& a, const xl::Tensor& b) { return k::tgmm(a, b, Sizes(sizes)); }, tl, tr);
  const auto tloop = tgrads_of([&](const xl::Tensor& a, const xl::Tensor& b) { return TgmmLoop(a, b, sizes); }, tl, tr);
  ExpectNear(tkernel[0], tloop[0], 1e-5, "tgmm d lhs");
  ExpectNear(tkernel[1], tloop[1], 1e-5, "tgmm d rhs");
}

TEST(GroupedMatmul, GradientsMatchFiniteDifferences) {
  const std::vector<int32_t> sizes = {2, 3, 0, 1};
  const xl::Tensor lhs = Data({6, 3}, 0.3), rhs = Data({4, 3, 2}, 0.6), weights = Data({6, 2}, 0.9);
  auto loss = [&](const xl::Tensor& a, const xl::Tensor& b) {
    return xl::sum(xl::tanh(k::gmm(a, b, Sizes(sizes))) * weights);
  };
  const std::vector<xl::Tensor> grads =
      xl::grad([&](const std::vector<xl::Tensor>& in) { return loss(in[0], in[1]); }, {lhs, rhs});
  for (int which = 0; which < 2; ++which) {
    const xl::Tensor& base = which == 0 ? lhs : rhs;
    const std::vector<float> values = base.to_vector<float>(), got = grads[which].to_vector<float>();
    for (size_t i = 0; i < values.size(); ++i) {
      auto at = [&](float delta) {
        std::vector<float> moved = values;
        moved[i] += delta;
        const xl::Tensor t = xl::tensor(moved, base.shape());
        return static_cast<double>((which == 0 ? loss(t, rhs) : loss(lhs, t)).item<float>());
      };
      const double want = (at(1e-2f) - at(-1e-2f)) / 2e-2;
      EXPECT_NEAR(got[i], want, 2e-3) << "input " << which << " element " << i;
    }
  }
}

TEST(GroupedMatmul, RunsEagerlyAndInCompiledSteps) {
  const xl::Tensor lhs = Data({8, 4}, 0.1), rhs = Data({2, 4, 3}, 0.2), sizes = Sizes({5, 3});
  const xl::Tensor want = GmmLoop(lhs, rhs, {5, 3});
  {
    xl::EagerModeGuard eager(true);
    ExpectNear(k::gmm(lhs, rhs, sizes), want, 1e-5, "eager");
  }
  auto step =
      xl::compile([](const xl::Tensor& a, const xl::Tensor& b, const xl::Tensor& s) { return k::gmm(a, b, s); });
  for (int i = 0; i < 3; ++i) ExpectNear(step(lhs, rhs, sizes), want, 1e-5, "compiled call " + std::to_string(i));
  EXPECT_TRUE(step.last_call().replayed);
  // New group sizes are data: the same program, other rows per group.
  ExpectNear(step(lhs, rhs, Sizes({1, 7})), GmmLoop(lhs, rhs, {1, 7}), 1e-5, "other sizes");
  // The text IR names the built-in kernel and parses back in any process.
  const std::string text = xl::debug::graph_text({k::gmm(lhs, rhs, sizes)});
  EXPECT_NE(text.find("custom_call(%0, %1, %2, kernel=\"gmm\", args=\"\") : f32[8,3]"), std::string::npos) << text;
  EXPECT_THROW(
      k::register_kernel(
          {.name = "gmm", .shape = [](const auto& in, const auto&) { return in; }, .cpu = [](const auto&, auto&) {}}),
      xl::Error);
}
