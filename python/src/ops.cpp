// Every op of xlite/ops.h as a function of the module, with PyTorch's argument names (dim, keepdim, ...).
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;

// PyTorch's dims: None (every dim), one int, or a sequence.
template <class Reduce>
auto reduction(Reduce reduce) {
  return [reduce](const Tensor& x, nb::handle dim, bool keepdim) { return reduce(x, to_dims(dim), keepdim); };
}

// A list of Python ints or (for the pair ops, conv2d and pools) one int that stands for both dims.
std::vector<int64_t> pair_of(nb::handle value) {
  if (PyLong_Check(value.ptr())) {
    int64_t v = nb::cast<int64_t>(value);
    return {v, v};
  }
  return to_shape(value);
}

// max_pool2d and avg_pool2d with PyTorch's arguments: ints for both dims, stride None for the kernel size.
template <class Pool>
auto pool(Pool op) {
  return [op](const Tensor& x, nb::handle kernel, nb::handle stride, nb::handle padding) {
    return op(x, pair_of(kernel), stride.is_none() ? std::vector<int64_t>{} : pair_of(stride), pair_of(padding));
  };
}

}  // namespace

void bind_ops(nb::module_& m) {
#define XLITE_UNARY(name)                                               \
  m.def(                                                                \
      #name, [](const Tensor& x) { return xlite::name(x); }, "input"_a, \
      "Elementwise " #name " (integers and bools become float32 where the result is not exact).");
  XLITE_UNARY(neg)
  XLITE_UNARY(abs)
  XLITE_UNARY(exp)
  XLITE_UNARY(expm1)
  XLITE_UNARY(log)
  XLITE_UNARY(log1p)
  XLITE_UNARY(sqrt)
  XLITE_UNARY(rsqrt)
  XLITE_UNARY(sin)
  XLITE_UNARY(cos)
  XLITE_UNARY(tan)
  XLITE_UNARY(tanh)
  XLITE_UNARY(sigmoid)
  XLITE_UNARY(relu)
  XLITE_UNARY(silu)
  XLITE_UNARY(erf)
  XLITE_UNARY(floor)
  XLITE_UNARY(ceil)
  XLITE_UNARY(round)
  XLITE_UNARY(sign)
  XLITE_UNARY(reciprocal)
  XLITE_UNARY(square)
  XLITE_UNARY(logical_not)
  XLITE_UNARY(isnan)
  XLITE_UNARY(isinf)
#undef XLITE_UNARY
  m.def(
      "gelu", [](const Tensor& x, const std::string& approximate) { return xlite::gelu(x, approximate); }, "input"_a,
      "approximate"_a = "none", "GELU; approximate is 'none' (exact, with erf) or 'tanh'.");

#define XLITE_BINARY(name)                                                                              \
  m.def(                                                                                                \
       #name, [](const Tensor& a, const Tensor& b) { return xlite::name(a, b); }, "input"_a, "other"_a, \
       "Elementwise " #name " of tensors or numbers: broadcast like NumPy, promoted like PyTorch.")     \
      .def(                                                                                             \
          #name, [](const Tensor& a, Scalar b) { return xlite::name(a, b); }, "input"_a, "other"_a)     \
      .def(#name, [](Scalar a, const Tensor& b) { return xlite::name(a, b); }, "input"_a, "other"_a);
  XLITE_BINARY(add)
  XLITE_BINARY(sub)
  XLITE_BINARY(mul)
  XLITE_BINARY(div)
  XLITE_BINARY(pow)
  XLITE_BINARY(maximum)
  XLITE_BINARY(minimum)
  XLITE_BINARY(remainder)
  XLITE_BINARY(eq)
  XLITE_BINARY(ne)
  XLITE_BINARY(lt)
  XLITE_BINARY(le)
  XLITE_BINARY(gt)
  XLITE_BINARY(ge)
  XLITE_BINARY(logical_and)
  XLITE_BINARY(logical_or)
  XLITE_BINARY(logical_xor)
#undef XLITE_BINARY

  m.def("where", nb::overload_cast<const Tensor&, const Tensor&, const Tensor&>(&xlite::where), "condition"_a,
        "input"_a, "other"_a)
      .def("where", nb::overload_cast<const Tensor&, const Tensor&, Scalar>(&xlite::where), "condition"_a, "input"_a,
           "other"_a)
      .def("where", nb::overload_cast<const Tensor&, Scalar, const Tensor&>(&xlite::where), "condition"_a, "input"_a,
           "other"_a)
      .def("where", nb::overload_cast<const Tensor&, Scalar, Scalar>(&xlite::where), "condition"_a, "input"_a,
           "other"_a);
  m.def("clamp", nb::overload_cast<const Tensor&, std::optional<Scalar>, std::optional<Scalar>>(&xlite::clamp),
        "input"_a, "min"_a = nb::none(), "max"_a = nb::none())
      .def("clamp", nb::overload_cast<const Tensor&, const Tensor&, const Tensor&>(&xlite::clamp), "input"_a, "min"_a,
           "max"_a);

  // Reductions: dim is None (every dim), an int or a sequence of ints.
  m.def("sum", reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return xlite::sum(x, d, k); }),
        "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, "Sums of integers and bools are int64.");
  m.def("mean", reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return xlite::mean(x, d, k); }),
        "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, "The mean over dims (None: every dim).");
  m.def("prod", reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return xlite::prod(x, d, k); }),
        "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, "The product over dims (None: every dim).");
  m.def("amax", reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return xlite::max(x, d, k); }),
        "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, "The largest values over dims.");
  m.def("amin", reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return xlite::min(x, d, k); }),
        "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, "The smallest values over dims.");
  m.def(
      "argmax",
      [](const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
        return dim ? xlite::argmax(x, *dim, keepdim) : xlite::argmax(x);
      },
      "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, "int64 indices of the first largest value.");
  m.def(
      "argmin",
      [](const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
        return dim ? xlite::argmin(x, *dim, keepdim) : xlite::argmin(x);
      },
      "input"_a, "dim"_a = nb::none(), "keepdim"_a = false,
      "int64 indices of the first smallest value, over one dim or the flattened tensor.");
  m.def(
      "logsumexp",
      [](const Tensor& x, nb::handle dim, bool keepdim) { return xlite::logsumexp(x, to_dims(dim), keepdim); },
      "input"_a, "dim"_a, "keepdim"_a = false, "log(sum(exp(x))) over dims, computed without overflow.");
  m.def(
      "var",
      [](const Tensor& x, nb::handle dim, std::optional<int64_t> correction, std::optional<bool> unbiased,
         bool keepdim) {
        int64_t c = correction ? *correction : (unbiased.value_or(true) ? 1 : 0);
        return xlite::var(x, to_dims(dim), c, keepdim);
      },
      "input"_a, "dim"_a = nb::none(), nb::kw_only(), "correction"_a = nb::none(), "unbiased"_a = nb::none(),
      "keepdim"_a = false, "correction = 1 (the default) is the unbiased estimate, 0 the population variance.");
  m.def("softmax", &xlite::softmax, "input"_a, "dim"_a, "exp(x) / sum(exp(x)) along dim.");
  m.def("log_softmax", &xlite::log_softmax, "input"_a, "dim"_a,
        "log(softmax(x)) along dim, computed without overflow.");

  // Shape ops. Values, not views: the result never aliases storage.
  m.def(
      "reshape", [](const Tensor& x, nb::handle shape) { return xlite::reshape(x, to_shape(shape)); }, "input"_a,
      "shape"_a, "One dim may be -1.");
  m.def(
      "view", [](const Tensor& x, nb::handle shape) { return xlite::view(x, to_shape(shape)); }, "input"_a, "shape"_a,
      "The value with another shape of the same number of elements (a value, not a view of storage).");
  m.def(
      "expand", [](const Tensor& x, nb::handle shape) { return xlite::expand(x, to_shape(shape)); }, "input"_a,
      "size"_a, "-1 keeps a dim.");
  m.def("flatten", &xlite::flatten, "input"_a, "start_dim"_a = 0, "end_dim"_a = -1,
        "Merges the dims from start_dim to end_dim into one.");
  m.def(
      "squeeze",
      [](const Tensor& x, std::optional<int64_t> dim) { return dim ? xlite::squeeze(x, *dim) : xlite::squeeze(x); },
      "input"_a, "dim"_a = nb::none(), "Removes dims of size 1 (or the one dim given, when its size is 1).");
  m.def("unsqueeze", &xlite::unsqueeze, "input"_a, "dim"_a, "Inserts a dim of size 1 at dim.");
  m.def("transpose", &xlite::transpose, "input"_a, "dim0"_a, "dim1"_a, "Swaps two dims.");
  m.def(
      "permute", [](const Tensor& x, nb::handle dims) { return xlite::permute(x, to_shape(dims)); }, "input"_a,
      "dims"_a, "The dims reordered.");
  m.def(
      "broadcast_to", [](const Tensor& x, nb::handle shape) { return xlite::broadcast_to(x, to_shape(shape)); },
      "input"_a, "size"_a, "The value broadcast to a shape, like NumPy.");
  m.def("slice", &xlite::slice, "input"_a, "dim"_a, "start"_a = 0, "stop"_a = INT64_MAX, "step"_a = 1,
        "x[start:stop:step] along dim.");
  m.def("narrow", &xlite::narrow, "input"_a, "dim"_a, "start"_a, "length"_a, "length elements of dim from start.");
  m.def("select", &xlite::select, "input"_a, "dim"_a, "index"_a,
        "input[..., index, ...] along dim, a view without dim.");
  m.def("cat", &xlite::cat, "tensors"_a, "dim"_a = 0, "Joins tensors along an existing dim.");
  m.def("concat", &xlite::concat, "tensors"_a, "dim"_a = 0, "Joins tensors along an existing dim (cat).");
  m.def("stack", &xlite::stack, "tensors"_a, "dim"_a = 0, "Joins tensors along a new dim.");
  m.def(
      "split",
      [](const Tensor& x, nb::handle size, int64_t dim) {
        if (PyLong_Check(size.ptr())) return xlite::split(x, nb::cast<int64_t>(size), dim);
        return xlite::split(x, to_shape(size), dim);
      },
      "tensor"_a, "split_size_or_sections"_a, "dim"_a = 0,
      "Pieces of split_size along dim (the last may be smaller), or pieces of the sizes listed.");
  m.def("chunk", &xlite::chunk, "input"_a, "chunks"_a, "dim"_a = 0, "chunks pieces of nearly equal size along dim.");
  m.def("pad", &xlite::pad, "input"_a, "pad"_a, "value"_a = 0,
        "Constant padding: (before, after) pairs from the last dim, like torch.nn.functional.pad.");
  m.def(
      "flip", [](const Tensor& x, nb::handle dims) { return xlite::flip(x, to_shape(dims)); }, "input"_a, "dims"_a,
      "The elements in reverse order along dims.");
  m.def("tril", &xlite::tril, "input"_a, "diagonal"_a = 0,
        "The lower triangle of the last two dims (the rest zeroed); diagonal shifts it.");
  m.def("triu", &xlite::triu, "input"_a, "diagonal"_a = 0,
        "The upper triangle of the last two dims (the rest zeroed); diagonal shifts it.");

  // Indexing.
  m.def("index_select", &xlite::index_select, "input"_a, "dim"_a, "index"_a,
        "The entries of index (an integer tensor) along dim; an index out of range raises xlite.Error.");
  m.def("gather", &xlite::gather, "input"_a, "dim"_a, "index"_a,
        "out[i][j] = input[i][index[i][j]] along dim, like torch.gather.");
  m.def("scatter_add", &xlite::scatter_add, "input"_a, "dim"_a, "index"_a, "src"_a,
        "input with src added at the positions index gives along dim, like torch.scatter_add.");
  m.def(
      "embedding", [](const Tensor& input, const Tensor& weight) { return xlite::embedding(weight, input); }, "input"_a,
      "weight"_a, "Rows of weight picked by the integer indices (torch.nn.functional.embedding).");
  m.def("one_hot", &xlite::one_hot, "input"_a, "num_classes"_a = -1,
        "int64 one-hot vectors of integer class indices; num_classes -1 reads max + 1 (a sync).");

  // Linear algebra, convolution, pooling.
  m.def("matmul", &xlite::matmul, "input"_a, "other"_a, "torch.matmul: 1-D operands, broadcast batch dims.");
  m.def("linear", &xlite::linear, "input"_a, "weight"_a, "bias"_a = nb::none(), "y = x W^T + b.");
  m.def(
      "conv2d",
      [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias, nb::handle stride, nb::handle padding,
         nb::handle dilation, int64_t groups) {
        return xlite::conv2d(x, w, bias, pair_of(stride), pair_of(padding), pair_of(dilation), groups);
      },
      "input"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1, "groups"_a = 1,
      "2-D cross-correlation of input [N, C, H, W] with weight [O, C / groups, KH, KW], like PyTorch.");
  m.def("max_pool2d", pool(&xlite::max_pool2d), "input"_a, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0,
        "The largest value of each window of input [N, C, H, W]; stride defaults to the kernel size.");
  m.def("avg_pool2d", pool(&xlite::avg_pool2d), "input"_a, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0,
        "The mean of each window of input [N, C, H, W] (padding counts as zeros).");
}

}  // namespace xlite::python
