// NumPy and DLPack: tensors over other libraries' memory (zero-copy where the memory allows) and tensor
// memory handed to them. xlite's buffers are immutable, so NumPy sees them read-only, as with JAX.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>

#include <algorithm>
#include <iterator>
#include <memory>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;
namespace dl = nb::dlpack;

using AnyArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// Each xlite dtype with its DLPack type (lanes 1), both ways.
struct DlpackType {
  DType dtype;
  dl::dtype_code code;
  uint8_t bits;
};
constexpr DlpackType kDlpackTypes[] = {
    {DType::f32, dl::dtype_code::Float, 32}, {DType::f64, dl::dtype_code::Float, 64},
    {DType::f16, dl::dtype_code::Float, 16}, {DType::bf16, dl::dtype_code::Bfloat, 16},
    {DType::i32, dl::dtype_code::Int, 32},   {DType::i64, dl::dtype_code::Int, 64},
    {DType::u8, dl::dtype_code::UInt, 8},    {DType::bool_, dl::dtype_code::Bool, 8},
};

DType dtype_of_array(dl::dtype t) {
  for (const DlpackType& d : kDlpackTypes)
    if (t.lanes == 1 && static_cast<dl::dtype_code>(t.code) == d.code && t.bits == d.bits) return d.dtype;
  throw Error("[from_dlpack] arrays of DLPack type code " + std::to_string(t.code) + " with " + std::to_string(t.bits) +
              " bits have no xlite dtype (float16/32/64, bfloat16, int32/64, uint8, bool)");
}

dl::dtype dlpack_dtype(DType dtype) {
  const DlpackType* d = std::find_if(std::begin(kDlpackTypes), std::end(kDlpackTypes),
                                     [&](const DlpackType& t) { return t.dtype == dtype; });
  return {static_cast<uint8_t>(d->code), d->bits, 1};
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

// An array of `Framework` (NumPy, or nanobind's own, which speaks DLPack) over memory `owner` keeps alive.
template <class... Framework>
nb::object array_over(const void* data, const Shape& shape, dl::dtype as, nb::handle owner) {
  std::vector<size_t> extents(shape.begin(), shape.end());
  nb::ndarray<Framework...> array(const_cast<void*>(data), extents.size(), extents.data(), owner, nullptr, as);
  return nb::cast(array, nb::rv_policy::reference);
}

// The tensor's memory as an array of `Framework`; the array owns a reference to the tensor's buffer.
template <class... Framework>
nb::object host_array(const Tensor& x, dl::dtype as) {
  auto kept = std::make_unique<HostData>();
  {
    nb::gil_scoped_release unlocked;
    *kept = host_data(x);
  }
  nb::capsule owner(kept.get(), [](void* p) noexcept { delete static_cast<HostData*>(p); });
  const void* data = kept.release()->data;  // the capsule's now
  return array_over<Framework...>(data, x.shape(), as, owner);
}

// bf16 as the uint16 bits NumPy can hold.
dl::dtype numpy_dtype(DType dtype) {
  return dtype == DType::bf16 ? dl::dtype{static_cast<uint8_t>(dl::dtype_code::UInt), 16, 1} : dlpack_dtype(dtype);
}

}  // namespace

nb::object numpy_view(const void* data, const Shape& shape, DType dtype, nb::handle owner) {
  return array_over<nb::numpy, nb::ro>(data, shape, numpy_dtype(dtype), owner);
}

void bind_interop(nb::module_& m) {
  m.def("_from_array", &from_array, "array"_a, "device"_a = nb::none(), "copy"_a = true, "dtype"_a = nb::none(),
        "A tensor of a C-contiguous CPU array (NumPy, or anything with __dlpack__); copy=False shares its memory.");
  // bf16 goes to NumPy as uint16 bits: xlite/_tensor.py views them as ml_dtypes.bfloat16.
  m.def(
      "_numpy_view", [](const Tensor& x) { return host_array<nb::numpy, nb::ro>(x, numpy_dtype(x.dtype())); },
      "tensor"_a);
  // nanobind's array object, which speaks DLPack (__dlpack__, __dlpack_device__).
  m.def(
      "_dlpack_array", [](const Tensor& x) { return host_array<nb::array_api>(x, dlpack_dtype(x.dtype())); },
      "tensor"_a);
}

}  // namespace xlite::python
