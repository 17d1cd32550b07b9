#pragma once
// Values a library call can read in place from another value's buffer: transposes, slices and
// reshapes of a materialized value are the same elements at other strides, so the GEMM can read them
// through strides instead of the value being copied out first.
#include <functional>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace xlite::compiler {

// Element (i_0, ..., i_{r-1}) of the value is element offset + sum_k i_k * strides[k] of the dense
// row-major buffer of `base`.
struct StridedView {
  int32_t base = -1;
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

// The view of `value` through transposes, slices and reshapes that split or merge dims compatibly, down
// to the nearest value `is_base` accepts (the value itself if accepted); nullopt when an op on the way
// is not a view of its operand, or the value is empty.
std::optional<StridedView> strided_view(const ir::Graph& graph, int32_t value,
                                        const std::function<bool(int32_t)>& is_base);

// Whether a GEMM reads a view of this shape directly: one of the last two dims contiguous, every other
// stride positive.
bool gemm_readable(const Shape& shape, const StridedView& view);

}  // namespace xlite::compiler
