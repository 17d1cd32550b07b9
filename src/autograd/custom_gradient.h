#pragma once
// Results whose gradient is a function of the caller's (custom_vjp, and custom kernels' backward): the
// backward pass sends the result's gradient to `backward` and passes what it returns to the inputs.
#include <vector>

#include "ir/node.h"
#include "xlite/autograd.h"
#include "xlite/tensor.h"

namespace xlite::autograd {

// The nodes gradients flow into for these inputs, and whether any of them wants one now (grad mode on).
// Throws xlite::Error("[op] an input is undefined").
std::vector<ir::NodePtr> gradient_inputs(const std::vector<Tensor>& inputs, const char* op, bool* any_requires_grad);
// output.backward(gradient), returning the leaf gradients it wrote (after accumulation).
std::vector<Tensor> backward_to_leaves(const Tensor& output, const Tensor& gradient);
// `value` under a node of its own that carries the rule; `origin` names it in errors.
Tensor with_custom_gradient(const Tensor& value, std::vector<ir::NodePtr> inputs, CustomBackward backward,
                            const char* origin);

}  // namespace xlite::autograd
