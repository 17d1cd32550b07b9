#pragma once
// exp(r) = 1 + r Q(r) on [-ln 2 / 2, ln 2 / 2], the polynomial of every f32 exponential in xlite (the
// compiled loops' inline math and the attention kernels' vector loops), coefficients highest power first as
// Horner's rule takes them. Fitted for the least largest relative error by `tools/fit_math.py exp N`.
// Evaluated as one chain of multiply-adds, the last adding the 1: on the CPUs xlite targets the exponential is
// bound by the vector multiply-add pipes, so this form's five steps cost less than a longer polynomial in
// 1 + r + r^2 P(r), whose separate multiply and add only buy accuracy that f32 cannot hold.
namespace xlite::exp_polynomial {

// Q of 5 terms: 9.2e-8 in exact arithmetic; 1.7e-7 over every f32 once rounded (`xlite-check-math exp`).
inline constexpr double kPrecise[] = {8.2902949827e-3, 4.1897908738e-2, 1.6667636292e-1, 4.9999149686e-1,
                                      9.9999970722e-1};
// Q of 4 terms, for fast math (xlite/math_mode.h): 2.8e-6.
inline constexpr double kFast[] = {4.1513681161e-02, 1.6787454016e-01, 5.0003014183e-01, 9.9996684750e-01};

}  // namespace xlite::exp_polynomial
