// The learning-rate schedules of xlite/lr_scheduler.h, in PyTorch's closed forms.
#include "xlite/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "xlite/error.h"

namespace xlite::optim {
namespace {
void require(bool ok, const char* op, const std::string& message) {
  if (!ok) throw Error("[" + std::string(op) + "] " + message);
}

// From start to end as pct goes from 0 to 1, along half a cosine or a line.
double anneal(bool cosine, double start, double end, double pct) {
  if (cosine) return end + (start - end) / 2.0 * (std::cos(M_PI * pct) + 1);
  return (end - start) * pct + start;
}
}  // namespace

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer), base_lr_(optimizer.lr()) {}

void LRScheduler::start() { optimizer_.set_lr(lr_at(0)); }

void LRScheduler::step() {
  ++epoch_;
  optimizer_.set_lr(lr_at(epoch_));
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  require(step_size > 0, "StepLR", "step_size must be > 0, got " + std::to_string(step_size));
  start();
}
double StepLR::lr_at(int64_t epoch) const { return base_lr_ * std::pow(gamma_, epoch / step_size_); }

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  start();
}
double MultiStepLR::lr_at(int64_t epoch) const {
  const auto reached = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lr_ * std::pow(gamma_, static_cast<double>(reached));
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) { start(); }
double ExponentialLR::lr_at(int64_t epoch) const { return base_lr_ * std::pow(gamma_, static_cast<double>(epoch)); }

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min)
    : LRScheduler(optimizer), t_max_(t_max), eta_min_(eta_min) {
  require(t_max > 0, "CosineAnnealingLR", "t_max must be > 0, got " + std::to_string(t_max));
  start();
}
double CosineAnnealingLR::lr_at(int64_t epoch) const {
  return anneal(true, base_lr_, eta_min_, static_cast<double>(epoch) / static_cast<double>(t_max_));
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  require(start_factor > 0 && start_factor <= 1 && end_factor >= 0 && end_factor <= 1, "LinearLR",
          "start_factor must be in (0, 1] and end_factor in [0, 1]");
  require(total_iters > 0, "LinearLR", "total_iters must be > 0, got " + std::to_string(total_iters));
  start();
}
double LinearLR::lr_at(int64_t epoch) const {
  const double done = static_cast<double>(std::min(epoch, total_iters_)) / static_cast<double>(total_iters_);
  return base_lr_ * (start_factor_ + (end_factor_ - start_factor_) * done);
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, OneCycleOptions options)
    : LRScheduler(optimizer), max_lr_(max_lr), total_steps_(total_steps), options_(std::move(options)) {
  require(total_steps > 0, "OneCycleLR", "total_steps must be > 0, got " + std::to_string(total_steps));
  require(options_.pct_start >= 0 && options_.pct_start <= 1, "OneCycleLR", "pct_start must be in [0, 1]");
  require(options_.anneal_strategy == "cos" || options_.anneal_strategy == "linear", "OneCycleLR",
          "anneal_strategy must be \"cos\" or \"linear\", got \"" + options_.anneal_strategy + "\"");
  start();
}
double OneCycleLR::lr_at(int64_t epoch) const {
  require(epoch <= total_steps_, "OneCycleLR",
          "stepped " + std::to_string(epoch) + " times, past total_steps " + std::to_string(total_steps_));
  const double initial = max_lr_ / options_.div_factor, final_lr = initial / options_.final_div_factor;
  const double rise = options_.pct_start * static_cast<double>(total_steps_);
  const double last = static_cast<double>(total_steps_ - 1);
  struct Phase {
    double end_step, start_lr, end_lr;
  };
  const std::vector<Phase> phases = options_.three_phase
                                        ? std::vector<Phase>{{rise - 1, initial, max_lr_},
                                                             {2 * rise - 2, max_lr_, initial},
                                                             {last, initial, final_lr}}
                                        : std::vector<Phase>{{rise - 1, initial, max_lr_}, {last, max_lr_, final_lr}};
  const bool cosine = options_.anneal_strategy == "cos";
  const double step = static_cast<double>(epoch);
  double phase_start = 0;
  for (size_t i = 0;; ++i) {
    if (step <= phases[i].end_step || i + 1 == phases.size())
      return anneal(cosine, phases[i].start_lr, phases[i].end_lr,
                    (step - phase_start) / (phases[i].end_step - phase_start));
    phase_start = phases[i].end_step;
  }
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options)
    : optimizer_(optimizer), options_(std::move(options)) {
  require(options_.mode == "min" || options_.mode == "max", "ReduceLROnPlateau", "mode must be \"min\" or \"max\"");
  require(options_.threshold_mode == "rel" || options_.threshold_mode == "abs", "ReduceLROnPlateau",
          "threshold_mode must be \"rel\" or \"abs\"");
  require(options_.factor < 1 && options_.factor >= 0, "ReduceLROnPlateau", "factor must be in [0, 1)");
  best_ = options_.mode == "min" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

bool ReduceLROnPlateau::improves(double metric) const {
  const bool rel = options_.threshold_mode == "rel";
  if (options_.mode == "min") return metric < (rel ? best_ * (1 - options_.threshold) : best_ - options_.threshold);
  return metric > (rel ? best_ * (1 + options_.threshold) : best_ + options_.threshold);
}

void ReduceLROnPlateau::step(double metric) {
  if (improves(metric)) {
    best_ = metric;
    bad_epochs_ = 0;
  } else {
    ++bad_epochs_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    bad_epochs_ = 0;
  }
  if (bad_epochs_ > options_.patience) {
    const double old_lr = optimizer_.lr(), new_lr = std::max(old_lr * options_.factor, options_.min_lr);
    if (old_lr - new_lr > options_.eps) optimizer_.set_lr(new_lr);
    cooldown_left_ = options_.cooldown;
    bad_epochs_ = 0;
  }
}

}  // namespace xlite::optim
