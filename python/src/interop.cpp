// NumPy and DLPack: tensors over other libraries' memory (zero-copy where the memory allows) and tensor
// memory handed to them. xlite's buffers are immutable, so NumPy sees them read-only, as with JAX.
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>

#include <memory>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;
namespace dl = nb::dlpack;

using AnyArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

DType dtype_of_array(dl::dtype t) {
  const auto code = static_cast<dl::dtype_code>(t.code);
  if (t.lanes == 1) {
    if (code == dl::dtype_code::Float && t.bits == 32) return DType::f32;
    if (code == dl::dtype_code::Float && t.bits == 64) return DType::f64;
    if (code == dl::dtype_code::Float && t.bits == 16) return DType::f16;
    if (code == dl::dtype_code::Bfloat && t.bits == 16) return DType::bf16;
    if (code == dl::dtype_code::Int && t.bits == 32) return DType::i32;
    if (code == dl::dtype_code::Int && t.bits == 64) return DType::i64;
    if (code == dl::dtype_code::UInt && t.bits == 8) return DType::u8;
    if (code == dl::dtype_code::Bool && t.bits == 8) return DType::bool_;
  }
  throw Error("[from_dlpack] arrays of DLPack type code " + std::to_string(t.code) + " with " + std::to_string(t.bits) +
              " bits have no xlite dtype (float16/32/64, bfloat16, int32/64, uint8, bool)");
}

dl::dtype dlpack_dtype(DType d) {
  switch (d) {
    case DType::f32: return nb::dtype<float>();
    case DType::f64: return nb::dtype<double>();
    case DType::f16: return {static_cast<uint8_t>(dl::dtype_code::Float), 16, 1};
    case DType::bf16: return {static_cast<uint8_t>(dl::dtype_code::Bfloat), 16, 1};
    case DType::i32: return nb::dtype<int32_t>();
    case DType::i64: return nb::dtype<int64_t>();
    case DType::u8: return nb::dtype<uint8_t>();
    case DType::bool_: return nb::dtype<bool>();
  }
  return nb::dtype<float>();
}

bool interpreter_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// copy = false: the tensor reads the array's memory, which the array's owner keeps alive until xlite lets go.
// as_dtype: the elements' bits taken as another dtype of the same size (NumPy has no bfloat16: uint16 bits).
Tensor from_array(const AnyArray& array, nb::handle device, bool copy, std::optional<DType> as_dtype) {
  Shape shape;
  for (size_t i = 0; i < array.ndim(); ++i) shape.push_back(static_cast<int64_t>(array.shape(i)));
  const DType dtype = as_dtype ? *as_dtype : dtype_of_array(array.dtype());
  if (static_cast<int64_t>(array.itemsize()) != dtype_size(dtype))
    throw Error("[from_dlpack] elements of " + std::to_string(array.itemsize()) + " bytes cannot be taken as " +
                std::string(dtype_name(dtype)));
  const Device on = to_device(device);
  if (copy) return from_bytes(array.data(), shape, dtype, on);
  auto* kept = new AnyArray(array);
  auto release = [kept] {
    if (!interpreter_alive()) return;  // at exit: Python frees the array itself
    if (PyGILState_Check()) {
      delete kept;
      return;
    }
    // The last reader let go on a thread without the GIL (a program finishing): the reference is dropped by
    // the interpreter's next pending call rather than by waiting for the GIL here, inside the runtime.
    if (Py_AddPendingCall(
            [](void* p) -> int {
              delete static_cast<AnyArray*>(p);
              return 0;
            },
            kept) != 0) {
      nb::gil_scoped_acquire locked;  // the queue is full: wait for the GIL after all
      delete kept;
    }
  };
  return from_blob(const_cast<void*>(array.data()), shape, dtype, release, on);  // release runs once, whatever happens
}

// The tensor's memory as an array of `Framework` (NumPy, or nanobind's own, which speaks DLPack). The array
// owns a reference to the tensor's buffer.
template <class... Framework>
nb::object host_array(const Tensor& x, dl::dtype as) {
  auto* kept = new HostData();
  {
    nb::gil_scoped_release unlocked;
    try {
      *kept = host_data(x);
    } catch (...) {
      delete kept;
      throw;
    }
  }
  nb::capsule owner(kept, [](void* p) noexcept { delete static_cast<HostData*>(p); });
  std::vector<size_t> shape(x.shape().begin(), x.shape().end());
  nb::ndarray<Framework...> array(const_cast<void*>(kept->data), shape.size(), shape.data(), owner, nullptr, as);
  return nb::cast(array, nb::rv_policy::reference);
}

}  // namespace

void bind_interop(nb::module_& m) {
  m.def("_from_array", &from_array, "array"_a, "device"_a = nb::none(), "copy"_a = true, "dtype"_a = nb::none(),
        "A tensor of a C-contiguous CPU array (NumPy, or anything with __dlpack__); copy=False shares its memory.");
  // bf16 goes to NumPy as uint16 bits: xlite/_interop.py views them as ml_dtypes.bfloat16.
  m.def(
      "_numpy_view",
      [](const Tensor& x) {
        const dl::dtype bits16{static_cast<uint8_t>(dl::dtype_code::UInt), 16, 1};
        return host_array<nb::numpy, nb::ro>(x, x.dtype() == DType::bf16 ? bits16 : dlpack_dtype(x.dtype()));
      },
      "tensor"_a);
  // nanobind's array object, which speaks DLPack (__dlpack__, __dlpack_device__).
  m.def(
      "_dlpack_array", [](const Tensor& x) { return host_array<nb::array_api>(x, dlpack_dtype(x.dtype())); },
      "tensor"_a);
}

}  // namespace xlite::python
