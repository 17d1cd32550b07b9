#include "backends/cpu/scatter.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "ir/op.h"
#include "ir/op_attrs.h"

namespace xlite::backends::cpu {
namespace {
using runtime::StepFailure;
using runtime::StepInputs;

// out = x, then out[..., index[i], ...] += src[i] along dim. The index has x's extent in every other dim, so
// index element (o, j, n) (outer, scattered, inner) adds to out (o, index, n): no coordinates to unravel.
class ScatterAddThunk final : public runtime::Thunk {
 public:
  ScatterAddThunk(const ir::Instr& root, const ir::Instr& index_instr, int32_t root_id, size_t x, size_t index,
                  size_t src)
      : origin_(root.origin),
        op_(root.op),
        root_id_(root_id),
        x_(x),
        index_(index),
        src_(src),
        index_is_i64_(index_instr.dtype == DType::i64) {
    const Shape& x_shape = root.shape;
    dim_ = ir::DimAttrs::of(root.attrs).dim;
    for (int64_t k = 0; k < dim_; ++k) outer_ *= x_shape[k];
    for (size_t k = dim_ + 1; k < x_shape.size(); ++k) inner_ *= x_shape[k];
    size_ = x_shape[dim_];
    rows_ = index_instr.shape[dim_];
  }

  std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const override {
    const float* x = inputs[x_]->as<float>();
    const float* src = inputs[src_]->as<float>();
    const void* index = inputs[index_]->data();
    float* y = (*out)->as<float>();
    if (y != x) std::memcpy(y, x, static_cast<size_t>(outer_ * size_ * inner_) * sizeof(float));
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t j = 0; j < rows_; ++j) {
        const int64_t at = (o * rows_ + j) * inner_;
        for (int64_t n = 0; n < inner_; ++n) {
          const int64_t v =
              index_is_i64_ ? static_cast<const int64_t*>(index)[at + n] : static_cast<const int32_t*>(index)[at + n];
          if (v < 0 || v >= size_) return failure(v);
          y[(o * size_ + v) * inner_ + n] += src[at + n];
        }
      }
    }
    return std::nullopt;
  }

 private:
  // The reference kernel's message, so that both backends report a bad index alike.
  std::optional<StepFailure> failure(int64_t v) const {
    return StepFailure{root_id_, ir::blame_message(origin_, op_,
                                                   "index " + std::to_string(v) + " is out of range for dim " +
                                                       std::to_string(dim_) + " of size " + std::to_string(size_))};
  }

  const char* origin_;  // a string literal, as every origin is
  ir::OpId op_;
  int32_t root_id_;
  size_t x_, index_, src_;
  bool index_is_i64_;
  int64_t dim_ = 0, outer_ = 1, inner_ = 1, size_ = 0, rows_ = 0;  // rows_: the index's extent along dim
};

}  // namespace

std::unique_ptr<runtime::Thunk> make_scatter_add_thunk(const ir::Graph& graph, const compiler::Region& region) {
  const ir::Instr& root = graph.instrs[region.root];
  if (root.op != ir::OpId::scatter_add || root.dtype != DType::f32 || root.operands.size() != 3) return nullptr;
  const ir::Instr& index = graph.instrs[root.operands[1]];
  const ir::Instr& src = graph.instrs[root.operands[2]];
  if (index.dtype != DType::i32 && index.dtype != DType::i64) return nullptr;
  if (src.dtype != DType::f32 || src.shape != index.shape || index.shape.size() != root.shape.size()) return nullptr;
  const int64_t dim = ir::DimAttrs::of(root.attrs).dim;
  for (size_t k = 0; k < root.shape.size(); ++k)
    if (static_cast<int64_t>(k) != dim && index.shape[k] != root.shape[k]) return nullptr;
  auto position = [&](int32_t value) -> std::optional<size_t> {
    auto it = std::find(region.inputs.begin(), region.inputs.end(), value);
    if (it == region.inputs.end()) return std::nullopt;
    return static_cast<size_t>(it - region.inputs.begin());
  };
  auto x_at = position(root.operands[0]), index_at = position(root.operands[1]), src_at = position(root.operands[2]);
  if (!x_at || !index_at || !src_at) return nullptr;
  return std::make_unique<ScatterAddThunk>(root, index, region.root, *x_at, *index_at, *src_at);
}

}  // namespace xlite::backends::cpu
