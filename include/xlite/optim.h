#pragma once
// Optimizers. step() runs without recording gradients and updates parameters and states in place, so
// the next sync writes them into their own buffers (donation) instead of keeping second copies.
// The learning rate and Adam's step count live in 0-dim f64 tensors, so a schedule never recompiles and a
// replayed compile(step) sees every new learning rate (see xlite/compile.h).
#include <map>
#include <string>
#include <vector>

#include "xlite/tensor.h"

namespace xlite::optim {

class Optimizer {
 public:
  Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  // PyTorch 2's zero_grad: set_to_none drops every gradient (the next backward writes new ones, and step()
  // skips a parameter that gets none); otherwise zeroes them in place.
  void zero_grad(bool set_to_none = true);
  double lr() const { return lr_; }
  void set_lr(double lr);
  // The device of the parameters (one optimizer updates those of one device), cpu:0 when there are none.
  Device device() const { return params_.empty() ? Device{} : params_[0].device(); }

  // The learning rate and every state tensor, by name ("lr", "step", "m.0", "velocity.3": the number is
  // the parameter's position), sharing storage with the optimizer: save it next to the module's
  // state_dict to resume training. A momentum buffer appears after the first step that creates it.
  std::map<std::string, Tensor> state_dict() const;
  // Copies a state_dict into this optimizer's states. An unknown name, a missing state that always
  // exists (lr, Adam's m, v and step), a wrong shape or a learning rate that is not a finite number >= 0
  // raises before anything changes. A momentum buffer the state leaves out (saved before the first step)
  // is dropped, so the next step starts it afresh as in a new optimizer.
  void load_state_dict(const std::map<std::string, Tensor>& state);

 protected:
  // One state tensor: `tensor` may be undefined until a step creates it (then `required` is false);
  // loading one creates it with this shape and dtype.
  struct StateSlot {
    std::string name;
    Tensor* tensor;
    Shape shape;
    DType dtype;
    bool required;
  };
  virtual std::vector<StateSlot> state_slots() { return {}; }
  // One slot per state tensor, "name.i" for parameter i, shaped like the parameter.
  void add_slots(std::vector<StateSlot>* slots, const std::string& name, std::vector<Tensor>& states, bool required);

  std::vector<Tensor> params_;
  double lr_;
  Tensor lr_tensor_;
};

struct SGDOptions {
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, double lr, SGDOptions options = {});
  void step() override;

 protected:
  std::vector<StateSlot> state_slots() override;

 private:
  SGDOptions options_;
  std::vector<Tensor> velocity_;
};

struct AdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // Adam: added to the gradient; AdamW: decoupled, applied to the weights
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, double lr = 1e-3, AdamOptions options = {});
  void step() override;

 protected:
  std::vector<StateSlot> state_slots() override;
  virtual bool decoupled() const { return false; }
  AdamOptions options_;
  std::vector<Tensor> m_, v_;
  Tensor steps_;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, double lr = 1e-3, AdamOptions options = {0.9, 0.999, 1e-8, 1e-2});

 protected:
  bool decoupled() const override { return true; }
};

struct RMSpropOptions {
  double alpha = 0.99;  // smoothing of the squared gradients
  double eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;
  bool centered = false;  // divide by the variance estimate instead of the second moment
};

// PyTorch's RMSprop: the gradient divided by a running root mean square of gradients.
class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, double lr = 1e-2, RMSpropOptions options = {});
  void step() override;

 protected:
  std::vector<StateSlot> state_slots() override;

 private:
  RMSpropOptions options_;
  std::vector<Tensor> square_avg_, grad_avg_, momentum_;
};

struct AdagradOptions {
  double lr_decay = 0;
  double weight_decay = 0;
  double initial_accumulator_value = 0;
  double eps = 1e-10;
};

// PyTorch's Adagrad: the gradient divided by the root of the sum of all squared gradients so far.
class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, double lr = 1e-2, AdagradOptions options = {});
  void step() override;

 protected:
  std::vector<StateSlot> state_slots() override;

 private:
  AdagradOptions options_;
  std::vector<Tensor> sum_;
  Tensor steps_;
};

struct LionOptions {
  double beta1 = 0.9;
  double beta2 = 0.99;
  double weight_decay = 0;  // decoupled, as AdamW's
};

// Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"): the sign of an interpolation
// of momentum and gradient, with one state per parameter.
class Lion : public Optimizer {
 public:
  Lion(std::vector<Tensor> params, double lr = 1e-4, LionOptions options = {});
  void step() override;

 protected:
  std::vector<StateSlot> state_slots() override;

 private:
  LionOptions options_;
  std::vector<Tensor> m_;
};

// Linear warm-up from 0 to base_lr over warmup steps, then cosine decay to min_lr at total steps.
double warmup_cosine_lr(int64_t step, int64_t warmup, int64_t total, double base_lr, double min_lr = 0);

// Scales all gradients so that their joint L2 norm is at most max_norm; returns the norm before
// clipping (a lazy scalar: nothing is read back).
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);

}  // namespace xlite::optim
