// PyTorch's conventions in the C++ API: literal dtypes and the default dtype, braced lists, one-dim
// reductions as methods, slice's defaults, the version, and a readable error for a compiled step's
// wrong arguments.
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace xl = xlite;
using xlite_test::ErrorMessage;

TEST(Conventions, LiteralsTakePyTorchsDtypes) {
  EXPECT_EQ(xl::tensor(3).dtype(), xl::DType::i64);
  EXPECT_EQ(xl::tensor(3.0).dtype(), xl::DType::f32);
  EXPECT_EQ(xl::tensor(3.0f).dtype(), xl::DType::f32);
  EXPECT_EQ(xl::tensor(true).dtype(), xl::DType::bool_);
  EXPECT_EQ(xl::tensor({1.f, 2.f}).dtype(), xl::DType::f32);
  EXPECT_EQ(xl::tensor({1, 2, 3}).dtype(), xl::DType::i64);
  EXPECT_EQ(xl::tensor({1, 2, 3}).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(xl::tensor({true, false}).dtype(), xl::DType::bool_);
  // Host data keeps its element type, as an explicit dtype does in PyTorch.
  EXPECT_EQ(xl::tensor(std::vector<double>{1, 2}).dtype(), xl::DType::f64);
  EXPECT_EQ(xl::tensor(std::vector<int32_t>{1, 2}).dtype(), xl::DType::i32);
}

TEST(Conventions, TheDefaultDtypeDecidesFloatLiteralsFactoriesAndPromotions) {
  EXPECT_EQ(xl::get_default_dtype(), xl::DType::f32);
  xl::set_default_dtype(xl::DType::f64);
  EXPECT_EQ(xl::tensor(0.1).dtype(), xl::DType::f64);
  EXPECT_EQ(xl::tensor(0.1).item<double>(), 0.1);
  EXPECT_EQ(xl::zeros({2}).dtype(), xl::DType::f64);
  EXPECT_EQ(xl::tensor({1.0, 2.0}).dtype(), xl::DType::f64);
  EXPECT_EQ((xl::tensor(std::vector<int64_t>{1}) * 0.5).dtype(), xl::DType::f64);
  EXPECT_EQ(xl::arange(0.0, 1.0, 0.5).dtype(), xl::DType::f64);
  xl::set_default_dtype(xl::DType::f32);
  EXPECT_EQ(xl::zeros({2}).dtype(), xl::DType::f32);
  EXPECT_NE(ErrorMessage([] {
              xl::set_default_dtype(xl::DType::i64);
            }).find("[set_default_dtype] the default dtype must be f32 or f64, got i64"),
            std::string::npos);
}

TEST(Conventions, OneDimReductionsAndSliceDefaultsAsInPyTorch) {
  xl::Tensor x = xl::reshape(xl::arange(0.0, 6.0, 1.0), {2, 3});
  EXPECT_EQ(x.sum(1).to_vector<float>(), (std::vector<float>{3, 12}));
  EXPECT_EQ(x.mean(1, true).shape(), (xl::Shape{2, 1}));
  EXPECT_EQ(x.sum({}).item<float>(), 15.0f) << "an empty list still means every dim";
  EXPECT_EQ(x.slice(1, 1).to_vector<float>(), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(x.slice(0).shape(), (xl::Shape{2, 3}));
}

TEST(Conventions, TheVersionIsOneString) {
  EXPECT_STREQ(xl::version(), XLITE_VERSION_STRING);
  EXPECT_EQ(std::to_string(XLITE_VERSION_MAJOR) + "." + std::to_string(XLITE_VERSION_MINOR) + "." +
                std::to_string(XLITE_VERSION_PATCH),
            XLITE_VERSION_STRING);
}
