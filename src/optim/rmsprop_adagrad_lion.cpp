// RMSprop, Adagrad and Lion, with PyTorch's update rules (Lion's from its paper). Like SGD and Adam they
// update parameters and states in place, with the learning rate and step count as tensors, so a replayed
// compiled step sees each new value.
#include <string>

#include "xlite/autograd.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/ops.h"
#include "xlite/optim.h"

namespace xlite::optim {
namespace {
void require(bool ok, const char* op, const std::string& message) {
  if (!ok) throw Error("[" + std::string(op) + "] " + message);
}

std::vector<Tensor> zeros_for(const std::vector<Tensor>& params, double value = 0) {
  std::vector<Tensor> states;
  for (const Tensor& p : params) states.push_back(full_like(p, value));
  return states;
}

}  // namespace

RMSprop::RMSprop(std::vector<Tensor> params, double lr, RMSpropOptions options)
    : Optimizer(std::move(params), lr), options_(options) {
  require(options.alpha >= 0 && options.alpha <= 1, "RMSprop", "alpha must be in [0, 1]");
  require(options.eps >= 0 && options.momentum >= 0 && options.weight_decay >= 0, "RMSprop",
          "eps, momentum and weight_decay must be >= 0");
  square_avg_ = zeros_for(params_);
  if (options.centered) grad_avg_ = zeros_for(params_);
  if (options.momentum > 0) momentum_ = zeros_for(params_);
}

void RMSprop::step() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (options_.weight_decay != 0) g = g + p * options_.weight_decay;
    square_avg_[i].mul_(options_.alpha).add_(g * g * (1.0 - options_.alpha));
    Tensor second = square_avg_[i];
    if (options_.centered) {
      grad_avg_[i].mul_(options_.alpha).add_(g * (1.0 - options_.alpha));
      second = second - grad_avg_[i] * grad_avg_[i];
    }
    Tensor scaled = g / (sqrt(second) + options_.eps);
    if (options_.momentum > 0) {
      momentum_[i].mul_(options_.momentum).add_(scaled);
      scaled = momentum_[i];
    }
    p.sub_(scaled * lr_tensor_);
  }
}

std::vector<Optimizer::StateSlot> RMSprop::state_slots() {
  std::vector<StateSlot> slots;
  add_slots(&slots, "square_avg", square_avg_, true);
  add_slots(&slots, "grad_avg", grad_avg_, true);
  add_slots(&slots, "momentum_buffer", momentum_, true);
  return slots;
}

Adagrad::Adagrad(std::vector<Tensor> params, double lr, AdagradOptions options)
    : Optimizer(std::move(params), lr), options_(options) {
  require(
      options.lr_decay >= 0 && options.weight_decay >= 0 && options.initial_accumulator_value >= 0 && options.eps >= 0,
      "Adagrad", "lr_decay, weight_decay, initial_accumulator_value and eps must be >= 0");
  sum_ = zeros_for(params_, options.initial_accumulator_value);
  steps_ = zeros({}, DType::f64, device());
}

void Adagrad::step() {
  NoGradGuard no_grad;
  steps_.add_(1.0);
  const Tensor step_size = lr_tensor_ / ((steps_ - 1.0) * options_.lr_decay + 1.0);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (options_.weight_decay != 0) g = g + p * options_.weight_decay;
    sum_[i].add_(g * g);
    p.sub_(g / (sqrt(sum_[i]) + options_.eps) * step_size);
  }
}

std::vector<Optimizer::StateSlot> Adagrad::state_slots() {
  std::vector<StateSlot> slots{{"step", &steps_, {}, DType::f64, true}};
  add_slots(&slots, "sum", sum_, true);
  return slots;
}

Lion::Lion(std::vector<Tensor> params, double lr, LionOptions options)
    : Optimizer(std::move(params), lr), options_(options) {
  require(options.beta1 >= 0 && options.beta1 <= 1 && options.beta2 >= 0 && options.beta2 <= 1, "Lion",
          "betas must be in [0, 1]");
  require(options.weight_decay >= 0, "Lion", "weight_decay must be >= 0");
  m_ = zeros_for(params_);
}

void Lion::step() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    Tensor direction = sign(m_[i] * options_.beta1 + g * (1.0 - options_.beta1));
    if (options_.weight_decay != 0) p.mul_(1.0 - lr_tensor_ * options_.weight_decay);
    p.sub_(direction * lr_tensor_);
    m_[i].mul_(options_.beta2).add_(g * (1.0 - options_.beta2));
  }
}

std::vector<Optimizer::StateSlot> Lion::state_slots() {
  std::vector<StateSlot> slots;
  add_slots(&slots, "m", m_, true);
  return slots;
}

}  // namespace xlite::optim
