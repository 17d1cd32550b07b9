"""Tensors from Python and NumPy data, and from any array that speaks DLPack."""
import numpy as np

from . import _dtypes, _xlite

_numpy_names = {
    "float32": _dtypes.float32, "float64": _dtypes.float64, "float16": _dtypes.float16, "int32": _dtypes.int32,
    "int64": _dtypes.int64, "uint8": _dtypes.uint8, "bool": _dtypes.bool, "bfloat16": _dtypes.bfloat16,
}
_dtype_to_numpy = {v: k for k, v in _numpy_names.items()}


def _numpy_dtype(dtype):
    name = _dtype_to_numpy[dtype]
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _as_array(data, dtype):
    """A C-contiguous NumPy array of data. Python numbers and lists of them follow torch.tensor: floats become
    the default dtype (float32 unless set_default_dtype), integers int64; NumPy arrays and scalars keep their dtype."""
    array = np.asarray(data)
    if dtype is None and not isinstance(data, (np.ndarray, np.generic)):
        if array.dtype == np.float64 and _xlite.get_default_dtype() == _dtypes.float32:
            array = array.astype(np.float32)
        elif array.dtype.kind in "iu" and array.dtype != np.uint8:
            array = array.astype(np.int64)
    if dtype is not None:
        array = array.astype(_numpy_dtype(_xlite._dtype(dtype)))
    if array.dtype.name not in _numpy_names:
        raise _xlite.Error(f"[tensor] NumPy arrays of {array.dtype} have no xlite dtype")
    return _contiguous(array)


def _contiguous(array):
    # np.ascontiguousarray makes a 0-d array 1-d.
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def _from_numpy(array, device, copy):
    if array.dtype.name == "bfloat16":  # ml_dtypes' bfloat16: through its bits
        return _xlite._from_array(array.view(np.uint16), device=device, copy=copy, dtype=_dtypes.bfloat16)
    return _xlite._from_array(array, device=device, copy=copy)


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of data (a number, nested lists, a NumPy array or another tensor).

    Python ints become int64, floats float32 and bools bool, as in torch.tensor."""
    if isinstance(data, _xlite.Tensor):
        t = _xlite.clone(data.detach()).to(device=device, dtype=dtype)  # a copy, as torch.tensor(t) makes
    else:  # data, like torch.tensor's, not a pending constant
        t = _from_numpy(_as_array(data, dtype), device, copy=True)
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data, dtype=None, device=None):
    """data as a tensor: a tensor of the right dtype and device is returned as it is, NumPy memory is shared
    where it can be."""
    if isinstance(data, _xlite.Tensor):
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray) and dtype is None:
        return from_numpy(data) if device is None else from_numpy(data).to(device=device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A tensor that shares the memory of a NumPy array (copied only when it is not C-contiguous).

    xlite never writes that memory: an in-place op gives the tensor a new buffer, as JAX does, and the array
    must not be changed while the tensor may still read it."""
    if not isinstance(array, np.ndarray):
        raise _xlite.Error(f"[from_numpy] expected a numpy.ndarray, got {type(array).__name__}")
    if array.dtype.name not in _numpy_names:
        raise _xlite.Error(f"[from_numpy] NumPy arrays of {array.dtype} have no xlite dtype")
    return _from_numpy(_contiguous(array), None, copy=False)


def from_dlpack(array):
    """A tensor over the memory of any object with __dlpack__ (PyTorch, JAX, NumPy), without a copy."""
    return _xlite._from_array(array, copy=False)
