#pragma once
// Code generation for one region: the loop of a Loop or Reduce region body as an LLVM function.
#include <string>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "ir/graph.h"

namespace xlite::backends::cpu {

// How a kernel computes what its ops leave open (xlite/math_mode.h): the fast forms of the f32
// transcendentals, and 16-bit floats kept in f32 between the ops of the kernel.
struct KernelMode {
  bool fast_math = false;
  bool excess_precision = false;
};

// Adds to `module` the function `name` (a KernelFn) that computes the region body's output in `mode`.
void emit_kernel(const ir::Graph& body, llvm::LLVMContext& context, llvm::Module& module, const std::string& name,
                 KernelMode mode = {});

}  // namespace xlite::backends::cpu
