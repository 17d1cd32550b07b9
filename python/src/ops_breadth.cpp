// The wider op set of xlite/ops.h (activations, scans, sorting, products, data-dependent shapes,
// resampling) and the draws and ranges of xlite/factories.h, with PyTorch's argument names.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;

std::vector<int64_t> ints_or_one(nb::handle value) {
  if (PyLong_Check(value.ptr())) return {nb::cast<int64_t>(value)};
  return to_shape(value);
}

// (values, indices) like torch.return_types: unpacks as a pair and names its fields.
void bind_values_indices(nb::module_& m) {
  nb::class_<ValuesIndices>(m, "ValuesIndices", "values and indices, as PyTorch's (values, indices) results.")
      .def_ro("values", &ValuesIndices::values)
      .def_ro("indices", &ValuesIndices::indices)
      .def("__len__", [](const ValuesIndices&) { return 2; })
      .def("__getitem__",
           [](const ValuesIndices& r, int64_t i) {
             if (i == 0 || i == -2) return r.values;
             if (i == 1 || i == -1) return r.indices;
             throw nb::index_error("ValuesIndices has two items");
           })
      .def("__repr__", [](const ValuesIndices& r) {
        return "(values=" + nb::cast<std::string>(nb::repr(nb::cast(r.values))) +
               ", indices=" + nb::cast<std::string>(nb::repr(nb::cast(r.indices))) + ")";
      });
}
}  // namespace

void bind_ops_breadth(nb::module_& m) {
  bind_values_indices(m);
#define XLITE_UNARY(name) \
  m.def(#name, [](const Tensor& x) { return xlite::name(x); }, "input"_a, "Elementwise " #name ".");
  XLITE_UNARY(asin)
  XLITE_UNARY(acos)
  XLITE_UNARY(atan)
  XLITE_UNARY(sinh)
  XLITE_UNARY(cosh)
  XLITE_UNARY(mish)
  XLITE_UNARY(hardsigmoid)
  XLITE_UNARY(hardswish)
#undef XLITE_UNARY
  m.def("atan2", &xlite::atan2, "input"_a, "other"_a, "The angle of (other, input), in (-pi, pi].");
  m.def("logaddexp", &xlite::logaddexp, "input"_a, "other"_a, "log(exp(a) + exp(b)) without overflow.");
  m.def("hypot", &xlite::hypot, "input"_a, "other"_a, "sqrt(a^2 + b^2) without overflow.");
  m.def("softplus", &xlite::softplus, "input"_a, "beta"_a = 1.0, "threshold"_a = 20.0,
        "log(1 + exp(beta x)) / beta, linear above the threshold.");
  m.def("elu", &xlite::elu, "input"_a, "alpha"_a = 1.0, "x for x > 0, else alpha (exp(x) - 1).");
  m.def("leaky_relu", &xlite::leaky_relu, "input"_a, "negative_slope"_a = 0.01, "x for x > 0, else slope x.");
  m.def("glu", &xlite::glu, "input"_a, "dim"_a = -1, "a * sigmoid(b) for the two halves of dim.");
  m.def("clamp_min", &xlite::clamp_min, "input"_a, "min"_a, "max(x, min).");
  m.def("clamp_max", &xlite::clamp_max, "input"_a, "max"_a, "min(x, max).");
  m.def("nan_to_num", &xlite::nan_to_num, "input"_a, "nan"_a = 0.0, "posinf"_a = nb::none(), "neginf"_a = nb::none(),
        "NaN and infinities replaced by finite values.");
  m.def("dropout", &xlite::dropout, "input"_a, "p"_a = 0.5, "training"_a = true,
        "Zeroes elements with probability p and scales the rest by 1 / (1 - p) when training.");

  m.def(
      "any", [](const Tensor& x, nb::handle dim, bool keepdim) { return xlite::any(x, to_dims(dim), keepdim); },
      "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, "Whether any element is non-zero.");
  m.def(
      "all", [](const Tensor& x, nb::handle dim, bool keepdim) { return xlite::all(x, to_dims(dim), keepdim); },
      "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, "Whether every element is non-zero.");
  m.def(
      "count_nonzero", [](const Tensor& x, nb::handle dim) { return xlite::count_nonzero(x, to_dims(dim)); }, "input"_a,
      "dim"_a = nb::none(), "The number of non-zero elements (int64).");
  m.def(
      "std",
      [](const Tensor& x, nb::handle dim, std::optional<int64_t> correction, std::optional<bool> unbiased,
         bool keepdim) {
        int64_t c = correction ? *correction : (unbiased.value_or(true) ? 1 : 0);
        return xlite::std(x, to_dims(dim), c, keepdim);
      },
      "input"_a, "dim"_a = nb::none(), nb::kw_only(), "correction"_a = nb::none(), "unbiased"_a = nb::none(),
      "keepdim"_a = false, "The standard deviation (correction 1, the unbiased estimate, by default).");
  m.def(
      "norm",
      [](const Tensor& x, nb::handle p, nb::handle dim, bool keepdim) {
        if (nb::isinstance<nb::str>(p)) return xlite::norm(x, nb::cast<std::string>(p), to_dims(dim), keepdim);
        return xlite::norm(x, p.is_none() ? 2.0 : nb::cast<double>(p), to_dims(dim), keepdim);
      },
      "input"_a, "p"_a = "fro", "dim"_a = nb::none(), "keepdim"_a = false,
      "The vector p-norm over dims: p a number (inf for the largest magnitude) or 'fro'.");
  m.def("max_along", nb::overload_cast<const Tensor&, int64_t, bool>(&xlite::max), "input"_a, "dim"_a,
        "keepdim"_a = false, "The largest value along dim and its first index.");
  m.def("min_along", nb::overload_cast<const Tensor&, int64_t, bool>(&xlite::min), "input"_a, "dim"_a,
        "keepdim"_a = false, "The smallest value along dim and its first index.");
  m.def("isclose", &xlite::isclose, "input"_a, "other"_a, "rtol"_a = 1e-5, "atol"_a = 1e-8, "equal_nan"_a = false,
        "|input - other| <= atol + rtol |other|, elementwise.");
  m.def("allclose", &xlite::allclose, "input"_a, "other"_a, "rtol"_a = 1e-5, "atol"_a = 1e-8, "equal_nan"_a = false,
        "True when every element is close (a value read: it syncs).");
  m.def("equal", &xlite::equal, "input"_a, "other"_a, "Same shape and values (a value read).");

  m.def("cumsum", &xlite::cumsum, "input"_a, "dim"_a, "The running sum along dim (integers give int64).");
  m.def("cumprod", &xlite::cumprod, "input"_a, "dim"_a, "The running product along dim (integers give int64).");
  m.def("cummax", &xlite::cummax, "input"_a, "dim"_a, "The running maximum along dim and the index of each.");
  m.def("cummin", &xlite::cummin, "input"_a, "dim"_a, "The running minimum along dim and the index of each.");
  m.def("sort", &xlite::sort, "input"_a, "dim"_a = -1, "descending"_a = false,
        "Sorted values and their indices (stable; NaN above every number).");
  m.def("argsort", &xlite::argsort, "input"_a, "dim"_a = -1, "descending"_a = false, "The indices that sort input.");
  m.def("topk", &xlite::topk, "input"_a, "k"_a, "dim"_a = -1, "largest"_a = true,
        "The k largest (or smallest), sorted.");
  m.def("kthvalue", &xlite::kthvalue, "input"_a, "k"_a, "dim"_a = -1, "keepdim"_a = false,
        "The k-th smallest value (k from 1) and its index.");
  m.def("median", nb::overload_cast<const Tensor&, int64_t, bool>(&xlite::median), "input"_a, "dim"_a,
        "keepdim"_a = false, "The lower median along dim and its index.")
      .def("median", nb::overload_cast<const Tensor&>(&xlite::median), "input"_a);
  m.def("mode", &xlite::mode, "input"_a, "dim"_a = -1, "keepdim"_a = false,
        "The most frequent value along dim (the smallest of ties) and an index of it.");

  m.def(
      "repeat", [](const Tensor& x, nb::handle repeats) { return xlite::repeat(x, to_shape(repeats)); }, "input"_a,
      "repeats"_a, "The tensor repeated along each dim (torch.Tensor.repeat).");
  m.def(
      "tile", [](const Tensor& x, nb::handle dims) { return xlite::tile(x, to_shape(dims)); }, "input"_a, "dims"_a,
      "The tensor repeated along each dim; fewer repeats than dims repeat the last dims.");
  m.def(
      "repeat_interleave",
      [](const Tensor& x, nb::handle repeats, std::optional<int64_t> dim) {
        if (nb::isinstance<Tensor>(repeats)) return xlite::repeat_interleave(x, nb::cast<Tensor>(repeats), dim);
        return xlite::repeat_interleave(x, nb::cast<int64_t>(repeats), dim);
      },
      "input"_a, "repeats"_a, "dim"_a = nb::none(),
      "Each element repeated along dim; a tensor of counts is read (a sync).");
  m.def(
      "roll",
      [](const Tensor& x, nb::handle shifts, nb::handle dims) {
        return xlite::roll(x, ints_or_one(shifts), dims.is_none() ? std::vector<int64_t>{} : ints_or_one(dims));
      },
      "input"_a, "shifts"_a, "dims"_a = nb::none(), "Elements shifted along dims, wrapping around.");
  m.def("diag", &xlite::diag, "input"_a, "diagonal"_a = 0,
        "1-D: a matrix with input on a diagonal; 2-D: that diagonal.");
  m.def("diagonal", &xlite::diagonal, "input"_a, "offset"_a = 0, "dim1"_a = 0, "dim2"_a = 1,
        "A diagonal of the (dim1, dim2) planes, as the last dim.");
  m.def("trace", &xlite::trace, "input"_a, "The sum of the diagonal of a matrix.");
  m.def("unfold", &xlite::unfold, "input"_a, "dimension"_a, "size"_a, "step"_a,
        "Windows of size every step along dimension, as a new last dim.");
  m.def("clone", &xlite::clone, "input"_a, "A tensor of its own with the same value.");

  m.def("outer", &xlite::outer, "input"_a, "vec2"_a, "The outer product of two vectors.");
  m.def("bmm", &xlite::bmm, "input"_a, "mat2"_a, "Batched matrix product of [B, N, M] and [B, M, P].");
  m.def("addmm", &xlite::addmm, "input"_a, "mat1"_a, "mat2"_a, nb::kw_only(), "beta"_a = 1.0, "alpha"_a = 1.0,
        "beta input + alpha mat1 @ mat2.");
  m.def("baddbmm", &xlite::baddbmm, "input"_a, "batch1"_a, "batch2"_a, nb::kw_only(), "beta"_a = 1.0, "alpha"_a = 1.0,
        "beta input + alpha batch1 @ batch2.");
  m.def("cross", &xlite::cross, "input"_a, "other"_a, "dim"_a = -1, "The cross product along a dim of size 3.");
  m.def(
      "einsum",
      [](const std::string& equation, nb::args operands) {
        std::vector<Tensor> tensors;
        if (operands.size() == 1 && !nb::isinstance<Tensor>(operands[0]))
          tensors = nb::cast<std::vector<Tensor>>(operands[0]);
        else
          for (nb::handle t : operands) tensors.push_back(nb::cast<Tensor>(t));
        return xlite::einsum(equation, tensors);
      },
      "equation"_a, "operands"_a, "Einstein summation, as torch.einsum.");

  m.def("nonzero", &xlite::nonzero, "input"_a, "[count, ndim] int64 indices of the non-zero elements (a sync).");
  m.def("masked_select", &xlite::masked_select, "input"_a, "mask"_a,
        "The elements where mask is true, as a 1-D tensor (a sync).");
  m.def(
      "unique",
      [](const Tensor& x, bool sorted, bool return_inverse, bool return_counts) -> nb::object {
        Unique r = xlite::unique(x, return_inverse, return_counts);
        if (!return_inverse && !return_counts) return nb::cast(r.values);
        if (return_inverse && return_counts) return nb::make_tuple(r.values, r.inverse, r.counts);
        return nb::make_tuple(r.values, return_inverse ? r.inverse : r.counts);
      },
      "input"_a, "sorted"_a = true, "return_inverse"_a = false, "return_counts"_a = false,
      "The sorted distinct values, optionally with each element's index in them and their counts (a sync).");

  m.def("conv1d", &xlite::conv1d, "input"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1, "padding"_a = 0,
        "dilation"_a = 1, "groups"_a = 1, "1-D cross-correlation of input [N, C, L] with weight [O, C / groups, K].");
  m.def(
      "conv_transpose2d",
      [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias, nb::handle stride, nb::handle padding,
         nb::handle output_padding, int64_t groups, nb::handle dilation) {
        return xlite::conv_transpose2d(x, w, bias, ints_or_one(stride), ints_or_one(padding),
                                       ints_or_one(output_padding), groups, ints_or_one(dilation));
      },
      "input"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1, "padding"_a = 0, "output_padding"_a = 0,
      "groups"_a = 1, "dilation"_a = 1, "The transposed 2-D convolution; weight is [C_in, C_out / groups, KH, KW].");
  m.def(
      "avg_pool1d",
      [](const Tensor& x, int64_t kernel, std::optional<int64_t> stride, int64_t padding) {
        return xlite::avg_pool1d(x, kernel, stride.value_or(-1), padding);
      },
      "input"_a, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0, "The mean of each window of [N, C, L].");
  m.def(
      "max_pool1d",
      [](const Tensor& x, int64_t kernel, std::optional<int64_t> stride, int64_t padding) {
        return xlite::max_pool1d(x, kernel, stride.value_or(-1), padding);
      },
      "input"_a, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0,
      "The largest value of each window of [N, C, L].");
  m.def(
      "adaptive_avg_pool2d",
      [](const Tensor& x, nb::handle size) { return xlite::adaptive_avg_pool2d(x, ints_or_one(size)); }, "input"_a,
      "output_size"_a, "Averages over the windows that give an output of output_size.");
  m.def(
      "interpolate",
      [](const Tensor& x, nb::handle size, const std::string& mode, std::optional<bool> align_corners) {
        return xlite::interpolate(x, ints_or_one(size), mode, align_corners.value_or(false));
      },
      "input"_a, "size"_a, "mode"_a = "nearest", "align_corners"_a = nb::none(),
      "Resizes [N, C, H, W] to size by 'nearest' or 'bilinear' sampling.");

  m.def(
      "randint",
      [](nb::args args, nb::handle size, nb::handle dtype, nb::handle device) {
        // torch's forms: randint(high, size) and randint(low, high, size), size also by keyword.
        std::vector<int64_t> bounds;
        nb::handle shape = size;
        for (nb::handle a : args) {
          if (PyLong_Check(a.ptr()))
            bounds.push_back(nb::cast<int64_t>(a));
          else
            shape = a;
        }
        if (bounds.empty() || bounds.size() > 2 || shape.is_none())
          throw Error("[randint] takes (high, size) or (low, high, size)");
        const int64_t lo = bounds.size() == 2 ? bounds[0] : 0, hi = bounds.back();
        return xlite::randint(lo, hi, to_shape(shape), dtype.is_none() ? DType::i64 : to_dtype(dtype),
                              to_device(device));
      },
      "args"_a, nb::kw_only(), "size"_a = nb::none(), "dtype"_a = nb::none(), "device"_a = nb::none(),
      "Integers drawn uniformly from [low, high): randint(high, size) or randint(low, high, size).");
  m.def(
      "randperm",
      [](int64_t n, nb::handle dtype, nb::handle device) {
        return xlite::randperm(n, dtype.is_none() ? DType::i64 : to_dtype(dtype), to_device(device));
      },
      "n"_a, nb::kw_only(), "dtype"_a = nb::none(), "device"_a = nb::none(), "A random permutation of 0 .. n - 1.");
  m.def("bernoulli", &xlite::bernoulli, "input"_a, "1 with probability input, else 0.");
  m.def("multinomial", &xlite::multinomial, "input"_a, "num_samples"_a, "replacement"_a = false,
        "Indices drawn in proportion to the weights of each row.");
  m.def(
      "linspace",
      [](double start, double end, int64_t steps, nb::handle dtype, nb::handle device) {
        return xlite::linspace(start, end, steps, dtype.is_none() ? get_default_dtype() : to_dtype(dtype),
                               to_device(device));
      },
      "start"_a, "end"_a, "steps"_a, nb::kw_only(), "dtype"_a = nb::none(), "device"_a = nb::none(),
      "steps values from start to end inclusive, evenly spaced.");
  m.def(
      "logspace",
      [](double start, double end, int64_t steps, double base, nb::handle dtype, nb::handle device) {
        return xlite::logspace(start, end, steps, base, dtype.is_none() ? get_default_dtype() : to_dtype(dtype),
                               to_device(device));
      },
      "start"_a, "end"_a, "steps"_a, "base"_a = 10.0, nb::kw_only(), "dtype"_a = nb::none(), "device"_a = nb::none(),
      "base raised to steps evenly spaced exponents from start to end.");
}

}  // namespace xlite::python
