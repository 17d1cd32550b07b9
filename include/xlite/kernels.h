#pragma once
// Custom kernels: hand-written code that the compiler calls as a black box inside a graph.
//
// A kernel is registered once with a name, a shape rule, a CPU implementation and, optionally, a backward.
// kernels::call(name, inputs, attrs) then adds one custom_call node to the graph: it runs in lazy mode, in
// eager mode and inside compile(fn); it is never fused into, duplicated or folded; its inputs reach it
// contiguous and row-major, and its outputs are buffers the runtime allocates (and may donate) like any
// other value. The text IR names it (`custom_call(%0, kernel="rms_norm", args="eps=1e-05")`), and parsing
// that text needs the kernel registered. XLITE_DEBUG and XLITE_PROFILE report it by name.
//
//   kernels::register_kernel({
//       .name = "scale",
//       .shape = [](const std::vector<kernels::TensorType>& in, const kernels::Attrs&) { return in; },
//       .cpu = [](const kernels::CpuCall& call, kernels::CpuContext& context) {
//         const float* x = call.input<float>(0);
//         float* y = call.output<float>(0);
//         const double factor = call.float_attr("factor");
//         context.parallel_for(call.input_type(0).numel(), 4096, [&](int64_t begin, int64_t end) {
//           for (int64_t i = begin; i < end; ++i) y[i] = static_cast<float>(x[i] * factor);
//         });
//       }});
//   Tensor y = kernels::call("scale", {x}, {{"factor", 2.0}})[0];
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "xlite/dtype.h"
#include "xlite/tensor.h"

namespace xlite::kernels {

// A kernel attribute: an integer, a float, a list of integers (a shape) or a string. Attributes are part of
// the graph: calls that differ in one compile separately.
using Attr = std::variant<int64_t, double, std::vector<int64_t>, std::string>;
using Attrs = std::map<std::string, Attr>;  // names: a letter or '_', then letters, digits and '_'

struct TensorType {
  Shape shape;
  DType dtype = DType::f32;
  int64_t numel() const { return xlite::numel(shape); }
  int64_t bytes() const { return numel() * dtype_size(dtype); }
  bool operator==(const TensorType&) const = default;
};

// An attribute by name; each throws xlite::Error naming the kernel when it is missing or of another kind.
class AttrReader {
 public:
  AttrReader(const std::string& kernel, const Attrs& attrs) : kernel_(kernel), attrs_(attrs) {}
  int64_t int_attr(const std::string& name) const;
  double float_attr(const std::string& name) const;  // an integer attribute reads as a float too
  const std::vector<int64_t>& ints_attr(const std::string& name) const;
  const std::string& string_attr(const std::string& name) const;
  bool has_attr(const std::string& name) const { return attrs_.count(name) != 0; }
  const Attrs& attrs() const { return attrs_; }
  const std::string& kernel() const { return kernel_; }

 private:
  const std::string& kernel_;
  const Attrs& attrs_;
};

// One call of a CPU implementation: inputs are read-only, contiguous and row-major; outputs are
// allocated by the runtime with the types the shape rule gave, and must all be written.
class CpuCall : public AttrReader {
 public:
  CpuCall(const std::string& kernel, const Attrs& attrs, std::span<const void* const> inputs,
          std::span<const TensorType> input_types, std::span<void* const> outputs,
          std::span<const TensorType> output_types)
      : AttrReader(kernel, attrs),
        inputs_(inputs),
        input_types_(input_types),
        outputs_(outputs),
        output_types_(output_types) {}
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const TensorType& input_type(size_t i) const { return input_types_[i]; }
  const TensorType& output_type(size_t i) const { return output_types_[i]; }
  const void* input_data(size_t i) const { return inputs_[i]; }
  void* output_data(size_t i) const { return outputs_[i]; }
  template <class T>
  const T* input(size_t i) const {
    return static_cast<const T*>(inputs_[i]);
  }
  template <class T>
  T* output(size_t i) const {
    return static_cast<T*>(outputs_[i]);
  }

 private:
  std::span<const void* const> inputs_;
  std::span<const TensorType> input_types_;
  std::span<void* const> outputs_;
  std::span<const TensorType> output_types_;
};

// What the runtime lends a CPU implementation for one call.
class CpuContext {
 public:
  virtual ~CpuContext() = default;
  // The runtime's threads, which parallel_for spreads work over.
  virtual int num_threads() const = 0;
  // Calls body(begin, end) over [0, n) in at most num_threads() chunks of at least `grain` elements, on the
  // runtime's threads; returns when all have run. An exception thrown by body reaches the caller (the first
  // one). A chunk that takes scratch takes it once, so num_threads() times its need bounds the call's.
  virtual void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) = 0;
  // Memory for this call only, 64-byte aligned, not zeroed; freed when the kernel returns. Thread-safe.
  // Asking for more in all than the kernel's scratch rule declared is a failure (see Kernel::scratch).
  virtual void* scratch(size_t bytes) = 0;
  // A failure in the data (an index out of range, say): the program raises xlite::Error("[kernel] message")
  // where the kernel ran, and the runtime stays usable. The outputs are discarded.
  [[noreturn]] virtual void fail(const std::string& message) = 0;
};

// Output types from input types and attributes, at trace time. A bad call throws xlite::Error; message
// it "[kernel] ..." (register_kernel adds the name where the message lacks it).
using ShapeRule = std::function<std::vector<TensorType>(const std::vector<TensorType>& inputs, const Attrs& attrs)>;
using CpuImpl = std::function<void(const CpuCall& call, CpuContext& context)>;
// One gradient per input (an undefined Tensor for none), from the inputs, the outputs and the gradients of
// the outputs (an undefined Tensor for an output that got none). It is built from ops and other kernels,
// so it is traced, compiled and differentiable like any other code.
using Backward =
    std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                                      const std::vector<Tensor>& output_grads, const Attrs& attrs)>;

// A GPU implementation: the slot the CUDA backend will fill. It gets device pointers and a stream.
struct GpuCall {
  std::span<const void* const> inputs;
  std::span<const TensorType> input_types;
  std::span<void* const> outputs;
  std::span<const TensorType> output_types;
  const Attrs* attrs = nullptr;
  void* stream = nullptr;
};
using GpuImpl = std::function<void(const GpuCall& call)>;
// The most bytes one call takes through CpuContext::scratch, in all, when it runs on num_threads threads.
using ScratchRule = std::function<int64_t(const std::vector<TensorType>& inputs, const Attrs& attrs, int num_threads)>;
// The floating-point operations one call performs, for the GFLOP/s of XLITE_DEBUG's kernel lines and profiles.
using CostRule = std::function<double(const std::vector<TensorType>& inputs, const Attrs& attrs)>;

struct Kernel {
  std::string name{};  // a letter or '_', then letters, digits, '_' and '.'
  ShapeRule shape{};
  CpuImpl cpu{};
  Backward backward{};  // without one, asking for a gradient through the kernel raises
  GpuImpl gpu{};        // not run yet: no GPU backend exists
  // With a scratch rule, the compile-time memory plan counts the call's scratch (debug::memory_stats) and
  // the runtime refuses a call that asks for more. Without one, scratch is lent as asked, unplanned.
  ScratchRule scratch{};
  CostRule cost{};  // without one, a call counts 0 operations
  // In-place updates: the kernel's one output starts as a copy of input `updates_input` (which its shape
  // rule must give as the output's type), and the kernel writes only what changes. When the tensor behind
  // that input is updated in place (`pages.copy_(kernels::call(...)[0])`, or a rebinding inside compile(fn))
  // and nothing else reads its old value, the runtime hands the kernel that very buffer, and nothing is
  // copied. -1: an ordinary kernel.
  int64_t updates_input = -1;
  // Whether the kernel may call CpuContext::fail. Only a kernel that cannot fail may write into a donated
  // buffer, since a failure must leave the caller's data as it was; check the data in an earlier kernel.
  bool may_fail = true;
};

// Registers a kernel. A second registration of a name throws xlite::Error, as do an invalid name and a
// kernel without a shape rule or CPU implementation. Thread-safe; kernels stay registered for the process.
void register_kernel(Kernel kernel);
bool is_registered(const std::string& name);

// Calls a registered kernel: one output tensor per type its shape rule gives. The inputs must be on one
// device; attributes are checked by the kernel's shape rule.
std::vector<Tensor> call(const std::string& name, const std::vector<Tensor>& inputs, const Attrs& attrs = {});

// ---- Built-in kernels (registered in every process; text IR names them "gmm", "tgmm") ----

// Grouped matmul for mixture-of-experts: the rows of lhs [m, k] fall into G consecutive groups of
// group_sizes [G] (i32) rows, and group g is multiplied by rhs[g] ([G, k, n]): out [m, n]. f32; groups may
// be empty; sizes that are negative or do not sum to m raise xlite::Error when the kernel runs.
// Differentiable in lhs (gmm(grad, rhs^T)) and rhs (tgmm(lhs^T, grad)).
Tensor gmm(const Tensor& lhs, const Tensor& rhs, const Tensor& group_sizes);
// Transposed grouped matmul: lhs [k, m] and rhs [m, n] split along m into the groups, out[g] = lhs[:, group g]
// x rhs[group g, :] ([G, k, n]; an empty group gives zeros). f32, differentiable in lhs and rhs.
Tensor tgmm(const Tensor& lhs, const Tensor& rhs, const Tensor& group_sizes);

// softmax(q k^T * sm_scale + mask) v without materializing the scores: q [B, H, Sq, D], k and v
// [B, Hkv, Skv, D] with H a multiple of Hkv (grouped- and multi-query attention), f32 or f64 (slow: for
// checking gradients), or all three bf16 (as PyTorch's CPU kernel: bf16 tile products, the probabilities
// rounded to bf16 for theirs, accumulating in f32; softmax statistics and gradient sums in f32) or f16
// (computed in f32); the output and gradients come in the inputs' dtype. causal masks are
// aligned to the end (query i sees keys j <= i + Skv - Sq); with segment ids (i32 [B, Sq] and [B, Skv]) a
// query sees only keys of its own segment. A row that sees no key gives zeros. Differentiable in q, k, v
// (a tiled backward that recomputes the probabilities from the saved log-sum-exp).
Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal = false, double sm_scale = 1.0,
                       const Tensor& q_segment_ids = Tensor(), const Tensor& kv_segment_ids = Tensor());

// Decode attention over a paged KV cache: q [B, H, D] (one new query per sequence), k_pages and v_pages
// [Hkv, total_pages, page_size, D] with H a multiple of Hkv, f32. Sequence b's keys and values are its first
// lengths[b] tokens (i32 [B]), token t in slot t % page_size of page page_indices[b, t / page_size]
// (i32 [B, pages_per_sequence]); it reads no other page. Scores are softmax(q k^T * sm_scale), computed in
// blocks of pages_per_compute_block pages. A length of 0 gives zeros. A length beyond what the sequence's
// pages hold, or a page index it reads outside [0, total_pages), raises xlite::Error when the kernel runs.
// Not differentiable (a decode kernel).
Tensor paged_attention(const Tensor& q, const Tensor& k_pages, const Tensor& v_pages, const Tensor& lengths,
                       const Tensor& page_indices, int64_t pages_per_compute_block = 8, double sm_scale = 1.0);
// Appends one token to each sequence of a paged cache, in place: k and v [B, Hkv, D] go to slot lengths[b] of
// sequence b (its length before the append; the caller then adds 1). Updates k_pages and v_pages like any
// in-place op, so that a synced or compiled decode step writes the rows into the cache's own buffers; a
// sequence with no free slot, or a page index outside the cache, raises xlite::Error and changes nothing.
void paged_kv_append_(Tensor& k_pages, Tensor& v_pages, const Tensor& k, const Tensor& v, const Tensor& lengths,
                      const Tensor& page_indices);

}  // namespace xlite::kernels
