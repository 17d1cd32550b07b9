#include "backends/cpu/library.h"

#include <dnnl.h>

#include <cstring>
#include <mutex>
#include <string>

#include "xlite/error.h"

namespace xlite::backends::cpu {
namespace {
void check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success)
    throw Error(std::string("[conv2d] oneDNN ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

// One CPU engine and stream for the process; oneDNN runs its own OpenMP threads inside.
struct Engine {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  std::mutex mutex;  // one stream: executions are serialised
  Engine() {
    check(dnnl_engine_create(&engine, dnnl_cpu, 0), "engine");
    check(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "stream");
  }
};
Engine& engine() {
  static Engine* e = new Engine();  // never destroyed: primitives may run during exit
  return *e;
}
}  // namespace

void matmul_f32(const Shape& a, bool transpose_a, const Shape& b, bool transpose_b, const float* pa, const float* pb,
                float* out) {
  size_t r = a.size();
  int64_t m = transpose_a ? a[r - 1] : a[r - 2], k = transpose_a ? a[r - 2] : a[r - 1];
  int64_t n = transpose_b ? b[r - 2] : b[r - 1];
  int64_t batch = numel(Shape(a.begin(), a.end() - 2));
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) {
    std::memset(out, 0, sizeof(float) * batch * m * n);
    return;
  }
  for (int64_t i = 0; i < batch; ++i) {
    dnnl_status_t s = dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, pa + i * m * k,
                                 transpose_a ? m : k, pb + i * k * n, transpose_b ? k : n, 0.0f, out + i * m * n, n);
    if (s != dnnl_success) throw Error("[matmul] oneDNN sgemm failed with status " + std::to_string(static_cast<int>(s)));
  }
}

struct Conv2d::State {
  dnnl_memory_desc_t src, weights, dst;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t primitive = nullptr;
};

Conv2d::Conv2d(const ir::Instr& conv, const Shape& input, const Shape& weight) : state_(std::make_unique<State>()) {
  const auto& stride = conv.attrs.get_ints(ir::AttrKey::stride);
  const auto& lo = conv.attrs.get_ints(ir::AttrKey::lo);
  const auto& hi = conv.attrs.get_ints(ir::AttrKey::hi);
  const auto& dilation = conv.attrs.get_ints(ir::AttrKey::dilation);
  const int64_t groups = conv.attrs.get_int(ir::AttrKey::groups);
  dnnl_dims_t src_dims = {input[0], input[1], input[2], input[3]};
  dnnl_dims_t dst_dims = {conv.shape[0], conv.shape[1], conv.shape[2], conv.shape[3]};
  check(dnnl_memory_desc_init_by_tag(&state_->src, 4, src_dims, dnnl_f32, dnnl_nchw), "source descriptor");
  check(dnnl_memory_desc_init_by_tag(&state_->dst, 4, dst_dims, dnnl_f32, dnnl_nchw), "destination descriptor");
  if (groups == 1) {
    dnnl_dims_t w_dims = {weight[0], weight[1], weight[2], weight[3]};
    check(dnnl_memory_desc_init_by_tag(&state_->weights, 4, w_dims, dnnl_f32, dnnl_oihw), "weight descriptor");
  } else {
    // Grouped weights are [groups, O / groups, C / groups, KH, KW]: the same bytes as [O, C / groups, KH, KW].
    dnnl_dims_t w_dims = {groups, weight[0] / groups, weight[1], weight[2], weight[3]};
    check(dnnl_memory_desc_init_by_tag(&state_->weights, 5, w_dims, dnnl_f32, dnnl_goihw), "weight descriptor");
  }
  dnnl_dims_t strides = {stride[0], stride[1]};
  dnnl_dims_t dilates = {dilation[0] - 1, dilation[1] - 1};  // oneDNN counts the gaps, not the step
  dnnl_dims_t pad_l = {lo[0], lo[1]};
  dnnl_dims_t pad_r = {hi[0], hi[1]};
  dnnl_convolution_desc_t desc;
  check(dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &state_->src,
                                                   &state_->weights, nullptr, &state_->dst, strides, dilates, pad_l, pad_r),
        "convolution descriptor");
  check(dnnl_primitive_desc_create(&state_->pd, &desc, nullptr, engine().engine, nullptr), "primitive descriptor");
  check(dnnl_primitive_create(&state_->primitive, state_->pd), "primitive");
}

Conv2d::~Conv2d() {
  if (state_->primitive) dnnl_primitive_destroy(state_->primitive);
  if (state_->pd) dnnl_primitive_desc_destroy(state_->pd);
}

void Conv2d::run(const float* input, const float* weight, float* output) const {
  Engine& e = engine();
  dnnl_memory_t src, weights, dst;
  check(dnnl_memory_create(&src, &state_->src, e.engine, const_cast<float*>(input)), "source memory");
  check(dnnl_memory_create(&weights, &state_->weights, e.engine, const_cast<float*>(weight)), "weight memory");
  check(dnnl_memory_create(&dst, &state_->dst, e.engine, output), "destination memory");
  dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  dnnl_status_t status;
  {
    std::lock_guard lock(e.mutex);
    status = dnnl_primitive_execute(state_->primitive, e.stream, 3, args);
    if (status == dnnl_success) status = dnnl_stream_wait(e.stream);
  }
  dnnl_memory_destroy(src);
  dnnl_memory_destroy(weights);
  dnnl_memory_destroy(dst);
  check(status, "execution");
}

}  // namespace xlite::backends::cpu
