"""The parts of Tensor written in Python: PyTorch's method forms of the ops, indexing with ints, slices,
None, Ellipsis, integer and boolean tensors, printing, iteration, and the NumPy and DLPack protocols."""
import builtins

import numpy as np

from . import _creation, _dtypes, _functions, _xlite
from ._xlite import Tensor


def _shape_args(shape):
    """x.reshape(2, 3) and x.reshape((2, 3)) alike."""
    if len(shape) == 1 and not isinstance(shape[0], (builtins.int, np.integer)):
        return tuple(shape[0])
    return tuple(builtins.int(d) for d in shape)


def _method(fn):
    return lambda self, *args, **kwargs: fn(self, *args, **kwargs)


# Methods that are the function of the same name with the tensor first.
_same_name = """neg abs exp expm1 log log1p sqrt rsqrt sin cos tan tanh sigmoid relu erf floor ceil round sign
reciprocal square logical_not isnan isinf add sub mul div pow maximum minimum remainder eq ne lt le gt ge
logical_and logical_or logical_xor sum mean prod amax amin argmax argmin logsumexp var softmax log_softmax
flatten squeeze unsqueeze transpose broadcast_to narrow split chunk flip tril triu index_select gather
scatter_add matmul clamp asin acos atan atan2 sinh cosh logaddexp hypot nan_to_num clamp_min clamp_max any all
count_nonzero std norm isclose allclose equal cumsum cumprod cummax cummin sort argsort topk kthvalue median mode
repeat_interleave roll diag diagonal trace tile clone outer bmm addmm baddbmm cross masked_select unique
bernoulli""".split()
for _name in _same_name:
    setattr(Tensor, _name, _method(getattr(_xlite, _name)))
for _name in ("max", "min", "floor_divide"):
    setattr(Tensor, _name, _method(getattr(_functions, _name)))
Tensor.multiply = Tensor.mul
Tensor.subtract = Tensor.sub
Tensor.divide = Tensor.div
Tensor.true_divide = Tensor.div
Tensor.clip = Tensor.clamp
Tensor.reshape = lambda self, *shape: _xlite.reshape(self, _shape_args(shape))
Tensor.view = lambda self, *shape: _xlite.view(self, _shape_args(shape))
Tensor.expand = lambda self, *shape: _xlite.expand(self, _shape_args(shape))
Tensor.permute = lambda self, *dims: _xlite.permute(self, _shape_args(dims))
Tensor.repeat = lambda self, *sizes: _xlite.repeat(self, _shape_args(sizes))
Tensor.tile = lambda self, *dims: _xlite.tile(self, _shape_args(dims))
Tensor.unfold = lambda self, dimension, size, step: _xlite.unfold(self, dimension, size, step)
Tensor.nonzero = lambda self, *, as_tuple=False: (
    _xlite.nonzero(self) if not as_tuple else tuple(_xlite.nonzero(self).transpose(0, 1)))
Tensor.narrow = lambda self, dim, start, length: _xlite.narrow(self, dim, start, length)
Tensor.select = lambda self, dim, index: _xlite.select(self, dim, index)
Tensor.view_as = lambda self, other: _xlite.view(self, other.shape)
Tensor.reshape_as = lambda self, other: _xlite.reshape(self, other.shape)
Tensor.expand_as = lambda self, other: _xlite.expand(self, other.shape)
Tensor.type_as = lambda self, other: self.to(other.dtype)
Tensor.t = lambda self: _xlite.transpose(self, 0, 1) if self.ndim == 2 else self
Tensor.T = property(lambda self: self.permute(*reversed(range(self.ndim))))
Tensor.mT = property(lambda self: _xlite.transpose(self, -2, -1))
def _as_value(value, device):
    """A number as a 0-d tensor that loses nothing of it (a Python float in float64), for writing into a tensor
    of any dtype; a tensor as it is."""
    if isinstance(value, Tensor):
        return value
    return _xlite.full((), value, dtype=_dtypes.float64 if isinstance(value, builtins.float) else None, device=device)


def _masked_fill(self, mask, value):
    """value where mask is True, in this tensor's dtype (a float into an integer tensor truncates, as in PyTorch)."""
    return _xlite.where(mask, _as_value(value, self.device).to(self.dtype), self)


Tensor.masked_fill = _masked_fill
Tensor.is_floating_point = lambda self: self.dtype.is_floating_point
Tensor.element_size = lambda self: self.dtype.itemsize
Tensor.nelement = Tensor.numel
Tensor.cpu = lambda self: self
Tensor.float = lambda self: self.to(_dtypes.float32)
Tensor.double = lambda self: self.to(_dtypes.float64)
Tensor.half = lambda self: self.to(_dtypes.float16)
Tensor.bfloat16 = lambda self: self.to(_dtypes.bfloat16)
Tensor.int = lambda self: self.to(_dtypes.int32)
Tensor.long = lambda self: self.to(_dtypes.int64)
Tensor.bool = lambda self: self.to(_dtypes.bool)
Tensor.byte = lambda self: self.to(_dtypes.uint8)
Tensor.__floordiv__ = lambda self, other: _functions.floor_divide(self, other)
Tensor.__rfloordiv__ = lambda self, other: _functions.floor_divide(other, self)


# Printing, like PyTorch's: the values, then the dtype unless it is float32, int64 or bool.
_default_dtypes = (_dtypes.float32, _dtypes.int64, _dtypes.bool)


def _repr(self):
    # The C++ printer's values (PyTorch's format and print options), with Python's names for dtype and device.
    body = _xlite._to_string(self)[:-1]
    for cpp_suffix in (", dtype=", ", device="):
        if cpp_suffix in body:
            body = body[:body.index(cpp_suffix)]
    extras = []
    if self.dtype not in _default_dtypes:
        extras.append(f"dtype={self.dtype!r}")
    if self.device != _xlite.device():
        extras.append(f"device='{self.device}'")
    if self.requires_grad:
        extras.append("requires_grad=True")
    return ", ".join([body] + extras) + ")"


Tensor.__repr__ = _repr
Tensor.__str__ = _repr


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


Tensor.__iter__ = _iter


# NumPy and DLPack.
def _array(self, dtype=None, copy=None):
    """The value as a read-only NumPy array over the tensor's own memory (xlite's buffers are immutable)."""
    view = _xlite._numpy_view(self)
    if self.dtype == _dtypes.bfloat16:
        import ml_dtypes
        view = view.view(ml_dtypes.bfloat16)
    if dtype is not None and np.dtype(dtype) != view.dtype:
        return view.astype(dtype)
    return view.copy() if copy else view


Tensor.__array__ = _array
Tensor.numpy = lambda self: _array(self)


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    options = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
    return _xlite._dlpack_array(self).__dlpack__(**{k: v for k, v in options.items() if v is not None})


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = lambda self: (1, 0)  # kDLCPU: every xlite device is host memory today


# Indexing with PyTorch's (NumPy's) semantics, built from slice, select, index_select and reshape.
def _as_index_tensor(item):
    if isinstance(item, (builtins.bool, np.bool_)):  # a 0-d mask: a new dim of size 1 (True) or 0 (False)
        return _creation.tensor(builtins.bool(item))
    if isinstance(item, (list, np.ndarray)):
        array = np.asarray(item)
        return _creation.tensor(array if array.dtype == np.bool_ else array.astype(np.int64))
    return item


def _consumes(item):
    """How many dims of the tensor an index item uses."""
    if item is None:
        return 0
    if isinstance(item, Tensor) and item.dtype == _dtypes.bool:
        return item.ndim
    return 1


def _items(index, ndim):
    """The index as a list of items (lists, arrays and Python bools made tensors), its Ellipsis expanded into full
    slices."""
    items = [_as_index_tensor(i) for i in (index if isinstance(index, tuple) else (index,))]
    ellipses = [i for i, item in enumerate(items) if item is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(_consumes(item) for item in items if item is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for a tensor of dimension {ndim}")
    if ellipses:
        at = ellipses[0]
        items[at:at + 1] = [builtins.slice(None)] * (ndim - used)
    return items


def _int_index(item, dim, size):
    """An int index in [0, size), from one that may count from the end."""
    i = item.__index__()
    if i < -size or i >= size:
        raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
    return i % size


def _is_int(item):
    return isinstance(item, (builtins.int, np.integer)) and not isinstance(item, builtins.bool)


def _basic_and_advanced(x, index):
    """Applies ints, slices, None and Ellipsis; returns the tensor and the (dim, int64 index) pairs left."""
    items = _items(index, x.ndim)
    advanced = []
    dim = 0
    for item in items:
        if item is None:
            x = _xlite.unsqueeze(x, dim)
            dim += 1
        elif isinstance(item, builtins.slice):
            step = 1 if item.step is None else item.step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = 0 if item.start is None else item.start
            stop = 2**63 - 1 if item.stop is None else item.stop
            x = _xlite.slice(x, dim, start, stop, step)
            dim += 1
        elif isinstance(item, Tensor) and item.dtype == _dtypes.bool:
            # A mask: its True positions, read on the host (the result's shape depends on them).
            positions = np.nonzero(np.asarray(item).reshape(item.shape or (1,)))
            if item.ndim == 0:
                x = _xlite.unsqueeze(x, dim)
            for k, p in enumerate(positions):
                if tuple(item.shape or (1,))[k] != x.shape[dim + k]:
                    raise IndexError(f"the mask's shape {tuple(item.shape)} does not match the indexed dims")
                advanced.append((dim + k, _creation.tensor(p.astype(np.int64), device=x.device)))
            dim += len(positions)
        elif isinstance(item, Tensor):
            if item.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be integer or bool tensors")
            advanced.append((dim, item))
            dim += 1
        elif isinstance(item, (builtins.int, np.integer)) or hasattr(item, "__index__"):
            i = _int_index(item, dim, x.shape[dim])
            x = _xlite.squeeze(_xlite.slice(x, dim, i, i + 1), dim)
            for k, (d, t) in enumerate(advanced):
                if d > dim:
                    advanced[k] = (d - 1, t)
        else:
            raise IndexError(f"{type(item).__name__} cannot index a tensor")
    return x, advanced


def _gather_advanced(x, advanced):
    dims = [d for d, _ in advanced]
    wrapped = []
    for d, idx in advanced:
        size = x.shape[d]
        idx = idx.to(_dtypes.int64)
        wrapped.append(_xlite.where(idx < 0, idx + size, idx))
    batch = np.broadcast_shapes(*[tuple(t.shape) for t in wrapped])
    rest = [d for d in range(x.ndim) if d not in dims]
    moved = x.permute(*(dims + rest)) if dims + rest != list(range(x.ndim)) else x
    linear = None
    for d, idx in zip(dims, wrapped):
        linear = idx if linear is None else linear * x.shape[d] + idx
    linear = _xlite.broadcast_to(linear, batch)
    count = builtins.int(np.prod([x.shape[d] for d in dims]))
    rest_shape = [x.shape[d] for d in rest]
    flat = moved.reshape(count, *rest_shape)
    out = _xlite.index_select(flat, 0, linear.reshape(-1)).reshape(*batch, *rest_shape)
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if adjacent and dims[0] > 0:
        # NumPy's rule: adjacent advanced indices keep their place among the other dims.
        nb, first = len(batch), dims[0]
        order = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, out.ndim))
        out = out.permute(*order)
    return out


def _getitem(self, index):
    x, advanced = _basic_and_advanced(self, index)
    return _gather_advanced(x, advanced) if advanced else x


def _box(shape, items):
    """For items (from _items) of ints and step-1 slices only: the (start, stop) of the box they select in each
    dim and which dims an int removes; None for any other index."""
    items = items + [builtins.slice(None)] * (len(shape) - len(items))
    box, dropped = [], []
    for dim, (item, size) in enumerate(zip(items, shape)):
        if isinstance(item, builtins.slice):
            if item.step not in (None, 1):
                return None
            start, stop, _ = item.indices(size)
            box.append((start, builtins.max(start, stop)))
        elif _is_int(item):
            i = _int_index(item, dim, size)
            box.append((i, i + 1))
            dropped.append(dim)
        else:
            return None
    return box, dropped


def _without_leading_ones(value, ndim):
    """A value with more dims than the place it goes to, the extra ones of size 1 (NumPy accepts those)."""
    while value.ndim > ndim and value.shape[0] == 1:
        value = value.reshape(value.shape[1:])
    return value


def _setitem(self, index, value):
    """x[index] = value: the new value of the whole tensor, written in place (the tensor is rebound). Where an
    integer index repeats a position, it gets the mean of the values written there: the value itself when they
    agree (PyTorch leaves differing values undefined)."""
    value = _as_value(value, self.device)
    items = _items(index, self.ndim)
    found = _box(self.shape, items)
    if found is not None:
        # A box: the value padded out to the whole shape, chosen by a mask padded the same way (fused, no scatter).
        box, dropped = found
        region = [stop - start for start, stop in box]
        kept = [n for d, n in enumerate(region) if d not in dropped]
        placed = _xlite.broadcast_to(_without_leading_ones(value, len(kept)).to(self.dtype), kept)
        for d in dropped:
            placed = _xlite.unsqueeze(placed, d)
        widths = []
        for (start, stop), size in reversed(list(zip(box, self.shape))):
            widths += [start, size - stop]
        inside = _xlite.pad(_xlite.ones(region, dtype=_dtypes.uint8, device=self.device), widths) != 0
        self.copy_(_xlite.where(inside, _xlite.pad(placed, widths), self))
        return
    positions = _getitem(_xlite.arange(self.numel(), device=self.device).reshape(self.shape), tuple(items))
    flat_positions = positions.reshape(-1)
    if self.dtype in (_dtypes.float32, _dtypes.float64):
        work = self.dtype
    elif self.dtype.is_floating_point:
        work = _dtypes.float32  # f16 and bf16 are computed in f32 anyway
    else:
        work = _dtypes.int64  # integers and bools, exactly
    values = _xlite.broadcast_to(_without_leading_ones(value, positions.ndim).to(work), positions.shape).reshape(-1)
    zeros = _xlite.zeros(self.numel(), dtype=work, device=self.device)
    written = _xlite.scatter_add(zeros, 0, flat_positions, values)
    count = _xlite.scatter_add(zeros, 0, flat_positions, _xlite.ones_like(values))
    mean = written / count  # exact where a position is written once
    if not work.is_floating_point:
        mean = _xlite.round(mean.to(_dtypes.float64)).to(work)
    merged = _xlite.where(count > 1, mean, _xlite.where(count == 1, written, self.reshape(-1).to(work)))
    self.copy_(merged.reshape(self.shape).to(self.dtype))


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem
