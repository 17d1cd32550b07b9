// Gradient checkpointing: a custom gradient that runs the function again behind optimization barriers.
#include "autograd/custom_gradient.h"
#include "core/random_state.h"
#include "ir/op.h"
#include "ops/op_support.h"
#include "tensor/grad_mode.h"
#include "xlite/autocast.h"
#include "xlite/autograd.h"

namespace xlite {
namespace {
class GradModeOn {
 public:
  GradModeOn() : previous_(autograd::is_grad_enabled()) { autograd::set_grad_enabled(true); }
  ~GradModeOn() { autograd::set_grad_enabled(previous_); }
  GradModeOn(const GradModeOn&) = delete;
  GradModeOn& operator=(const GradModeOn&) = delete;

 private:
  bool previous_;
};

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// The inputs' gradients, from fn run again on inputs that only exist once the result's gradient does.
// What the forward pass ran under, so that the recomputation runs the same ops.
struct ForwardState {
  random_state::Position drawn_from;
  bool autocast_enabled;
  DType autocast_dtype;
};

std::vector<Tensor> recompute_and_differentiate(const Fn& fn, const ForwardState& forward,
                                                const std::vector<Tensor>& inputs, const Tensor& result_grad) {
  std::vector<Tensor> leaves;
  for (const Tensor& input : inputs) {
    Tensor fenced = ops::make(ir::OpId::opt_barrier, {input, result_grad});
    if (input.impl()->node()->requires_grad) fenced.requires_grad_();
    leaves.push_back(fenced);
  }
  Tensor again;
  {
    const random_state::Position now = random_state::current();
    random_state::seek(forward.drawn_from);
    GradModeOn grad_mode;
    autocast as_forward(forward.autocast_dtype, forward.autocast_enabled);
    again = fn(leaves);
    random_state::seek(now);
  }
  // Into the leaves, and into the tensors fn captures, whose gradients accumulate as in any backward.
  std::vector<Tensor> written = autograd::backward_to_leaves(again, result_grad);
  // The inputs' gradients pass on only once every gradient this run wrote is computed: the work below them
  // (an earlier segment's recomputation) then starts after this run's activations were last read.
  std::vector<Tensor> grads;
  for (const Tensor& leaf : leaves) {
    if (!leaf.requires_grad() || !leaf.grad().defined()) {
      grads.emplace_back();
      continue;
    }
    std::vector<Tensor> fence{leaf.grad()};
    for (const Tensor& g : written)
      if (g.device() == leaf.device()) fence.push_back(g);
    grads.push_back(ops::make(ir::OpId::opt_barrier, std::span<const Tensor>(fence)));
  }
  return grads;
}
}  // namespace

Tensor checkpoint(const Fn& fn, const std::vector<Tensor>& inputs) {
  const ForwardState forward{random_state::current(), is_autocast_enabled(), get_autocast_dtype()};
  Tensor value = fn(inputs);
  if (!autograd::is_grad_enabled() || !value.defined() || !value.requires_grad()) return value;
  bool any_input_requires_grad = false;
  std::vector<ir::NodePtr> nodes = autograd::gradient_inputs(inputs, "checkpoint", &any_input_requires_grad);
  CustomBackward backward = [fn, forward](const std::vector<Tensor>& in, const Tensor&, const Tensor& g) {
    return recompute_and_differentiate(fn, forward, in, g);
  };
  return autograd::with_custom_gradient(value, std::move(nodes), std::move(backward), "checkpoint");
}

}  // namespace xlite
