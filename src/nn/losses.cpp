// Losses, each one op to its errors (composite_op): an out-of-range target names the loss, not the gather
// inside it. reduction is "mean" (the default), "sum" or "none", as PyTorch's.
#include <cmath>
#include <string>

#include "xlite/autocast.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/nn.h"
#include "xlite/ops.h"

namespace xlite::nn {
namespace {

[[noreturn]] void fail(const char* op, const std::string& message) {
  throw Error("[" + std::string(op) + "] " + message);
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  if (input.shape() != target.shape())
    fail(op, "input " + shape_str(input.shape()) + " and target " + shape_str(target.shape()) + " differ in shape");
}

Tensor reduce(const char* op, const Tensor& loss, std::string_view reduction) {
  if (reduction == "mean") return mean(loss);
  if (reduction == "sum") return sum(loss);
  if (reduction == "none") return loss;
  fail(op, "reduction must be \"mean\", \"sum\" or \"none\", got \"" + std::string(reduction) + "\"");
}

// Class-index targets, as PyTorch takes them: a float target would be truncated to a class silently.
// Scores are [N, C, d1, ...] with targets [N, d1, ...], or [C] with a 0-dim target.
void check_class_targets(const char* op, const char* scores_name, const Tensor& scores, const Tensor& target) {
  bool fits = scores.dim() >= 1 && target.dim() == scores.dim() - 1;
  for (int64_t d = 0; fits && d < target.dim(); ++d) fits = target.shape()[d] == scores.shape()[d == 0 ? 0 : d + 1];
  if (!fits)
    fail(op, std::string("expects ") + scores_name + " [N, C, d1, ...] and target [N, d1, ...], got " +
                 shape_str(scores.shape()) + " and " + shape_str(target.shape()));
  if (is_floating(target.dtype()) || target.dtype() == DType::bool_)
    fail(op, "target must hold class indices (an integer dtype), got " + std::string(dtype_name(target.dtype())));
}

// [N, C, d1, ...] scores as [N d1 ..., C] rows, and their targets as one flat vector.
Tensor class_rows(const Tensor& scores) {
  if (scores.dim() == 1) return unsqueeze(scores, 0);
  if (scores.dim() == 2) return scores;
  const int64_t c = scores.shape()[1];
  return reshape(transpose(reshape(scores, {scores.shape()[0], c, -1}), 1, 2), {-1, c});
}

void check_class_weights(const char* op, const std::optional<Tensor>& weight, int64_t classes) {
  if (weight && (weight->dim() != 1 || weight->shape()[0] != classes))
    fail(op, "weight must be [" + std::to_string(classes) + "], one per class, got " + shape_str(weight->shape()));
}

// Each row's log-probability of its class, weighted, and the per-row weights (0 where ignored).
struct Picked {
  Tensor loss;     // -w[t] log p[t] per row, 0 where ignored
  Tensor weights;  // w[t] per row (1 without class weights), 0 where ignored
  Tensor valid;
};

Picked pick_targets(const Tensor& log_probs, const Tensor& target, int64_t ignore_index,
                    const std::optional<Tensor>& weight) {
  Tensor valid = target != ignore_index;
  Tensor index = where(valid, target, 0).to(DType::i64);
  Tensor picked = squeeze(gather(log_probs, 1, unsqueeze(index, 1)), 1);
  Tensor w = weight ? index_select(weight->to(log_probs.dtype()), 0, index) : ones_like(picked);
  w = where(valid, w, 0.0);
  return {-(picked * w), w, valid};
}

Tensor class_loss(const char* op, const Tensor& log_probs_in, const Tensor& target_in, int64_t ignore_index,
                  const std::optional<Tensor>& weight, std::string_view reduction, double label_smoothing) {
  check_class_weights(op, weight, log_probs_in.shape()[log_probs_in.dim() == 1 ? 0 : 1]);
  Tensor log_probs = class_rows(log_probs_in), target = reshape(target_in, {-1});
  Picked p = pick_targets(log_probs, target, ignore_index, weight);
  Tensor per_row = p.loss;
  if (label_smoothing > 0) {
    // The smoothed target puts label_smoothing / C on every class (each weighted by its class weight).
    Tensor w = weight ? weight->to(log_probs.dtype()) : ones({log_probs.shape()[1]}, log_probs.dtype());
    Tensor uniform_term = -sum(log_probs * w, {-1}) / static_cast<double>(log_probs.shape()[1]);
    per_row = per_row * (1.0 - label_smoothing) + where(p.valid, uniform_term, 0.0) * label_smoothing;
  }
  if (reduction == "none") return reshape(per_row, target_in.shape());
  if (reduction == "sum") return sum(per_row);
  if (reduction != "mean") reduce(op, per_row, reduction);  // raises for an unknown reduction
  // The mean divides by the weights of the targets that count: by 0 for an empty batch or one whose targets
  // are all ignored, a nan loss as in PyTorch (the gradients stay 0: no target is reached).
  return sum(per_row) / sum(p.weights);
}

}  // namespace

Tensor nll_loss(const Tensor& log_probs_in, const Tensor& target, int64_t ignore_index,
                const std::optional<Tensor>& weight, std::string_view reduction) {
  return composite_op("nll_loss", [&] {
    const Tensor log_probs = autocast_for_precision(log_probs_in);
    check_class_targets("nll_loss", "log_probs", log_probs, target);
    return class_loss("nll_loss", log_probs, target, ignore_index, weight, reduction, 0);
  });
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index, double label_smoothing,
                     const std::optional<Tensor>& weight, std::string_view reduction) {
  return composite_op("cross_entropy", [&] {
    if (label_smoothing < 0 || label_smoothing > 1)
      fail("cross_entropy", "label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
    check_class_targets("cross_entropy", "logits", logits, target);
    Tensor log_probs = log_softmax(logits, logits.dim() == 1 ? 0 : 1);
    return class_loss("cross_entropy", log_probs, target, ignore_index, weight, reduction, label_smoothing);
  });
}

Tensor mse_loss(const Tensor& input_in, const Tensor& target_in, std::string_view reduction) {
  return composite_op("mse_loss", [&] {
    const Tensor input = autocast_for_precision(input_in), target = autocast_for_precision(target_in);
    check_same_shape("mse_loss", input, target);
    return reduce("mse_loss", square(input - target), reduction);
  });
}

Tensor l1_loss(const Tensor& input_in, const Tensor& target_in, std::string_view reduction) {
  return composite_op("l1_loss", [&] {
    const Tensor input = autocast_for_precision(input_in), target = autocast_for_precision(target_in);
    check_same_shape("l1_loss", input, target);
    return reduce("l1_loss", abs(input - target), reduction);
  });
}

Tensor smooth_l1_loss(const Tensor& input_in, const Tensor& target_in, double beta, std::string_view reduction) {
  return composite_op("smooth_l1_loss", [&] {
    const Tensor input = autocast_for_precision(input_in), target = autocast_for_precision(target_in);
    check_same_shape("smooth_l1_loss", input, target);
    if (beta < 0) fail("smooth_l1_loss", "beta must be >= 0, got " + std::to_string(beta));
    Tensor d = abs(input - target);
    Tensor loss = beta == 0 ? d : where(d < beta, square(d) * (0.5 / beta), d - 0.5 * beta);
    return reduce("smooth_l1_loss", loss, reduction);
  });
}

Tensor huber_loss(const Tensor& input_in, const Tensor& target_in, double delta, std::string_view reduction) {
  return composite_op("huber_loss", [&] {
    const Tensor input = autocast_for_precision(input_in), target = autocast_for_precision(target_in);
    check_same_shape("huber_loss", input, target);
    if (delta <= 0) fail("huber_loss", "delta must be > 0, got " + std::to_string(delta));
    Tensor d = abs(input - target);
    return reduce("huber_loss", where(d < delta, square(d) * 0.5, (d - 0.5 * delta) * delta), reduction);
  });
}

Tensor binary_cross_entropy(const Tensor& input_in, const Tensor& target_in, const std::optional<Tensor>& weight,
                            std::string_view reduction) {
  return composite_op("binary_cross_entropy", [&] {
    const Tensor input = autocast_for_precision(input_in), target = autocast_for_precision(target_in);
    check_same_shape("binary_cross_entropy", input, target);
    // log clamped at -100, as PyTorch does, so that a probability of exactly 0 or 1 gives a finite loss.
    Tensor log_p = clamp_min(log(input), -100.0), log_q = clamp_min(log(1.0 - input), -100.0);
    Tensor loss = -(target * log_p + (1.0 - target) * log_q);
    if (weight) loss = loss * *weight;
    return reduce("binary_cross_entropy", loss, reduction);
  });
}

Tensor binary_cross_entropy_with_logits(const Tensor& input_in, const Tensor& target_in,
                                        const std::optional<Tensor>& weight, const std::optional<Tensor>& pos_weight,
                                        std::string_view reduction) {
  return composite_op("binary_cross_entropy_with_logits", [&] {
    const Tensor input = autocast_for_precision(input_in), target = autocast_for_precision(target_in);
    check_same_shape("binary_cross_entropy_with_logits", input, target);
    // -log sigmoid(x) = softplus(-x), computed without overflow as log1p(exp(-|x|)) + max(-x, 0).
    Tensor log_sigmoid_neg = log1p(exp(-abs(input))) + clamp_min(-input, 0.0);
    Tensor positive = pos_weight ? (*pos_weight - 1.0) * target + 1.0 : ones_like(target);
    Tensor loss = (1.0 - target) * input + positive * log_sigmoid_neg;
    if (weight) loss = loss * *weight;
    return reduce("binary_cross_entropy_with_logits", loss, reduction);
  });
}

Tensor kl_div(const Tensor& input_in, const Tensor& target_in, std::string_view reduction, bool log_target) {
  return composite_op("kl_div", [&] {
    const Tensor input = autocast_for_precision(input_in), target = autocast_for_precision(target_in);
    check_same_shape("kl_div", input, target);
    // target (log target - input), with 0 where the target probability is 0 (x log x -> 0).
    Tensor loss = log_target ? exp(target) * (target - input)
                             : where(target > 0, target * (log(where(target > 0, target, 1.0)) - input), 0.0);
    if (reduction == "batchmean") return sum(loss) / static_cast<double>(input.dim() == 0 ? 1 : input.shape()[0]);
    return reduce("kl_div", loss, reduction);
  });
}

Tensor cosine_similarity(const Tensor& a_in, const Tensor& b_in, int64_t dim, double eps) {
  return composite_op("cosine_similarity", [&] {
    const Tensor a = autocast_for_precision(a_in), b = autocast_for_precision(b_in);
    Tensor na = clamp_min(norm(a, 2.0, {dim}), eps), nb = clamp_min(norm(b, 2.0, {dim}), eps);
    return sum(a * b, {dim}) / (na * nb);
  });
}

}  // namespace xlite::nn
