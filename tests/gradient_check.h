// Gradients against central finite differences, shared by the autograd, op-breadth and loss tests.
// Header-only; a test includes it and writes `using xlite_test::check_gradients;`.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <xlite/xlite.h>

namespace xlite_test {

using GradientFn = std::function<xlite::Tensor(const std::vector<xlite::Tensor>&)>;

// Uniform f64 values in [lo, hi) from a fixed seed.
inline xlite::Tensor random_f64(const xlite::Shape& shape, double lo, double hi, uint64_t seed) {
  xlite::manual_seed(seed);
  return (xlite::rand(shape, xlite::DType::f64) * (hi - lo) + lo);
}

// Inputs of a gradient check: uniform in [lo, hi) from a seed.
inline xlite::Tensor input(const xlite::Shape& shape, uint64_t seed, double lo = -2, double hi = 2) {
  return random_f64(shape, lo, hi, seed);
}

// d sum(fn(inputs) * weights) / d inputs, by autograd and by central differences in f64.
// eps is the finite-difference step; ops that round through a narrower dtype need a larger one.
inline void check_gradients(const GradientFn& fn, std::vector<xlite::Tensor> inputs, double tolerance = 1e-6,
                            double eps = 1e-6) {
  xlite::sync();
  xlite::Tensor probe = fn(inputs);
  xlite::Tensor weights = random_f64(probe.shape(), 0.5, 1.5, 99);
  auto objective = [&](const std::vector<xlite::Tensor>& xs) { return xlite::sum(fn(xs) * weights); };
  auto grads = xlite::grad(objective, inputs);
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::vector<double> base = inputs[k].to_vector<double>();
    std::vector<double> analytic = grads[k].to_vector<double>();
    ASSERT_EQ(analytic.size(), base.size());
    for (size_t i = 0; i < base.size(); ++i) {
      auto value_at = [&](double delta) {
        std::vector<double> moved = base;
        moved[i] += delta;
        std::vector<xlite::Tensor> xs = inputs;
        xs[k] = xlite::tensor(moved, inputs[k].shape());
        return objective(xs).item<double>();
      };
      double numeric = (value_at(eps) - value_at(-eps)) / (2 * eps);
      EXPECT_NEAR(analytic[i], numeric, tolerance * (1 + std::fabs(numeric))) << "input " << k << " element " << i;
    }
  }
}

}  // namespace xlite_test
