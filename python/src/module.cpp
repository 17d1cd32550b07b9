// The module _xlite: xlite's C++ API for Python. The package xlite (python/xlite) re-exports it with the
// parts that are plain Python (indexing, nn.Module, context managers).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;

void bind_errors(nb::module_& m) {
  static nb::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static nb::exception<InternalError> internal(m, "InternalError", error.ptr());
}

}  // namespace

void bind_types(nb::module_& m) {
  bind_errors(m);
  nb::enum_<DType>(m, "dtype", "An element type. f16 and bf16 are stored in 16 bits and computed in f32.")
      .value("float32", DType::f32)
      .value("float64", DType::f64)
      .value("float16", DType::f16)
      .value("bfloat16", DType::bf16)
      .value("int32", DType::i32)
      .value("int64", DType::i64)
      .value("uint8", DType::u8)
      .value("bool", DType::bool_)
      .def_prop_ro("itemsize", [](DType d) { return dtype_size(d); })
      .def_prop_ro("is_floating_point", [](DType d) { return is_floating(d); })
      .def("__repr__", [](DType d) { return "xlite." + std::string(nb::str(nb::cast(d).attr("name")).c_str()); })
      .def("__str__", [](DType d) { return "xlite." + std::string(nb::str(nb::cast(d).attr("name")).c_str()); });

  nb::class_<Device>(m, "Device", "Where a tensor's data lives and its ops run.")
      .def_prop_ro("type", [](const Device&) { return "cpu"; })
      .def_ro("index", &Device::index)
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) { return "device(type='cpu', index=" + std::to_string(d.index) + ")"; })
      .def(
          "__eq__", [](const Device& a, const Device& b) { return a == b; }, nb::is_operator())
      .def("__hash__", [](const Device& d) { return d.index; });
  m.def(
      "device", [](nb::handle index) { return to_device(index); }, "index"_a = nb::none(),
      "A device: the default one, an index, or a name ('cpu', 'cpu:1').");
  m.def("_dtype", &to_dtype, "value"_a, "A dtype argument read as every function of the module reads one.");
  m.def("devices", &xlite::devices, "Every device of the default kind.");
  m.def("device_count", &xlite::device_count,
        "How many devices of the default kind there are (XLITE_NUM_CPU_DEVICES).");
}

NB_MODULE(_xlite, m) {
  m.doc() = "xlite: lazy tensors compiled into fused native code.";
  // Tensors and modules that module globals hold until the interpreter exits are normal Python, not leaks.
  nb::set_leak_warnings(false);
  // A thread that waits for another thread's program gives up the GIL meanwhile: that program may run a kernel
  // written in Python, or release memory borrowed from NumPy.
  set_blocking_wait_hook([](void (*wait)(void*), void* context) {
    if (PyGILState_Check()) {
      nb::gil_scoped_release unlocked;
      wait(context);
    } else {
      wait(context);
    }
  });
  bind_types(m);
  bind_tensor(m);
  bind_ops(m);
  bind_ops_breadth(m);
  bind_factories(m);
  bind_interop(m);
  bind_modes(m);
  bind_autograd(m);
  bind_nn(m);
  bind_tools(m);
  bind_kernels(m);
}

}  // namespace xlite::python
