// conv2d: known values, every attribute against the reference backend, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <xlite/xlite.h>

#include "compiler/cache.h"
#include "tensor/tensor_impl.h"
#include "lazy/graph_builder.h"

namespace xl = xlite;

TEST(Conv2d, KnownValues) {
  auto x = xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  auto w = xl::tensor(std::vector<float>{1, 0, 0, -1}, {1, 1, 2, 2});
  EXPECT_EQ(xl::conv2d(x, w).to_vector<float>(), (std::vector<float>{-4, -4, -4, -4}));
  auto padded = xl::conv2d(x, w, xl::tensor(std::vector<float>{10}), {2, 2}, {1, 1});
  EXPECT_EQ(padded.shape(), (xl::Shape{1, 1, 2, 2}));
  EXPECT_EQ(padded.to_vector<float>(), (std::vector<float>{9, 7, 3, 6}));
}

TEST(Conv2d, MatchesTheReferenceForEveryAttribute) {
  xl::manual_seed(5);
  struct Case {
    xl::Shape x, w;
    std::vector<int64_t> stride, padding, dilation;
    int64_t groups;
  };
  for (const Case& c : {Case{{2, 3, 9, 8}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},
                        Case{{1, 4, 10, 10}, {6, 2, 3, 2}, {2, 1}, {1, 2}, {1, 2}, 2},
                        Case{{2, 4, 7, 7}, {4, 1, 3, 3}, {1, 2}, {1, 1}, {2, 1}, 4}}) {
    auto x = xl::randn(c.x);
    auto w = xl::randn(c.w);
    auto y = xl::conv2d(x, w, std::nullopt, c.stride, c.padding, c.dilation, c.groups);
    auto built = xl::lazy::build_graph({y.impl()->node()});
    auto cpu = xl::compiler::compile_with(built.graph, "cpu")->run(built.arguments);
    auto ref = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
    for (int64_t i = 0; i < y.numel(); ++i)
      ASSERT_NEAR(cpu[0]->as<float>()[i], ref[0]->as<float>()[i], 1e-4) << "element " << i << " groups " << c.groups;
  }
}

TEST(Conv2d, F64UsesTheOracleKernel) {
  auto x = xl::ones({1, 2, 3, 3}, xl::DType::f64);
  auto w = xl::ones({1, 2, 2, 2}, xl::DType::f64);
  EXPECT_EQ(xl::conv2d(x, w).to_vector<double>(), std::vector<double>(4, 8.0));
}

TEST(Conv2d, BadArgumentsRaise) {
  auto x = xl::zeros({1, 4, 5, 5});
  EXPECT_THROW(xl::conv2d(x, xl::zeros({2, 3, 3, 3})), xl::Error);                                  // channels
  EXPECT_THROW(xl::conv2d(x, xl::zeros({3, 2, 3, 3}), std::nullopt, {1}, {0}, {1}, 2), xl::Error);  // O % groups
  EXPECT_THROW(xl::conv2d(x, xl::zeros({2, 4, 7, 7})), xl::Error);                        // kernel larger than input
  EXPECT_THROW(xl::conv2d(xl::zeros({4, 5, 5}), xl::zeros({2, 4, 3, 3})), xl::Error);     // rank
  EXPECT_THROW(xl::conv2d(x, xl::zeros({2, 4, 3, 3}), std::nullopt, {0, 1}), xl::Error);  // stride
  EXPECT_THROW(xl::conv2d(x, xl::zeros({2, 4, 3, 3}), xl::zeros({3})), xl::Error);        // bias
  try {
    xl::conv2d(x, xl::zeros({2, 3, 3, 3}));
  } catch (const xl::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[conv2d]", 0), 0u) << e.what();
  }
}
