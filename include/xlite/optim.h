#pragma once
// Optimizers. step() runs without recording gradients and updates parameters and states in place, so
// the next sync writes them into their own buffers (donation) instead of keeping second copies.
// The learning rate and Adam's step count live in 0-dim f64 tensors, so a schedule never recompiles and a
// replayed compile(step) sees every new learning rate (see xlite/compile.h).
#include <vector>

#include "xlite/tensor.h"

namespace xlite::optim {

class Optimizer {
 public:
  Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  void zero_grad();  // zeroes every gradient in place
  double lr() const { return lr_; }
  void set_lr(double lr);

 protected:
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

// Linear warm-up from 0 to base_lr over warmup steps, then cosine decay to min_lr at total steps.
double warmup_cosine_lr(int64_t step, int64_t warmup, int64_t total, double base_lr, double min_lr = 0);

// Scales all gradients so that their joint L2 norm is at most max_norm; returns the norm before
// clipping (a lazy scalar: nothing is read back).
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);

}  // namespace xlite::optim
