// gmm and tgmm: the grouped matmuls of mixture-of-experts layers. Each group is one oneDNN sgemm over the
// group's rows, in place in the operands (no copies), threaded inside the sgemm.
#include <dnnl.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "ir/kernel_registry.h"
#include "kernels/builtin.h"
#include "kernels/kernel_checks.h"
#include "xlite/error.h"
#include "xlite/kernels.h"
#include "xlite/ops.h"

namespace xlite::kernels {
namespace {

void check_group_sizes(const char* kernel, const TensorType& sizes, int64_t groups) {
  if (sizes.dtype != DType::i32 || sizes.shape != Shape{groups})
    refuse(kernel, "group_sizes must be i32[" + std::to_string(groups) + "], one per group, not " + type_text(sizes));
}

// The group sizes, checked against the m rows they split: negative sizes and a wrong sum fail the call.
std::vector<int64_t> group_sizes(const CpuCall& call, CpuContext& context, size_t input, int64_t m) {
  const int32_t* sizes = call.input<int32_t>(input);
  std::vector<int64_t> out(static_cast<size_t>(call.input_type(input).numel()));
  int64_t total = 0;
  for (size_t g = 0; g < out.size(); ++g) {
    if (sizes[g] < 0) context.fail("group " + std::to_string(g) + " has a negative size " + std::to_string(sizes[g]));
    out[g] = sizes[g];
    total += sizes[g];
  }
  if (total != m)
    context.fail("group sizes sum to " + std::to_string(total) + ", not the " + std::to_string(m) + " rows to split");
  return out;
}

// C [rows, cols] (leading dim ldc) = A [rows, depth] (lda) x B [depth, cols] (ldb), all row-major.
void sgemm(const char* kernel, int64_t rows, int64_t cols, int64_t depth, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc) {
  if (rows == 0 || cols == 0) return;
  if (depth == 0) {
    for (int64_t r = 0; r < rows; ++r) std::memset(c + r * ldc, 0, sizeof(float) * static_cast<size_t>(cols));
    return;
  }
  if (dnnl_sgemm('N', 'N', rows, cols, depth, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) != dnnl_success)
    throw Error("[" + std::string(kernel) + "] oneDNN's sgemm failed on a " + std::to_string(rows) + "x" +
                std::to_string(depth) + "x" + std::to_string(cols) + " product");
}

std::vector<TensorType> gmm_shape(const std::vector<TensorType>& in, const Attrs&) {
  if (in.size() != 3) refuse("gmm", "takes lhs, rhs and group_sizes");
  const TensorType &lhs = in[0], &rhs = in[1];
  if (lhs.dtype != DType::f32 || rhs.dtype != DType::f32 || lhs.shape.size() != 2 || rhs.shape.size() != 3 ||
      rhs.shape[1] != lhs.shape[1])
    refuse("gmm", "needs lhs f32[m, k] and rhs f32[G, k, n], got " + type_text(lhs) + " and " + type_text(rhs));
  check_group_sizes("gmm", in[2], rhs.shape[0]);
  return {{{lhs.shape[0], rhs.shape[2]}, DType::f32}};
}

// Calls product(group, first row, rows) for each group, in order.
template <class Product>
void for_each_group(const std::vector<int64_t>& sizes, Product product) {
  int64_t row = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    product(static_cast<int64_t>(g), row, sizes[g]);
    row += sizes[g];
  }
}

// Runs product(group, first row, rows) for every group of the m rows. A group of more than a thread's share
// of the rows runs alone, sgemm threading inside it; the others run side by side, one thread each (an sgemm
// inside a parallel region runs on its thread). Measured with gmm on 8 groups of 2048x512x1024: one group at
// a time reached 0.69x a dense matmul of the same size, side by side 0.95x; with one group holding half the
// rows, side by side alone fell to 0.68x.
template <class Product>
void run_groups(CpuContext& context, const std::vector<int64_t>& sizes, int64_t m, Product product) {
  const int64_t share = m / std::max(1, context.num_threads());
  std::vector<std::array<int64_t, 3>> small;  // group, first row, rows
  for_each_group(sizes, [&](int64_t g, int64_t row, int64_t rows) {
    if (rows > share)
      product(g, row, rows);
    else
      small.push_back({g, row, rows});
  });
  context.parallel_for(static_cast<int64_t>(small.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) product(small[i][0], small[i][1], small[i][2]);
  });
}

void gmm_cpu(const CpuCall& call, CpuContext& context) {
  const int64_t m = call.input_type(0).shape[0], k = call.input_type(0).shape[1], n = call.input_type(1).shape[2];
  const float *lhs = call.input<float>(0), *rhs = call.input<float>(1);
  float* out = call.output<float>(0);
  run_groups(context, group_sizes(call, context, 2, m), m, [&](int64_t g, int64_t row, int64_t rows) {
    sgemm("gmm", rows, n, k, lhs + row * k, k, rhs + g * k * n, n, out + row * n, n);
  });
}

std::vector<TensorType> tgmm_shape(const std::vector<TensorType>& in, const Attrs&) {
  if (in.size() != 3) refuse("tgmm", "takes lhs, rhs and group_sizes");
  const TensorType &lhs = in[0], &rhs = in[1];
  if (lhs.dtype != DType::f32 || rhs.dtype != DType::f32 || lhs.shape.size() != 2 || rhs.shape.size() != 2 ||
      rhs.shape[0] != lhs.shape[1])
    refuse("tgmm", "needs lhs f32[k, m] and rhs f32[m, n], got " + type_text(lhs) + " and " + type_text(rhs));
  if (in[2].shape.size() != 1) refuse("tgmm", "group_sizes must be i32[G], not " + type_text(in[2]));
  check_group_sizes("tgmm", in[2], in[2].shape[0]);
  return {{{in[2].shape[0], lhs.shape[0], rhs.shape[1]}, DType::f32}};
}

void tgmm_cpu(const CpuCall& call, CpuContext& context) {
  const int64_t k = call.input_type(0).shape[0], m = call.input_type(0).shape[1], n = call.input_type(1).shape[1];
  const float *lhs = call.input<float>(0), *rhs = call.input<float>(1);
  float* out = call.output<float>(0);
  // lhs's columns of a group are a k x rows block at column `row`, leading dim m. An empty group's
  // product is zeros, which sgemm writes for a depth of 0.
  run_groups(context, group_sizes(call, context, 2, m), m, [&](int64_t g, int64_t row, int64_t rows) {
    sgemm("tgmm", k, n, rows, lhs + row, m, rhs + row * n, n, out + g * k * n, n);
  });
}

// d lhs = gmm(grad, rhs^T); d rhs = tgmm(lhs^T, grad).
std::vector<Tensor> gmm_backward(const std::vector<Tensor>& in, const std::vector<Tensor>&,
                                 const std::vector<Tensor>& grads, const Attrs&) {
  const Tensor &lhs = in[0], &rhs = in[1], &sizes = in[2], &grad = grads[0];
  return {gmm(grad, transpose(rhs, 1, 2), sizes), tgmm(transpose(lhs, 0, 1), grad, sizes), Tensor()};
}

// out[g] = lhs_g rhs_g with lhs_g = lhs[:, group], rhs_g = rhs[group]: d lhs_g = grad[g] rhs_g^T, so
// d lhs^T = gmm(rhs, grad^T); d rhs_g = lhs_g^T grad[g], so d rhs = gmm(lhs^T, grad).
std::vector<Tensor> tgmm_backward(const std::vector<Tensor>& in, const std::vector<Tensor>&,
                                  const std::vector<Tensor>& grads, const Attrs&) {
  const Tensor &lhs = in[0], &rhs = in[1], &sizes = in[2], &grad = grads[0];
  return {transpose(gmm(rhs, transpose(grad, 1, 2), sizes), 0, 1), gmm(transpose(lhs, 0, 1), grad, sizes), Tensor()};
}

}  // namespace

Tensor gmm(const Tensor& lhs, const Tensor& rhs, const Tensor& group_sizes) {
  return call("gmm", {lhs, rhs, group_sizes})[0];
}

Tensor tgmm(const Tensor& lhs, const Tensor& rhs, const Tensor& group_sizes) {
  return call("tgmm", {lhs, rhs, group_sizes})[0];
}

namespace builtin {

void register_grouped_matmul() {
  // Both multiply m rows of depth k (gmm) or k rows of depth m (tgmm) into n columns: 2 m k n operations.
  auto cost = [](const std::vector<TensorType>& in, const Attrs&) {
    return 2.0 * static_cast<double>(in[0].numel()) * static_cast<double>(in[1].shape.back());
  };
  ir::add_builtin_kernel({.name = "gmm", .shape = gmm_shape, .cpu = gmm_cpu, .backward = gmm_backward, .cost = cost});
  ir::add_builtin_kernel(
      {.name = "tgmm", .shape = tgmm_shape, .cpu = tgmm_cpu, .backward = tgmm_backward, .cost = cost});
}

}  // namespace builtin
}  // namespace xlite::kernels
