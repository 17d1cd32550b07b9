#include "testing/test_kernels.h"

#include <algorithm>
#include <mutex>

#include "xlite/error.h"
#include "xlite/kernels.h"

namespace xlite::testing {
namespace {

bool floating_32_or_64(DType d) { return d == DType::f32 || d == DType::f64; }

template <class T>
void axpy(const kernels::CpuCall& call, kernels::CpuContext& context) {
  const T *x = call.input<T>(0), *y = call.input<T>(1);
  T* out = call.output<T>(0);
  const double alpha = call.float_attr("alpha");
  context.parallel_for(call.input_type(0).numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = static_cast<T>(alpha * x[i] + y[i]);
  });
}

template <class T>
void row_stats(const kernels::CpuCall& call, kernels::CpuContext& context) {
  const int64_t cols = call.input_type(0).shape.back(), rows = call.output_type(0).numel();
  const T* x = call.input<T>(0);
  context.parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double sum = 0, most = x[r * cols];
      for (int64_t c = 0; c < cols; ++c) {
        sum += x[r * cols + c];
        most = std::max<double>(most, x[r * cols + c]);
      }
      call.output<T>(0)[r] = static_cast<T>(sum);
      call.output<T>(1)[r] = static_cast<T>(most);
    }
  });
}

}  // namespace

void register_test_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    kernels::register_kernel({
        .name = "testing.axpy",
        .shape =
            [](const std::vector<kernels::TensorType>& in, const kernels::Attrs&) {
              if (in.size() != 2 || in[0] != in[1] || !floating_32_or_64(in[0].dtype))
                throw Error("[testing.axpy] takes two f32 or f64 values of one type");
              return std::vector<kernels::TensorType>{in[0]};
            },
        .cpu =
            [](const kernels::CpuCall& call, kernels::CpuContext& context) {
              call.input_type(0).dtype == DType::f32 ? axpy<float>(call, context) : axpy<double>(call, context);
            },
    });
    kernels::register_kernel({
        .name = "testing.row_stats",
        .shape =
            [](const std::vector<kernels::TensorType>& in, const kernels::Attrs&) {
              if (in.size() != 1 || in[0].shape.empty() || in[0].shape.back() == 0 || !floating_32_or_64(in[0].dtype))
                throw Error("[testing.row_stats] takes one f32 or f64 value with a non-empty last dim");
              const Shape rows(in[0].shape.begin(), in[0].shape.end() - 1);
              return std::vector<kernels::TensorType>{{rows, in[0].dtype}, {rows, in[0].dtype}};
            },
        .cpu =
            [](const kernels::CpuCall& call, kernels::CpuContext& context) {
              call.input_type(0).dtype == DType::f32 ? row_stats<float>(call, context)
                                                     : row_stats<double>(call, context);
            },
    });
  });
}

}  // namespace xlite::testing
