// Helpers shared by the op and factory unit tests (tests/ops_*_test.cpp, tests/factories_test.cpp):
// short tensor constructors, float specials, an element-wise closeness check and error-message capture.
// Header-only; a test file includes it and writes `using namespace xlite_test;` (or using-declarations),
// which also brings in xlite::DType, xlite::Shape and xlite::Tensor.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include <xlite/xlite.h>

namespace xlite_test {

using xlite::DType;
using xlite::Shape;
using xlite::Tensor;

inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kInf = std::numeric_limits<float>::infinity();

using FV = std::vector<float>;
using LV = std::vector<int64_t>;

// Tensor constructors: a 1-D tensor of the values, or the values in the given shape.
inline xlite::Tensor F32(const std::vector<float>& v) { return xlite::tensor(v); }
inline xlite::Tensor F32(const std::vector<float>& v, const xlite::Shape& s) { return xlite::tensor(v, s); }
inline xlite::Tensor F64(const std::vector<double>& v) { return xlite::tensor(v); }
inline xlite::Tensor F64(const std::vector<double>& v, const xlite::Shape& s) { return xlite::tensor(v, s); }
inline xlite::Tensor I32(const std::vector<int32_t>& v) { return xlite::tensor(v); }
inline xlite::Tensor I32(const std::vector<int32_t>& v, const xlite::Shape& s) { return xlite::tensor(v, s); }
inline xlite::Tensor I64(const std::vector<int64_t>& v) { return xlite::tensor(v); }
inline xlite::Tensor I64(const std::vector<int64_t>& v, const xlite::Shape& s) { return xlite::tensor(v, s); }
inline xlite::Tensor U8(const std::vector<uint8_t>& v) { return xlite::tensor(v); }
inline xlite::Tensor Bool(const std::vector<bool>& v) { return xlite::tensor(v); }
inline xlite::Tensor Bool(const std::vector<bool>& v, const xlite::Shape& s) { return xlite::tensor(v, s); }

// Values 0, 1, ..., n-1 in the given shape (f32).
inline xlite::Tensor Iota(const xlite::Shape& shape) {
  std::vector<float> v(static_cast<size_t>(xlite::numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return xlite::tensor(v, shape);
}

inline std::vector<float> Vals(const xlite::Tensor& t) { return t.to_vector<float>(); }

// Compares element-wise with a relative+absolute tolerance; NaN matches NaN, infinities match exactly.
// (tests/ops_linalg_test.cpp keeps its own ExpectClose: default atol 1e-5 and no NaN/infinity cases.)
inline void ExpectClose(const std::vector<float>& got, const std::vector<double>& want, double rtol = 1e-5,
                        double atol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i << ": got " << got[i] << ", want NaN";
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(static_cast<double>(got[i]), want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << "at " << i;
    }
  }
}

// Runs fn and returns the message of the xlite::Error it throws, or a marker saying what happened instead.
template <class Fn>
std::string ErrorMessage(Fn&& fn) {
  try {
    fn();
  } catch (const xlite::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("non-xlite exception: ") + e.what();
  }
  return "no exception";
}

// How many times `what` occurs in `text` (overlaps counted): how tests check printed reports.
inline int Occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A process-wide switch of xlite/math_mode.h turned on for a scope, and back to what it was after.
template <void (*Set)(bool), bool (*Get)()>
class MathModeScope {
 public:
  MathModeScope() { Set(true); }
  ~MathModeScope() { Set(previous_); }
  MathModeScope(const MathModeScope&) = delete;
  MathModeScope& operator=(const MathModeScope&) = delete;

 private:
  bool previous_ = Get();
};
using FastMathScope = MathModeScope<xlite::set_fast_math, xlite::is_fast_math>;
using ExcessPrecisionScope = MathModeScope<xlite::set_excess_precision, xlite::is_excess_precision>;

}  // namespace xlite_test
