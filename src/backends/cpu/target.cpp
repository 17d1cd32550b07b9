// The CPU target: fused loops and reductions compiled with LLVM ORC, f32 GEMM and convolution through
// oneDNN, anything else through the reference evaluator. The compiler runs the pipeline
// (compiler/pipeline.cpp); this file turns each region into a thunk.
#include "backends/cpu/target.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/library.h"
#include "backends/cpu/scatter.h"
#include "backends/cpu/streaming_stores.h"
#include "backends/reference/backend.h"
#include "compiler/pipeline.h"
#include "core/check.h"
#include "ir/op_attrs.h"
#include "xlite/error.h"

namespace xlite::backends::cpu {
namespace {
using compiler::LoweredRegion;
using compiler::Region;
using compiler::RegionKind;
using runtime::StepFailure;
using runtime::StepInputs;

// Below this many elements read a loop runs on one thread: forking costs more than it saves.
constexpr int64_t kParallelThreshold = 1 << 15;

std::string kernel_error_message(const ir::Graph& body, const KernelStatus& status) {
  const ir::Instr& instr = body.instrs[status.instr];
  std::string message;
  switch (status.failure()) {
    case KernelFailure::negative_power:
      message = "integers to negative integer powers are not allowed (exponent " + std::to_string(status.value) + ")";
      break;
    case KernelFailure::division_by_zero: message = "integer division by zero"; break;
    case KernelFailure::index_out_of_range:
      message = "index " + std::to_string(status.value) + " is out of range for dim " +
                std::to_string(ir::DimAttrs::of(instr.attrs).dim) + " of size " + std::to_string(status.size);
      break;
    case KernelFailure::none: XLITE_FAIL("[cpu] a kernel status without a failure has no message");
  }
  return ir::blame_message(instr.origin, instr.op, message);
}

// The graph instruction of each instruction of a region's body: the body holds the region's inputs and
// members in the graph's order.
std::vector<int32_t> graph_instrs_of_body(const Region& region) {
  std::vector<int32_t> ids = region.inputs;
  ids.insert(ids.end(), region.members.begin(), region.members.end());
  std::sort(ids.begin(), ids.end());
  return ids;
}

// An output with nothing to compute (an empty sum, a failed step's stand-in) holds zeros.
void zero(Buffer& out) {
  if (out.bytes() > 0) std::memset(out.data(), 0, out.bytes());
}

// Where a library call's operand stands among the step's inputs.
size_t input_position(const Region& region, int32_t value) {
  auto it = std::find(region.inputs.begin(), region.inputs.end(), value);
  XLITE_CHECK(it != region.inputs.end(), "[cpu] %" + std::to_string(region.root) + " reads %" + std::to_string(value) +
                                             ", which is not among its inputs");
  return static_cast<size_t>(it - region.inputs.begin());
}

// The elements a kernel reads, at least one per output: a reduction reads its input, and so does a loop that
// computes row reductions (a loop over rows, one element per row, reads every row).
int64_t elements_read(const ir::Graph& body, int64_t outputs) {
  int64_t read = outputs;
  for (const ir::Instr& instr : body.instrs) {
    const ir::OpClass cls = ir::op_info(instr.op).cls;
    if (cls == ir::OpClass::Reduce || cls == ir::OpClass::ArgReduce)
      read = std::max(read, numel(body.instrs[instr.operands[0]].shape));
  }
  return read;
}

// A fused loop or reduction: generated code run over the output's elements, split across cores when the
// elements it reads are many.
class KernelThunk final : public runtime::Thunk {
 public:
  KernelThunk(const ir::Graph& graph, const Region& region)
      : kernel_(compile_kernel(region.body)),
        body_(region.body),
        graph_instrs_(graph_instrs_of_body(region)),
        work_(numel(graph.instrs[region.root].shape)),
        cost_(elements_read(region.body, work_)),
        chunk_unit_(streams_output(graph.instrs[region.root])
                        ? std::max<int64_t>(1, kStreamLineBytes / dtype_size(graph.instrs[region.root].dtype))
                        : 1) {}

  int64_t code_bytes() const { return kernel_.code_bytes; }

  std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const override {
    // Inline room for the pointers of any region an eager op makes, so that it allocates nothing here.
    std::array<void*, 8> inline_pointers;
    std::vector<void*> heap_pointers;
    void** pointers = inline_pointers.data();
    if (inputs.size() + 1 > inline_pointers.size()) {
      heap_pointers.resize(inputs.size() + 1);
      pointers = heap_pointers.data();
    }
    for (size_t k = 0; k < inputs.size(); ++k) pointers[k] = inputs[k]->data();
    pointers[inputs.size()] = (*out)->data();
    const KernelStatus status = run_kernel(pointers);
    if (!status.failed) return std::nullopt;
    return StepFailure{graph_instrs_[status.instr], kernel_error_message(body_, status)};
  }

 private:
  // Runs the kernel over its elements and returns the failure the program reports for it (KernelStatus).
  KernelStatus run_kernel(void* const* buffers) const {
    const int64_t n = work_;
    if (n == 0) return {};
    int chunks = cost_ < kParallelThreshold ? 1 : static_cast<int>(std::min<int64_t>(omp_get_max_threads(), n));
    std::array<KernelStatus, 1> single;
    std::vector<KernelStatus> many;
    KernelStatus* status = single.data();
    if (chunks == 1) {
      kernel_.run(buffers, 0, n, &status[0].failed);
    } else {
      many.resize(chunks);
      status = many.data();
      auto start = [&](int c) { return c == chunks ? n : n * c / chunks / chunk_unit_ * chunk_unit_; };
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
      for (int c = 0; c < chunks; ++c) kernel_.run(buffers, start(c), start(c + 1), &status[c].failed);
    }
    KernelStatus first;
    for (int c = 0; c < chunks; ++c)
      if (status[c].failed && (!first.failed || status[c].instr < first.instr)) first = status[c];
    return first;
  }

  CompiledKernel kernel_;
  ir::Graph body_;
  std::vector<int32_t> graph_instrs_;
  int64_t work_;  // output elements
  int64_t cost_;  // elements read: decides whether to use threads
  // Chunks start at multiples of this many elements: a cache line's worth where the output streams
  // (streaming_stores.h), so that each chunk's stores start on a line and may stream; 1 elsewhere.
  int64_t chunk_unit_;
};

// f32 or bf16 GEMM through oneDNN; its operands are read in place, through strides, from the buffers the plan says
// they are views of (the view's base is always the step's first or second input).
class MatmulThunk final : public runtime::Thunk {
 public:
  MatmulThunk(const ir::Graph& graph, const Region& region) {
    const ir::Instr& root = graph.instrs[region.root];
    const Shape& a = graph.instrs[root.operands[0]].shape;
    const Shape& b = graph.instrs[root.operands[1]].shape;
    const auto& views = region.operand_views;
    // With an empty dim there is nothing to multiply: zeros (or nothing), no library call.
    if (numel(a) == 0 || numel(b) == 0 || numel(root.shape) == 0) return;
    XLITE_CHECK(views.size() == 2 && views[0] && views[1], "[cpu] a matmul operand of %" + std::to_string(region.root) +
                                                               " is neither computed nor a view of a computed value");
    view_a_ = *views[0];
    view_b_ = *views[1];
    input_a_ = input_position(region, view_a_.base);
    input_b_ = input_position(region, view_b_.base);
    matmul_ = std::make_shared<Matmul>(a, view_a_.strides, b, view_b_.strides, root.dtype);
    element_bytes_ = dtype_size(root.dtype);
  }

  std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const override {
    if (matmul_)
      matmul_->run(inputs[input_a_]->as<std::byte>() + view_a_.offset * element_bytes_,
                   inputs[input_b_]->as<std::byte>() + view_b_.offset * element_bytes_, (*out)->as<std::byte>());
    else
      zero(**out);
    return std::nullopt;
  }

 private:
  compiler::StridedView view_a_, view_b_;
  size_t input_a_ = 0, input_b_ = 0;
  int64_t element_bytes_ = 4;
  std::shared_ptr<Matmul> matmul_;
};

class ConvThunk final : public runtime::Thunk {
 public:
  ConvThunk(const ir::Graph& graph, const Region& region) {
    const ir::Instr& root = graph.instrs[region.root];
    const Shape& input = graph.instrs[root.operands[0]].shape;
    const Shape& weight = graph.instrs[root.operands[1]].shape;
    input_ = input_position(region, root.operands[0]);
    weight_ = input_position(region, root.operands[1]);
    // With no input channels (or an empty batch) the sums are empty: zeros, no library call.
    if (numel(root.shape) > 0 && numel(input) > 0 && numel(weight) > 0)
      conv_ = std::make_shared<Conv2d>(root, input, weight);
  }

  std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const override {
    if (conv_)
      conv_->run(inputs[input_]->as<float>(), inputs[weight_]->as<float>(), (*out)->as<float>());
    else
      zero(**out);
    return std::nullopt;
  }

 private:
  size_t input_ = 0, weight_ = 0;
  std::shared_ptr<Conv2d> conv_;
};

// An op with no generated code (a scatter_add, a dot of integers): the reference evaluator runs the
// region, and its result buffer becomes the step's.
class FallbackThunk final : public runtime::Thunk {
 public:
  explicit FallbackThunk(const Region& region) : evaluator_(reference::compile(region.body)), root_(region.root) {}

  std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const override {
    std::vector<BufferPtr> arguments;
    arguments.reserve(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) arguments.push_back(inputs.shared(k));
    try {
      *out = evaluator_->run(arguments)[0];
    } catch (const InternalError&) {
      throw;
    } catch (const Error& e) {
      zero(**out);  // read by later raising steps
      return StepFailure{root_, e.what()};
    }
    return std::nullopt;
  }

 private:
  std::shared_ptr<runtime::Executable> evaluator_;
  int32_t root_;
};

class CpuTarget final : public compiler::Target {
 public:
  std::string name() const override { return "cpu"; }

  // bf16 products go to oneDNN where the CPU multiplies bf16 itself (AVX-512 BF16); elsewhere oneDNN would
  // convert in software, and the reference loops are as good a fallback.
  compiler::FusionPolicy fusion_policy() const override {
    compiler::FusionPolicy policy;
    if (__builtin_cpu_supports("avx512bf16")) policy.matmul_dtypes |= 1u << static_cast<int>(DType::bf16);
    return policy;
  }

  LoweredRegion lower(const ir::Graph& graph, const Region& region) override {
    LoweredRegion lowered;
    switch (region.kind) {
      case RegionKind::Loop:
      case RegionKind::Reduce: {
        auto kernel = std::make_unique<KernelThunk>(graph, region);
        lowered.code_bytes = kernel->code_bytes();
        lowered.generated_kernel = true;
        lowered.thunk = std::move(kernel);
        break;
      }
      case RegionKind::Matmul: lowered.thunk = std::make_unique<MatmulThunk>(graph, region); break;
      case RegionKind::Conv: lowered.thunk = std::make_unique<ConvThunk>(graph, region); break;
      case RegionKind::Fallback:
        if ((lowered.thunk = make_scatter_add_thunk(graph, region))) break;
        lowered.thunk = std::make_unique<FallbackThunk>(region);
        lowered.replaces_output = true;
        break;
      case RegionKind::Transfer: XLITE_FAIL("[cpu] a transfer reached the target; the runtime copies it");
      case RegionKind::CustomCall: XLITE_FAIL("[cpu] a custom call reached the target; the runtime calls it");
    }
    return lowered;
  }
};

}  // namespace

std::unique_ptr<compiler::Target> make_target() { return std::make_unique<CpuTarget>(); }

}  // namespace xlite::backends::cpu
