// Python values turned into the C++ API's argument types.
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.h"

namespace xlite::python {

std::optional<Scalar> as_scalar(nb::handle value) {
  if (PyBool_Check(value.ptr())) return Scalar(value.ptr() == Py_True);
  if (PyLong_Check(value.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow)
      throw Error("[scalar] the integer " + std::string(nb::str(value).c_str()) + " does not fit in 64 bits");
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(value.ptr())) return Scalar(PyFloat_AsDouble(value.ptr()));
  if (nb::isinstance<Tensor>(value)) return std::nullopt;
  // NumPy scalars (np.float32(2), np.int64(3), np.bool_): their Python number, which keeps the kind.
  if (nb::hasattr(value, "dtype") && nb::hasattr(value, "item") && nb::hasattr(value, "ndim") &&
      nb::cast<int64_t>(value.attr("ndim")) == 0 && !nb::hasattr(value, "__setitem__"))
    return as_scalar(value.attr("item")());
  return std::nullopt;
}

DType to_dtype(nb::handle value) {
  if (nb::isinstance<DType>(value)) return nb::cast<DType>(value);
  // Python's own types, as PyTorch reads them: int is int64, float is float64.
  if (value.is(reinterpret_cast<PyObject*>(&PyBool_Type))) return DType::bool_;
  if (value.is(reinterpret_cast<PyObject*>(&PyLong_Type))) return DType::i64;
  if (value.is(reinterpret_cast<PyObject*>(&PyFloat_Type))) return DType::f64;
  if (nb::isinstance<nb::str>(value)) {
    std::string name = nb::cast<std::string>(value);
    if (name.rfind("xlite.", 0) == 0) name = name.substr(6);
    static const std::pair<const char*, DType> aliases[] = {
        {"float32", DType::f32}, {"float", DType::f32}, {"float64", DType::f64},   {"double", DType::f64},
        {"float16", DType::f16}, {"half", DType::f16},  {"bfloat16", DType::bf16}, {"int32", DType::i32},
        {"int", DType::i32},     {"int64", DType::i64}, {"long", DType::i64},      {"uint8", DType::u8},
        {"bool", DType::bool_},
    };
    for (const auto& [alias, dtype] : aliases)
      if (name == alias) return dtype;
    return dtype_from_name(name);
  }
  // NumPy dtypes and types (np.float32): by name.
  if (nb::hasattr(value, "name") && nb::hasattr(value, "itemsize")) return to_dtype(value.attr("name"));
  if (nb::hasattr(value, "__name__")) return to_dtype(value.attr("__name__"));
  throw Error("[dtype] " + std::string(nb::str(value).c_str()) + " is not a dtype");
}

Device to_device(nb::handle value) {
  if (value.is_none()) return xlite::device();
  if (nb::isinstance<Device>(value)) return nb::cast<Device>(value);
  if (PyLong_Check(value.ptr())) return xlite::device(nb::cast<int>(value));
  if (nb::isinstance<nb::str>(value)) {
    const std::string name = nb::cast<std::string>(value);
    if (name == "cpu") return xlite::device();
    if (name.rfind("cpu:", 0) == 0) {
      try {
        size_t used = 0;
        const int index = std::stoi(name.substr(4), &used);
        if (used == name.size() - 4) return xlite::device(index);
      } catch (const std::logic_error&) {
      }
    }
    throw Error("[device] unknown device '" + name + "' (expected 'cpu' or 'cpu:N')");
  }
  throw Error("[device] " + std::string(nb::str(value).c_str()) + " is not a device");
}

Shape to_shape(nb::handle value) {
  if (PyLong_Check(value.ptr())) return {nb::cast<int64_t>(value)};
  Shape shape;
  try {
    for (nb::handle item : nb::iter(value)) {
      if (!PyLong_Check(item.ptr()) && !nb::hasattr(item, "__index__"))
        throw Error("[shape] " + std::string(nb::str(value).c_str()) + " is not a sequence of ints");
      shape.push_back(nb::cast<int64_t>(item.attr("__index__")()));
    }
  } catch (const nb::python_error&) {
    throw Error("[shape] " + std::string(nb::str(value).c_str()) + " is not a sequence of ints");
  }
  return shape;
}

Shape shape_from_args(const nb::args& args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return to_shape(args[0]);
  return to_shape(args);
}

std::vector<int64_t> to_dims(nb::handle value) {
  if (value.is_none()) return {};
  return to_shape(value);
}

}  // namespace xlite::python
