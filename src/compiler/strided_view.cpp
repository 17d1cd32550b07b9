#include "compiler/strided_view.h"

#include "ir/op_attrs.h"

namespace xlite::compiler {
namespace {
using ir::AttrKey;
using ir::OpId;

constexpr int kMaxViewOps = 16;

std::vector<int64_t> dense_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = stride;
    stride *= shape[k];
  }
  return strides;
}

// Strides of a reshape of a strided value, if the new dims only split or merge runs of old dims that
// are contiguous with each other; nullopt otherwise (the reshape would need a copy).
std::optional<std::vector<int64_t>> reshaped_strides(const Shape& old_shape, const std::vector<int64_t>& old_strides,
                                                     const Shape& new_shape) {
  std::vector<int64_t> strides(new_shape.size(), 0);
  int64_t next = static_cast<int64_t>(new_shape.size()) - 1;  // the new dim to give a stride next
  // Walk the old dims from the innermost, in runs that are contiguous with each other; each run must
  // be exactly covered by consecutive new dims.
  int64_t run_elements = 1, run_base = old_strides.empty() ? 1 : old_strides.back();
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    run_elements *= old_shape[d];
    const bool run_ends = d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != run_elements * run_base);
    if (!run_ends) continue;
    int64_t covered = 1;
    while (next >= 0 && (covered < run_elements || new_shape[next] == 1)) {
      strides[next] = covered * run_base;
      covered *= new_shape[next];
      --next;
    }
    if (covered != run_elements) return std::nullopt;
    if (d > 0) {
      run_base = old_strides[d - 1];
      run_elements = 1;
    }
  }
  for (; next >= 0; --next) {  // leading dims of size 1 left over
    if (new_shape[next] != 1) return std::nullopt;
    strides[next] = 1;
  }
  return strides;
}

std::optional<StridedView> view_of(const ir::Graph& graph, int32_t value, const std::function<bool(int32_t)>& is_base,
                                   int depth) {
  const ir::Instr& instr = graph.instrs[value];
  if (is_base(value)) return StridedView{value, 0, dense_strides(instr.shape)};
  if (depth >= kMaxViewOps || instr.operands.empty()) return std::nullopt;
  std::optional<StridedView> view;
  switch (instr.op) {
    case OpId::transpose: {
      view = view_of(graph, instr.operands[0], is_base, depth + 1);
      if (!view) return std::nullopt;
      const auto perm = ir::TransposeAttrs::of(instr.attrs).perm;
      std::vector<int64_t> strides(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) strides[k] = view->strides[perm[k]];
      view->strides = std::move(strides);
      return view;
    }
    case OpId::slice: {
      view = view_of(graph, instr.operands[0], is_base, depth + 1);
      if (!view) return std::nullopt;
      const ir::SliceAttrs slice = ir::SliceAttrs::of(instr.attrs);
      const auto start = slice.start, stride = slice.stride;
      for (size_t k = 0; k < start.size(); ++k) {
        view->offset += start[k] * view->strides[k];
        view->strides[k] *= stride[k];
      }
      return view;
    }
    case OpId::reshape: {
      const Shape& from = graph.instrs[instr.operands[0]].shape;
      if (numel(from) == 0) return std::nullopt;
      view = view_of(graph, instr.operands[0], is_base, depth + 1);
      if (!view) return std::nullopt;
      auto strides = reshaped_strides(from, view->strides, instr.shape);
      if (!strides) return std::nullopt;
      view->strides = std::move(*strides);
      return view;
    }
    default: return std::nullopt;
  }
}
}  // namespace

std::optional<StridedView> strided_view(const ir::Graph& graph, int32_t value,
                                        const std::function<bool(int32_t)>& is_base) {
  if (numel(graph.instrs[value].shape) == 0) return std::nullopt;
  return view_of(graph, value, is_base, 0);
}

bool gemm_readable(const Shape& shape, const StridedView& view) {
  const size_t r = shape.size();
  if (r < 2 || r > 12 || view.strides.size() != r) return false;
  for (size_t k = 0; k < r; ++k)
    if (shape[k] > 1 && view.strides[k] <= 0) return false;
  return view.strides[r - 1] == 1 || view.strides[r - 2] == 1 || shape[r - 1] == 1 || shape[r - 2] == 1;
}

}  // namespace xlite::compiler
