#pragma once
// Python numbers as xlite::Scalar arguments: bool, int and float keep their kind, so that a Python float
// does not widen an f16 tensor (PyTorch's rule). NumPy scalars count as the Python number they hold.
#include <nanobind/nanobind.h>

#include "xlite/scalar.h"

namespace xlite::python {
std::optional<Scalar> as_scalar(nanobind::handle value);
}

namespace nanobind::detail {
template <>
struct type_caster<xlite::Scalar> {
  using Value = xlite::Scalar;
  static constexpr auto Name = const_name("float | int | bool");
  template <typename T>
  using Cast = movable_cast_t<T>;
  template <typename T>
  static constexpr bool can_cast() {
    return true;
  }
  explicit operator Value*() { return &value; }
  explicit operator Value&() { return value; }
  explicit operator Value&&() { return std::move(value); }
  Value value{int64_t{0}};

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    try {
      std::optional<xlite::Scalar> s = xlite::python::as_scalar(src);
      if (!s) return false;
      value = *s;
      return true;
    } catch (...) {
      PyErr_Clear();
      return false;
    }
  }
  static handle from_cpp(const xlite::Scalar& s, rv_policy, cleanup_list*) noexcept {
    switch (s.kind()) {
      case xlite::Scalar::Kind::boolean: return PyBool_FromLong(s.to_int() != 0);
      case xlite::Scalar::Kind::integer: return PyLong_FromLongLong(s.to_int());
      case xlite::Scalar::Kind::floating: return PyFloat_FromDouble(s.to_double());
    }
    return none().release();
  }
};
}  // namespace nanobind::detail
