#include <cmath>

#include "xlite/autograd.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/ops.h"
#include "xlite/optim.h"

namespace xlite::optim {

namespace {
void check_lr(double lr) {
  if (!(lr >= 0) || !std::isfinite(lr))
    throw Error("[optimizer] learning rate must be a finite number >= 0, got " + std::to_string(lr));
}

// The rate as an f64 upload: a graph input, never a constant folded into the graph (fill_ and full fold 0
// and 1, which would recompile a compiled step when the schedule reaches them).
Tensor lr_value(double lr, Device device) { return tensor(std::vector<double>{lr}, Shape{}, device); }
}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  for (const Tensor& p : params_) {
    if (!p.requires_grad()) throw Error("[optimizer] every parameter must require grad");
    if (p.device() != params_[0].device())
      throw Error("[optimizer] parameters on " + params_[0].device().str() + " and " + p.device().str() +
                  ": one optimizer updates the parameters of one device");
  }
  check_lr(lr);
  lr_tensor_ = lr_value(lr, device());
}

void Optimizer::set_lr(double lr) {
  check_lr(lr);
  lr_ = lr;
  // An upload, not fill_: fill_ folds 0 and 1 into the graph as constants, which would recompile.
  lr_tensor_.copy_(lr_value(lr, device()));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (Tensor& p : params_) {
    // Not through grad(): asking for the gradient would make a compiled step depend on it.
    if (set_to_none) {
      p.reset_grad();
      continue;
    }
    Tensor g = p.grad();
    if (g.defined()) g.zero_();
  }
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  std::map<std::string, Tensor> state{{"lr", lr_tensor_}};
  // state_slots() hands out pointers so that load_state_dict can fill them; it changes nothing itself.
  for (const StateSlot& slot : const_cast<Optimizer*>(this)->state_slots())
    if (slot.tensor->defined()) state.emplace(slot.name, *slot.tensor);
  return state;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state) {
  std::vector<StateSlot> slots = state_slots();
  slots.push_back({"lr", &lr_tensor_, {}, DType::f64, true});
  std::map<std::string, const StateSlot*> by_name;
  for (const StateSlot& slot : slots) by_name.emplace(slot.name, &slot);
  // Check everything before changing anything, so that a bad state leaves the optimizer as it was.
  for (const auto& [name, tensor] : state) {
    auto it = by_name.find(name);
    if (it == by_name.end()) throw Error("[optimizer load_state_dict] unexpected '" + name + "'");
    if (!tensor.defined()) throw Error("[optimizer load_state_dict] '" + name + "' is undefined");
    if (tensor.shape() != it->second->shape)
      throw Error("[optimizer load_state_dict] '" + name + "' has shape " + shape_str(tensor.shape()) + ", expected " +
                  shape_str(it->second->shape));
  }
  for (const StateSlot& slot : slots)
    if (slot.required && !state.count(slot.name))
      throw Error("[optimizer load_state_dict] missing '" + slot.name + "'");
  NoGradGuard no_grad;
  set_lr(state.at("lr").to(DType::f64).item<double>());  // first: the one value that can still be refused
  for (const StateSlot& slot : slots) {
    if (slot.tensor == &lr_tensor_) continue;  // set above
    auto it = state.find(slot.name);
    if (it == state.end()) {
      *slot.tensor = Tensor();  // a state saved before its first step: the next step starts it afresh
      continue;
    }
    if (!slot.tensor->defined()) *slot.tensor = zeros(slot.shape, slot.dtype, device());
    slot.tensor->copy_(it->second);
  }
}

void Optimizer::add_slots(std::vector<StateSlot>* slots, const std::string& name, std::vector<Tensor>& states,
                          bool required) {
  for (size_t i = 0; i < states.size(); ++i)
    slots->push_back({name + "." + std::to_string(i), &states[i], params_[i].shape(), params_[i].dtype(), required});
}

SGD::SGD(std::vector<Tensor> params, double lr, SGDOptions options)
    : Optimizer(std::move(params), lr), options_(options) {
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0))
    throw Error("[SGD] nesterov needs momentum > 0 and no dampening");
  if (options_.momentum != 0) velocity_.resize(params_.size());  // each made by the first step that needs it
}

void SGD::step() {
  NoGradGuard no_grad;
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

std::vector<Optimizer::StateSlot> SGD::state_slots() {
  std::vector<StateSlot> slots;  // none without momentum
  add_slots(&slots, "velocity", velocity_, false);
  return slots;
}

Adam::Adam(std::vector<Tensor> params, double lr, AdamOptions options)
    : Optimizer(std::move(params), lr), options_(options) {
  for (const Tensor& p : params_) {
    m_.push_back(zeros_like(p));
    v_.push_back(zeros_like(p));
  }
  steps_ = zeros({}, DType::f64, device());
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
      if (decoupled())
        p.mul_(1.0 - lr_tensor_ * options_.weight_decay);
      else
        g = g + p * options_.weight_decay;
    }
    m_[i].mul_(options_.beta1).add_(g * (1.0 - options_.beta1));
    v_[i].mul_(options_.beta2).add_(g * g * (1.0 - options_.beta2));
    Tensor denominator = sqrt(v_[i] / correction2) + options_.eps;
    p.sub_(m_[i] / denominator * step_size);
  }
}

std::vector<Optimizer::StateSlot> Adam::state_slots() {
  std::vector<StateSlot> slots{{"step", &steps_, {}, DType::f64, true}};
  add_slots(&slots, "m", m_, true);
  add_slots(&slots, "v", v_, true);
  return slots;
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
  for (const Tensor& p : params)
    if (p.device() != params[0].device())
      throw Error("[clip_grad_norm_] parameters on " + params[0].device().str() + " and " + p.device().str() +
                  ": clip the parameters of each device on their own");
  Tensor total;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    Tensor squares = sum(g.to(DType::f32) * g.to(DType::f32));
    total = total.defined() ? total + squares : squares;
  }
  if (!total.defined()) return zeros({}, DType::f32, params.empty() ? Device{} : params[0].device());
  Tensor norm = sqrt(total);
  Tensor scale = clamp(max_norm / (norm + 1e-6), std::nullopt, 1.0);
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (g.defined()) g.mul_(scale.to(g.dtype()));
  }
  return norm;
}

}  // namespace xlite::optim
