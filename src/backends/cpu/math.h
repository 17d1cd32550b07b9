#pragma once
// f32 transcendentals emitted as inline polynomial IR (Cephes-style range reduction and minimax
// polynomials), so they vectorise and fuse with the loop around them. Each handles inf, nan and
// subnormal inputs; tests bound their error against libm.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "backends/codegen/target_math.h"

namespace xlite::backends::cpu::math {

llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* erf_f32(llvm::IRBuilder<>& b, llvm::Value* x);

enum class Trig { sin, cos, tan };
// sin, cos and tan with Payne-Hanek argument reduction (exact for every f32, however large) and
// polynomials evaluated in f64, branch-free.
llvm::Value* trig_f32(llvm::IRBuilder<>& b, llvm::Module& module, llvm::Value* x, Trig which);

// Fast math (xlite/math_mode.h): shorter fits and reciprocal estimates, within 4e-4 relative.
namespace fast {
llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* erf_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* sigmoid_f32(llvm::IRBuilder<>& b, llvm::Value* x);
}  // namespace fast

}  // namespace xlite::backends::cpu::math

namespace xlite::backends::cpu {

// These, and libm where they do not apply, as the element generators' TargetMath (cpu_math.cpp): the
// fast forms when `fast`, for f32.
codegen::TargetMath& cpu_math(bool fast);

}  // namespace xlite::backends::cpu
