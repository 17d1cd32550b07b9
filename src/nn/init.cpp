// nn::init: PyTorch's initialisers. Each draws from the global generator and copies into the tensor in
// place without recording gradients, so a parameter keeps its identity (and its optimizer state).
#include <cmath>
#include <string>
#include <vector>

#include "xlite/autograd.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/nn.h"
#include "xlite/ops.h"

namespace xlite::nn::init {
namespace {
void fill(Tensor& t, const Tensor& values) {
  NoGradGuard no_grad;
  t.copy_(values);
}

// PyTorch's fans: dim 1 (inputs) and dim 0 (outputs), each times the receptive field (the dims after 1).
std::pair<double, double> fans(const char* op, const Tensor& t) {
  if (t.dim() < 2)
    throw Error("[" + std::string(op) + "] needs a tensor of at least 2 dims to compute fans, got " +
                shape_str(t.shape()));
  double field = 1;
  for (int64_t d = 2; d < t.dim(); ++d) field *= static_cast<double>(t.shape()[d]);
  return {static_cast<double>(t.shape()[1]) * field, static_cast<double>(t.shape()[0]) * field};
}

double gain_of(const char* op, std::string_view nonlinearity, double a) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid") return 1;
  if (nonlinearity == "tanh") return 5.0 / 3;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1 + a * a));
  throw Error("[" + std::string(op) + "] unknown nonlinearity \"" + std::string(nonlinearity) + "\"");
}

double kaiming_std(const char* op, const Tensor& t, double a, std::string_view mode, std::string_view nonlinearity) {
  if (mode != "fan_in" && mode != "fan_out")
    throw Error("[" + std::string(op) + "] mode must be \"fan_in\" or \"fan_out\", got \"" + std::string(mode) + "\"");
  auto [fan_in, fan_out] = fans(op, t);
  return gain_of(op, nonlinearity, a) / std::sqrt(mode == "fan_in" ? fan_in : fan_out);
}
}  // namespace

void uniform_(Tensor& t, double a, double b) { fill(t, rand(t.shape(), DType::f32, t.device()) * (b - a) + a); }
void normal_(Tensor& t, double mean, double std) { fill(t, randn(t.shape(), DType::f32, t.device()) * std + mean); }
void zeros_(Tensor& t) { fill(t, zeros_like(t)); }
void ones_(Tensor& t) { fill(t, ones_like(t)); }
void constant_(Tensor& t, double value) { fill(t, full_like(t, value)); }

void xavier_uniform_(Tensor& t, double gain) {
  auto [fan_in, fan_out] = fans("xavier_uniform_", t);
  const double bound = gain * std::sqrt(6.0 / (fan_in + fan_out));
  uniform_(t, -bound, bound);
}

void xavier_normal_(Tensor& t, double gain) {
  auto [fan_in, fan_out] = fans("xavier_normal_", t);
  normal_(t, 0, gain * std::sqrt(2.0 / (fan_in + fan_out)));
}

void kaiming_uniform_(Tensor& t, double a, std::string_view mode, std::string_view nonlinearity) {
  const double bound = std::sqrt(3.0) * kaiming_std("kaiming_uniform_", t, a, mode, nonlinearity);
  uniform_(t, -bound, bound);
}

void kaiming_normal_(Tensor& t, double a, std::string_view mode, std::string_view nonlinearity) {
  normal_(t, 0, kaiming_std("kaiming_normal_", t, a, mode, nonlinearity));
}

// Gram-Schmidt, twice per vector for stability, over the longer side of a Gaussian matrix on the host: an
// initialiser runs once, on a small matrix.
void orthogonal_(Tensor& t, double gain) {
  if (t.dim() < 2) throw Error("[orthogonal_] needs at least 2 dims, got " + shape_str(t.shape()));
  const int64_t rows = t.shape()[0], cols = t.numel() / std::max<int64_t>(rows, 1);
  const bool wide = rows < cols;
  const int64_t count = wide ? rows : cols, length = wide ? cols : rows;  // orthonormal vectors of `length`
  std::vector<double> v = randn({count, length}, DType::f64, t.device()).to_vector<double>();
  for (int64_t i = 0; i < count; ++i) {
    double* vi = &v[i * length];
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t j = 0; j < i; ++j) {
        const double* vj = &v[j * length];
        double dot = 0;
        for (int64_t k = 0; k < length; ++k) dot += vi[k] * vj[k];
        for (int64_t k = 0; k < length; ++k) vi[k] -= dot * vj[k];
      }
    double norm = 0;
    for (int64_t k = 0; k < length; ++k) norm += vi[k] * vi[k];
    norm = std::sqrt(norm);
    for (int64_t k = 0; k < length; ++k) vi[k] /= norm;
  }
  Tensor q = tensor(v, {count, length}, t.device()) * gain;
  fill(t, reshape(wide ? q : transpose(q, 0, 1), t.shape()));
}

}  // namespace xlite::nn::init
