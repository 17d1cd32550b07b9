// Draws built on the uniform generator (randint, randperm, bernoulli, multinomial) and evenly spaced
// ranges (linspace, logspace).
#include <cmath>
#include <string>

#include "ops/op_support.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ops::OpScope;

// steps values from start to end, in f64: the first half counted from start and the second from end, so
// that both ends are exact (as PyTorch computes them).
Tensor spaced(double start, double end, int64_t steps, Device device) {
  if (steps < 0) ops::fail("steps must be >= 0, got " + std::to_string(steps));
  Tensor i = arange(Scalar(int64_t{0}), Scalar(steps), Scalar(int64_t{1}), device).to(DType::f64);
  if (steps <= 1) return i + start;
  const double step = (end - start) / static_cast<double>(steps - 1);
  const double half = static_cast<double>(steps / 2);
  return where(i < half, i * step + start, (i - static_cast<double>(steps - 1)) * step + end);
}
}  // namespace

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device) {
  OpScope scope("randint");
  if (high <= low) ops::fail("high (" + std::to_string(high) + ") must be > low (" + std::to_string(low) + ")");
  const double span = static_cast<double>(high) - static_cast<double>(low);
  Tensor offset = minimum(floor(rand(shape, DType::f64, device) * span), span - 1);
  return scope.finish((offset.to(DType::i64) + low).to(dtype));
}

Tensor randperm(int64_t n, DType dtype, Device device) {
  OpScope scope("randperm");
  if (n < 0) ops::fail("n must be >= 0, got " + std::to_string(n));
  return scope.finish(argsort(rand({n}, DType::f64, device)).to(dtype));
}

Tensor bernoulli(const Tensor& p) {
  OpScope scope("bernoulli");
  if (!is_floating(p.dtype())) ops::fail("p must be floating, got " + std::string(dtype_name(p.dtype())));
  return scope.finish(lt(rand_like(p), p).to(p.dtype()));
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
  OpScope scope("multinomial");
  if (probs.dim() != 1 && probs.dim() != 2) ops::fail("probs must be [C] or [N, C], got " + shape_str(probs.shape()));
  if (!is_floating(probs.dtype())) ops::fail("probs must be floating, got " + std::string(dtype_name(probs.dtype())));
  const int64_t classes = probs.shape().back();
  if (classes == 0) ops::fail("probs has no categories");
  if (num_samples <= 0) ops::fail("num_samples must be > 0, got " + std::to_string(num_samples));
  if (!replacement && num_samples > classes)
    ops::fail("cannot draw " + std::to_string(num_samples) + " samples from " + std::to_string(classes) +
              " categories without replacement");
  Tensor p = probs.to(DType::f64);
  Shape draws = probs.shape();
  draws.back() = num_samples;
  if (!replacement) {
    // Gumbel top-k: the k largest of log p + Gumbel noise are a draw without replacement.
    Tensor gumbel = -log(-log(rand(p.shape(), DType::f64, probs.device())));
    return scope.finish(topk(log(p) + gumbel, num_samples, -1).indices);
  }
  // Inverse CDF: the number of cumulative weights at or below u * total; a category of weight 0 covers
  // no interval, so it is never drawn.
  Tensor cdf = cumsum(p, -1);
  Tensor u = rand(draws, DType::f64, probs.device()) * slice(cdf, -1, classes - 1);
  Tensor below = le(unsqueeze(cdf, -2), unsqueeze(u, -1));  // [..., samples, C]
  return scope.finish(minimum(sum(below, {-1}), classes - 1));
}

Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  OpScope scope("linspace");
  return scope.finish(spaced(start, end, steps, ops::existing_device(device)).to(dtype));
}

Tensor logspace(double start, double end, int64_t steps, double base, DType dtype, Device device) {
  OpScope scope("logspace");
  return scope.finish(pow(base, spaced(start, end, steps, ops::existing_device(device))).to(dtype));
}

}  // namespace xlite
