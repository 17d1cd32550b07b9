#include "backends/cpu/math.h"

#include <cmath>
#include <initializer_list>
#include <limits>

namespace xlite::backends::cpu::math {
namespace {
llvm::Value* f(llvm::IRBuilder<>& b, double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }

// Horner's rule, coefficients from the highest power down, with fused multiply-adds: half the
// instructions of separate multiplies and adds, and one rounding per step.
llvm::Value* horner(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> coefficients) {
  llvm::Value* y = nullptr;
  for (double c : coefficients)
    y = y ? b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {y, x, f(b, c)}) : f(b, c);
  return y;
}

// 2^k for k in [-126, 127], built from the exponent bits.
llvm::Value* pow2(llvm::IRBuilder<>& b, llvm::Value* k) {
  llvm::Value* bits = b.CreateShl(b.CreateAdd(k, b.getInt32(127)), 23);
  return b.CreateBitCast(bits, b.getFloatTy());
}
}  // namespace

llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // exp(x) = 2^n exp(r), n = round(x / ln 2), r = x - n ln 2 in two parts (Cody-Waite). x is clamped to
  // [-104, 89] (by compares, so NaN passes through and makes every step after it NaN): there 2^n exp(r)
  // overflows to inf exactly where exp(x) rounds above the largest float, and rounds to zero below the
  // smallest subnormal, with no test of its own. Adding 1.5 * 2^23 rounds x / ln 2 to n, to nearest even,
  // and leaves n in the low bits of the sum: no rounding or conversion instruction, nothing undefined for NaN.
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOGT(x, f(b, 89.0)), f(b, 89.0), x);
  xc = b.CreateSelect(b.CreateFCmpOLT(xc, f(b, -104.0)), f(b, -104.0), xc);
  constexpr double kShifter = 12582912.0;  // 1.5 * 2^23
  llvm::Value* shifted =
      b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {xc, f(b, 1.44269504088896341), f(b, kShifter)});
  llvm::Value* n = b.CreateFSub(shifted, f(b, kShifter));
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {n, f(b, -0.693359375), xc});
  r = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {n, f(b, 2.12194440e-4), r});
  llvm::Value* p = horner(
      b, r, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1});
  p = b.CreateFAdd(b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {p, b.CreateFMul(r, r), r}), f(b, 1.0));
  // Scale in two steps so that subnormal results and the edge of overflow are exact.
  llvm::Value* ni = b.CreateSub(b.CreateBitCast(shifted, b.getInt32Ty()), b.getInt32(0x4b400000));
  llvm::Value* n1 = b.CreateAShr(ni, 1);
  llvm::Value* n2 = b.CreateSub(ni, n1);
  return b.CreateFMul(b.CreateFMul(p, pow2(b, n1)), pow2(b, n2));
}

llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // log(x) = e ln 2 + log(m), m in [sqrt(1/2), sqrt(2)); subnormals are scaled up first.
  llvm::Value* subnormal = b.CreateFCmpOLT(x, f(b, 1.17549435e-38));
  llvm::Value* xs = b.CreateSelect(subnormal, b.CreateFMul(x, f(b, 8388608.0)), x);
  llvm::Value* bits = b.CreateBitCast(xs, b.getInt32Ty());
  llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 23), b.getInt32(0xff)), b.getInt32(126));
  e = b.CreateSelect(subnormal, b.CreateSub(e, b.getInt32(23)), e);
  llvm::Value* m =
      b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, b.getInt32(0x807fffff)), b.getInt32(0x3f000000)), b.getFloatTy());
  llvm::Value* small = b.CreateFCmpOLT(m, f(b, 0.707106781186547524));
  e = b.CreateSelect(small, b.CreateSub(e, b.getInt32(1)), e);
  m = b.CreateSelect(small, b.CreateFSub(b.CreateFAdd(m, m), f(b, 1.0)), b.CreateFSub(m, f(b, 1.0)));
  llvm::Value* z = b.CreateFMul(m, m);
  llvm::Value* y = horner(b, m,
                          {7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
                           -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1});
  y = b.CreateFMul(b.CreateFMul(y, m), z);
  llvm::Value* fe = b.CreateSIToFP(e, b.getFloatTy());
  y = b.CreateFAdd(y, b.CreateFMul(fe, f(b, -2.12194440e-4)));
  y = b.CreateFSub(y, b.CreateFMul(z, f(b, 0.5)));
  llvm::Value* result = b.CreateFAdd(b.CreateFAdd(m, y), b.CreateFMul(fe, f(b, 0.693359375)));
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f(b, INFINITY)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f(b, 0.0)), f(b, -INFINITY), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, f(b, 0.0)), f(b, std::numeric_limits<float>::quiet_NaN()), result);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // x P(x^2) / Q(x^2), fitted for the least largest relative error on [0, 7.9] (a rational fit: one
  // division and ten multiply-adds, a third of the work of an exp-based form). Checked on every positive
  // f32: worst relative error 3.3e-7. Beyond 7.9, 1 - tanh(x) < 2.7e-7, so the clamp costs less than that.
  // The clamp compares, so NaN passes through.
  llvm::Value* c = b.CreateSelect(b.CreateFCmpOGT(x, f(b, 7.9)), f(b, 7.9), x);
  c = b.CreateSelect(b.CreateFCmpOLT(c, f(b, -7.9)), f(b, -7.9), c);
  llvm::Value* z = b.CreateFMul(c, c);
  llvm::Value* p = horner(
      b, z, {2.410574675e-11, -1.490648567e-08, 9.939276176e-06, 2.992107561e-03, 1.298491964e-01, 9.999999833e-01});
  llvm::Value* q = horner(b, z, {2.380882437e-04, 2.405313697e-02, 4.631823759e-01, 1.0});
  return b.CreateFDiv(b.CreateFMul(c, p), q);
}

llvm::Value* erf_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // x P(x^2) / Q(x^2) on |x| <= 3.92, a rational fit for the least largest relative error (1.9e-8 in exact
  // arithmetic, 3.4e-7 once rounded to f32): one division and ten multiply-adds for every input, where a
  // polynomial near zero and exp(-x^2) times a second one further out cost both branches in vector code.
  // Beyond 3.92, erf rounds to +-1, which the fit gives at the clamp. The clamp compares, so NaN passes through.
  llvm::Value* c = b.CreateSelect(b.CreateFCmpOGT(x, f(b, 3.92)), f(b, 3.92), x);
  c = b.CreateSelect(b.CreateFCmpOLT(c, f(b, -3.92)), f(b, -3.92), c);
  llvm::Value* z = b.CreateFMul(c, c);
  llvm::Value* p = horner(b, z,
                          {2.049984004770522e-06, 0.00028485333314165473, 0.0037649788428097963, 0.05274666100740433,
                           0.19039368629455566, 1.1283791065216064});
  llvm::Value* q = horner(b, z,
                          {3.8089114241302013e-05, 0.0011623535538092256, 0.014967934228479862, 0.11410349607467651,
                           0.5020647644996643, 1.0});
  return b.CreateFDiv(b.CreateFMul(c, p), q);
}

namespace {
// 2/pi as 32-bit words, most significant first, after 128 zero bits so that a window may start before
// the binary point.
constexpr uint32_t kTwoOverPi[20] = {0,          0,          0,          0,          0xa2f9836e, 0x4e441529, 0xfc2757d1,
                                     0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0,
                                     0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484};

llvm::Value* d(llvm::IRBuilder<>& b, double v) { return llvm::ConstantFP::get(b.getDoubleTy(), v); }

llvm::Value* horner_d(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> coefficients) {
  llvm::Value* y = nullptr;
  for (double c : coefficients)
    y = y ? b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {y, x, d(b, c)}) : d(b, c);
  return y;
}
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
  llvm::Value* f_high = b.CreateFMul(b.CreateUIToFP(high, b.getDoubleTy()), d(b, 0x1p-53));
  llvm::Value* f_low = b.CreateFMul(b.CreateUIToFP(low, b.getDoubleTy()), d(b, 0x1p-94));
  // Fractions of a quarter turn above one half belong to the next quadrant: |r| <= pi/4.
  llvm::Value* upper = b.CreateFCmpOGE(f_high, d(b, 0.5));
  llvm::Value* fraction = b.CreateFAdd(b.CreateSelect(upper, b.CreateFSub(f_high, d(b, 1.0)), f_high), f_low);
  quadrant = b.CreateSelect(upper, b.CreateAdd(quadrant, b.getInt64(1)), quadrant);
  llvm::Value* r = b.CreateFMul(fraction, d(b, 1.5707963267948966));
  // Below pi/4 there is nothing to reduce.
  llvm::Value* small = b.CreateFCmpOLT(ax, llvm::ConstantFP::get(b.getFloatTy(), 0.785398163397448));
  r = b.CreateSelect(small, b.CreateFPExt(ax, b.getDoubleTy()), r);
  quadrant = b.CreateAnd(b.CreateSelect(small, b.getInt64(0), quadrant), b.getInt64(3));
  // Taylor series to r^13 and r^14: below 1e-11 for |r| <= pi/4.
  llvm::Value* r2 = b.CreateFMul(r, r);
  llvm::Value* sin_r = b.CreateFMul(r, horner_d(b, r2,
                                                {1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0,
                                                 1.0 / 120.0, -1.0 / 6.0, 1.0}));
  llvm::Value* cos_r = horner_d(
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
