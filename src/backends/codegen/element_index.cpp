// Index arithmetic of fused kernels: an element's linear and multi-index, and where each layout op
// (reshape, transpose, broadcast, slice, pad, concat) reads its operand for an output element. A split
// index (IndexSplit) goes through every op that keeps it whole.
#include <algorithm>

#include "backends/codegen/element_generator.h"

namespace xlite::backends::codegen {
namespace {
// The same index with its split moved to `dim` of the operand (or dropped, for dim -1).
IndexSplit moved_to(const IndexSplit& split, int64_t dim) {
  return dim < 0 ? IndexSplit{} : IndexSplit{dim, split.outer, split.inner, split.size};
}

// The split of an operand's `dim` that counts `outer` whole tiles of the same loop; its index is joined().
IndexSplit retiled(const IndexSplit& split, int64_t dim, llvm::Value* outer) {
  return IndexSplit{dim, outer, split.inner, split.size};
}

llvm::Value* joined(llvm::IRBuilder<>& b, const IndexSplit& split) {
  return b.CreateAdd(b.CreateMul(split.outer, b.getInt64(split.size)), split.inner);
}
}  // namespace

Index* ElementGenerator::make_index(Shape shape) {
  arena_.push_back(Index{std::move(shape), nullptr, {}, {}});
  return &arena_.back();
}

llvm::Value* ElementGenerator::linear(Index* idx) {
  if (idx->linear) return idx->linear;
  llvm::Value* l = i64c(0);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(idx->shape.size()) - 1; d >= 0; --d) {
    if (idx->shape[d] != 1) l = b_.CreateAdd(l, b_.CreateMul(idx->multi[d], i64c(stride)));
    stride *= idx->shape[d];
  }
  return idx->linear = l;
}

const std::vector<llvm::Value*>& ElementGenerator::multi(Index* idx) {
  if (!idx->multi.empty() || idx->shape.empty()) return idx->multi;
  idx->multi.resize(idx->shape.size());
  // The outermost dim of size > 1 takes what the inner ones leave, with no division (dims of size 1 are 0).
  size_t outermost = 0;
  while (outermost + 1 < idx->shape.size() && idx->shape[outermost] == 1) ++outermost;
  llvm::Value* rest = idx->linear;
  for (int64_t d = static_cast<int64_t>(idx->shape.size()) - 1; d >= 0; --d) {
    int64_t size = idx->shape[d];
    if (size == 1) {
      idx->multi[d] = i64c(0);
    } else if (d == static_cast<int64_t>(outermost)) {
      idx->multi[d] = rest;
    } else {
      idx->multi[d] = b_.CreateURem(rest, i64c(size));
      rest = b_.CreateUDiv(rest, i64c(size));
    }
  }
  return idx->multi;
}

Index* ElementGenerator::with_multi(Shape shape, std::vector<llvm::Value*> m) {
  Index* idx = make_index(std::move(shape));
  idx->multi = std::move(m);
  return idx;
}

// The index into a reshape's input, for the output index idx. Both shapes are cut, from the right, into the
// smallest groups of dims with equal products: a dim kept as it is, a merge ([8, 64] -> [512]) or a split.
// Each group's index is carried on its own, so a kept dim, and the innermost dim of a merge, stay the loop
// counter plus something invariant in the inner loop, which the vectoriser reads as contiguous loads
// (heads [B, T, H, 64] transposed out of a [B*T, 3*H*64] projection were a gather through the linear index:
// 1.6 ms for 4 MiB). Only a split divides, and only its own group's index. Without a multi-index (a flat
// loop), or with an empty dim, the linear index carries over. A split of the group's innermost output dim
// carries over to its innermost input dim when that dim is a whole number of tiles (heads [.., H, 64] merged
// into [.., H * 64], with 64-wide tiles): the input's last index is then the tile's own counter.
Index* ElementGenerator::reshaped_index(Index* idx, const Shape& in_shape) {
  const Shape& out_shape = idx->shape;
  auto through_linear = [&] {
    Index* in = make_index(in_shape);
    in->linear = linear(idx);
    return in;
  };
  if (idx->multi.empty() || numel(in_shape) == 0) return through_linear();
  const std::vector<llvm::Value*> out = idx->multi;
  const IndexSplit& split = idx->split;
  std::vector<llvm::Value*> in(in_shape.size(), i64c(0));  // dims left outside every group have size 1
  IndexSplit in_split;
  auto i = static_cast<int64_t>(out_shape.size()), j = static_cast<int64_t>(in_shape.size());
  while (i > 0 && j > 0) {
    int64_t i0 = i - 1, j0 = j - 1, out_size = out_shape[i0], in_size = in_shape[j0];
    while (out_size != in_size) {
      if (out_size < in_size) {
        if (i0 == 0) return through_linear();
        out_size *= out_shape[--i0];
      } else {
        if (j0 == 0) return through_linear();
        in_size *= in_shape[--j0];
      }
    }
    const int64_t tile = split.size;
    if (split.dim == i - 1 && out_shape[i - 1] % tile == 0 && in_shape[j - 1] % tile == 0) {
      // The group's linear index is outer * tile + inner, with outer counting whole tiles of the group.
      llvm::Value* outer = split.outer;
      if (i0 < i - 1) {
        Index* others = with_multi(Shape(out_shape.begin() + i0, out_shape.begin() + i - 1),
                                   std::vector<llvm::Value*>(out.begin() + i0, out.begin() + i - 1));
        outer = b_.CreateAdd(b_.CreateMul(linear(others), i64c(out_shape[i - 1] / tile)), outer);
      }
      const int64_t tiles_in_dim = in_shape[j - 1] / tile;
      llvm::Value* dim_outer = j0 == j - 1 ? outer : b_.CreateURem(outer, i64c(tiles_in_dim));
      in_split = retiled(split, j - 1, dim_outer);
      in[j - 1] = joined(b_, in_split);
      if (j0 < j - 1) {
        Index* rest = make_index(Shape(in_shape.begin() + j0, in_shape.begin() + j - 1));
        rest->linear = b_.CreateUDiv(outer, i64c(tiles_in_dim));
        const std::vector<llvm::Value*>& rest_multi = multi(rest);
        std::copy(rest_multi.begin(), rest_multi.end(), in.begin() + j0);
      }
    } else {
      // The group's linear index, split again over its input dims.
      Index* group_out = with_multi(Shape(out_shape.begin() + i0, out_shape.begin() + i),
                                    std::vector<llvm::Value*>(out.begin() + i0, out.begin() + i));
      Index* group_in = make_index(Shape(in_shape.begin() + j0, in_shape.begin() + j));
      group_in->linear = linear(group_out);
      const std::vector<llvm::Value*>& regrouped = multi(group_in);
      std::copy(regrouped.begin(), regrouped.end(), in.begin() + j0);
    }
    i = i0;
    j = j0;
  }
  Index* result = with_multi(in_shape, std::move(in));
  result->split = in_split;
  return result;
}

Index* ElementGenerator::transposed_index(Index* idx, std::span<const int64_t> perm, const Shape& in_shape) {
  const auto& out = multi(idx);
  std::vector<llvm::Value*> in(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) in[perm[k]] = out[k];
  Index* result = with_multi(in_shape, std::move(in));
  result->split = moved_to(idx->split, idx->split.dim < 0 ? -1 : perm[idx->split.dim]);
  return result;
}

Index* ElementGenerator::broadcast_index(Index* idx, std::span<const int64_t> dims, const Shape& in_shape) {
  if (numel(in_shape) == 1) return make_index(in_shape);
  const auto& out = multi(idx);
  std::vector<llvm::Value*> in(dims.size());
  int64_t split_dim = -1;
  for (size_t k = 0; k < dims.size(); ++k) {
    in[k] = in_shape[k] == 1 ? i64c(0) : out[dims[k]];
    if (in_shape[k] != 1 && dims[k] == idx->split.dim) split_dim = static_cast<int64_t>(k);
  }
  Index* result = with_multi(in_shape, std::move(in));
  result->split = moved_to(idx->split, split_dim);
  return result;
}

Index* ElementGenerator::sliced_index(Index* idx, std::span<const int64_t> start, std::span<const int64_t> stride,
                                      const Shape& in_shape) {
  const auto& out = multi(idx);
  const IndexSplit& split = idx->split;
  std::vector<llvm::Value*> in(out.size());
  IndexSplit in_split;
  for (size_t k = 0; k < out.size(); ++k) {
    const bool whole_tiles = static_cast<int64_t>(k) == split.dim && stride[k] == 1 && start[k] % split.size == 0;
    if (whole_tiles) {
      in_split = retiled(split, split.dim, b_.CreateAdd(split.outer, i64c(start[k] / split.size)));
      in[k] = joined(b_, in_split);
    } else {
      in[k] = b_.CreateAdd(i64c(start[k]), b_.CreateMul(out[k], i64c(stride[k])));
    }
  }
  Index* result = with_multi(in_shape, std::move(in));
  result->split = in_split;
  return result;
}

BoundedIndex ElementGenerator::padded_index(Index* idx, std::span<const int64_t> lo, const Shape& in_shape) {
  const auto& out = multi(idx);
  const IndexSplit& split = idx->split;
  std::vector<llvm::Value*> in(out.size());
  IndexSplit in_split;
  llvm::Value* inside = b_.getTrue();
  // v is in [0, size) of the operand; the read is clamped into it.
  auto bounded = [&](llvm::Value* v, int64_t size) {
    inside = b_.CreateAnd(inside, b_.CreateAnd(b_.CreateICmpSGE(v, i64c(0)), b_.CreateICmpSLT(v, i64c(size))));
    return b_.CreateSelect(b_.CreateICmpSLT(v, i64c(0)), i64c(0),
                           b_.CreateSelect(b_.CreateICmpSGE(v, i64c(size)), i64c(std::max<int64_t>(size - 1, 0)), v));
  };
  for (size_t k = 0; k < out.size(); ++k) {
    const bool whole_tiles =
        static_cast<int64_t>(k) == split.dim && lo[k] % split.size == 0 && in_shape[k] % split.size == 0;
    if (whole_tiles) {
      // Inside or outside by whole tiles: decided by the tile, not by the element.
      in_split = retiled(split, split.dim,
                         bounded(b_.CreateSub(split.outer, i64c(lo[k] / split.size)), in_shape[k] / split.size));
      in[k] = joined(b_, in_split);
    } else {
      in[k] = bounded(b_.CreateSub(out[k], i64c(lo[k])), in_shape[k]);
    }
  }
  Index* result = with_multi(in_shape, std::move(in));
  result->split = in_split;
  return {result, inside};
}

BoundedIndex ElementGenerator::concat_part_index(Index* idx, int64_t dim, int64_t base, const Shape& in_shape) {
  std::vector<llvm::Value*> in = multi(idx);
  const IndexSplit& split = idx->split;
  const int64_t tile = split.size;
  Index* result = nullptr;
  llvm::Value* inside = nullptr;
  if (split.dim == dim && base % tile == 0 && in_shape[dim] % tile == 0) {
    llvm::Value* outer = b_.CreateSub(split.outer, i64c(base / tile));
    inside = b_.CreateAnd(b_.CreateICmpSGE(outer, i64c(0)), b_.CreateICmpSLT(outer, i64c(in_shape[dim] / tile)));
    const IndexSplit part_split = retiled(split, dim, b_.CreateSelect(inside, outer, i64c(0)));
    in[dim] = joined(b_, part_split);
    result = with_multi(in_shape, std::move(in));
    result->split = part_split;
  } else {
    llvm::Value* local = b_.CreateSub(in[dim], i64c(base));
    inside = b_.CreateAnd(b_.CreateICmpSGE(local, i64c(0)), b_.CreateICmpSLT(local, i64c(in_shape[dim])));
    in[dim] = b_.CreateSelect(inside, local, i64c(0));
    result = with_multi(in_shape, std::move(in));
    if (split.dim != dim) result->split = split;
  }
  return {result, inside};
}

}  // namespace xlite::backends::codegen
