// Printing against the strings PyTorch 2.15 prints for the same tensors (its dtype names replaced by
// xlite's), and the print options.
#include <gtest/gtest.h>

#include <sstream>

#include "test_support.h"

namespace xl = xlite;
using xlite_test::ErrorMessage;

namespace {
std::string printed(const xl::Tensor& t) {
  std::ostringstream out;
  out << t;
  return out.str();
}
xl::Tensor F(std::vector<float> v) { return xl::tensor(v); }
}  // namespace

TEST(Printing, FloatsTakeOneFormatChosenFromTheValues) {
  EXPECT_EQ(printed(xl::tensor(std::vector<float>{3, -4, 6, 8}, {2, 2})), "tensor([[ 3., -4.],\n        [ 6.,  8.]])");
  EXPECT_EQ(printed(F({0.1f, 2.5f, -3.25f})), "tensor([ 0.1000,  2.5000, -3.2500])");
  EXPECT_EQ(printed(F({1e-5f, 1.0f, 2000.0f})), "tensor([1.0000e-05, 1.0000e+00, 2.0000e+03])");
  EXPECT_EQ(printed(F({NAN, INFINITY, -INFINITY, 1.5f})), "tensor([   nan,    inf,   -inf, 1.5000])");
  EXPECT_EQ(printed(-F({NAN})), "tensor([nan])");
  // nan, inf and 0 do not widen a column (PyTorch measures the finite non-zero values only).
  EXPECT_EQ(printed(F({1, NAN, -INFINITY})), "tensor([1., nan, -inf])");
  EXPECT_EQ(printed(F({0, 1.5f, 100})), "tensor([  0.0000,   1.5000, 100.0000])");
  EXPECT_EQ(printed(xl::tensor(3.0f)), "tensor(3.)");
}

TEST(Printing, IntegersBoolsDtypesAndEmptyTensors) {
  EXPECT_EQ(printed(xl::tensor(std::vector<int64_t>{1, -20, 300, 4}, {2, 2})),
            "tensor([[  1, -20],\n        [300,   4]])");
  EXPECT_EQ(printed(xl::tensor(std::vector<bool>{true, false})), "tensor([ True, False])");
  EXPECT_EQ(printed(xl::tensor(std::vector<double>{1.5, 2.0})), "tensor([1.5000, 2.0000], dtype=f64)");
  EXPECT_EQ(printed(xl::tensor(std::vector<int32_t>{7})), "tensor([7], dtype=i32)");
  EXPECT_EQ(printed(xl::zeros({0, 3})), "tensor([], size=[0,3])");
  EXPECT_EQ(printed(xl::reshape(xl::arange(8), {2, 2, 2})),
            "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])");
}

TEST(Printing, LongRowsWrapAndLargeTensorsAreSummarised) {
  EXPECT_EQ(printed(xl::arange(0.0, 30.0, 1.0) / 7.0),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
            "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
            "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
            "        3.8571, 4.0000, 4.1429])");
  EXPECT_EQ(printed(xl::reshape(xl::arange(0.0, 2000.0, 1.0), {40, 50})),
            "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
            "         4.9000e+01],\n"
            "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
            "         9.9000e+01],\n"
            "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
            "         1.4900e+02],\n"
            "        ...,\n"
            "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
            "         1.8990e+03],\n"
            "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
            "         1.9490e+03],\n"
            "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
            "         1.9990e+03]])");
}

TEST(Printing, PrintOptionsChangePrecisionSummaryAndNotation) {
  const xl::PrintOptions saved = xl::get_printoptions();
  xl::set_printoptions({.precision = 2, .threshold = 5, .edgeitems = 1, .linewidth = 80, .sci_mode = 0});
  EXPECT_EQ(printed(F({0.125f, 1e-5f, 3, 4, 5, 6})), "tensor([0.12,  ..., 6.00])");
  xl::set_printoptions(saved);
  EXPECT_EQ(xl::to_string(F({0.5f})), "tensor([0.5000])");
  EXPECT_NE(ErrorMessage([] { xl::set_printoptions({.edgeitems = 0}); }).find("[set_printoptions]"), std::string::npos);
}
