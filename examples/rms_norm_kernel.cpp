// A custom kernel: a fused rms_norm registered with its backward (the README shows the registration),
// then used in a small training loop inside compile(step), and checked against the same function written
// in ops. Exits non-zero if the kernel and the composite disagree.
#include <cmath>
#include <cstdio>
#include <xlite/xlite.h>

namespace xl = xlite;
namespace k = xlite::kernels;

// README: custom kernel
void register_rms_norm() {
  k::register_kernel({
      .name = "rms_norm",
      .shape = [](const std::vector<k::TensorType>& in, const k::Attrs&) -> std::vector<k::TensorType> {
        if (in.size() != 2 || in[0].dtype != xl::DType::f32 || in[0].shape.empty() ||
            in[1] != k::TensorType{{in[0].shape.back()}, xl::DType::f32})
          throw xl::Error("[rms_norm] takes x [..., D] and weight [D], both f32");
        return {in[0]};
      },
      .cpu =
          [](const k::CpuCall& call, k::CpuContext& context) {
            const int64_t d = call.input_type(1).numel(), rows = call.input_type(0).numel() / d;
            const float *x = call.input<float>(0), *w = call.input<float>(1);
            float* y = call.output<float>(0);
            const double eps = call.float_attr("eps");
            context.parallel_for(rows, 8, [&](int64_t begin, int64_t end) {
              for (int64_t r = begin; r < end; ++r) {
                double squares = 0;
                for (int64_t j = 0; j < d; ++j) squares += double(x[r * d + j]) * x[r * d + j];
                const float scale = static_cast<float>(1 / std::sqrt(squares / d + eps));
                for (int64_t j = 0; j < d; ++j) y[r * d + j] = x[r * d + j] * scale * w[j];
              }
            });
          },
      .backward =
          [](const std::vector<xl::Tensor>& in, const std::vector<xl::Tensor>&, const std::vector<xl::Tensor>& grads,
             const k::Attrs& attrs) {
            const xl::Tensor &x = in[0], &w = in[1], &g = grads[0];
            const xl::Tensor r = xl::rsqrt(xl::mean(x * x, {-1}, true) + std::get<double>(attrs.at("eps")));
            const xl::Tensor xhat = x * r, gw = g * w;
            return std::vector<xl::Tensor>{r * (gw - xhat * xl::mean(gw * xhat, {-1}, true)),
                                           xl::sum(g * xhat, {0})};  // x is [N, D] here
          },
  });
}
xl::Tensor rms_norm(const xl::Tensor& x, const xl::Tensor& w) {
  return k::call("rms_norm", {x, w}, {{"eps", 1e-5}})[0];
}
// README: end

xl::Tensor rms_norm_ops(const xl::Tensor& x, const xl::Tensor& w) {
  return x * xl::rsqrt(xl::mean(x * x, {-1}, true) + 1e-5) * w;
}

int main() {
  register_rms_norm();
  xl::manual_seed(0);
  const xl::Tensor x = xl::randn({64, 32}), target = xl::randn({64, 32});
  // The same model twice: a weight trained through the kernel, and one through the composite.
  xl::Tensor w_kernel = xl::ones({32}).requires_grad_(), w_ops = xl::ones({32}).requires_grad_();
  xl::optim::SGD opt_kernel({w_kernel}, 0.5), opt_ops({w_ops}, 0.5);
  auto step = [](auto norm, xl::Tensor& w, xl::optim::SGD& opt, const xl::Tensor& x, const xl::Tensor& target) {
    return xl::compile([&, norm](const xl::Tensor&) {
      opt.zero_grad();
      xl::Tensor loss = xl::nn::mse_loss(norm(x, w), target);
      loss.backward();
      opt.step();
      return loss;
    });
  };
  auto kernel_step = step(rms_norm, w_kernel, opt_kernel, x, target);
  auto ops_step = step(rms_norm_ops, w_ops, opt_ops, x, target);
  float kernel_loss = 0, ops_loss = 0;
  for (int i = 0; i < 50; ++i) {
    kernel_loss = kernel_step(x).item<float>();
    ops_loss = ops_step(x).item<float>();
  }
  const float weight_gap = xl::max(xl::abs(w_kernel - w_ops)).item<float>();
  std::printf("after 50 steps: loss %.6f with the kernel, %.6f with ops; weights differ by at most %.2e\n", kernel_loss,
              ops_loss, weight_gap);
  const bool same = std::fabs(kernel_loss - ops_loss) <= 1e-4f * std::fabs(ops_loss) && weight_gap <= 1e-4f;
  std::printf("%s\n", same ? "kernel and composite agree" : "MISMATCH between kernel and composite");
  return same ? 0 : 1;
}
