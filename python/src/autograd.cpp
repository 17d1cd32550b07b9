// Functional autograd over Python callables: grad and value_and_grad (xlite/_autograd.py adds argnums), and
// custom_vjp with a Python forward and backward. Python exceptions raised in them propagate with their
// traceback through the C++ code and leave it usable.
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;
}

void bind_autograd(nb::module_& m) {
  m.def("_value_and_grad", &xlite::value_and_grad, "fn"_a, "inputs"_a,
        "fn(inputs) -> scalar tensor; returns the value and one gradient per input.");
  m.def(
      "_custom_vjp",
      [](CustomForward forward, CustomBackward backward) {
        return custom_vjp(std::move(forward), std::move(backward));
      },
      "forward"_a, "backward"_a);
  m.def("_checkpoint", &xlite::checkpoint, "fn"_a, "inputs"_a,
        "fn(inputs) without keeping its activations: backward runs fn again (gradient checkpointing).");
  // The undefined tensor a custom backward returns for an input without a gradient (None in Python).
  m.def("_undefined_tensor", [] { return Tensor(); });
  m.def("_is_defined", [](const Tensor& t) { return t.defined(); }, "tensor"_a);
}

}  // namespace xlite::python
