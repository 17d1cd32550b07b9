#pragma once
// The Python module _xlite: one bind_* function per part of the public C++ API (include/xlite), and the
// conversions from Python values they share. The module adds no semantics of its own: each function calls
// the C++ function of the same name.
#include <nanobind/nanobind.h>

#include <optional>
#include <vector>

#include "scalar_caster.h"
#include "xlite/xlite.h"

namespace xlite::python {

namespace nb = nanobind;

void bind_types(nb::module_& m);        // dtype, device, Error
void bind_tensor(nb::module_& m);       // the Tensor class, its operators and methods
void bind_ops(nb::module_& m);          // every op of xlite/ops.h as a function
void bind_ops_breadth(nb::module_& m);  // the wider op set: scans, sorting, products, resampling, draws
void bind_factories(nb::module_& m);    // zeros, arange, rand, ... and tensors from host data
void bind_interop(nb::module_& m);      // NumPy and DLPack, both ways
void bind_modes(nb::module_& m);        // sync, eager mode, grad mode, compile(fn)
void bind_autograd(nb::module_& m);     // grad, value_and_grad, custom_vjp
void bind_nn(nb::module_& m);           // the C++ modules, losses, optimizers
void bind_tools(nb::module_& m);        // save/load, metrics, debug, memory
void bind_kernels(nb::module_& m);      // custom kernels: the built-in ones and kernels written in Python

// Python numbers become Scalar arguments through as_scalar (scalar_caster.h).
// A dtype argument: an xlite dtype, its name ("float32", "f32", "bool"), a NumPy dtype, or Python's int, float
// and bool (int64, float64 and bool, as PyTorch reads them).
DType to_dtype(nb::handle value);
// A device argument: None (the default device), a Device, "cpu", "cpu:1" or an index.
Device to_device(nb::handle value);
// A shape given as a sequence of ints or as ints spread over the arguments (x.reshape(2, 3)).
Shape to_shape(nb::handle value);
Shape shape_from_args(const nb::args& args);
// A list of dims: one int or a sequence; None is every dim.
std::vector<int64_t> to_dims(nb::handle value);
// The NumPy array over a buffer of `dtype` elements: bf16, which NumPy lacks, as its uint16 bits (the Python
// layer views them as ml_dtypes.bfloat16). `owner` keeps the memory alive; read-only.
nb::object numpy_view(const void* data, const Shape& shape, DType dtype, nb::handle owner);

}  // namespace xlite::python
