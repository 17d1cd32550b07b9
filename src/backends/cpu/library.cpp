#include "backends/cpu/library.h"

#include <dnnl.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <string>

#include "core/check.h"
#include "core/clock.h"
#include "core/runtime_context.h"
#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "runtime/allocator.h"
#include "xlite/error.h"

namespace xlite::backends::cpu {
namespace {
void check(dnnl_status_t status, const char* op, const char* what) {
  if (status == dnnl_success) return;
  if (status == dnnl_out_of_memory) throw Error(std::string("[") + op + "] out of memory in oneDNN's " + what);
  // Any other status means xlite handed oneDNN something it should not have.
  XLITE_FAIL(std::string("[") + op + "] oneDNN " + what + " failed with status " +
             std::to_string(static_cast<int>(status)));
}

// One CPU engine and stream for the process; oneDNN runs its own OpenMP threads inside.
struct Engine final : RuntimeState {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  std::mutex mutex;  // one stream: executions are serialised
  Engine() {
    check(dnnl_engine_create(&engine, dnnl_cpu, 0), "engine", "engine");
    check(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "engine", "stream");
  }
  std::string describe() const override { return "one CPU engine, one stream"; }
};
Engine& engine() { return runtime_context::state<Engine>("onednn"); }
}  // namespace

struct Primitive::State {
  const char* op = "";
  dnnl_memory_desc_t src, weights, dst, scratch;
  size_t scratch_bytes = 0;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t primitive = nullptr;
  // Builds the primitive for an operation descriptor over the memory descriptors above. Its scratchpad is
  // the caller's, lent for each execution from the device's allocator: in the library's mode each primitive
  // kept one of its own for life (about 300 KiB per matmul, 26 MiB of chargpt's compiled step, whether or
  // not the primitive ever ran).
  void create(const_dnnl_op_desc_t desc) {
    dnnl_primitive_attr_t attr = nullptr;
    check(dnnl_primitive_attr_create(&attr), op, "attributes");
    dnnl_status_t status = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (status == dnnl_success) status = dnnl_primitive_desc_create(&pd, desc, attr, engine().engine, nullptr);
    dnnl_primitive_attr_destroy(attr);
    check(status, op, "primitive descriptor");
    scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    scratch_bytes = dnnl_memory_desc_get_size(&scratch);
    check(dnnl_primitive_create(&primitive, pd), op, "primitive");
  }
};

Primitive::Primitive(const char* op) : state_(std::make_unique<State>()) { state_->op = op; }

Primitive::~Primitive() {
  if (state_->primitive) dnnl_primitive_destroy(state_->primitive);
  if (state_->pd) dnnl_primitive_desc_destroy(state_->pd);
}

void Primitive::run(const void* source, const void* weights, void* destination) const {
  Engine& e = engine();
  const char* op = state_->op;
  const BufferPtr scratch =
      state_->scratch_bytes > 0 ? runtime::allocator(Device{}).allocate(state_->scratch_bytes) : nullptr;
  dnnl_memory_t src, w, dst, pad = nullptr;
  check(dnnl_memory_create(&src, &state_->src, e.engine, const_cast<void*>(source)), op, "source memory");
  check(dnnl_memory_create(&w, &state_->weights, e.engine, const_cast<void*>(weights)), op, "weight memory");
  check(dnnl_memory_create(&dst, &state_->dst, e.engine, destination), op, "destination memory");
  if (scratch) check(dnnl_memory_create(&pad, &state_->scratch, e.engine, scratch->data()), op, "scratchpad memory");
  dnnl_exec_arg_t args[] = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, pad}};
  dnnl_status_t status;
  {
    std::lock_guard lock(e.mutex);
    status = dnnl_primitive_execute(state_->primitive, e.stream, scratch ? 4 : 3, args);
    if (status == dnnl_success) status = dnnl_stream_wait(e.stream);
  }
  for (dnnl_memory_t m : {src, w, dst, pad})
    if (m) dnnl_memory_destroy(m);
  check(status, op, "execution");
}

namespace {
// A matrix operand as sgemm reads it: row-major or transposed with a leading dimension, the batch dims
// one stride apart.
struct SgemmOperand {
  bool transposed;
  int64_t ld, batch_stride;
};
std::optional<SgemmOperand> sgemm_operand(const Shape& shape, const std::vector<int64_t>& strides) {
  const size_t r = shape.size();
  const int64_t rows = shape[r - 2], cols = shape[r - 1];
  SgemmOperand op{};
  if (strides[r - 1] == 1 || cols == 1) {
    op = {false, rows == 1 ? cols : strides[r - 2], 0};
    if (op.ld < cols) return std::nullopt;
  } else if (strides[r - 2] == 1 || rows == 1) {
    op = {true, cols == 1 ? rows : strides[r - 1], 0};
    if (op.ld < rows) return std::nullopt;
  } else {
    return std::nullopt;
  }
  // Batch dims flatten to one when each is the next one's stride times its size.
  int64_t next_stride = -1, next_size = 1;
  for (size_t k = r - 2; k-- > 0;) {
    if (shape[k] == 1) continue;
    if (next_stride >= 0 && strides[k] != next_stride * next_size) return std::nullopt;
    if (next_stride < 0) op.batch_stride = strides[k];
    next_stride = strides[k];
    next_size = shape[k];
  }
  return op;
}
}  // namespace

// The timed choice between sgemm and the primitive for one product signature (shapes and strides),
// shared by every Matmul of that signature in the process and kept for its life, so a recompiled step
// does not time again. The paths alternate on the program's own data (inside the step, where caches are
// as cold as they will be): each one's first run is not counted (it pays one-time costs such as oneDNN
// setting up its kernels), then each runs kTrials times, and the one with the faster best run is kept.
// The best of several runs, not one run, because the machines are noisy.
struct Matmul::Choice {
  static constexpr int kUncounted = 1;
  static constexpr int kTrials = 3;
  std::mutex mutex;
  int runs[2] = {0, 0};  // sgemm, primitive
  double best_ns[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  std::atomic<Path> path{Path::undecided};
};

namespace {
// Below this many multiply-adds a product takes microseconds: timing it would cost more than a wrong
// choice, and sgemm is kept where it applies.
constexpr int64_t kTimedChoiceWork = int64_t{1} << 24;

// oneDNN's sgemm mallocs its packing buffers in every call and frees them at its end, and glibc keeps the
// freed memory resident: 8 to 14 MiB of heap in the MLP's step at batch 1024, whose products all went to
// the primitive once timed. A trial gives those pages back, so a path that loses leaves nothing behind; a
// path kept for good keeps its buffers' pages as it reuses them. The next sgemm trial pays their page
// faults again (0.05 to 0.5 ms on chargpt's 0.5 to 3 ms products), so a call that close goes to the
// primitive, whose memory is the runtime's. An untimed run before each trial would fault them in, but
// it also leaves the operands in cache, and sgemm then looked faster than it runs inside a step.
void give_back_free_heap_pages() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

std::shared_ptr<Matmul::Choice> choice_for(const Shape& a, const std::vector<int64_t>& a_strides, const Shape& b,
                                           const std::vector<int64_t>& b_strides) {
  std::vector<int64_t> key;
  for (const auto* part : {&a, &a_strides, &b, &b_strides}) {
    key.push_back(static_cast<int64_t>(part->size()));
    key.insert(key.end(), part->begin(), part->end());
  }
  static std::mutex mutex;
  static auto* choices = new std::map<std::vector<int64_t>, std::shared_ptr<Matmul::Choice>>();  // never destroyed
  std::lock_guard lock(mutex);
  auto& choice = (*choices)[key];
  if (!choice) choice = std::make_shared<Matmul::Choice>();
  return choice;
}
}  // namespace

Matmul::Matmul(const Shape& a, const std::vector<int64_t>& a_strides, const Shape& b,
               const std::vector<int64_t>& b_strides, DType dtype)
    : Primitive("matmul") {
  if (dtype != DType::f32 && dtype != DType::bf16)
    throw Error("[matmul] the library multiplies f32 and bf16, not " + std::string(dtype_name(dtype)));
  const int r = static_cast<int>(a.size());
  if (r < 2 || r > DNNL_MAX_NDIMS || b.size() != a.size() || a_strides.size() != a.size() ||
      b_strides.size() != b.size())
    throw Error("[matmul] operands " + shape_str(a) + " and " + shape_str(b) +
                " are not batches of matrices of one rank");
  const dnnl_data_type_t element = dtype == DType::bf16 ? dnnl_bf16 : dnnl_f32;
  auto sa = sgemm_operand(a, a_strides), sb = sgemm_operand(b, b_strides);
  if (dtype != DType::f32) sa.reset();  // sgemm is f32 only
  // With a short K (a classifier's 10 classes), sgemm ran 10x slower than the primitive in a training
  // step, while a lone call looked fine; the primitive is as fast there.
  if (sa && sb && !sb->transposed && a[r - 1] >= 64) {
    sgemm_ = Sgemm{
        sa->transposed,   a[r - 2],        b[r - 1], a[r - 1], sa->ld, sb->ld, numel(Shape(a.begin(), a.end() - 2)),
        sa->batch_stride, sb->batch_stride};
    // batch * m * n counts the output's elements, which fits (ir/sizes.h); times k it may not, and a
    // product past 64 bits is certainly large.
    const auto work = ir::checked_mul(sgemm_->batch * sgemm_->m * sgemm_->n, sgemm_->k);
    if (work && *work < kTimedChoiceWork) return;
    choice_ = choice_for(a, a_strides, b, b_strides);
    if (choice_->path.load() == Path::sgemm) return;  // decided by an earlier program: no primitive needed
  }
  dnnl_dims_t a_dims, b_dims, c_dims, as, bs, cs;
  for (int k = 0; k < r; ++k) {
    a_dims[k] = a[k];
    b_dims[k] = b[k];
    c_dims[k] = k == r - 1 ? b[k] : a[k];
    // A dim of size 1 is never stepped along; give it the stride a dense layout would, which oneDNN accepts.
    as[k] = a[k] == 1 ? 0 : a_strides[k];
    bs[k] = b[k] == 1 ? 0 : b_strides[k];
  }
  for (int k = r - 1; k >= 0; --k) {
    cs[k] = k == r - 1 ? 1 : cs[k + 1] * c_dims[k + 1];
    if (as[k] == 0) as[k] = k == r - 1 ? 1 : std::max<int64_t>(1, as[k + 1] * a_dims[k + 1]);
    if (bs[k] == 0) bs[k] = k == r - 1 ? 1 : std::max<int64_t>(1, bs[k + 1] * b_dims[k + 1]);
  }
  check(dnnl_memory_desc_init_by_strides(&state_->src, r, a_dims, element, as), "matmul", "source descriptor");
  check(dnnl_memory_desc_init_by_strides(&state_->weights, r, b_dims, element, bs), "matmul", "weight descriptor");
  check(dnnl_memory_desc_init_by_strides(&state_->dst, r, c_dims, element, cs), "matmul", "destination descriptor");
  dnnl_matmul_desc_t desc;
  check(dnnl_matmul_desc_init(&desc, &state_->src, &state_->weights, nullptr, &state_->dst), "matmul", "descriptor");
  state_->create(&desc);
}

Matmul::Path Matmul::path() const {
  if (choice_) return choice_->path.load();
  return sgemm_ ? Path::sgemm : Path::primitive;
}

void Matmul::run(const void* a, const void* b, void* out) const {
  const Path decided = path();
  if (decided == Path::sgemm) return run_sgemm(a, b, out);
  if (decided == Path::primitive) return Primitive::run(a, b, out);
  bool use_sgemm;
  {
    std::lock_guard lock(choice_->mutex);
    use_sgemm = choice_->runs[0] <= choice_->runs[1];
  }
  const int64_t started = now_ns();
  if (use_sgemm)
    run_sgemm(a, b, out);
  else
    Primitive::run(a, b, out);
  const auto took = static_cast<double>(now_ns() - started);
  if (use_sgemm) give_back_free_heap_pages();
  std::lock_guard lock(choice_->mutex);
  const int i = use_sgemm ? 0 : 1;
  if (++choice_->runs[i] > Choice::kUncounted) choice_->best_ns[i] = std::min(choice_->best_ns[i], took);
  constexpr int kRuns = Choice::kUncounted + Choice::kTrials;
  if (choice_->runs[0] >= kRuns && choice_->runs[1] >= kRuns && choice_->path.load() == Path::undecided)
    choice_->path.store(choice_->best_ns[0] <= choice_->best_ns[1] ? Path::sgemm : Path::primitive);
}

void Matmul::run_sgemm(const void* a_bytes, const void* b_bytes, void* out_bytes) const {
  const Sgemm& g = *sgemm_;
  const auto* a = static_cast<const float*>(a_bytes);
  const auto* b = static_cast<const float*>(b_bytes);
  auto* out = static_cast<float*>(out_bytes);
  for (int64_t i = 0; i < g.batch; ++i) {
    dnnl_status_t s = dnnl_sgemm(g.transpose_a ? 'T' : 'N', 'N', g.m, g.n, g.k, 1.0f, a + i * g.batch_stride_a, g.lda,
                                 b + i * g.batch_stride_b, g.ldb, 0.0f, out + i * g.m * g.n, g.n);
    check(s, "matmul", "sgemm");
  }
}

Conv2d::Conv2d(const ir::Instr& conv, const Shape& input, const Shape& weight) : Primitive("conv2d") {
  const auto& stride = ir::ConvAttrs::of(conv.attrs).stride;
  const auto& lo = ir::ConvAttrs::of(conv.attrs).lo;
  const auto& hi = ir::ConvAttrs::of(conv.attrs).hi;
  const auto& dilation = ir::ConvAttrs::of(conv.attrs).dilation;
  const int64_t groups = ir::ConvAttrs::of(conv.attrs).groups;
  dnnl_dims_t src_dims = {input[0], input[1], input[2], input[3]};
  dnnl_dims_t dst_dims = {conv.shape[0], conv.shape[1], conv.shape[2], conv.shape[3]};
  check(dnnl_memory_desc_init_by_tag(&state_->src, 4, src_dims, dnnl_f32, dnnl_nchw), "conv2d", "source descriptor");
  check(dnnl_memory_desc_init_by_tag(&state_->dst, 4, dst_dims, dnnl_f32, dnnl_nchw), "conv2d",
        "destination descriptor");
  if (groups == 1) {
    dnnl_dims_t w_dims = {weight[0], weight[1], weight[2], weight[3]};
    check(dnnl_memory_desc_init_by_tag(&state_->weights, 4, w_dims, dnnl_f32, dnnl_oihw), "conv2d",
          "weight descriptor");
  } else {
    // Grouped weights are [groups, O / groups, C / groups, KH, KW]: the same bytes as [O, C / groups, KH, KW].
    dnnl_dims_t w_dims = {groups, weight[0] / groups, weight[1], weight[2], weight[3]};
    check(dnnl_memory_desc_init_by_tag(&state_->weights, 5, w_dims, dnnl_f32, dnnl_goihw), "conv2d",
          "weight descriptor");
  }
  dnnl_dims_t strides = {stride[0], stride[1]};
  dnnl_dims_t dilates = {dilation[0] - 1, dilation[1] - 1};  // oneDNN counts the gaps, not the step
  dnnl_dims_t pad_l = {lo[0], lo[1]};
  dnnl_dims_t pad_r = {hi[0], hi[1]};
  dnnl_convolution_desc_t desc;
  check(dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &state_->src,
                                                   &state_->weights, nullptr, &state_->dst, strides, dilates, pad_l,
                                                   pad_r),
        "conv2d", "convolution descriptor");
  state_->create(&desc);
}

}  // namespace xlite::backends::cpu
