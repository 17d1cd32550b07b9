#pragma once
// The IR building blocks of the inline math in math.cpp, precise and fast: constants, polynomials by
// Horner's rule, powers of two from exponent bits, clamps that let NaN through, and divisions by estimate.
#include <llvm/IR/IRBuilder.h>

#include <initializer_list>
#include <span>

namespace xlite::backends::cpu::math {

inline llvm::Value* f32_const(llvm::IRBuilder<>& b, double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }
inline llvm::Value* f64_const(llvm::IRBuilder<>& b, double v) { return llvm::ConstantFP::get(b.getDoubleTy(), v); }

inline llvm::Value* fma(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

// Horner's rule, coefficients from the highest power down, with fused multiply-adds: half the
// instructions of separate multiplies and adds, and one rounding per step.
inline llvm::Value* horner(llvm::IRBuilder<>& b, llvm::Value* x, std::span<const double> coefficients) {
  llvm::Value* y = nullptr;
  for (double c : coefficients) {
    llvm::Value* cv = llvm::ConstantFP::get(x->getType(), c);
    y = y ? fma(b, y, x, cv) : cv;
  }
  return y;
}
inline llvm::Value* horner(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> coefficients) {
  return horner(b, x, std::span<const double>(coefficients.begin(), coefficients.size()));
}

// 2^k for k in [-126, 127], built from the exponent bits.
inline llvm::Value* pow2(llvm::IRBuilder<>& b, llvm::Value* k) {
  llvm::Value* bits = b.CreateShl(b.CreateAdd(k, b.getInt32(127)), 23);
  return b.CreateBitCast(bits, b.getFloatTy());
}

// x limited to at most `high`, or at least `low`, by compares, so that NaN passes through (one min or max
// instruction on x86).
inline llvm::Value* at_most(llvm::IRBuilder<>& b, llvm::Value* x, double high) {
  return b.CreateSelect(b.CreateFCmpOGT(x, f32_const(b, high)), f32_const(b, high), x);
}
inline llvm::Value* at_least(llvm::IRBuilder<>& b, llvm::Value* x, double low) {
  return b.CreateSelect(b.CreateFCmpOLT(x, f32_const(b, low)), f32_const(b, low), x);
}
inline llvm::Value* clamp(llvm::IRBuilder<>& b, llvm::Value* x, double low, double high) {
  return at_least(b, at_most(b, x, high), low);
}

// x * 2^n for an i32 n in [-253, 254], in two steps so that subnormal results and the edge of overflow
// come out exact.
inline llvm::Value* scale_by_pow2(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* n) {
  llvm::Value* n1 = b.CreateAShr(n, 1);
  llvm::Value* n2 = b.CreateSub(n, n1);
  return b.CreateFMul(b.CreateFMul(x, pow2(b, n1)), pow2(b, n2));
}

// num / den by the CPU's reciprocal estimate and one multiply, without the Newton step that would make it
// exact (relative error below 2^-14 in 512-bit vectors, 1.5 * 2^-12 in narrower ones and scalars), for
// fast math. LLVM turns a division into the estimate
// when the division allows a reciprocal (arcp) and promises finite operands (ninf), and its function asks
// for estimates with no refinement (kReciprocalEstimates, which emit_kernel sets under fast math).
// The divisions of user ops carry no such flags and stay exact. Callers keep num and den finite.
inline constexpr const char* kReciprocalEstimates[2] = {"reciprocal-estimates", "vec-divf:0,divf:0"};
inline llvm::Value* divide_by_estimate(llvm::IRBuilder<>& b, llvm::Value* num, llvm::Value* den) {
  llvm::FastMathFlags flags;
  flags.setAllowReciprocal();
  flags.setNoInfs();
  llvm::Value* quotient = b.CreateFDiv(num, den);
  if (auto* division = llvm::dyn_cast<llvm::Instruction>(quotient)) division->setFastMathFlags(flags);  // not folded
  return quotient;
}

}  // namespace xlite::backends::cpu::math
