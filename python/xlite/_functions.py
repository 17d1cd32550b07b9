"""Ops whose PyTorch form is more than one C++ op: max/min by argument kind, integer floor_divide."""
import builtins

from . import _dtypes, _xlite

def _extreme(reduce, along, pairwise, input, dim=None, keepdim=False, *, other=None):
    if isinstance(dim, _xlite.Tensor):  # max(a, b): elementwise
        return pairwise(input, dim)
    if other is not None:
        return pairwise(input, other)
    if dim is None:
        return reduce(input)
    return along(input, dim, keepdim)


def max(input, dim=None, keepdim=False, *, other=None):
    """The largest value; along a dim, (values, indices); of two tensors, the elementwise maximum."""
    return _extreme(_xlite.amax, _xlite.max_along, _xlite.maximum, input, dim, keepdim, other=other)


def min(input, dim=None, keepdim=False, *, other=None):
    """The smallest value; along a dim, (values, indices); of two tensors, the elementwise minimum."""
    return _extreme(_xlite.amin, _xlite.min_along, _xlite.minimum, input, dim, keepdim, other=other)


def floor_divide(input, other):
    """Division rounded down, as PyTorch's // operator: integers stay integers, exactly, and an integer division
    by zero raises."""
    dtypes = [t.dtype for t in (input, other) if isinstance(t, _xlite.Tensor)]
    floats = any(d.is_floating_point for d in dtypes) or any(isinstance(v, builtins.float) for v in (input, other))
    if floats:
        return _xlite.floor(_xlite.div(input, other))
    # Integers: an estimate in float64, then corrections in exact integer arithmetic (the estimate is off by
    # at most |a| * 2**-52 / |b| + 1, so one float64 step on the small remainder and a last +-1 make it exact).
    result = _xlite.add(input, other).dtype  # the promoted integer dtype
    a = input.to(result) if isinstance(input, _xlite.Tensor) else _xlite.full((), input, dtype=result)
    b = other.to(result) if isinstance(other, _xlite.Tensor) else _xlite.full((), other, dtype=result)
    wide = _dtypes.float64
    q = _xlite.floor(a.to(wide) / b.to(wide)).to(result)
    q = q + _xlite.floor((a - q * b).to(wide) / b.to(wide)).to(result)
    r = a - q * b
    q = _xlite.where((r != 0) & ((r < 0) != (b < 0)), q - 1, q)
    r = a - q * b
    q = _xlite.where((r != 0) & ((r < 0) == (b < 0)) & (_xlite.abs(r) >= _xlite.abs(b)), q + 1, q)
    return q + _xlite.remainder(a, b) * 0  # the remainder raises on a division by zero
