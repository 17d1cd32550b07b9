// backward(): reverse mode over the IR DAG, from the output back to the leaves that require grad.
#include <unordered_map>

#include "tensor/grad_mode.h"
#include "autograd/custom_gradient.h"
#include "autograd/vjp.h"
#include "tensor/tensor_impl.h"
#include "ops/op_support.h"
#include "ops/views.h"
#include "xlite/autocast.h"
#include "xlite/autograd.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
// Results of custom_vjp functions and custom kernels: the inputs the result was computed from and the
// backward that maps its gradient to theirs, kept in the result node's autograd metadata.
struct CustomRule final : CustomGradientRule {
  CustomRule(std::vector<ir::NodePtr> inputs, CustomBackward backward)
      : inputs(std::move(inputs)), backward(std::move(backward)) {}
  std::vector<ir::NodePtr> inputs;
  CustomBackward backward;
};

const CustomRule* custom_rule(const ir::Node* node) {
  if (!node->autograd || !node->autograd->custom) return nullptr;
  return static_cast<const CustomRule*>(node->autograd->custom.get());
}

// What gradients flow into from a node: its operands, or for a custom function its inputs.
const std::vector<ir::NodePtr>& gradient_sources(const ir::Node* node) {
  if (const CustomRule* rule = custom_rule(node)) return rule->inputs;
  return node->operands;
}

// Nodes that gradients flow through, producers before consumers.
std::vector<ir::NodePtr> differentiable_order(const ir::NodePtr& root) {
  std::vector<ir::NodePtr> order;
  std::unordered_map<const ir::Node*, bool> seen;
  std::vector<std::pair<ir::NodePtr, size_t>> stack = {{root, 0}};
  seen[root.get()] = true;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const std::vector<ir::NodePtr>& sources = gradient_sources(node.get());
    if (next < sources.size()) {
      const ir::NodePtr& operand = sources[next++];
      if (operand->requires_grad && !seen[operand.get()]) {
        seen[operand.get()] = true;
        stack.push_back({operand, 0});
      }
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

// The leaf tensor whose grad() a node's gradient feeds, if it still is one.
std::shared_ptr<TensorImpl> grad_leaf_of(const ir::Node& node) {
  if (!node.autograd) return nullptr;
  std::shared_ptr<TensorImpl> leaf = node.autograd->leaf.lock();
  return leaf && leaf->is_grad_leaf() ? leaf : nullptr;
}

// PyTorch's check of saved tensors: an in-place update since the node was built may have written the new
// value into the very buffer this gradient would read.
void check_saved_versions(const ir::Node& node) {
  if (!node.autograd) return;
  for (const SavedTensor& saved : node.autograd->saved) {
    std::shared_ptr<TensorImpl> tensor = saved.tensor.lock();
    if (!tensor || tensor->version() == saved.version) continue;
    const std::string which = saved.operand < 0 ? "result" : "operand " + std::to_string(saved.operand);
    const std::string op(ir::op_name(node.op));
    const std::string within = *node.origin && op != node.origin ? std::string(" (in ") + node.origin + ")" : "";
    ops::fail("the gradient of " + op + within + " needs its " + which + ", a " +
              std::string(dtype_name(tensor->dtype())) + shape_str(tensor->shape()) +
              " tensor that an in-place op changed after it was used (version " + std::to_string(saved.version) +
              ", now " + std::to_string(tensor->version()) +
              "); compute the value again after the update, or update a copy");
  }
}

void accumulate(TensorImpl* leaf, const Tensor& g) {
  Tensor value = g.to(leaf->dtype());
  if (!leaf->grad()) {
    leaf->grad() = ops::fresh_handle(value).impl();
  } else {
    Tensor existing(leaf->grad());
    existing.add_(value);
  }
}

std::vector<Tensor> run_backward(const Tensor& output, const Tensor& gradient) {
  ops::OpScope scope("backward");
  TensorImpl* impl = output.impl().get();
  ir::NodePtr root = impl->autograd_node();
  if (!root->requires_grad) ops::fail("the tensor does not require grad (no input of it has requires_grad_())");
  Tensor seed = gradient;
  if (!seed.defined()) {
    if (impl->shape().size() != 0 && numel(impl->shape()) != 1)
      ops::fail("a gradient is needed for a non-scalar output of shape " + shape_str(impl->shape()));
    seed = ones(impl->shape(), impl->dtype(), impl->device());
  } else if (seed.shape() != impl->shape()) {
    ops::fail("gradient of shape " + shape_str(seed.shape()) + " for an output of shape " + shape_str(impl->shape()));
  } else if (seed.device() != impl->device()) {
    ops::fail("gradient on " + seed.device().str() + " for an output on " + impl->device().str());
  }
  NoGradGuard no_grad;
  autocast as_recorded(DType::bf16, false);  // gradients keep the dtypes the forward ops recorded
  std::unordered_map<const ir::Node*, Tensor> cotangent;
  cotangent[root.get()] = seed;
  // Holds the nodes alive while their cotangents are built (the map keys are raw pointers).
  std::vector<ir::NodePtr> order = differentiable_order(root);
  std::vector<Tensor> updated;  // the gradients written, computed at the end in eager mode
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Node* node = it->get();
    auto found = cotangent.find(node);
    if (found == cotangent.end()) continue;
    Tensor g = found->second;
    if (std::shared_ptr<TensorImpl> leaf = grad_leaf_of(*node)) {
      accumulate(leaf.get(), g);
      updated.emplace_back(leaf->grad());
    }
    if (node->op == ir::OpId::parameter) continue;
    check_saved_versions(*node);
    const CustomRule* rule = custom_rule(node);
    std::vector<Tensor> grads;
    if (rule) {
      std::vector<Tensor> inputs;
      for (const auto& input : rule->inputs) inputs.push_back(ops::wrap(input));
      grads = rule->backward(inputs, ops::wrap(node->operands[0]), g);
      if (grads.size() != inputs.size())
        ops::fail("a custom backward returned " + std::to_string(grads.size()) + " gradients for " +
                  std::to_string(inputs.size()) + " inputs");
      for (size_t k = 0; k < grads.size(); ++k)
        if (grads[k].defined() && grads[k].shape() != inputs[k].shape())
          ops::fail("a custom backward gave gradient " + std::to_string(k) + " the shape " +
                    shape_str(grads[k].shape()) + " for an input of shape " + shape_str(inputs[k].shape()));
        else if (grads[k].defined() && grads[k].device() != inputs[k].device())
          ops::fail("a custom backward gave gradient " + std::to_string(k) + " on " + grads[k].device().str() +
                    " for an input on " + inputs[k].device().str());
    } else {
      grads = autograd::vjp(*it, g);
    }
    const std::vector<ir::NodePtr>& sources = gradient_sources(node);
    for (size_t k = 0; k < sources.size() && k < grads.size(); ++k) {
      const ir::Node* operand = sources[k].get();
      if (!operand->requires_grad || !grads[k].defined()) continue;
      auto [slot, inserted] = cotangent.try_emplace(operand, grads[k]);
      if (!inserted) slot->second = slot->second + grads[k];
    }
    cotangent.erase(node);
  }
  return scope.finish(std::move(updated));
}
}  // namespace

void TensorImpl::set_requires_grad(bool requires_grad) {
  if (requires_grad == requires_grad_) return;
  if (requires_grad && !is_floating(dtype_))
    throw Error("[requires_grad_] only floating tensors can require grad, got " + std::string(dtype_name(dtype_)));
  requires_grad_ = requires_grad;
  grad_node_.reset();
  if (pending_) {
    // A pending leaf gets a node of its own that carries the flag.
    std::shared_ptr<ir::Node> identity = ir::make_identity(pending_, "requires_grad_", requires_grad);
    if (requires_grad) identity->autograd = leaf_meta();
    pending_ = std::move(identity);
  }
  data_leaf_.reset();
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  if (!impl_) throw Error("[requires_grad_] the tensor is undefined");
  impl_->set_requires_grad(requires_grad);
  return *this;
}

bool Tensor::requires_grad() const {
  if (!impl_) return false;
  impl_->note_state_read();
  return impl_->requires_grad();
}

void Tensor::backward(const Tensor& gradient) const {
  if (!impl_) throw Error("[backward] the tensor is undefined");
  run_backward(*this, gradient);
}

Tensor Tensor::grad() const {
  if (!impl_) throw Error("[grad] the tensor is undefined");
  impl_->note_state_read();
  return Tensor(impl_->grad());
}

void Tensor::reset_grad() {
  if (!impl_) throw Error("[reset_grad] the tensor is undefined");
  impl_->reset_grad();
}

Tensor Tensor::detach() const {
  ops::OpScope scope("detach");
  return ops::alias_view(*this, true);
}

std::pair<Tensor, std::vector<Tensor>> value_and_grad(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                                      const std::vector<Tensor>& inputs) {
  std::vector<Tensor> leaves;
  for (const Tensor& input : inputs) leaves.push_back(input.detach().requires_grad_());
  Tensor value = fn(leaves);
  value.backward();
  std::vector<Tensor> grads;
  for (const Tensor& leaf : leaves) grads.push_back(leaf.grad().defined() ? leaf.grad() : zeros_like(leaf));
  return {value.detach(), grads};
}

namespace autograd {

std::vector<Tensor> backward_to_leaves(const Tensor& output, const Tensor& gradient) {
  return run_backward(output, gradient);
}

std::vector<ir::NodePtr> gradient_inputs(const std::vector<Tensor>& inputs, const char* op, bool* any_requires_grad) {
  std::vector<ir::NodePtr> nodes;
  *any_requires_grad = false;
  for (const Tensor& t : inputs) {
    if (!t.defined()) throw Error("[" + std::string(op) + "] an input is undefined");
    nodes.push_back(t.impl()->requires_grad() ? t.impl()->autograd_node() : t.impl()->node());
    *any_requires_grad = *any_requires_grad || (nodes.back()->requires_grad && is_grad_enabled());
  }
  return nodes;
}

Tensor with_custom_gradient(const Tensor& value, std::vector<ir::NodePtr> inputs, CustomBackward backward,
                            const char* origin) {
  // The result gets a node of its own that carries the rule.
  std::shared_ptr<ir::Node> node = ir::make_identity(value.impl()->node(), origin, true);
  auto meta = std::make_shared<NodeMeta>();
  meta->custom = std::make_shared<const CustomRule>(std::move(inputs), std::move(backward));
  node->autograd = std::move(meta);  // not shared yet: only this function holds the node
  return ops::wrap(node);
}

}  // namespace autograd

std::function<Tensor(const std::vector<Tensor>&)> custom_vjp(CustomForward forward, CustomBackward backward) {
  return [forward = std::move(forward), backward = std::move(backward)](const std::vector<Tensor>& inputs) {
    bool any = false;
    std::vector<ir::NodePtr> nodes = autograd::gradient_inputs(inputs, "custom_vjp", &any);
    Tensor value;
    {
      NoGradGuard no_grad;
      value = forward(inputs);
    }
    if (!any) return value;
    return autograd::with_custom_gradient(value, std::move(nodes), backward, "custom_vjp");
  };
}

std::vector<Tensor> grad(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                         const std::vector<Tensor>& inputs) {
  return value_and_grad(fn, inputs).second;
}

}  // namespace xlite
