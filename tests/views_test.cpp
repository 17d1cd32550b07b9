// Views share storage, as PyTorch's do, through functionalisation: a table of view and in-place sequences
// against PyTorch 2.15's results for the same code, gradients through writes into views, the cases PyTorch
// refuses, eager mode, and compile(fn) replays that read and write views.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "gradient_check.h"
#include "test_support.h"

namespace xl = xlite;
using namespace xlite::indexing;
using xlite_test::check_gradients;
using xlite_test::ErrorMessage;

namespace {
xl::Tensor base12() { return xl::reshape(xl::arange(12.0), {3, 4}); }

struct Expected {
  xl::Shape shape;
  std::vector<float> values;
};

struct ViewCase {
  const char* name;
  std::function<std::vector<xl::Tensor>()> run;  // the tensors to compare, after the sequence ran
  std::vector<Expected> expected;                // PyTorch 2.15's values for the same sequence
};

const std::vector<ViewCase>& view_cases() {
  static const std::vector<ViewCase> cases = {
      {"a write into a slice updates the base",
       [] {
         xl::Tensor b = base12(), v = b.index({Slice(1, None), Slice(1, 3)});
         v.mul_(10);
         return std::vector{b, v};
       },
       {{{3, 4}, {0, 1, 2, 3, 4, 50, 60, 7, 8, 90, 100, 11}}, {{2, 2}, {50, 60, 90, 100}}}},
      {"an update of the base is seen through its views",
       [] {
         xl::Tensor b = base12(), v = b.t(), r = b.index({2});
         b.add_(1);
         return std::vector{v, r};
       },
       {{{4, 3}, {1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12}}, {{4}, {9, 10, 11, 12}}}},
      {"a chain of views writes back through every step",
       [] {
         xl::Tensor b = base12(), v = b.view({2, 6}).index({Slice(), Slice(None, None, 2)}).unsqueeze(0);
         v.index_put_({0, 1, 2}, -1);
         v.add_(0.5);
         return std::vector{b, v};
       },
       {{{3, 4}, {0.5, 1, 2.5, 3, 4.5, 5, 6.5, 7, 8.5, 9, -0.5, 11}}, {{1, 2, 3}, {0.5, 2.5, 4.5, 6.5, 8.5, -0.5}}}},
      {"two views of one base see each other's writes",
       [] {
         xl::Tensor b = base12(), a = b.index({Slice(), 0}), c = b.index({0});
         a.fill_(7);
         return std::vector{b, c};
       },
       {{{3, 4}, {7, 1, 2, 3, 7, 5, 6, 7, 7, 9, 10, 11}}, {{4}, {7, 1, 2, 3}}}},
      {"a write into a row of a transpose",
       [] {
         xl::Tensor b = base12(), t = b.transpose(0, 1);
         t.index({1}).zero_();
         return std::vector{b, t};
       },
       {{{3, 4}, {0, 0, 2, 3, 4, 0, 6, 7, 8, 0, 10, 11}}, {{4, 3}, {0, 4, 8, 0, 0, 0, 2, 6, 10, 3, 7, 11}}}},
      {"select and narrow",
       [] {
         xl::Tensor b = base12();
         b.select(1, 2).sub_(100);
         b.narrow(0, 1, 2).narrow(1, 0, 1).copy_(xl::tensor(std::vector<float>{5, 6}, {2, 1}));
         return std::vector{b};
       },
       {{{3, 4}, {0, 1, -98, 3, 5, 5, -94, 7, 6, 9, -90, 11}}}},
      {"detach shares storage both ways",
       [] {
         xl::Tensor b = base12(), d = b.detach();
         d.index_put_({0, 0}, 42);
         b.index_put_({2, 3}, -42);
         return std::vector{b, d};
       },
       {{{3, 4}, {42, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -42}}, {{3, 4}, {42, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -42}}}},
      {"squeeze, flatten and a contiguous reshape are views",
       [] {
         xl::Tensor b = base12().reshape({1, 3, 4}), s = b.squeeze(0), f = s.flatten();
         f.index_put_({5}, 99);
         b.reshape({12}).index_put_({0}, -7);
         return std::vector{b, s, f};
       },
       {{{1, 3, 4}, {-7, 1, 2, 3, 4, 99, 6, 7, 8, 9, 10, 11}},
        {{3, 4}, {-7, 1, 2, 3, 4, 99, 6, 7, 8, 9, 10, 11}},
        {{12}, {-7, 1, 2, 3, 4, 99, 6, 7, 8, 9, 10, 11}}}},
      {"a reshape that strides cannot express copies",
       [] {
         xl::Tensor b = base12(), r = b.t().reshape({12});
         r.fill_(0);
         return std::vector{b, r};
       },
       {{{3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}, {{12}, std::vector<float>(12, 0)}}},
      {"an expanded view reads its base",
       [] {
         xl::Tensor b = xl::arange(3.0), e = b.expand({2, 3});
         b.mul_(2);
         return std::vector{e};
       },
       {{{2, 3}, {0, 2, 4, 0, 2, 4}}}},
      {"a write into a view after an update of its base",
       [] {
         xl::Tensor b = base12(), v = b.index({Slice(None, None, 2)});
         b.mul_(-1);
         v.add_(1);
         return std::vector{b, v};
       },
       {{{3, 4}, {1, 0, -1, -2, -4, -5, -6, -7, -7, -8, -9, -10}}, {{2, 4}, {1, 0, -1, -2, -7, -8, -9, -10}}}},
      {"unsqueeze and permute",
       [] {
         xl::Tensor b = base12(), p = b.unsqueeze(2).permute({2, 1, 0});
         p.index({0, 3}).fill_(-3);
         return std::vector{b};
       },
       {{{3, 4}, {0, 1, 2, -3, 4, 5, 6, -3, 8, 9, 10, -3}}}},
      {"the parts of split are views",
       [] {
         xl::Tensor b = base12();
         std::vector<xl::Tensor> parts = xl::split(b, 2, 1);
         parts[1].mul_(2);
         parts[0].index_put_({0, 0}, 100);
         return std::vector{b};
       },
       {{{3, 4}, {100, 1, 4, 6, 4, 5, 12, 14, 8, 9, 20, 22}}}},
      {"contiguous copies only what is not contiguous",
       [] {
         xl::Tensor b = base12(), c = b.contiguous();
         c.index_put_({0, 0}, 5);
         xl::Tensor t = b.t().contiguous();
         t.index_put_({0, 0}, -5);
         return std::vector{b, t};
       },
       {{{3, 4}, {5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}, {{4, 3}, {-5, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}}}},
  };
  return cases;
}

void check_case(const ViewCase& c) {
  SCOPED_TRACE(c.name);
  std::vector<xl::Tensor> got = c.run();
  ASSERT_EQ(got.size(), c.expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), c.expected[i].shape) << "tensor " << i;
    EXPECT_EQ(got[i].to_vector<float>(), c.expected[i].values) << "tensor " << i;
  }
}
}  // namespace

TEST(Views, SequencesMatchPyTorch) {
  for (const ViewCase& c : view_cases()) check_case(c);
}

TEST(Views, SequencesMatchPyTorchInEagerMode) {
  xl::EagerModeGuard eager(true);
  for (const ViewCase& c : view_cases()) check_case(c);
}

TEST(Views, SequencesMatchPyTorchWhenEveryStepIsSynced) {
  // Each value already computed when the next op reads it: views are refreshed from data, not from IR.
  for (const ViewCase& c : view_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<xl::Tensor> got = c.run();
    xl::sync();
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].to_vector<float>(), c.expected[i].values);
  }
}

TEST(Views, ContiguityFollowsPyTorchsStrides) {
  xl::Tensor b = base12();
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_FALSE(b.t().is_contiguous());
  EXPECT_TRUE(b.t().t().is_contiguous());
  EXPECT_TRUE(b.index({Slice(1, 3)}).is_contiguous());
  EXPECT_FALSE(b.index({Slice(), Slice(1, 3)}).is_contiguous());
  EXPECT_FALSE(b.index({Slice(None, None, 2)}).is_contiguous());
  EXPECT_FALSE(b.index({Slice(None, 1)}).expand({5, 4}).is_contiguous());
  EXPECT_TRUE(b.unsqueeze(1).is_contiguous());
  // view() merges only dims that storage holds in one run.
  EXPECT_EQ(b.index({Slice(), Slice(1, 3)}).view({3, 2, 1}).shape(), (xl::Shape{3, 2, 1}));
  EXPECT_EQ(b.t().view({2, 2, 3}).shape(), (xl::Shape{2, 2, 3}));  // splitting one dim is fine
  EXPECT_EQ(b.t().contiguous().view({12}).to_vector<float>(),
            (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST(Views, PyTorchsRefusalsAreErrors) {
  xl::Tensor b = base12();
  std::string message = ErrorMessage([&] { b.t().view({12}); });
  EXPECT_NE(message.find("[view] view size [12] is not compatible"), std::string::npos) << message;
  message = ErrorMessage([&] { xl::arange(3.0).expand({2, 3}).add_(1); });
  EXPECT_NE(message.find("more than one element of the written-to tensor"), std::string::npos) << message;
  xl::Tensor w = xl::ones({2, 2}).requires_grad_();
  message = ErrorMessage([&] { w.index({0}).mul_(2); });
  EXPECT_NE(message.find("a view of a leaf tensor that requires grad"), std::string::npos) << message;
  {
    xl::NoGradGuard no_grad;
    w.index({0}).mul_(3);  // as an optimizer or an initialiser writes a parameter
  }
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{3, 3, 1, 1}));
  EXPECT_TRUE(w.requires_grad());
  w.detach().index({1}).fill_(5);  // a detached view is a change of data that autograd does not see
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{3, 3, 5, 5}));
  (w * w).sum().backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{6, 6, 10, 10}));
}

TEST(Views, GradientsFlowThroughWritesIntoViews) {
  // y = x * 1 with y's middle block replaced by 3 * s: d/dx is 0 there, d/ds is 3 there.
  check_gradients(
      [](const std::vector<xl::Tensor>& in) {
        xl::Tensor y = in[0] * 1.0;
        y.index({Slice(), Slice(1, 3)}).copy_(in[1] * 3.0);
        y.index({0}).mul_(in[2]);
        return y.t().reshape({-1}) * y.t().reshape({-1});
      },
      {xlite_test::input({3, 4}, 1), xlite_test::input({3, 2}, 2), xlite_test::input({4}, 3)});
  // A write into a view of a view with a step, then a read through another view.
  check_gradients(
      [](const std::vector<xl::Tensor>& in) {
        xl::Tensor y = in[0].exp();
        y.view({2, 6}).index({Slice(), Slice(None, None, 3)}).add_(in[1]);
        return y.index({Slice(), 1}).sin();
      },
      {xlite_test::input({3, 4}, 4), xlite_test::input({2, 2}, 5)});
}

TEST(Views, CompiledStepsThatWriteThroughViewsReplaySoundly) {
  xl::Tensor state = base12();
  xl::sync();
  auto step = xl::compile([&](const xl::Tensor& x) {
    state.index({Slice(), 0}).add_(x);  // a view made inside the step, of a tensor from outside
    return state.index({1}).sum();
  });
  std::vector<float> sums;
  for (int i = 0; i < 4; ++i) sums.push_back(step(xl::tensor(1.0f)).item<float>());
  EXPECT_EQ(sums, (std::vector<float>{23, 24, 25, 26}));
  EXPECT_TRUE(step.last_call().replayed) << step.last_call().trace_reason;
  EXPECT_EQ(state.index({Slice(), 0}).to_vector<float>(), (std::vector<float>{4, 8, 12}));
}

TEST(Views, AViewFromOutsideTheStepIsNeverReplayedStale) {
  xl::Tensor base = base12();
  xl::Tensor column = base.index({Slice(), 3});
  xl::sync();
  auto step = xl::compile([&]() { return column * 2.0f; });
  EXPECT_EQ(step().to_vector<float>(), (std::vector<float>{6, 14, 22}));
  base.add_(1);  // the view is stale now: the next call must not feed its old data
  xl::sync();
  EXPECT_EQ(step().to_vector<float>(), (std::vector<float>{8, 16, 24}));
  EXPECT_EQ(step().to_vector<float>(), (std::vector<float>{8, 16, 24}));
  base.mul_(0);
  EXPECT_EQ(step().to_vector<float>(), (std::vector<float>{0, 0, 0}));
}
