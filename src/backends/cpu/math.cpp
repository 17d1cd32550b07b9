#include "backends/cpu/math.h"

#include "backends/cpu/math_ir.h"
#include "core/exp_polynomial.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <span>

namespace xlite::backends::cpu::math {

namespace {
// exp(x) = 2^n exp(r), n = round(x / ln 2), r = x - n ln 2, exp(r) = 1 + r Q(r) (core/exp_polynomial.h). x
// is clamped to [-104, 89] (by compares, so NaN passes through and makes every step after it NaN): there
// 2^n exp(r) overflows to inf exactly where exp(x) rounds above the largest float, and rounds to zero below
// the smallest subnormal, with no test of its own. Adding 1.5 * 2^23 rounds x / ln 2 to n, to nearest even,
// and leaves n in the low bits of the sum: no rounding or conversion instruction, nothing undefined for NaN.
// ln 2 in two parts (Cody-Waite) keeps r exact to the last bit; in one, r is off by up to 2.4e-7 at |n| = 128.
llvm::Value* exp_with(llvm::IRBuilder<>& b, llvm::Value* x, std::span<const double> q_coefficients,
                      bool ln2_in_two_parts) {
  llvm::Value* xc = clamp(b, x, -104.0, 89.0);
  constexpr double kShifter = 12582912.0;  // 1.5 * 2^23
  llvm::Value* shifted = fma(b, xc, f32_const(b, 1.44269504088896341), f32_const(b, kShifter));
  llvm::Value* n = b.CreateFSub(shifted, f32_const(b, kShifter));
  llvm::Value* r = ln2_in_two_parts ? fma(b, n, f32_const(b, 2.12194440e-4), fma(b, n, f32_const(b, -0.693359375), xc))
                                    : fma(b, n, f32_const(b, -0.693147180559945), xc);
  llvm::Value* p = fma(b, horner(b, r, q_coefficients), r, f32_const(b, 1.0));
  llvm::Value* ni = b.CreateSub(b.CreateBitCast(shifted, b.getInt32Ty()), b.getInt32(0x4b400000));
  return scale_by_pow2(b, p, ni);
}

// x P(x^2) / Q(x^2) with x clamped to [-limit, limit], for an odd function that is +-1 beyond the limit
// (tanh, erf), fitted for the least largest relative error by tools/fit_math.py. The clamp compares,
// so NaN passes through. Q >= 1 on the interval, so the division may be an estimate.
llvm::Value* odd_rational(llvm::IRBuilder<>& b, llvm::Value* x, double limit, std::initializer_list<double> p,
                          std::initializer_list<double> q, bool estimate_division) {
  llvm::Value* c = clamp(b, x, -limit, limit);
  llvm::Value* z = b.CreateFMul(c, c);
  llvm::Value* num = b.CreateFMul(c, horner(b, z, p));
  return estimate_division ? divide_by_estimate(b, num, horner(b, z, q)) : b.CreateFDiv(num, horner(b, z, q));
}
}  // namespace

llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x) { return exp_with(b, x, exp_polynomial::kPrecise, true); }

// log(x) = e ln 2 + log(m), m in [sqrt(1/2), sqrt(2)), log(1 + f) = f - f^2 / 2 + f^3 P(f) for f = m - 1.
// Subnormal x are scaled up first.
llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* subnormal = b.CreateFCmpOLT(x, f32_const(b, 1.17549435e-38));
  llvm::Value* xs = b.CreateSelect(subnormal, b.CreateFMul(x, f32_const(b, 8388608.0)), x);
  llvm::Value* bits = b.CreateBitCast(xs, b.getInt32Ty());
  llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 23), b.getInt32(0xff)), b.getInt32(126));
  e = b.CreateSelect(subnormal, b.CreateSub(e, b.getInt32(23)), e);
  llvm::Value* m =
      b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, b.getInt32(0x807fffff)), b.getInt32(0x3f000000)), b.getFloatTy());
  llvm::Value* small = b.CreateFCmpOLT(m, f32_const(b, 0.707106781186547524));
  e = b.CreateSelect(small, b.CreateSub(e, b.getInt32(1)), e);
  m = b.CreateSelect(small, b.CreateFSub(b.CreateFAdd(m, m), f32_const(b, 1.0)), b.CreateFSub(m, f32_const(b, 1.0)));
  llvm::Value* z = b.CreateFMul(m, m);
  llvm::Value* y = horner(b, m,
                          {7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
                           -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1});
  y = b.CreateFMul(b.CreateFMul(y, m), z);
  llvm::Value* fe = b.CreateSIToFP(e, b.getFloatTy());
  y = b.CreateFAdd(y, b.CreateFMul(fe, f32_const(b, -2.12194440e-4)));
  y = b.CreateFSub(y, b.CreateFMul(z, f32_const(b, 0.5)));
  llvm::Value* result = b.CreateFAdd(b.CreateFAdd(m, y), b.CreateFMul(fe, f32_const(b, 0.693359375)));
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f32_const(b, INFINITY)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f32_const(b, 0.0)), f32_const(b, -INFINITY), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, f32_const(b, 0.0)), f32_const(b, std::numeric_limits<float>::quiet_NaN()),
                          result);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

// Fitted on [0, 7.9], a third of the work of an exp-based form. Checked on every positive f32: worst
// relative error 3.3e-7. Beyond 7.9, 1 - tanh(x) < 2.7e-7, so the clamp costs less than that.
llvm::Value* tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  return odd_rational(
      b, x, 7.9,
      {2.410574675e-11, -1.490648567e-08, 9.939276176e-06, 2.992107561e-03, 1.298491964e-01, 9.999999833e-01},
      {2.380882437e-04, 2.405313697e-02, 4.631823759e-01, 1.0}, false);
}

// On |x| <= 3.92 (1.9e-8 in exact arithmetic, 3.4e-7 once rounded to f32): one division and ten
// multiply-adds for every input, where a polynomial near zero and exp(-x^2) times a second one further out
// cost both branches in vector code. Beyond 3.92, erf rounds to +-1, which the fit gives at the clamp.
llvm::Value* erf_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  return odd_rational(b, x, 3.92,
                      {2.049984004770522e-06, 0.00028485333314165473, 0.0037649788428097963, 0.05274666100740433,
                       0.19039368629455566, 1.1283791065216064},
                      {3.8089114241302013e-05, 0.0011623535538092256, 0.014967934228479862, 0.11410349607467651,
                       0.5020647644996643, 1.0},
                      false);
}

namespace fast {
// Each within 4e-4 of the result, relative (xlite/math_mode.h; tools/check_math.cpp checks every f32): the
// fits below are within 1.3e-5, and a reciprocal estimate adds up to 6.1e-5 (14 bits) or 3.7e-4 (12 bits).

// ln 2 in one part.
llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x) { return exp_with(b, x, exp_polynomial::kFast, false); }

// log(1 + f) = f + f^2 (f P(f) - 1/2) to 1.3e-5, P of degree 3, by one Horner chain. The reduction to
// m = 1 + f in [sqrt(1/2), sqrt(2)) subtracts sqrt(1/2)'s bits first, so that the exponent's shift and the
// mantissa's mask give e and m with no compare or select; ln 2 in one part. Inputs below the smallest normal
// float count as zero.
llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  constexpr int32_t kSqrtHalfBits = 0x3f3504f3;
  llvm::Value* shifted = b.CreateSub(b.CreateBitCast(x, b.getInt32Ty()), b.getInt32(kSqrtHalfBits));
  llvm::Value* e = b.CreateSIToFP(b.CreateAShr(shifted, 23), b.getFloatTy());
  llvm::Value* m = b.CreateBitCast(b.CreateAdd(b.CreateAnd(shifted, b.getInt32(0x007fffff)), b.getInt32(kSqrtHalfBits)),
                                   b.getFloatTy());
  llvm::Value* f = b.CreateFSub(m, f32_const(b, 1.0));
  llvm::Value* r = horner(b, f, {-1.459217440e-01, 2.177611745e-01, -2.524496879e-01, 3.328549179e-01, -0.5});
  llvm::Value* result = fma(b, e, f32_const(b, 0.693147180559945), fma(b, b.CreateFMul(f, f), r, f));
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f32_const(b, INFINITY)), x, result);
  // Below the smallest normal float (NaN fails both compares): -inf from +-0 up, NaN for negatives and NaN.
  llvm::Value* outside = b.CreateSelect(b.CreateFCmpOGE(x, f32_const(b, 0.0)), f32_const(b, -INFINITY),
                                        f32_const(b, std::numeric_limits<float>::quiet_NaN()));
  return b.CreateSelect(b.CreateFCmpOGE(x, f32_const(b, 1.17549435e-38)), result, outside);
}

// Fitted on [0, 6] to 1.2e-5; 1 - tanh(6) = 1.2e-5.
llvm::Value* tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  return odd_rational(b, x, 6.0, {-2.542028223e-06, 1.011584788e-03, 1.093667963e-01, 9.999877628e-01},
                      {1.531194707e-02, 4.426181043e-01, 1.0}, true);
}

// Fitted on [0, 3.5] to 5.3e-6; 1 - erf(3.5) = 7.4e-7.
llvm::Value* erf_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  return odd_rational(b, x, 3.5, {7.116062858e-04, 4.255809988e-02, 1.573973682e-01, 1.128373183e+00},
                      {8.990699918e-03, 9.535699948e-02, 4.727737962e-01, 1.0}, true);
}

// e^x / (1 + e^x) with x at most 30, where the result rounds to 1: e^x stays finite, and 1 + e^x far from
// the range where the estimate of its reciprocal underflows to zero. No negation: LLVM folds a negation
// into the division before it and drops that division's flags.
llvm::Value* sigmoid_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* e = exp_f32(b, at_most(b, x, 30.0));
  return divide_by_estimate(b, e, b.CreateFAdd(f32_const(b, 1.0), e));
}
}  // namespace fast

namespace {
// 2/pi as 32-bit words, most significant first, after 128 zero bits so that a window may start before
// the binary point.
constexpr uint32_t kTwoOverPi[20] = {0,          0,          0,          0,          0xa2f9836e, 0x4e441529, 0xfc2757d1,
                                     0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0,
                                     0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484};

}  // namespace

llvm::Value* trig_f32(llvm::IRBuilder<>& b, llvm::Module& module, llvm::Value* x, Trig which) {
  auto* i32 = b.getInt32Ty();
  auto* i64 = b.getInt64Ty();
  auto* i128 = b.getInt128Ty();
  auto* table_type = llvm::ArrayType::get(i32, 20);
  auto* table = module.getNamedGlobal("xlite_two_over_pi");
  if (!table) {
    std::vector<llvm::Constant*> words;
    for (uint32_t w : kTwoOverPi) words.push_back(b.getInt32(w));
    table = new llvm::GlobalVariable(module, table_type, true, llvm::GlobalValue::InternalLinkage,
                                     llvm::ConstantArray::get(table_type, words), "xlite_two_over_pi");
  }
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* bits = b.CreateBitCast(ax, i32);
  llvm::Value* exponent = b.CreateLShr(bits, 23);
  llvm::Value* mantissa = b.CreateOr(b.CreateAnd(bits, b.getInt32(0x7fffff)), b.getInt32(0x800000));
  // |x| = m 2^E with E = exponent - 150. The 96 bits of 2/pi after bit E - 2 decide x 2/pi mod 4; the
  // window starts at table bit 128 + E - 2 (clamped: small inputs take the direct path below).
  llvm::Value* start = b.CreateSub(exponent, b.getInt32(24));
  start = b.CreateSelect(b.CreateICmpSLT(start, b.getInt32(0)), b.getInt32(0), start);
  llvm::Value* word = b.CreateLShr(start, 5);
  llvm::Value* shift = b.CreateZExt(b.CreateAnd(start, b.getInt32(31)), i128);
  llvm::Value* window = llvm::ConstantInt::get(i128, 0);
  for (int k = 0; k < 4; ++k) {
    llvm::Value* at = b.CreateGEP(table_type, table, {b.getInt32(0), b.CreateAdd(word, b.getInt32(k))});
    window = b.CreateOr(window, b.CreateShl(b.CreateZExt(b.CreateLoad(i32, at), i128), 32 * (3 - k)));
  }
  window = b.CreateLShr(b.CreateShl(window, shift), 32);                     // the top 96 bits
  llvm::Value* product = b.CreateMul(b.CreateZExt(mantissa, i128), window);  // x 2/pi in units of 2^-94
  llvm::Value* quadrant = b.CreateTrunc(b.CreateAnd(b.CreateLShr(product, 94), llvm::ConstantInt::get(i128, 3)), i64);
  llvm::Value* high =
      b.CreateTrunc(b.CreateAnd(b.CreateLShr(product, 41), llvm::ConstantInt::get(i128, (uint64_t{1} << 53) - 1)), i64);
  llvm::Value* low = b.CreateTrunc(b.CreateAnd(product, llvm::ConstantInt::get(i128, (uint64_t{1} << 41) - 1)), i64);
  llvm::Value* f_high = b.CreateFMul(b.CreateUIToFP(high, b.getDoubleTy()), f64_const(b, 0x1p-53));
  llvm::Value* f_low = b.CreateFMul(b.CreateUIToFP(low, b.getDoubleTy()), f64_const(b, 0x1p-94));
  // Fractions of a quarter turn above one half belong to the next quadrant: |r| <= pi/4.
  llvm::Value* upper = b.CreateFCmpOGE(f_high, f64_const(b, 0.5));
  llvm::Value* fraction = b.CreateFAdd(b.CreateSelect(upper, b.CreateFSub(f_high, f64_const(b, 1.0)), f_high), f_low);
  quadrant = b.CreateSelect(upper, b.CreateAdd(quadrant, b.getInt64(1)), quadrant);
  llvm::Value* r = b.CreateFMul(fraction, f64_const(b, 1.5707963267948966));
  // Below pi/4 there is nothing to reduce.
  llvm::Value* small = b.CreateFCmpOLT(ax, llvm::ConstantFP::get(b.getFloatTy(), 0.785398163397448));
  r = b.CreateSelect(small, b.CreateFPExt(ax, b.getDoubleTy()), r);
  quadrant = b.CreateAnd(b.CreateSelect(small, b.getInt64(0), quadrant), b.getInt64(3));
  // Taylor series to r^13 and r^14: below 1e-11 for |r| <= pi/4.
  llvm::Value* r2 = b.CreateFMul(r, r);
  llvm::Value* sin_r = b.CreateFMul(
      r, horner(b, r2,
                {1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0}));
  llvm::Value* cos_r = horner(
      b, r2,
      {-1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0, -0.5, 1.0});
  auto pick = [&](llvm::Value* q0, llvm::Value* q1, llvm::Value* q2, llvm::Value* q3) {
    llvm::Value* v = b.CreateSelect(b.CreateICmpEQ(quadrant, b.getInt64(0)), q0, q3);
    v = b.CreateSelect(b.CreateICmpEQ(quadrant, b.getInt64(1)), q1, v);
    return b.CreateSelect(b.CreateICmpEQ(quadrant, b.getInt64(2)), q2, v);
  };
  llvm::Value* neg_sin = b.CreateFNeg(sin_r);
  llvm::Value* neg_cos = b.CreateFNeg(cos_r);
  llvm::Value* sin_ax = pick(sin_r, cos_r, neg_sin, neg_cos);
  llvm::Value* cos_ax = pick(cos_r, neg_sin, neg_cos, sin_r);
  llvm::Value* negative = b.CreateFCmpOLT(x, llvm::ConstantFP::get(b.getFloatTy(), 0.0));
  llvm::Value* sin_x = b.CreateSelect(negative, b.CreateFNeg(sin_ax), sin_ax);
  llvm::Value* result = which == Trig::sin ? sin_x : which == Trig::cos ? cos_ax : b.CreateFDiv(sin_x, cos_ax);
  result = b.CreateFPTrunc(result, b.getFloatTy());
  // Infinities and NaN give NaN; -0 keeps its sign for sin and tan.
  llvm::Value* not_finite = b.CreateICmpEQ(exponent, b.getInt32(255));
  result = b.CreateSelect(not_finite, llvm::ConstantFP::getNaN(b.getFloatTy()), result);
  if (which != Trig::cos)
    result = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::get(b.getFloatTy(), 0.0)), x, result);
  return result;
}

}  // namespace xlite::backends::cpu::math
