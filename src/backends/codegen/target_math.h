#pragma once
// The math that element code calls, as a target provides it: inline polynomials and libm calls on the CPU
// (backends/cpu/math.h), libdevice functions on an NVPTX target.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "xlite/dtype.h"

namespace xlite::backends::codegen {

enum class MathFn { exp, expm1, log, log1p, sin, cos, tan, atan, tanh, erf };

class TargetMath {
 public:
  virtual ~TargetMath() = default;
  // fn(x) for x of dtype f32 or f64 (16-bit floats are computed in f32).
  virtual llvm::Value* call(llvm::IRBuilder<>& b, llvm::Module& module, MathFn fn, DType dtype, llvm::Value* x) = 0;
  // 1 / (1 + e^-x) for x of dtype f32 or f64; by default from exp, keeping the precision of tiny results.
  virtual llvm::Value* sigmoid(llvm::IRBuilder<>& b, llvm::Module& module, DType dtype, llvm::Value* x);
  // base ** exponent of i64 values, for an exponent >= 0, or any exponent when base is 1 or -1.
  virtual llvm::Value* integer_pow(llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* exponent) = 0;
};

}  // namespace xlite::backends::codegen
