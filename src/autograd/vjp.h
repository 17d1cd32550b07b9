#pragma once
// The vector-Jacobian product of every differentiable IR op, written as lazy ops.
#include <vector>

#include "ir/node.h"
#include "xlite/tensor.h"

namespace xlite::autograd {

// For each operand of node, its cotangent given the cotangent g of node's value (undefined where no
// gradient flows). Throws xlite::Error for ops without a gradient.
std::vector<Tensor> vjp(const ir::NodePtr& node, const Tensor& g);

}  // namespace xlite::autograd
