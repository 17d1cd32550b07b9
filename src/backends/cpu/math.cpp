#include "backends/cpu/math.h"

#include <cmath>
#include <initializer_list>
#include <limits>

namespace xlite::backends::cpu::math {
namespace {
llvm::Value* f(llvm::IRBuilder<>& b, double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }

// Horner's rule: coefficients from the highest power down.
llvm::Value* horner(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> coefficients) {
  llvm::Value* y = nullptr;
  for (double c : coefficients) y = y ? b.CreateFAdd(b.CreateFMul(y, x), f(b, c)) : f(b, c);
  return y;
}

// 2^k for k in [-126, 127], built from the exponent bits.
llvm::Value* pow2(llvm::IRBuilder<>& b, llvm::Value* k) {
  llvm::Value* bits = b.CreateShl(b.CreateAdd(k, b.getInt32(127)), 23);
  return b.CreateBitCast(bits, b.getFloatTy());
}
}  // namespace

llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 in two parts (Cody-Waite).
  llvm::Value* is_nan = b.CreateFCmpUNO(x, x);
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOLT(x, f(b, -104.0)), f(b, -104.0), x);
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, f(b, 89.0)), f(b, 89.0), xc);
  xc = b.CreateSelect(is_nan, f(b, 0.0), xc);
  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, b.CreateFMul(xc, f(b, 1.44269504088896341)));
  llvm::Value* r = b.CreateFSub(xc, b.CreateFMul(n, f(b, 0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(n, f(b, -2.12194440e-4)));
  llvm::Value* p = horner(b, r, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                                 1.6666665459e-1, 5.0000001201e-1});
  p = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(p, b.CreateFMul(r, r)), r), f(b, 1.0));
  // Scale in two steps so that subnormal results and the edge of overflow are exact.
  llvm::Value* ni = b.CreateFPToSI(n, b.getInt32Ty());
  llvm::Value* n1 = b.CreateAShr(ni, 1);
  llvm::Value* n2 = b.CreateSub(ni, n1);
  llvm::Value* result = b.CreateFMul(b.CreateFMul(p, pow2(b, n1)), pow2(b, n2));
  result = b.CreateSelect(b.CreateFCmpOGT(x, f(b, 88.72283935546875)), f(b, INFINITY), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, f(b, -103.97208404541015625)), f(b, 0.0), result);
  return b.CreateSelect(is_nan, x, result);
}

llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // log(x) = e ln 2 + log(m), m in [sqrt(1/2), sqrt(2)); subnormals are scaled up first.
  llvm::Value* subnormal = b.CreateFCmpOLT(x, f(b, 1.17549435e-38));
  llvm::Value* xs = b.CreateSelect(subnormal, b.CreateFMul(x, f(b, 8388608.0)), x);
  llvm::Value* bits = b.CreateBitCast(xs, b.getInt32Ty());
  llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 23), b.getInt32(0xff)), b.getInt32(126));
  e = b.CreateSelect(subnormal, b.CreateSub(e, b.getInt32(23)), e);
  llvm::Value* m = b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, b.getInt32(0x807fffff)), b.getInt32(0x3f000000)),
                                   b.getFloatTy());
  llvm::Value* small = b.CreateFCmpOLT(m, f(b, 0.707106781186547524));
  e = b.CreateSelect(small, b.CreateSub(e, b.getInt32(1)), e);
  m = b.CreateSelect(small, b.CreateFSub(b.CreateFAdd(m, m), f(b, 1.0)), b.CreateFSub(m, f(b, 1.0)));
  llvm::Value* z = b.CreateFMul(m, m);
  llvm::Value* y = horner(b, m, {7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                                 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                                 3.3333331174e-1});
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
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* p = horner(b, z, {-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
                                 -3.33332819422e-1});
  llvm::Value* small = b.CreateFAdd(b.CreateFMul(b.CreateFMul(p, z), x), x);
  llvm::Value* e = exp_f32(b, b.CreateFMul(ax, f(b, 2.0)));
  llvm::Value* large = b.CreateFSub(f(b, 1.0), b.CreateFDiv(f(b, 2.0), b.CreateFAdd(e, f(b, 1.0))));
  large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, f(b, 0.625)), small, large);
}

llvm::Value* erf_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // |x| <= 1: x * P(x^2). 1 < |x| < 4: 1 - exp(-x^2) Q(x), Q fitted to erfc(x) exp(x^2) in (x - 2.5) / 1.5.
  // |x| >= 4: +-1 (erfc(4) is below half an ulp of 1). Both fits were made for relative error < 2e-7.
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* near = b.CreateFMul(
      horner(b, z, {7.898115291027352e-05, -0.0008024327689781785, 0.005190050695091486, -0.026854807510972023,
                    0.11283612251281738, -0.3761262893676758, 1.128379225730896}),
      x);
  llvm::Value* t = b.CreateFMul(b.CreateFSub(ax, f(b, 2.5)), f(b, 1.0 / 1.5));
  llvm::Value* q = horner(b, t, {-3.3179312595166266e-05, 9.565895015839487e-05, -0.0001541316305520013,
                                 0.00036971300141885877, -0.0010070918360725045, 0.002424292964860797,
                                 -0.0055716331116855145, 0.012484594248235226, -0.02700497768819332,
                                 0.056110888719558716, -0.11152104288339615, 0.21080635488033295});
  llvm::Value* far = b.CreateFSub(f(b, 1.0), b.CreateFMul(exp_f32(b, b.CreateFNeg(z)), q));
  far = b.CreateSelect(b.CreateFCmpOGE(ax, f(b, 4.0)), f(b, 1.0), far);
  far = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, far, x);
  llvm::Value* result = b.CreateSelect(b.CreateFCmpOLE(ax, f(b, 1.0)), near, far);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

}  // namespace xlite::backends::cpu::math
