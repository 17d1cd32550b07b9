#pragma once
// Reverse-mode autodiff over the lazy graph: the backward pass is more lazy ops, so it compiles and
// fuses together with the forward pass when both run in one sync.
#include <functional>
#include <utility>
#include <vector>

#include "xlite/tensor.h"

namespace xlite {

// Turns gradient recording off for a scope (optimizer updates, evaluation); restores it on exit.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
bool is_grad_enabled();
// Sets gradient recording for the calling thread (torch.set_grad_enabled); NoGradGuard is the scoped form.
void set_grad_enabled(bool enabled);

// A function with a backward of its own (for custom kernels, or a cheaper or stabler gradient than the
// one autodiff would derive). forward runs without recording gradients; backward(inputs, output,
// output_grad) returns one gradient per input (an undefined Tensor for none).
using CustomForward = std::function<Tensor(const std::vector<Tensor>&)>;
using CustomBackward = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Tensor& output,
                                                         const Tensor& output_grad)>;
std::function<Tensor(const std::vector<Tensor>&)> custom_vjp(CustomForward forward, CustomBackward backward);

// Gradient checkpointing (torch.utils.checkpoint): fn(inputs), without keeping fn's intermediate values for
// the backward pass. Backward runs fn again from the inputs once the result's gradient is known, behind an
// optimization barrier (so that the compiler neither merges the two runs nor moves the second one earlier),
// and differentiates that: one more forward of fn buys the memory of its activations. The second run draws
// the same random numbers as the first. Tensors fn captures (parameters) get their gradients from it.
Tensor checkpoint(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs);

// The gradients of fn's scalar result with respect to each input (functional form, like jax.grad).
std::vector<Tensor> grad(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                         const std::vector<Tensor>& inputs);
// The result and the gradients.
std::pair<Tensor, std::vector<Tensor>> value_and_grad(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                                      const std::vector<Tensor>& inputs);

}  // namespace xlite
