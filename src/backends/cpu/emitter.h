#pragma once
// Code generation for one region: the loop of a Loop or Reduce region body as an LLVM function.
#include <string>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "ir/graph.h"

namespace xlite::backends::cpu {

// Adds to `module` the function `name` (a KernelFn) that computes the region body's output, with the fast
// forms of the f32 transcendentals when `fast_math` (xlite/math_mode.h).
void emit_kernel(const ir::Graph& body, llvm::LLVMContext& context, llvm::Module& module, const std::string& name,
                 bool fast_math);

}  // namespace xlite::backends::cpu
