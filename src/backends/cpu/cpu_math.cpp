// The CPU's TargetMath: f32 exp, log, tanh, erf, sin, cos and tan as the inline polynomials of math.cpp
// (they vectorise with the loop around them; exp, log, tanh, erf and sigmoid in their fast forms under fast math),
// everything else (atan, expm1, log1p) and every f64 through libm, and integer powers through a runtime helper the JIT
// resolves in this process.
#include "backends/cpu/kernel.h"
#include "backends/cpu/math.h"

extern "C" int64_t xlite_cpu_ipow(int64_t base, int64_t exponent) {
  if (exponent < 0) return base == 1 ? 1 : exponent % 2 == 0 ? 1 : -1;  // base is +-1 (the kernel checked)
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return static_cast<int64_t>(result);
}

namespace xlite::backends::cpu {
namespace {
using codegen::MathFn;

class CpuMath final : public codegen::TargetMath {
 public:
  explicit CpuMath(bool fast) : fast_(fast) {}

  llvm::Value* call(llvm::IRBuilder<>& b, llvm::Module& module, MathFn fn, DType dtype, llvm::Value* x) override {
    const bool f32 = dtype != DType::f64;
    switch (fn) {
      case MathFn::exp:
        return f32 ? (fast_ ? math::fast::exp_f32 : math::exp_f32)(b, x) : libm(b, module, "exp", dtype, x);
      case MathFn::expm1: return libm(b, module, f32 ? "expm1f" : "expm1", dtype, x);
      case MathFn::log:
        return f32 ? (fast_ ? math::fast::log_f32 : math::log_f32)(b, x) : libm(b, module, "log", dtype, x);
      case MathFn::log1p: return libm(b, module, f32 ? "log1pf" : "log1p", dtype, x);
      case MathFn::sin: return f32 ? math::trig_f32(b, module, x, math::Trig::sin) : libm(b, module, "sin", dtype, x);
      case MathFn::cos: return f32 ? math::trig_f32(b, module, x, math::Trig::cos) : libm(b, module, "cos", dtype, x);
      case MathFn::tan: return f32 ? math::trig_f32(b, module, x, math::Trig::tan) : libm(b, module, "tan", dtype, x);
      case MathFn::atan: return libm(b, module, f32 ? "atanf" : "atan", dtype, x);
      case MathFn::tanh:
        return f32 ? (fast_ ? math::fast::tanh_f32 : math::tanh_f32)(b, x) : libm(b, module, "tanh", dtype, x);
      case MathFn::erf:
        return f32 ? (fast_ ? math::fast::erf_f32 : math::erf_f32)(b, x) : libm(b, module, "erf", dtype, x);
    }
    return nullptr;
  }

  llvm::Value* sigmoid(llvm::IRBuilder<>& b, llvm::Module& module, DType dtype, llvm::Value* x) override {
    if (fast_ && dtype != DType::f64) return math::fast::sigmoid_f32(b, x);
    return TargetMath::sigmoid(b, module, dtype, x);
  }

  llvm::Value* integer_pow(llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* exponent) override {
    llvm::Module& module = *b.GetInsertBlock()->getModule();
    auto callee = module.getOrInsertFunction(
        "xlite_cpu_ipow", llvm::FunctionType::get(b.getInt64Ty(), {b.getInt64Ty(), b.getInt64Ty()}, false));
    return b.CreateCall(callee, {base, exponent});
  }

 private:
  bool fast_;

  static llvm::Value* libm(llvm::IRBuilder<>& b, llvm::Module& module, const char* name, DType dtype, llvm::Value* x) {
    llvm::Type* t = dtype == DType::f64 ? b.getDoubleTy() : b.getFloatTy();
    auto callee = module.getOrInsertFunction(name, llvm::FunctionType::get(t, {t}, false));
    auto* call = b.CreateCall(callee, {x});
    call->setDoesNotThrow();
    return call;
  }
};

}  // namespace

codegen::TargetMath& cpu_math(bool fast) {
  static CpuMath precise(false), approximate(true);
  return fast ? approximate : precise;
}

}  // namespace xlite::backends::cpu
