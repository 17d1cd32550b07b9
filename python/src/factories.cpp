// Creating tensors: constants, ranges and random draws with PyTorch's dtype= and device= keywords.
#include <nanobind/stl/optional.h>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;

DType dtype_or(nb::handle dtype, DType otherwise) { return dtype.is_none() ? otherwise : to_dtype(dtype); }

// PyTorch's default for full(): the fill value's kind (bool, int64 or the default float).
DType dtype_of_value(Scalar value) {
  switch (value.kind()) {
    case Scalar::Kind::boolean: return DType::bool_;
    case Scalar::Kind::integer: return DType::i64;
    case Scalar::Kind::floating: return get_default_dtype();
  }
  return DType::f32;
}

Tensor grad_if(Tensor t, bool requires_grad) {
  if (requires_grad) t.requires_grad_(true);
  return t;
}

template <class Make>
auto sized(Make make) {
  return [make](nb::args size, nb::handle dtype, nb::handle device, bool requires_grad) {
    return grad_if(make(shape_from_args(size), dtype_or(dtype, get_default_dtype()), to_device(device)), requires_grad);
  };
}

}  // namespace

void bind_factories(nb::module_& m) {
#define XLITE_SIZED(name, doc)                                                                            \
  m.def(#name, sized([](const Shape& s, DType d, Device on) { return xlite::name(s, d, on); }), "size"_a, \
        nb::kw_only(), "dtype"_a = nb::none(), "device"_a = nb::none(), "requires_grad"_a = false, doc);
  XLITE_SIZED(zeros, "A tensor of zeros (lazy).")
  XLITE_SIZED(ones, "A tensor of ones (lazy).")
  XLITE_SIZED(rand, "Uniform values in [0, 1) from the Philox generator (lazy; a new draw never recompiles).")
  XLITE_SIZED(randn, "Standard normal values from the Philox generator.")
#undef XLITE_SIZED
  m.def(
      "full",
      [](nb::handle size, Scalar value, nb::handle dtype, nb::handle device, bool requires_grad) {
        return grad_if(xlite::full(to_shape(size), value, dtype_or(dtype, dtype_of_value(value)), to_device(device)),
                       requires_grad);
      },
      "size"_a, "fill_value"_a, nb::kw_only(), "dtype"_a = nb::none(), "device"_a = nb::none(),
      "requires_grad"_a = false,
      "A tensor filled with fill_value; its dtype defaults to the value's kind (bool, int64, float32).");
  m.def(
      "zeros_like",
      [](const Tensor& x, nb::handle dtype) {
        return dtype.is_none() ? xlite::zeros_like(x) : xlite::zeros(x.shape(), to_dtype(dtype), x.device());
      },
      "input"_a, nb::kw_only(), "dtype"_a = nb::none(), "Zeros of input's shape, dtype (unless given) and device.");
  m.def(
      "ones_like",
      [](const Tensor& x, nb::handle dtype) {
        return dtype.is_none() ? xlite::ones_like(x) : xlite::ones(x.shape(), to_dtype(dtype), x.device());
      },
      "input"_a, nb::kw_only(), "dtype"_a = nb::none(), "Ones of input's shape, dtype (unless given) and device.");
  m.def(
      "full_like",
      [](const Tensor& x, Scalar value, nb::handle dtype) {
        return dtype.is_none() ? xlite::full_like(x, value)
                               : xlite::full(x.shape(), value, to_dtype(dtype), x.device());
      },
      "input"_a, "fill_value"_a, nb::kw_only(), "dtype"_a = nb::none(),
      "fill_value in input's shape, dtype (unless given) and device.");
  m.def("rand_like", &xlite::rand_like, "input"_a, "Uniform values in [0, 1) of input's shape, dtype and device.");
  m.def("randn_like", &xlite::randn_like, "input"_a, "Standard normal values of input's shape, dtype and device.");
  m.def(
      "arange",
      [](Scalar start, std::optional<Scalar> end, Scalar step, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        Tensor r = end ? xlite::arange(start, *end, step, to_device(device)) : xlite::arange(start, to_device(device));
        if (!dtype.is_none()) r = r.to(to_dtype(dtype));
        return grad_if(r, requires_grad);
      },
      "start"_a, "end"_a = nb::none(), "step"_a = 1, nb::kw_only(), "dtype"_a = nb::none(), "device"_a = nb::none(),
      "requires_grad"_a = false, "[start, end) by step; int64 when all are integers, else float32 (as PyTorch).");
  m.def(
      "eye",
      [](int64_t n, std::optional<int64_t> cols, nb::handle dtype, nb::handle device, bool requires_grad) {
        return grad_if(xlite::eye(n, cols.value_or(-1), dtype_or(dtype, get_default_dtype()), to_device(device)),
                       requires_grad);
      },
      "n"_a, "m"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(), "device"_a = nb::none(),
      "requires_grad"_a = false, "The identity matrix, n x m (m defaults to n).");
  m.def("manual_seed", &xlite::manual_seed, "seed"_a, "Seeds the random generator.");
  m.def(
      "set_default_dtype", [](nb::handle dtype) { xlite::set_default_dtype(to_dtype(dtype)); }, "d"_a,
      "The floating dtype of Python floats, float factories and float results of integer ops: float32 or float64.");
  m.def("get_default_dtype", &xlite::get_default_dtype, "The default floating dtype.");
  m.def("version", &xlite::version, "The version of the C++ library.");
}

}  // namespace xlite::python
