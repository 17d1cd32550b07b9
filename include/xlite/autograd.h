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

// The gradients of fn's scalar result with respect to each input (functional form, like jax.grad).
std::vector<Tensor> grad(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs);
// The result and the gradients.
std::pair<Tensor, std::vector<Tensor>> value_and_grad(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                                      const std::vector<Tensor>& inputs);

}  // namespace xlite
