#pragma once
// Creating tensors. Data given by the host is copied to the device; zeros, ones, full, arange, eye, rand
// and randn are lazy ops like any other.
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "xlite/tensor.h"

namespace xlite {

namespace detail {
template <class T>
inline constexpr bool is_element_type =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, uint8_t> || std::is_same_v<T, bool>;
Tensor literal_tensor(double value, Device device);
Tensor literal_tensor(int64_t value, Device device);
Tensor literal_tensor(bool value, Device device);
template <class T>
Tensor data_tensor(const std::vector<T>& data, const Shape& shape, Device device);  // the element types above
}  // namespace detail

// A 0-dim tensor of a literal, with PyTorch's dtypes: an integer is i64, a floating value the default dtype
// (f32 unless set_default_dtype), a bool bool. For another dtype: full({}, value, dtype).
template <class T>
Tensor tensor(T value, Device device = xlite::device()) {
  static_assert(std::is_arithmetic_v<T>, "xlite::tensor(value) takes a bool, an integer or a floating value");
  if constexpr (std::is_same_v<T, bool>)
    return detail::literal_tensor(value, device);
  else if constexpr (std::is_integral_v<T>)
    return detail::literal_tensor(static_cast<int64_t>(value), device);
  else
    return detail::literal_tensor(static_cast<double>(value), device);
}
// Host data keeps its element type (std::vector<double> gives f64, as an explicit dtype does in PyTorch);
// data.size() must equal the product of shape.
template <class T>
Tensor tensor(const std::vector<T>& data, const Shape& shape, Device device = xlite::device()) {
  static_assert(detail::is_element_type<T>,
                "xlite::tensor(data) holds float, double, int32_t, int64_t, uint8_t or bool data");
  return detail::data_tensor(data, shape, device);
}
// A 1-D tensor of the data.
template <class T>
Tensor tensor(const std::vector<T>& data, Device device = xlite::device()) {
  return tensor(data, Shape{static_cast<int64_t>(data.size())}, device);
}
// A 1-D tensor of a braced list of literals, tensor({1.f, 2.f}), with the literals' dtypes as above.
template <class T>
Tensor tensor(std::initializer_list<T> values, Device device = xlite::device()) {
  static_assert(std::is_arithmetic_v<T>, "xlite::tensor({...}) takes bools, integers or floating values");
  if constexpr (std::is_same_v<T, bool>)
    return tensor(std::vector<bool>(values), device);
  else if constexpr (std::is_integral_v<T>)
    return tensor(std::vector<int64_t>(values.begin(), values.end()), device);
  else
    return tensor(std::vector<double>(values.begin(), values.end()), device).to(get_default_dtype());
}

Tensor zeros(const Shape& shape, DType dtype = get_default_dtype(), Device device = xlite::device());
Tensor ones(const Shape& shape, DType dtype = get_default_dtype(), Device device = xlite::device());
Tensor full(const Shape& shape, Scalar value, DType dtype = get_default_dtype(), Device device = xlite::device());
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
Tensor full_like(const Tensor& x, Scalar value);
// [start, stop) by step; i64 when all three are integers (like PyTorch), else f32.
Tensor arange(Scalar stop, Device device = xlite::device());
Tensor arange(Scalar start, Scalar stop, Scalar step = 1, Device device = xlite::device());
Tensor eye(int64_t n, int64_t m = -1, DType dtype = get_default_dtype(), Device device = xlite::device());

// Random numbers from a counter-based generator (Philox 4x32-10). Seed and offset are graph parameters,
// so a new draw never recompiles.
void manual_seed(uint64_t seed);
Tensor rand(const Shape& shape, DType dtype = get_default_dtype(), Device device = xlite::device());   // U[0, 1)
Tensor randn(const Shape& shape, DType dtype = get_default_dtype(), Device device = xlite::device());  // N(0, 1)
Tensor rand_like(const Tensor& x);
Tensor randn_like(const Tensor& x);
// Integers drawn uniformly from [low, high) (i64 by default).
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::i64,
               Device device = xlite::device());
Tensor randperm(int64_t n, DType dtype = DType::i64, Device device = xlite::device());  // a random permutation
// 1 with probability p (elementwise, p in [0, 1]), else 0, in p's dtype.
Tensor bernoulli(const Tensor& p);
// num_samples indices per row of probs ([C] or [N, C], non-negative weights, not necessarily normalised),
// drawn in proportion to the weights; without replacement each index at most once (num_samples <= C).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false);

// steps values from start to end inclusive, evenly spaced (f32), and base raised to them.
Tensor linspace(double start, double end, int64_t steps, DType dtype = get_default_dtype(),
                Device device = xlite::device());
Tensor logspace(double start, double end, int64_t steps, double base = 10, DType dtype = get_default_dtype(),
                Device device = xlite::device());

}  // namespace xlite
