// x.index({...}) and index_put_ with NumPy's rules, and the scatter family, against PyTorch 2.15's results for
// the same calls; gradients through them; errors naming the op.
#include <gtest/gtest.h>

#include "gradient_check.h"
#include "test_support.h"

namespace xl = xlite;
using namespace xlite::indexing;
using xlite_test::check_gradients;
using xlite_test::ErrorMessage;

namespace {
xl::Tensor cube() { return xl::reshape(xl::arange(24), {2, 3, 4}); }  // arange(24) as [2, 3, 4], int64
xl::Tensor I(std::vector<int64_t> v) { return xl::tensor(v); }
xl::Tensor I2(std::vector<int64_t> v, xl::Shape s) { return xl::tensor(v, s); }

void expect(const xl::Tensor& t, const xl::Shape& shape, const std::vector<int64_t>& values) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.to(xl::DType::i64).to_vector<int64_t>(), values);
}
void expect_f(const xl::Tensor& t, const xl::Shape& shape, const std::vector<float>& values) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.to_vector<float>(), values);
}
}  // namespace

TEST(Indexing, BasicIndicesSelectSliceAndAddDims) {
  expect(cube().index({1, Slice(1, 3), None, Ellipsis}), {2, 1, 4}, {16, 17, 18, 19, 20, 21, 22, 23});
  expect(cube().index({-1, -1, -1}), {}, {23});
  expect(cube().index({Ellipsis, Slice(None, None, 2)}), {2, 3, 2}, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22});
  expect(cube().index({true}).index({0, 0}), {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_EQ(cube().index({false}).shape(), (xl::Shape{0, 2, 3, 4}));
  expect(cube().select(2, -1), {2, 3}, {3, 7, 11, 15, 19, 23});
}

TEST(Indexing, IntegerTensorsIndexElementwiseAndBroadcast) {
  expect(cube().index({Ellipsis, I({3, 0})}), {2, 3, 2}, {3, 0, 7, 4, 11, 8, 15, 12, 19, 16, 23, 20});
  // Adjacent advanced indices keep their place; separated ones move to the front.
  expect(cube().index({Slice(), I2({0, 2}, {1, 2}), I({1, -1})}), {2, 1, 2}, {1, 11, 13, 23});
  expect(cube().index({I({1, 0}), Slice(), I({2, 3})}), {2, 3}, {14, 18, 22, 3, 7, 11});
}

TEST(Indexing, BoolMasksSelectWhereTrue) {
  xl::Tensor x = cube();
  expect(x.index({xl::eq(xl::remainder(x, 5), 0)}), {5}, {0, 5, 10, 15, 20});
  expect(x.index({0}).index({xl::tensor(std::vector<bool>{true, false, true})}), {2, 4}, {0, 1, 2, 3, 8, 9, 10, 11});
}

TEST(Indexing, IndexPutWritesAndAccumulates) {
  xl::Tensor y = cube();
  y.index_put_({0, Slice(), 1}, -1);
  expect(y.index({0}), {3, 4}, {0, -1, 2, 3, 4, -1, 6, 7, 8, -1, 10, 11});
  expect(y.index({1, 0}), {4}, {12, 13, 14, 15});
  xl::Tensor z = cube();
  z.index_put_({I({0, 0}), I({1, 1})}, xl::full({}, 5, xl::DType::i64), true);  // the same row twice: +10
  expect(z.index({0}), {3, 4}, {0, 1, 2, 3, 14, 15, 16, 17, 8, 9, 10, 11});
  xl::Tensor w = cube();
  w.index_put_({w > 20}, 0);
  expect(w.index({1}), {3, 4}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 0, 0, 0});
}

TEST(Indexing, TheScatterFamilyMatchesPyTorch) {
  xl::Tensor z = xl::zeros({3, 4});
  xl::Tensor src = xl::ones({3, 3}) * xl::tensor(std::vector<float>{1, 2, 3});
  expect_f(xl::index_add(z, 1, I({0, 2, 0}), src, 2), {3, 4}, {8, 0, 4, 0, 8, 0, 4, 0, 8, 0, 4, 0});
  expect_f(xl::index_copy(z, 0, I({2, 0}), xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 4})), {3, 4},
           {5, 6, 7, 8, 0, 0, 0, 0, 1, 2, 3, 4});
  expect_f(xl::slice_scatter(z, xl::ones({3, 2}), 1, 1, 4, 2), {3, 4}, {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1});
  expect_f(xl::select_scatter(z, xl::tensor(std::vector<float>{7, 8, 9}), 1, -1), {3, 4},
           {0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0, 9});
  xl::Tensor mask = xl::tensor(std::vector<bool>{true, false, true, false, true, false}, {2, 3});
  expect_f(xl::masked_scatter(xl::reshape(xl::arange(0.0, 6.0, 1.0), {2, 3}), mask,
                              xl::tensor(std::vector<float>{10, 20, 30, 40})),
           {2, 3}, {10, 1, 20, 3, 30, 5});
  // masked_fill keeps x's dtype: 2.7 into int64 is 2.
  expect(xl::masked_fill(xl::reshape(xl::arange(6), {2, 3}), xl::tensor(std::vector<bool>{true, false, true}), 2.7),
         {2, 3}, {2, 1, 2, 2, 4, 2});
  xl::Tensor y = xl::zeros({3, 4});
  y.index_add_(0, I({1}), xl::ones({1, 4}));
  y.index_copy_(1, I({3}), xl::full({3, 1}, 2.0));
  y.masked_fill_(y == 1.0, 5);
  expect_f(y, {3, 4}, {0, 0, 0, 2, 5, 5, 5, 2, 0, 0, 0, 2});
}

TEST(Indexing, GradientsFlowThroughReadsAndWrites) {
  auto x = xlite_test::random_f64({3, 4}, -1, 1, 5), v = xlite_test::random_f64({2, 4}, -1, 1, 6);
  check_gradients([](const auto& t) { return t[0].index({I({2, 0, 2}), Slice(1)}); }, {x});
  check_gradients([](const auto& t) { return xl::index_put(t[0], {I({2, 0})}, t[1]); }, {x, v});
  check_gradients([](const auto& t) { return xl::index_put(t[0], {I({1, 1})}, t[1], true); }, {x, v});
  check_gradients([](const auto& t) { return xl::slice_scatter(t[0], t[1], 0, 0, 3, 2); }, {x, v});
  check_gradients([](const auto& t) { return xl::masked_scatter(t[0], t[0] > 0, t[1]); }, {x, v});
}

TEST(Indexing, BadIndicesNameTheOp) {
  xl::Tensor x = cube();
  EXPECT_NE(ErrorMessage([&] { x.index({2}); }).find("[index] index 2 is out of range for dim 0 of size 2"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([&] { x.index({0, 0, 0, 0}); }).find("[index] too many indices"), std::string::npos);
  EXPECT_NE(ErrorMessage([&] { x.index({Ellipsis, 0, Ellipsis}); }).find("only one ellipsis"), std::string::npos);
  EXPECT_NE(ErrorMessage([&] { x.index({xl::ones({2})}); }).find("must be integers or bools"), std::string::npos);
  EXPECT_NE(ErrorMessage([&] { x.index({I({0, 5})}).to_vector<int64_t>(); }).find("[index]"), std::string::npos);
  EXPECT_NE(ErrorMessage([&] {
              xl::index_copy(xl::zeros({3, 4}), 0, I({0}), xl::ones({2, 4}));
            }).find("[index_copy] src must be [1,4], got [2,4]"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([&] { xl::masked_fill(x, x, 1); }).find("[masked_fill] mask must be bool"), std::string::npos);
  xl::Tensor leaf = xl::ones({2}).requires_grad_();
  EXPECT_NE(ErrorMessage([&] { leaf.index_put_({0}, 3.0); }).find("leaf tensor that requires grad"), std::string::npos);
}
