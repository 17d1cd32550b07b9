#pragma once
// Creating tensors. Data given by the host is copied to the device; zeros, ones, full, arange, eye, rand
// and randn are lazy ops like any other.
#include <cstdint>
#include <vector>

#include "xlite/tensor.h"

namespace xlite {

// A 0-dim tensor of the value's C++ type (float -> f32, double -> f64, int -> i32, int64_t -> i64, bool).
template <class T>
Tensor tensor(T value, Device device = xlite::device());
// data.size() must equal the product of shape.
template <class T>
Tensor tensor(const std::vector<T>& data, const Shape& shape, Device device = xlite::device());
// A 1-D tensor of the data.
template <class T>
Tensor tensor(const std::vector<T>& data, Device device = xlite::device());

Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = xlite::device());
Tensor ones(const Shape& shape, DType dtype = DType::f32, Device device = xlite::device());
Tensor full(const Shape& shape, Scalar value, DType dtype = DType::f32, Device device = xlite::device());
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
Tensor full_like(const Tensor& x, Scalar value);
// [start, stop) by step; i64 when all three are integers (like PyTorch), else f32.
Tensor arange(Scalar stop, Device device = xlite::device());
Tensor arange(Scalar start, Scalar stop, Scalar step = 1, Device device = xlite::device());
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::f32, Device device = xlite::device());

// Random numbers from a counter-based generator (Philox 4x32-10). Seed and offset are graph parameters,
// so a new draw never recompiles.
void manual_seed(uint64_t seed);
Tensor rand(const Shape& shape, DType dtype = DType::f32, Device device = xlite::device());   // U[0, 1)
Tensor randn(const Shape& shape, DType dtype = DType::f32, Device device = xlite::device());  // N(0, 1)
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
Tensor linspace(double start, double end, int64_t steps, DType dtype = DType::f32, Device device = xlite::device());
Tensor logspace(double start, double end, int64_t steps, double base = 10, DType dtype = DType::f32,
                Device device = xlite::device());

}  // namespace xlite
