#pragma once
// f32 transcendentals emitted as inline polynomial IR (Cephes-style range reduction and minimax
// polynomials), so they vectorise and fuse with the loop around them. Each handles inf, nan and
// subnormal inputs; tests bound their error against libm.
#include <llvm/IR/IRBuilder.h>

namespace xlite::backends::cpu::math {

llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* erf_f32(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace xlite::backends::cpu::math
