#include <cmath>

#include "xlite/autograd.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/ops.h"
#include "xlite/optim.h"

namespace xlite::optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  for (const Tensor& p : params_)
    if (!p.requires_grad()) throw Error("[optimizer] every parameter must require grad");
  if (lr < 0) throw Error("[optimizer] learning rate must be >= 0, got " + std::to_string(lr));
  lr_tensor_ = tensor(lr);
}

void Optimizer::set_lr(double lr) {
  if (lr < 0) throw Error("[optimizer] learning rate must be >= 0, got " + std::to_string(lr));
  lr_ = lr;
  // An upload, not fill_: fill_ folds 0 and 1 into the graph as constants, which would recompile.
  lr_tensor_.copy_(tensor(lr));
}

void Optimizer::zero_grad() {
  for (const Tensor& p : params_) {
    Tensor g = p.grad();
    if (g.defined()) g.zero_();
  }
}

SGD::SGD(std::vector<Tensor> params, double lr, SGDOptions options) : Optimizer(std::move(params), lr), options_(options) {
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0))
    throw Error("[SGD] nesterov needs momentum > 0 and no dampening");
}

void SGD::step() {
  NoGradGuard no_grad;
  if (velocity_.empty() && options_.momentum != 0)
    velocity_.resize(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    Tensor d = options_.weight_decay != 0 ? g + p * options_.weight_decay : g;
    if (options_.momentum != 0) {
      Tensor& buf = velocity_[i];
      if (!buf.defined()) {
        buf = zeros_like(p);
        buf.copy_(d);  // PyTorch starts the momentum buffer at the first gradient
      } else {
        buf.mul_(options_.momentum).add_(d * (1.0 - options_.dampening));
      }
      d = options_.nesterov ? d + buf * options_.momentum : buf;
    }
    p.sub_(d * lr_tensor_);
  }
}

Adam::Adam(std::vector<Tensor> params, double lr, AdamOptions options) : Optimizer(std::move(params), lr), options_(options) {
  for (const Tensor& p : params_) {
    m_.push_back(zeros_like(p));
    v_.push_back(zeros_like(p));
  }
  steps_ = zeros({}, DType::f64);
}

void Adam::step() {
  NoGradGuard no_grad;
  steps_.add_(1.0);
  // Bias corrections 1 - beta^t, computed from the step tensor so that a replayed step counts on.
  const Tensor correction1 = 1.0 - pow(options_.beta1, steps_);
  const Tensor correction2 = 1.0 - pow(options_.beta2, steps_);
  const Tensor step_size = lr_tensor_ / correction1;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (options_.weight_decay != 0) {
      if (decoupled()) p.mul_(1.0 - lr_tensor_ * options_.weight_decay);
      else g = g + p * options_.weight_decay;
    }
    m_[i].mul_(options_.beta1).add_(g * (1.0 - options_.beta1));
    v_[i].mul_(options_.beta2).add_(g * g * (1.0 - options_.beta2));
    Tensor denominator = sqrt(v_[i] / correction2) + options_.eps;
    p.sub_(m_[i] / denominator * step_size);
  }
}

AdamW::AdamW(std::vector<Tensor> params, double lr, AdamOptions options) : Adam(std::move(params), lr, options) {}

double warmup_cosine_lr(int64_t step, int64_t warmup, int64_t total, double base_lr, double min_lr) {
  if (step < warmup) return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (step >= total) return min_lr;
  double progress = static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(total - warmup, 1));
  return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + std::cos(M_PI * progress));
}

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  NoGradGuard no_grad;
  Tensor total;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    Tensor squares = sum(g.to(DType::f32) * g.to(DType::f32));
    total = total.defined() ? total + squares : squares;
  }
  if (!total.defined()) return zeros({});
  Tensor norm = sqrt(total);
  Tensor scale = clamp(max_norm / (norm + 1e-6), std::nullopt, 1.0);
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (g.defined()) g.mul_(scale.to(g.dtype()));
  }
  return norm;
}

}  // namespace xlite::optim
