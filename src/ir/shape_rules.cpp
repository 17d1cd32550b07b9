// The shape rule of every IR op, by op class. The ops layer gives users friendlier messages before a
// node is built; these rules are the contract the verifier and every backend rely on.
#include <algorithm>
#include <cmath>
#include <string>

#include "ir/node.h"
#include "ir/kernel_registry.h"
#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "xlite/error.h"

namespace xlite::ir {
namespace {

[[noreturn]] void fail(OpId op, const std::string& message) {
  throw Error("[" + std::string(op_name(op)) + "] " + message);
}

std::string type_str(const OperandType& t) { return std::string(dtype_name(t.dtype)) + shape_str(t.shape); }

void require_same_types(OpId op, std::span<const OperandType> in, size_t first) {
  for (size_t i = first + 1; i < in.size(); ++i)
    if (!(in[i] == in[first]))
      fail(op, "operands must have one type, got " + type_str(in[first]) + " and " + type_str(in[i]));
}

void require_dims_valid(OpId op, std::span<const int64_t> dims, size_t rank, bool unique) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(rank))
      fail(op, "dim " + std::to_string(d) + " out of range for rank " + std::to_string(rank));
    if (unique && seen[d]) fail(op, "dim " + std::to_string(d) + " repeated");
    seen[d] = true;
  }
}

void require_dim_valid(OpId op, int64_t dim, size_t rank) {
  require_dims_valid(op, std::span<const int64_t>(&dim, 1), rank, true);
}

void require_value(OpId op, DType dtype, double v) {
  if (holds_value(dtype, v)) return;
  fail(op, "value " + number_text(v) +
               (dtype == DType::bool_ ? " is not a bool: bools are 0 or 1"
                                      : " is not an integer in the range of " + std::string(dtype_name(dtype))));
}

void require_index_dtype(OpId op, DType dtype) {
  if (dtype != DType::i32 && dtype != DType::i64)
    fail(op, "index must be i32 or i64, got " + std::string(dtype_name(dtype)));
}

Shape reduced_shape(const Shape& in, std::span<const int64_t> dims, bool keepdim) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end();
    if (!reduced)
      out.push_back(in[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

TypedShape infer_leaf(OpId op, const Attrs& attrs) {
  switch (leaf_op(op)) {
    case LeafOp::constant: {
      const ConstantAttrs constant = ConstantAttrs::of(attrs);
      require_value(op, constant.dtype, constant.value);
      return {{}, constant.dtype};
    }
    case LeafOp::iota: {
      const IotaAttrs iota = IotaAttrs::of(attrs);
      if (iota.dim < 0 || iota.dim >= static_cast<int64_t>(iota.shape.size())) fail(op, "dim out of range");
      if (iota.dtype == DType::bool_) fail(op, "iota cannot be bool");
      return {Shape(iota.shape.begin(), iota.shape.end()), iota.dtype};
    }
    case LeafOp::parameter: break;
  }
  fail(op, "parameters have no shape rule");
}

TypedShape infer_unchecked(OpId op, std::span<const OperandType> in, const Attrs& attrs) {
  const OpInfo& info = op_info(op);
  if (info.arity >= 0 && static_cast<int>(in.size()) != info.arity)
    fail(op, "expects " + std::to_string(info.arity) + " operands, got " + std::to_string(in.size()));
  switch (info.cls) {
    case OpClass::Leaf: return infer_leaf(op, attrs);
    case OpClass::Random: {
      for (const auto& t : in)
        if (!t.shape.empty() || t.dtype != DType::i64) fail(op, "seed and offset must be i64 scalars");
      const RandomAttrs random = RandomAttrs::of(attrs);
      if (random.dtype != DType::f32 && random.dtype != DType::f64) fail(op, "random values are f32 or f64");
      return {Shape(random.shape.begin(), random.shape.end()), random.dtype};
    }
    case OpClass::Convert: return {in[0].shape, ConvertAttrs::of(attrs).dtype};
    case OpClass::Unary:
      if (in[0].dtype == DType::bool_) fail(op, "bool operand not supported");
      return in[0];
    case OpClass::UnaryFloat:
      if (!is_floating(in[0].dtype)) fail(op, "needs a floating operand, got " + type_str(in[0]));
      return in[0];
    case OpClass::Predicate: return {in[0].shape, DType::bool_};
    case OpClass::Binary:
      require_same_types(op, in, 0);
      if (in[0].dtype == DType::bool_) fail(op, "bool operands not supported");
      return in[0];
    case OpClass::Compare: require_same_types(op, in, 0); return {in[0].shape, DType::bool_};
    case OpClass::Logical:
      require_same_types(op, in, 0);
      if (in[0].dtype != DType::bool_) fail(op, "operands must be bool");
      return in[0];
    case OpClass::Select:
      if (in[0].dtype != DType::bool_ || in[0].shape != in[1].shape)
        fail(op, "condition must be bool of the value shape");
      require_same_types(op, in, 1);
      return in[1];
    case OpClass::Reduce: {
      const ReduceAttrs reduce = ReduceAttrs::of(attrs);
      const auto dims = reduce.dims;
      require_dims_valid(op, dims, in[0].shape.size(), true);
      if (in[0].dtype == DType::bool_ && op != OpId::reduce_max && op != OpId::reduce_min)
        fail(op, "bool operand not supported");
      if (op == OpId::reduce_max || op == OpId::reduce_min)
        for (int64_t d : dims)
          if (in[0].shape[d] == 0) fail(op, "cannot reduce an empty dim " + std::to_string(d));
      return {reduced_shape(in[0].shape, dims, reduce.keepdim), in[0].dtype};
    }
    case OpClass::ArgReduce: {
      const ArgReduceAttrs reduce = ArgReduceAttrs::of(attrs);
      const int64_t dim = reduce.dim;
      require_dim_valid(op, dim, in[0].shape.size());
      if (in[0].shape[dim] == 0) fail(op, "cannot reduce an empty dim");
      return {reduced_shape(in[0].shape, std::span<const int64_t>(&dim, 1), reduce.keepdim), DType::i64};
    }
    case OpClass::Scan:
      require_dim_valid(op, DimAttrs::of(attrs).dim, in[0].shape.size());
      if (in[0].dtype == DType::bool_) fail(op, "bool operands not supported");
      return in[0];
    case OpClass::Sort:
      require_dim_valid(op, SortAttrs::of(attrs).dim, in[0].shape.size());
      if (in[0].dtype == DType::bool_) fail(op, "bool operands not supported");
      return {in[0].shape, DType::i64};
    case OpClass::Reshape: {
      const auto target = ReshapeAttrs::of(attrs).shape;
      const Shape shape(target.begin(), target.end());
      for (int64_t d : shape)
        if (d < 0) fail(op, "negative dim in " + shape_str(shape));
      if (checked_numel(shape) != checked_numel(in[0].shape))
        fail(op, "cannot reshape " + shape_str(in[0].shape) + " to " + shape_str(shape));
      return {shape, in[0].dtype};
    }
    case OpClass::Transpose: {
      const auto perm = TransposeAttrs::of(attrs).perm;
      if (perm.size() != in[0].shape.size()) fail(op, "perm length must equal rank");
      require_dims_valid(op, perm, perm.size(), true);
      Shape out;
      for (int64_t p : perm) out.push_back(in[0].shape[p]);
      return {out, in[0].dtype};
    }
    case OpClass::Broadcast: {
      const BroadcastAttrs broadcast = BroadcastAttrs::of(attrs);
      const Shape shape(broadcast.shape.begin(), broadcast.shape.end());
      const auto dims = broadcast.dims;
      if (dims.size() != in[0].shape.size()) fail(op, "dims length must equal operand rank");
      require_dims_valid(op, dims, shape.size(), true);
      for (size_t i = 0; i < dims.size(); ++i) {
        if (i > 0 && dims[i] <= dims[i - 1]) fail(op, "dims must increase");
        if (in[0].shape[i] != 1 && in[0].shape[i] != shape[dims[i]])
          fail(op, "operand " + shape_str(in[0].shape) + " does not broadcast to " + shape_str(shape));
      }
      return {shape, in[0].dtype};
    }
    case OpClass::Slice: {
      const auto [start, limit, stride] = SliceAttrs::of(attrs);
      size_t rank = in[0].shape.size();
      if (start.size() != rank || limit.size() != rank || stride.size() != rank) fail(op, "one bound per dim");
      Shape out(rank);
      for (size_t d = 0; d < rank; ++d) {
        if (stride[d] <= 0 || start[d] < 0 || start[d] > limit[d] || limit[d] > in[0].shape[d])
          fail(op, "bad bounds on dim " + std::to_string(d));
        const int64_t extent = limit[d] - start[d];
        out[d] = extent == 0 ? 0 : (extent - 1) / stride[d] + 1;  // rounds up without overflowing
      }
      return {out, in[0].dtype};
    }
    case OpClass::Concat: {
      if (in.empty()) fail(op, "needs at least one operand");
      const int64_t dim = DimAttrs::of(attrs).dim;
      require_dim_valid(op, dim, in[0].shape.size());
      Shape out = in[0].shape;
      for (size_t i = 1; i < in.size(); ++i) {
        Shape s = in[i].shape;
        if (s.size() != out.size() || in[i].dtype != in[0].dtype) fail(op, "operands differ in rank or dtype");
        int64_t extent = s[dim];
        s[dim] = out[dim];
        if (s != out) fail(op, "operands differ outside dim " + std::to_string(dim));
        auto sum = checked_add(out[dim], extent);
        if (!sum)
          fail(op, "dim " + std::to_string(dim) + " of the result overflows: " + std::to_string(out[dim]) + " + " +
                       std::to_string(extent));
        out[dim] = *sum;
      }
      return {out, in[0].dtype};
    }
    case OpClass::Pad: {
      const auto [lo, hi, value] = PadAttrs::of(attrs);
      require_value(op, in[0].dtype, value);
      if (lo.size() != in[0].shape.size() || hi.size() != lo.size()) fail(op, "one pad per dim");
      Shape out = in[0].shape;
      for (size_t d = 0; d < out.size(); ++d) {
        if (lo[d] < 0 || hi[d] < 0) fail(op, "pads must be >= 0");
        auto padded = checked_add(out[d], lo[d]);
        if (padded) padded = checked_add(*padded, hi[d]);
        if (!padded)
          fail(op, "padding " + std::to_string(lo[d]) + " and " + std::to_string(hi[d]) + " of dim " +
                       std::to_string(d) + " of size " + std::to_string(out[d]) + " overflow 64-bit sizes");
        out[d] = *padded;
      }
      return {out, in[0].dtype};
    }
    case OpClass::Flip: require_dims_valid(op, FlipAttrs::of(attrs).dims, in[0].shape.size(), true); return in[0];
    case OpClass::Gather: {
      const int64_t dim = DimAttrs::of(attrs).dim;
      require_index_dtype(op, in[1].dtype);
      if (in[1].shape.size() != in[0].shape.size()) fail(op, "index rank must equal input rank");
      require_dim_valid(op, dim, in[0].shape.size());
      for (size_t d = 0; d < in[0].shape.size(); ++d)
        if (static_cast<int64_t>(d) != dim && in[1].shape[d] > in[0].shape[d])
          fail(op, "index " + shape_str(in[1].shape) + " larger than input " + shape_str(in[0].shape));
      return {in[1].shape, in[0].dtype};
    }
    case OpClass::IndexSelect: {
      const int64_t dim = DimAttrs::of(attrs).dim;
      require_index_dtype(op, in[1].dtype);
      if (in[1].shape.size() != 1) fail(op, "index must be 1-D");
      require_dim_valid(op, dim, in[0].shape.size());
      Shape out = in[0].shape;
      out[dim] = in[1].shape[0];
      return {out, in[0].dtype};
    }
    case OpClass::ScatterAdd: {
      const int64_t dim = DimAttrs::of(attrs).dim;
      require_index_dtype(op, in[1].dtype);
      require_dim_valid(op, dim, in[0].shape.size());
      if (in[2].dtype != in[0].dtype) fail(op, "src dtype must equal input dtype");
      if (in[1].shape != in[2].shape) fail(op, "index and src shapes must match");
      if (in[1].shape.size() != in[0].shape.size()) fail(op, "index rank must equal input rank");
      for (size_t d = 0; d < in[0].shape.size(); ++d)
        if (static_cast<int64_t>(d) != dim && in[1].shape[d] > in[0].shape[d]) fail(op, "index larger than input");
      return in[0];
    }
    case OpClass::Dot: {
      const Shape& a = in[0].shape;
      const Shape& b = in[1].shape;
      if (a.size() < 2 || a.size() != b.size() || in[0].dtype != in[1].dtype)
        fail(op, "operands " + type_str(in[0]) + " and " + type_str(in[1]) + " are not batched matrices of one type");
      if (in[0].dtype == DType::bool_) fail(op, "bool operands not supported");
      size_t r = a.size();
      if (!std::equal(a.begin(), a.end() - 2, b.begin()) || a[r - 1] != b[r - 2])
        fail(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be multiplied");
      Shape out(a.begin(), a.end() - 1);
      out.push_back(b[r - 1]);
      return {out, in[0].dtype};
    }
    case OpClass::Conv: {
      const Shape& x = in[0].shape;
      const Shape& w = in[1].shape;
      if (x.size() != 4 || w.size() != 4 || in[0].dtype != in[1].dtype || !is_floating(in[0].dtype))
        fail(op, "needs a float input [N,C,H,W] and weight [O,C/groups,KH,KW] of one dtype, got " + type_str(in[0]) +
                     " and " + type_str(in[1]));
      const auto [stride, lo, hi, dilation, groups] = ConvAttrs::of(attrs);
      if (stride.size() != 2 || lo.size() != 2 || hi.size() != 2 || dilation.size() != 2) fail(op, "two spatial dims");
      if (groups < 1 || x[1] % groups != 0 || w[0] % groups != 0 || x[1] / groups != w[1])
        fail(op, "channels " + std::to_string(x[1]) + " and weight " + shape_str(w) + " do not match groups " +
                     std::to_string(groups));
      Shape out = {x[0], w[0], 0, 0};
      for (int k = 0; k < 2; ++k) {
        if (stride[k] < 1 || dilation[k] < 1 || lo[k] < 0 || hi[k] < 0) fail(op, "bad stride, dilation or padding");
        auto span = checked_mul(dilation[k], w[2 + k] - 1);
        if (span) span = checked_add(*span, 1);
        auto padded = checked_add(x[2 + k], lo[k]);
        if (padded) padded = checked_add(*padded, hi[k]);
        if (!span || !padded)
          fail(op, "input " + shape_str(x) + " padded by " + std::to_string(lo[k]) + " and " + std::to_string(hi[k]) +
                       " or weight " + shape_str(w) + " dilated by " + std::to_string(dilation[k]) +
                       " overflows 64-bit sizes");
        if (*padded < *span)
          fail(op, "kernel " + shape_str(w) + " dilated by " + std::to_string(dilation[k]) + " spans " +
                       std::to_string(*span) + ", more than the input " + shape_str(x) + " padded to " +
                       std::to_string(*padded));
        auto room = checked_sub(*padded, *span);  // an empty kernel's span is 1 - dilation
        if (!room)
          fail(op, "kernel " + shape_str(w) + " dilated by " + std::to_string(dilation[k]) + " overflows 64-bit sizes");
        out[2 + k] = *room / stride[k] + 1;
      }
      return {out, in[0].dtype};
    }
    case OpClass::Transfer: return in[0];
    case OpClass::Barrier:
      if (in.empty()) fail(op, "needs the value it passes on");
      return in[0];
    case OpClass::CustomCall: return custom_call_type(custom_call_outputs(attrs, in));
    case OpClass::CustomOutput: {
      const CustomOutputAttrs output = CustomOutputAttrs::of(attrs);
      if (in[0].dtype != DType::u8 || in[0].shape.size() != 1)
        fail(op, "reads the packed outputs of a custom_call, not " + type_str(in[0]));
      if (output.index < 0) fail(op, "index " + std::to_string(output.index) + " is negative");
      const Shape shape(output.shape.begin(), output.shape.end());
      require_addressable(op_name(op), shape, output.dtype);  // so that its bytes do not overflow
      const int64_t bytes = numel(shape) * dtype_size(output.dtype);
      if (output.offset < 0 || output.offset > in[0].shape[0] || bytes > in[0].shape[0] - output.offset)
        fail(op, "bytes [" + std::to_string(output.offset) + ", +" + std::to_string(bytes) + ") are outside the " +
                     std::to_string(in[0].shape[0]) + " packed bytes");
      return {shape, output.dtype};
    }
  }
  fail(op, "unknown op class");
}

}  // namespace

// Converting anything else to an integer is undefined behaviour in C++ and in LLVM, so backends would
// disagree (0.5 as a bool was false on the reference and true on the cpu backend).
bool holds_value(DType dtype, double v) {
  if (is_floating(dtype)) return true;
  if (!std::isfinite(v) || v != std::trunc(v)) return false;
  switch (dtype) {
    case DType::bool_: return v == 0 || v == 1;
    case DType::u8: return v >= 0 && v <= 255;
    case DType::i32: return v >= -2147483648.0 && v <= 2147483647.0;
    default: return v >= -9223372036854775808.0 && v < 9223372036854775808.0;  // i64
  }
}

TypedShape infer_type(OpId op, std::span<const OperandType> in, const Attrs& attrs) {
  check_attr_schema(op, attrs);
  TypedShape result = infer_unchecked(op, in, attrs);
  if (!addressable(result.shape, result.dtype)) fail_unaddressable(op_name(op), result.shape, result.dtype);
  return result;
}

}  // namespace xlite::ir
