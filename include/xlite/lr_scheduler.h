#pragma once
// Learning-rate schedules over an optimizer, with PyTorch's classes and formulas (torch.optim.lr_scheduler).
// Each sets the optimizer's learning rate, which lives in a tensor: calling step() between calls of a
// compiled training step changes the rate the next replay uses, without tracing again.
//
//   optim::Adam opt(params, 1e-3);
//   optim::CosineAnnealingLR schedule(opt, /*t_max=*/100);
//   for (...) { train_step(x, y); schedule.step(); }
#include <cstdint>
#include <string>
#include <vector>

#include "xlite/optim.h"

namespace xlite::optim {

// A schedule of the learning rate by epoch (the count of step() calls). Constructing one sets the rate for
// epoch 0, as PyTorch's do. The optimizer must outlive the schedule.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  void step();  // to the next epoch
  double get_last_lr() const { return optimizer_.lr(); }
  int64_t last_epoch() const { return epoch_; }
  double base_lr() const { return base_lr_; }

 protected:
  // The rate at `epoch` (>= 0); called with 0 by the constructor of each subclass (through start()).
  virtual double lr_at(int64_t epoch) const = 0;
  void start();  // sets the epoch-0 rate; every subclass constructor calls it last

  Optimizer& optimizer_;
  double base_lr_;
  int64_t epoch_ = 0;
};

// base_lr * gamma^(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  double lr_at(int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// base_lr * gamma^(the number of milestones reached).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  double lr_at(int64_t epoch) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// base_lr * gamma^epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  double lr_at(int64_t epoch) const override;

 private:
  double gamma_;
};

// eta_min + (base_lr - eta_min) (1 + cos(pi epoch / t_max)) / 2.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0);

 protected:
  double lr_at(int64_t epoch) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// base_lr times a factor going linearly from start_factor to end_factor over total_iters epochs (a linear
// warm-up with the defaults' shape).
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 protected:
  double lr_at(int64_t epoch) const override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

struct OneCycleOptions {
  double pct_start = 0.3;               // the share of steps spent rising
  std::string anneal_strategy = "cos";  // or "linear"
  double div_factor = 25;               // initial lr = max_lr / div_factor
  double final_div_factor = 1e4;        // final lr = initial lr / final_div_factor
  bool three_phase = false;             // rise, fall back to the initial lr, then anneal to the final lr
};

// One cycle (Smith and Topal, 2018): up from max_lr / div_factor to max_lr, then down to far below the
// start, over total_steps steps. It replaces the optimizer's learning rate; step() past total_steps raises.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, OneCycleOptions options = {});

 protected:
  double lr_at(int64_t epoch) const override;

 private:
  double max_lr_;
  int64_t total_steps_;
  OneCycleOptions options_;
};

struct ReduceLROnPlateauOptions {
  std::string mode = "min";  // "min": lower metrics are better; "max": higher
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  std::string threshold_mode = "rel";  // or "abs"
  int64_t cooldown = 0;
  double min_lr = 0;
  double eps = 1e-8;  // changes smaller than this are not made
};

// Multiplies the learning rate by factor when the metric has not improved for patience epochs.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});
  void step(double metric);  // a value read by the caller: pass metric.item<double>()
  double get_last_lr() const { return optimizer_.lr(); }

 private:
  bool improves(double metric) const;
  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  double best_;
  int64_t bad_epochs_ = 0, cooldown_left_ = 0;
};

}  // namespace xlite::optim
