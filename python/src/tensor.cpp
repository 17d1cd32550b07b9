// The Tensor class: its attributes, value reads, autograd, in-place ops and Python's operators. Method forms
// of the ops are attached in xlite/_tensor.py from the functions of bind_ops.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;

nb::tuple shape_tuple(const Shape& shape) {
  nb::list items;
  for (int64_t d : shape) items.append(d);
  return nb::tuple(items);
}

// A value read: the sync it needs runs without the GIL, so that other Python threads go on.
template <class T>
std::vector<T> values_of(const Tensor& x) {
  nb::gil_scoped_release unlocked;
  return x.to_vector<T>();
}

nb::object python_number(const Tensor& x, int64_t i, const std::vector<double>& f, const std::vector<int64_t>& n) {
  if (is_floating(x.dtype())) return nb::float_(f[i]);
  if (x.dtype() == DType::bool_) return nb::bool_(n[i] != 0);
  return nb::int_(n[i]);
}

nb::object nest(const Tensor& x, const std::vector<double>& f, const std::vector<int64_t>& n, size_t dim,
                int64_t& offset) {
  if (dim == x.shape().size()) return python_number(x, offset++, f, n);
  nb::list items;
  for (int64_t i = 0; i < x.shape()[dim]; ++i) items.append(nest(x, f, n, dim + 1, offset));
  return items;
}

// The values as Python numbers, nested by the shape: one value read, without the GIL.
nb::object tolist(const Tensor& x) {
  std::vector<double> f;
  std::vector<int64_t> n;
  if (is_floating(x.dtype()))
    f = values_of<double>(x);
  else
    n = values_of<int64_t>(x);
  int64_t offset = 0;
  return nest(x, f, n, 0, offset);
}

nb::object item(const Tensor& x) {
  if (x.numel() != 1)
    throw Error("[item] a tensor with " + std::to_string(x.numel()) + " elements cannot be converted to a number");
  nb::object nested = tolist(x);
  while (nb::isinstance<nb::list>(nested)) nested = nb::borrow(nested[0]);  // [[v]] -> v
  return nested;
}

bool truth(const Tensor& x) {
  if (x.numel() != 1)
    throw Error("[bool] the truth value of a tensor with " + std::to_string(x.numel()) +
                " elements is ambiguous: use any() or all()");
  nb::gil_scoped_release unlocked;
  return x.item<bool>();
}

// to(dtype), to(device), to(device, dtype), with strings for either.
Tensor to(const Tensor& x, nb::handle first, nb::handle second, nb::handle dtype, nb::handle device) {
  Tensor out = x;
  auto apply = [&](nb::handle arg) {
    if (arg.is_none()) return;
    bool is_device = nb::isinstance<Device>(arg);
    if (nb::isinstance<nb::str>(arg)) {
      const std::string name = nb::cast<std::string>(arg);
      is_device = name == "cpu" || name.rfind("cpu:", 0) == 0;
    }
    if (is_device) {
      Device d = to_device(arg);
      if (d != out.device()) out = out.to(d);
    } else {
      DType t = to_dtype(arg);
      if (t != out.dtype()) out = out.to(t);
    }
  };
  apply(first);
  apply(second);
  apply(device);
  apply(dtype);
  return out;
}

// &, |, ^ and ~ are logical on bool tensors, as in PyTorch. On integers PyTorch makes them bitwise, which
// xlite has no op for yet: refused rather than given another meaning.
void require_bools(const char* op, const Tensor& a) {
  if (a.dtype() != DType::bool_)
    throw Error(std::string("[") + op + "] is logical on bool tensors only; bitwise ops on " +
                std::string(dtype_name(a.dtype())) +
                " are not supported yet (use logical_and/or/xor/not for truth values)");
}

template <Tensor (*Fn)(const Tensor&, const Tensor&)>
struct LogicalOperator {
  const char* op;
  Tensor operator()(const Tensor& a, const Tensor& b) const {
    require_bools(op, a);
    require_bools(op, b);
    return Fn(a, b);
  }
  Tensor operator()(const Tensor& a, Scalar b) const {
    require_bools(op, a);
    if (b.kind() != Scalar::Kind::boolean) throw Error(std::string("[") + op + "] takes bools, not numbers");
    return Fn(a, xlite::full({}, b, DType::bool_, a.device()));
  }
  Tensor operator()(Scalar a, const Tensor& b) const { return (*this)(b, a); }
};
template <Tensor (*Fn)(const Tensor&, const Tensor&)>
LogicalOperator<Fn> logical(const char* op) {
  return {op};
}

// The operand as a tensor when it is a NumPy array (or another object with __array__ that is not a tensor).
template <class Op>
nb::object with_array(nb::handle other, Op op) {
  if (nb::isinstance<Tensor>(other) || !nb::hasattr(other, "__array__")) return nb::borrow(Py_NotImplemented);
  Tensor t = nb::cast<Tensor>(nb::module_::import_("xlite._creation").attr("tensor")(other));
  return nb::cast(op(t));
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor> t(m, "Tensor",
                       "A handle to a value: device data, or a pending graph node that runs at the next sync.\n"
                       "Copies of a handle are aliases: an in-place op rebinds the value every alias sees.");
  t.def(nb::init<const Tensor&>(), "data"_a, "Another handle to the same tensor (an alias).")
      .def_prop_ro(
          "shape", [](const Tensor& x) { return shape_tuple(x.shape()); }, "The shape as a tuple of ints.")
      .def(
          "size",
          [](const Tensor& x, std::optional<int64_t> dim) -> nb::object {
            if (dim) return nb::int_(x.size(*dim));
            return shape_tuple(x.shape());
          },
          "dim"_a = nb::none(), "The shape, or the length of one dim (negative dims count from the end).")
      .def_prop_ro("dtype", &Tensor::dtype, "The element type.")
      .def_prop_ro("device", &Tensor::device, "Where the data lives and ops run.")
      .def_prop_ro("ndim", &Tensor::dim, "The number of dims.")
      .def("dim", &Tensor::dim, "The number of dims.")
      .def("numel", &Tensor::numel, "The number of elements.")
      .def_prop_ro("is_pending", &Tensor::is_pending, "True while the value is a graph node that has not run.")
      .def("item", &item, "The value of a one-element tensor as a Python number (a value read: it syncs).")
      .def("tolist", &tolist, "The values as nested Python lists (a value read: it syncs).")
      .def("__bool__", &truth)
      .def("__float__", [](const Tensor& x) { return nb::cast<double>(item(x)); })
      .def("__int__", [](const Tensor& x) { return nb::cast<int64_t>(nb::int_(item(x))); })
      .def("__index__",
           [](const Tensor& x) {
             if (!is_integral(x.dtype()) && x.dtype() != DType::bool_)
               throw nb::type_error("only integer tensors of one element can be used as an index");
             return nb::cast<int64_t>(item(x));
           })
      .def("__len__",
           [](const Tensor& x) {
             if (x.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
             return x.shape()[0];
           })
      .def("__hash__", [](const Tensor& x) { return reinterpret_cast<intptr_t>(x.impl().get()); })
      .def(
          "is_same", [](const Tensor& a, const Tensor& b) { return a.impl() == b.impl(); }, "other"_a,
          "True when both handles alias one tensor.")
      .def("to", &to, "first"_a = nb::none(), "second"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(),
           "device"_a = nb::none(), "The value converted to a dtype and/or moved to a device (lazy).")
      // Autograd.
      .def_prop_rw(
          "requires_grad", &Tensor::requires_grad, [](Tensor& x, bool on) { x.requires_grad_(on); },
          "Whether gradients flow to this tensor.")
      .def(
          "requires_grad_", [](Tensor& x, bool on) -> Tensor& { return x.requires_grad_(on); },
          "requires_grad"_a = true, nb::rv_policy::reference_internal,
          "Marks a leaf whose gradient backward() accumulates into .grad; returns self.")
      .def_prop_rw(
          "grad",
          [](const Tensor& x) -> std::optional<Tensor> {
            Tensor g = x.grad();
            if (!g.defined()) return std::nullopt;
            return g;
          },
          [](Tensor& x, nb::handle value) {
            // backward() makes every gradient; assigning None drops one, so the next backward starts afresh.
            if (!value.is_none()) throw Error("[grad] only None can be assigned to .grad");
            x.reset_grad();
          },
          nb::for_setter(nb::arg("value").none()),
          "The accumulated gradient, None before the first backward() or after zero_grad().")
      .def(
          "backward", [](const Tensor& x, std::optional<Tensor> gradient) { x.backward(gradient.value_or(Tensor())); },
          "gradient"_a = nb::none(),
          "Accumulates d(self)/d(leaf) * gradient into every leaf's .grad; gradient defaults to 1 for a scalar.")
      .def("detach", &Tensor::detach, "A view of the same storage, cut off from the graph.")
      .def_prop_rw(
          "data", [](const Tensor& x) { return x.detach(); }, [](Tensor& x, const Tensor& v) { x.set_data(v); },
          "The value cut off from the graph (a view); assigning replaces it, of any shape, dtype and device.")
      .def("is_contiguous", &Tensor::is_contiguous,
           "Whether the elements sit in row-major order in storage (a transposed or strided view's do not).")
      .def(
          "contiguous", [](const Tensor& x, nb::handle) { return x.contiguous(); }, "memory_format"_a = nb::none(),
          "This tensor when it is contiguous, else a contiguous copy.")
      // In-place ops rebind this tensor (and its aliases) and return it.
      .def("add_", nb::overload_cast<const Tensor&>(&Tensor::add_), "other"_a, nb::rv_policy::reference_internal)
      .def("add_", nb::overload_cast<Scalar>(&Tensor::add_), "other"_a, nb::rv_policy::reference_internal)
      .def("sub_", nb::overload_cast<const Tensor&>(&Tensor::sub_), "other"_a, nb::rv_policy::reference_internal)
      .def("sub_", nb::overload_cast<Scalar>(&Tensor::sub_), "other"_a, nb::rv_policy::reference_internal)
      .def("mul_", nb::overload_cast<const Tensor&>(&Tensor::mul_), "other"_a, nb::rv_policy::reference_internal)
      .def("mul_", nb::overload_cast<Scalar>(&Tensor::mul_), "other"_a, nb::rv_policy::reference_internal)
      .def("div_", nb::overload_cast<const Tensor&>(&Tensor::div_), "other"_a, nb::rv_policy::reference_internal)
      .def("div_", nb::overload_cast<Scalar>(&Tensor::div_), "other"_a, nb::rv_policy::reference_internal)
      .def("copy_", &Tensor::copy_, "src"_a, nb::rv_policy::reference_internal,
           "Copies src (broadcast, converted to this dtype) into this tensor.")
      .def("zero_", &Tensor::zero_, nb::rv_policy::reference_internal)
      .def("fill_", &Tensor::fill_, "value"_a, nb::rv_policy::reference_internal)
      .def(
          "fill_", [](Tensor& x, const Tensor& v) -> Tensor& { return x.copy_(v); }, "value"_a,
          nb::rv_policy::reference_internal)
      .def("__iadd__", nb::overload_cast<const Tensor&>(&Tensor::add_), nb::rv_policy::reference_internal)
      .def("__iadd__", nb::overload_cast<Scalar>(&Tensor::add_), nb::rv_policy::reference_internal)
      .def("__isub__", nb::overload_cast<const Tensor&>(&Tensor::sub_), nb::rv_policy::reference_internal)
      .def("__isub__", nb::overload_cast<Scalar>(&Tensor::sub_), nb::rv_policy::reference_internal)
      .def("__imul__", nb::overload_cast<const Tensor&>(&Tensor::mul_), nb::rv_policy::reference_internal)
      .def("__imul__", nb::overload_cast<Scalar>(&Tensor::mul_), nb::rv_policy::reference_internal)
      .def("__itruediv__", nb::overload_cast<const Tensor&>(&Tensor::div_), nb::rv_policy::reference_internal)
      .def("__itruediv__", nb::overload_cast<Scalar>(&Tensor::div_), nb::rv_policy::reference_internal)
      // Python's operators. Comparisons give bool tensors, as in PyTorch and NumPy.
      .def("__neg__", [](const Tensor& a) { return -a; })
      .def("__abs__", [](const Tensor& a) { return xlite::abs(a); })
      .def("__invert__",
           [](const Tensor& a) {
             require_bools("invert", a);
             return xlite::logical_not(a);
           })
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return xlite::matmul(a, b); })
      .def("__rmatmul__", [](const Tensor& a, const Tensor& b) { return xlite::matmul(b, a); });

// An operator with a tensor or a number on the right; last, a NumPy array on the right becomes a tensor (a copy),
// as it does in PyTorch, and anything else is NotImplemented, so that Python tries the other operand.
#define XLITE_BIND_FORWARD(py, fn)                                                                                \
  t.def(                                                                                                          \
       "__" py "__", [](const Tensor& a, const Tensor& b) { return fn(a, b); }, nb::is_operator())                \
      .def(                                                                                                       \
          "__" py "__", [](const Tensor& a, Scalar b) { return fn(a, b); }, nb::is_operator())                    \
      .def(                                                                                                       \
          "__" py "__",                                                                                           \
          [](const Tensor& a, nb::handle b) { return with_array(b, [&](const Tensor& t) { return fn(a, t); }); }, \
          nb::is_operator())
// The same with the tensor on the right (2 + t, array + t).
#define XLITE_BIND_BINARY(py, fn)                                                                                 \
  XLITE_BIND_FORWARD(py, fn);                                                                                     \
  t.def(                                                                                                          \
       "__r" py "__", [](const Tensor& a, Scalar b) { return fn(b, a); }, nb::is_operator())                      \
      .def(                                                                                                       \
          "__r" py "__",                                                                                          \
          [](const Tensor& a, nb::handle b) { return with_array(b, [&](const Tensor& t) { return fn(t, a); }); }, \
          nb::is_operator())
  XLITE_BIND_BINARY("add", xlite::add);
  XLITE_BIND_BINARY("sub", xlite::sub);
  XLITE_BIND_BINARY("mul", xlite::mul);
  XLITE_BIND_BINARY("truediv", xlite::div);
  XLITE_BIND_BINARY("pow", xlite::pow);
  XLITE_BIND_BINARY("mod", xlite::remainder);
  XLITE_BIND_BINARY("and", logical<xlite::logical_and>("and"));
  XLITE_BIND_BINARY("or", logical<xlite::logical_or>("or"));
  XLITE_BIND_BINARY("xor", logical<xlite::logical_xor>("xor"));
#undef XLITE_BIND_BINARY
  XLITE_BIND_FORWARD("eq", xlite::eq);
  XLITE_BIND_FORWARD("ne", xlite::ne);
  XLITE_BIND_FORWARD("lt", xlite::lt);
  XLITE_BIND_FORWARD("le", xlite::le);
  XLITE_BIND_FORWARD("gt", xlite::gt);
  XLITE_BIND_FORWARD("ge", xlite::ge);
#undef XLITE_BIND_FORWARD
  // NumPy must not take `ndarray + tensor` over (it would read the tensor and return an array): with a higher
  // priority than arrays it defers to the tensor's reflected operators, as it does for PyTorch's tensors.
  // NumPy's own functions (np.add(t, 1)) still take tensors, through __array__.
  t.attr("__array_priority__") = 1000;
}

}  // namespace xlite::python
