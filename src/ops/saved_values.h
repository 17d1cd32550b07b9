#pragma once
// Which values an op's gradient formula reads (vjp.cpp), given which operands need a gradient: the
// tensors backward must find unchanged, as PyTorch's derivatives save them.
#include <cstdint>
#include <span>

#include "ir/op.h"

namespace xlite::autograd {

struct SavedValues {
  uint32_t operands = 0;  // bit k: operand k's value
  bool result = false;    // the op's own result
};

SavedValues saved_values(ir::OpId op, std::span<const bool> needs_grad);

}  // namespace xlite::autograd
