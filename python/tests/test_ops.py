"""The ops of xlite's Python module checked against PyTorch 1.13 on the same random inputs, plus a few values
written out by hand, Python's operators on Tensor, PyTorch's dtype promotion and the errors the ops raise."""
import builtins
import math
import operator

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import xlite as xl
from torch_compare import TORCH_OF, check, pair, to_torch, torch_in_float

# --------------------------------------------------------------------------------------------------------------
# Unary ops

# name: (torch function, low, high) of the input values.
UNARY = {
    "neg": (torch.neg, -3, 3),
    "abs": (torch.abs, -3, 3),
    "exp": (torch.exp, -3, 3),
    "expm1": (torch.expm1, -3, 3),
    "log": (torch.log, 0.1, 5),
    "log1p": (torch.log1p, -0.9, 5),
    "sqrt": (torch.sqrt, 0.0, 5),
    "rsqrt": (torch.rsqrt, 0.1, 5),
    "sin": (torch.sin, -4, 4),
    "cos": (torch.cos, -4, 4),
    "tan": (torch.tan, -1.2, 1.2),
    "tanh": (torch.tanh, -4, 4),
    "sigmoid": (torch.sigmoid, -6, 6),
    "relu": (torch.relu, -3, 3),
    "silu": (F.silu, -4, 4),
    "erf": (torch.erf, -3, 3),
    "floor": (torch.floor, -3, 3),
    "ceil": (torch.ceil, -3, 3),
    "round": (torch.round, -3, 3),
    "sign": (torch.sign, -3, 3),
    "reciprocal": (torch.reciprocal, 0.2, 3),
    "square": (torch.square, -3, 3),
    "logical_not": (torch.logical_not, -3, 3),
    "isnan": (torch.isnan, -3, 3),
    "isinf": (torch.isinf, -3, 3),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_unary_float(name, dtype):
    fn, lo, hi = UNARY[name]
    x, t = pair((3, 5), dtype, lo, hi, seed=1)
    check(getattr(xl, name)(x), torch_in_float(fn, t))
    if dtype == "float32" and hasattr(t, name):
        check(getattr(x, name)(), getattr(t, name)())  # the method form


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_unary_integer_inputs(name, dtype):
    fn, lo, hi = UNARY[name]
    lo, hi = builtins.max(lo, 1) if name in ("log", "rsqrt", "reciprocal") else lo, hi
    x, t = pair((4, 3), dtype, lo, hi, seed=2)
    try:
        ref = fn(t)
    except RuntimeError as e:
        pytest.skip(f"torch 1.13: {e}")
    check(getattr(xl, name)(x), ref)


def test_unary_special_values():
    x = xl.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -2.5])
    assert xl.isnan(x).tolist() == [True, False, False, False, False]
    assert xl.isinf(x).tolist() == [False, True, True, False, False]
    assert xl.sign(x).tolist()[1:] == [1.0, -1.0, 0.0, -1.0]
    assert xl.relu(x).tolist()[1:] == [math.inf, 0.0, 0.0, 0.0]
    # round: half to even, like torch.
    assert xl.round(xl.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4])).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 2.0]
    assert xl.exp(xl.tensor([0.0, 1.0])).tolist() == pytest.approx([1.0, math.e], rel=1e-6)
    assert xl.sqrt(xl.tensor([4.0, 9.0])).tolist() == [2.0, 3.0]
    assert xl.abs(xl.tensor([-3, 4])).tolist() == [3, 4]
    assert xl.abs(xl.tensor([-3, 4])).dtype == xl.int64
    assert xl.logical_not(xl.tensor([0.0, 2.0])).tolist() == [True, False]


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gelu(approximate, dtype):
    x, t = pair((4, 6), dtype, -4, 4, seed=3)
    check(xl.gelu(x, approximate), torch_in_float(lambda u: F.gelu(u, approximate=approximate), t))
    check(xl.gelu(x, approximate=approximate), torch_in_float(lambda u: F.gelu(u, approximate=approximate), t))


def test_gelu_default_is_exact():
    x, t = pair((8,), "float32", -3, 3, seed=4)
    check(xl.gelu(x), F.gelu(t))
    assert xl.gelu(xl.tensor([0.0, 1.0])).tolist() == pytest.approx([0.0, 0.8413447460685429], rel=1e-6)


# --------------------------------------------------------------------------------------------------------------
# Binary ops

BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "pow": torch.pow,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "remainder": torch.remainder,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
}


def torch_binary(name, a, b):
    """torch's op with Python scalars as they promote (0-d tensors promote the same way as scalars)."""
    fn = BINARY[name]
    a_t = a if isinstance(a, torch.Tensor) else torch.tensor(a)
    b_t = b if isinstance(b, torch.Tensor) else torch.tensor(b)
    want = torch.result_type(a, b) if name not in ("eq", "ne", "lt", "le", "gt", "ge") and not name.startswith(
        "logical") else torch.bool
    if name == "div" and not want.is_floating_point:
        want = torch.get_default_dtype()
    out = torch_in_float(fn, a_t, b_t)
    return out.to(want) if out.dtype != want else out


def binary_inputs(name, dtype, seed):
    lo, hi = (0.5, 2.0) if name in ("pow",) else (-3, 3)
    if dtype in ("int64", "int32") and name == "pow":
        lo, hi = 0, 3
    x, t = pair((3, 4), dtype, lo, hi, seed)
    # the second operand broadcasts over the first; no zeros for the divisions
    y, u = pair((4,), dtype, lo, hi, seed + 1)
    if name in ("div", "remainder") and dtype not in ("bool",):  # no zero divisors, either way round
        x, t = xl.where(x == 0, 1, x).to(x.dtype), torch.where(t == 0, torch.ones_like(t), t)
        y, u = xl.where(y == 0, 1, y).to(y.dtype), torch.where(u == 0, torch.ones_like(u), u)
    return x, t, y, u


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_binary_tensor_tensor(name, dtype):
    x, t, y, u = binary_inputs(name, dtype, seed=5)
    check(getattr(xl, name)(x, y), torch_binary(name, t, u))
    check(getattr(xl, name)(y, x) if name != "pow" else getattr(xl, name)(y, xl.abs(x)),
          torch_binary(name, u, t) if name != "pow" else torch_binary(name, u, t.abs()))
    check(getattr(x, name)(y), torch_binary(name, t, u))  # the method form


SCALARS = [2, 2.5, -1.5, True]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_binary_tensor_scalar(name, dtype, scalar):
    if name == "sub" and scalar is True:
        pytest.skip("torch refuses to subtract bools")
    if name == "pow" and dtype == "int64" and isinstance(scalar, builtins.float) and scalar < 0:
        pytest.skip("negative powers of integers")
    x, t, _, _ = binary_inputs(name, dtype, seed=6)
    check(getattr(xl, name)(x, scalar), torch_binary(name, t, scalar))


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_binary_scalar_tensor(name, dtype, scalar):
    if name == "sub" and scalar is True:
        pytest.skip("torch refuses to subtract bools")
    _, _, y, u = binary_inputs(name, dtype, seed=7)
    if name == "pow":
        if scalar < 0:
            pytest.skip("negative base")
        if dtype == "int64" and not isinstance(scalar, builtins.float):
            y, u = xl.abs(y), u.abs()
    check(getattr(xl, name)(scalar, y), torch_binary(name, scalar, u))


@pytest.mark.parametrize("name", ["add", "mul", "maximum", "eq", "lt", "logical_and", "logical_xor"])
def test_binary_bool_tensors(name):
    x, t = pair((3, 4), "bool", seed=8)
    y, u = pair((3, 4), "bool", seed=9)
    check(getattr(xl, name)(x, y), torch_binary(name, t, u))


def test_binary_known_values():
    a = xl.tensor([-7, -1, 5, 7])
    assert xl.remainder(a, 3).tolist() == [2, 2, 2, 1]  # the divisor's sign, like Python's %
    assert xl.remainder(a, -3).tolist() == [-1, -1, -1, -2]
    assert xl.remainder(xl.tensor([-7.5, 7.5]), 2).tolist() == [0.5, 1.5]
    assert xl.div(xl.tensor([1, 3]), 2).tolist() == [0.5, 1.5]
    assert xl.pow(xl.tensor([2, 3]), 3).tolist() == [8, 27]
    assert xl.pow(2, xl.tensor([0.5, 3.0])).tolist() == pytest.approx([math.sqrt(2), 8.0])
    assert xl.maximum(xl.tensor([1.0, float("nan")]), xl.tensor([2.0, 0.0])).tolist()[0] == 2.0
    assert math.isnan(xl.maximum(xl.tensor([1.0, float("nan")]), xl.tensor([2.0, 0.0])).tolist()[1])  # as torch
    assert xl.sub(10, xl.tensor([1, 2])).tolist() == [9, 8]
    assert xl.logical_xor(xl.tensor([0, 1, 2]), 1).tolist() == [True, False, False]


# --------------------------------------------------------------------------------------------------------------
# Dtype promotion, as in PyTorch

PROMOTION_DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool"]
OTHERS = PROMOTION_DTYPES + [2, 2.5, True]


@pytest.mark.parametrize("op", ["add", "mul", "maximum"])
@pytest.mark.parametrize("a", PROMOTION_DTYPES)
@pytest.mark.parametrize("b", OTHERS, ids=str)
def test_promotion_table(op, a, b):
    x, t = pair((2, 3), a, 0, 3, seed=10)
    if isinstance(b, str):
        y, u = pair((3,), b, 0, 3, seed=11)
    else:
        y = u = b
    want = torch.result_type(t, u)
    got = getattr(xl, op)(x, y)
    assert TORCH_OF[got.dtype] == want, f"{a} {op} {b!r}: {got.dtype}, torch gives {want}"
    check(got, torch_binary(op, t, u))


@pytest.mark.parametrize("expr, want", [
    (lambda: xl.tensor([1, 2]) * 2.5, xl.float32),
    (lambda: 2.5 * xl.tensor([1, 2]), xl.float32),
    (lambda: xl.tensor([1.0, 2.0], dtype=xl.float16) * 2.5, xl.float16),
    (lambda: xl.tensor([1.0, 2.0], dtype=xl.bfloat16) + 1, xl.bfloat16),
    (lambda: xl.tensor([1.0, 2.0], dtype=xl.float64) * 2.5, xl.float64),
    (lambda: xl.tensor([1, 2]) / 2, xl.float32),
    (lambda: xl.tensor([1, 2]) / xl.tensor([3, 4]), xl.float32),
    (lambda: xl.tensor([1, 2], dtype=xl.int32) + 5, xl.int32),
    (lambda: xl.tensor([1, 2], dtype=xl.int32) + xl.tensor([1, 2]), xl.int64),
    (lambda: xl.tensor([1, 2], dtype=xl.uint8) + 5, xl.uint8),
    (lambda: xl.tensor([True, False]) + 1, xl.int64),
    (lambda: xl.tensor([True, False]) * 1.5, xl.float32),
    (lambda: xl.tensor([1, 2]) + True, xl.int64),
    (lambda: xl.tensor([1.0], dtype=xl.float16) + xl.tensor([1.0], dtype=xl.bfloat16), xl.float32),
    (lambda: xl.tensor([1.0], dtype=xl.float16) + xl.tensor([1.0]), xl.float32),
    (lambda: xl.sum(xl.tensor([True, True, False])), xl.int64),
    (lambda: xl.sum(xl.tensor([1, 2], dtype=xl.int32)), xl.int64),
    (lambda: xl.sum(xl.tensor([1, 2], dtype=xl.uint8)), xl.int64),
    (lambda: xl.sum(xl.tensor([1.0], dtype=xl.float16)), xl.float16),
    (lambda: xl.prod(xl.tensor([1, 2], dtype=xl.int32)), xl.int64),
    (lambda: xl.mean(xl.tensor([1.0, 2.0], dtype=xl.bfloat16)), xl.bfloat16),
    (lambda: xl.exp(xl.tensor([1, 2])), xl.float32),
    (lambda: xl.tensor([1, 2]) < 1.5, xl.bool),
    (lambda: xl.where(xl.tensor([True, False]), xl.tensor([1, 2]), 2.5), xl.float32),
    (lambda: xl.where(xl.tensor([True, False]), 1.0, 0.0), xl.float32),
    (lambda: xl.where(xl.tensor([True, False]), 1, 0), xl.int64),
    (lambda: xl.where(xl.tensor([True, False]), xl.tensor([1.0, 2.0], dtype=xl.float16), 2.5), xl.float16),
    (lambda: xl.clamp(xl.tensor([1.0, 2.0], dtype=xl.float16), 0.5, 1.5), xl.float16),
    (lambda: xl.clamp(xl.tensor([1, 2]), 0.5, 1.5), xl.float32),
    (lambda: xl.tensor([1.0, 2.0], dtype=xl.float16) * np.float64(2.5), xl.float16),
    (lambda: xl.tensor([1, 2], dtype=xl.int32) * np.int64(3), xl.int32),
    (lambda: xl.tensor([1, 2], dtype=xl.int32) * np.float32(1.5), xl.float32),
    (lambda: xl.tensor([7, -7]) // 2, xl.int64),
    (lambda: xl.tensor([7, -7]) // 2.0, xl.float32),
    (lambda: xl.tensor([7, -7]) % 2.5, xl.float32),
    (lambda: xl.tensor([7, -7]) ** 2, xl.int64),
    (lambda: xl.tensor([7, -7]) ** 0.5, xl.float32),
    (lambda: 2 ** xl.tensor([1, 2]), xl.int64),
    (lambda: 2.0 ** xl.tensor([1, 2]), xl.float32),
], ids=lambda v: "" if callable(v) else str(v))
def test_promotion_cases(expr, want):
    assert expr().dtype == want


def test_promotion_values():
    assert (xl.tensor([1, 2]) * 2.5).tolist() == [2.5, 5.0]
    h = xl.tensor([1.0, 3.0], dtype=xl.float16) * 2.5
    assert h.tolist() == [2.5, 7.5]
    assert (xl.tensor([1, 3]) / 2).tolist() == [0.5, 1.5]
    assert xl.sum(xl.tensor([True, True, False])).item() == 2
    assert type(xl.sum(xl.tensor([True, True, False])).item()) is builtins.int


# --------------------------------------------------------------------------------------------------------------
# where and clamp


@pytest.mark.parametrize("form", ["tt", "ts", "st", "ss"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_where(form, dtype):
    c, ct = pair((3, 4), "bool", seed=12)
    x, t = pair((3, 4), dtype, seed=13)
    y, u = pair((4,), dtype, seed=14)
    s1, s2 = (1.5, -2.5) if dtype == "float32" else (3, -4)
    args = {"tt": ((x, y), (t, u)), "ts": ((x, s2), (t, s2)), "st": ((s1, y), (s1, u)), "ss": ((s1, s2), (s1, s2))}
    (xa, xb), (ta, tb) = args[form]
    check(xl.where(c, xa, xb), torch.where(ct, ta, tb))


def test_where_broadcasts_condition():
    c = xl.tensor([True, False, True])
    x, t = pair((2, 3), "float32", seed=15)
    check(xl.where(c, x, 0.0), torch.where(torch.tensor([True, False, True]), t, torch.tensor(0.0)))
    assert xl.where(xl.tensor([True, False]), 1, 0).tolist() == [1, 0]


@pytest.mark.parametrize("lo, hi", [(-0.5, 0.5), (None, 0.3), (-0.3, None), (1, 2)])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_clamp_scalars(lo, hi, dtype):
    x, t = pair((3, 5), dtype, -3, 3, seed=16)
    if dtype == "int64" and any(isinstance(v, builtins.float) for v in (lo, hi)):
        lo = None if lo is None else builtins.int(lo * 4)
        hi = None if hi is None else builtins.int(hi * 4)
    check(xl.clamp(x, lo, hi), torch.clamp(t, lo, hi))
    check(xl.clamp(x, min=lo, max=hi), torch.clamp(t, min=lo, max=hi))
    check(x.clamp(lo, hi), t.clamp(lo, hi))


def test_clamp_tensors():
    x, t = pair((3, 5), "float32", -3, 3, seed=17)
    lo, lt_ = pair((5,), "float32", -2, -0.5, seed=18)
    hi, ht = pair((3, 1), "float32", 0.5, 2, seed=19)
    check(xl.clamp(x, lo, hi), torch.clamp(t, lt_, ht))
    assert xl.clamp(xl.tensor([-5.0, 0.0, 5.0]), -1, 1).tolist() == [-1.0, 0.0, 1.0]


# --------------------------------------------------------------------------------------------------------------
# Reductions

DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2)]


def torch_reduce(fn, t, dim, keepdim):
    if dim is None:
        dim = tuple(range(t.ndim))
    if isinstance(dim, builtins.int):
        return fn(t, dim, keepdim)
    out = t
    for d in sorted((d % t.ndim for d in dim), reverse=True):  # one dim at a time (torch.prod takes one)
        out = fn(out, d, True)
    if not keepdim:
        out = out.reshape([s for i, s in enumerate(out.shape) if i not in {d % t.ndim for d in dim}])
    return out


REDUCTIONS = {
    "sum": lambda t, d, k: torch.sum(t, d, k),
    "mean": lambda t, d, k: torch.mean(t, d, k),
    "prod": lambda t, d, k: torch.prod(t, d, k),
    "amax": lambda t, d, k: torch.amax(t, d, k),
    "amin": lambda t, d, k: torch.amin(t, d, k),
    "logsumexp": lambda t, d, k: torch.logsumexp(t, d, k),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(name, dim, keepdim):
    x, t = pair((2, 3, 4), "float32", 0.5, 1.5, seed=20)
    if name == "logsumexp" and dim is None:
        got = xl.logsumexp(x, (0, 1, 2), keepdim)
    else:
        got = getattr(xl, name)(x, dim, keepdim)
    check(got, torch_reduce(REDUCTIONS[name], t, dim, keepdim), rtol=1e-5, atol=1e-5)
    if dim is not None:
        check(getattr(xl, name)(x, dim=dim, keepdim=keepdim), torch_reduce(REDUCTIONS[name], t, dim, keepdim),
              rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16", "bfloat16"])
@pytest.mark.parametrize("dim", [None, 1], ids=str)
def test_reduction_dtypes(name, dtype, dim):
    x, t = pair((3, 4), dtype, 0, 3, seed=21)
    if name in ("amax", "amin") and dtype == "bool":
        pytest.skip("torch 1.13 has no amax for bool")
    want = torch_in_float(lambda u: torch_reduce(REDUCTIONS[name], u, dim, False), t)
    if name in ("sum", "prod") and not t.dtype.is_floating_point:
        want = want.to(torch.int64)  # torch.sum of integers and bools is int64
    check(getattr(xl, name)(x, dim), want, rtol=2e-2 if dtype == "bfloat16" else None)


def test_reduction_defaults():
    x, t = pair((3, 4), "float32", seed=22)
    check(xl.sum(x), torch.sum(t))
    check(xl.mean(x), torch.mean(t))
    check(xl.amax(x), torch.amax(t))
    assert xl.sum(xl.tensor([[1, 2], [3, 4]])).item() == 10
    assert xl.prod(xl.tensor([[1, 2], [3, 4]]), 0).tolist() == [3, 8]
    assert xl.mean(xl.tensor([[1.0, 2.0], [3.0, 4.0]]), 1).tolist() == [1.5, 3.5]
    assert xl.logsumexp(xl.tensor([0.0, 0.0]), 0).item() == pytest.approx(math.log(2))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(name, dim, keepdim):
    x, t = pair((3, 5), "float32", seed=23)
    if dim is None and keepdim:
        pytest.skip("torch 1.13's argmax without dim ignores keepdim")
    fn = getattr(torch, name)
    want = fn(t) if dim is None else fn(t, dim, keepdim)
    got = getattr(xl, name)(x) if dim is None else getattr(xl, name)(x, dim, keepdim)
    check(got, want)


def test_argmax_ties_take_first():
    x = xl.tensor([[1, 3, 3], [2, 2, 0]])
    assert xl.argmax(x, 1).tolist() == [1, 0]
    assert xl.argmin(x, 1).tolist() == [0, 2]
    assert xl.argmax(x).item() == 1
    assert xl.argmax(x).dtype == xl.int64


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (1, 2)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("unbiased", [True, False])
def test_var_std(dim, keepdim, unbiased):
    x, t = pair((3, 4, 2), "float32", seed=24)
    tdim = tuple(range(3)) if dim is None else dim
    want_var = torch.var(t, tdim, unbiased, keepdim)
    want_std = torch.std(t, tdim, unbiased, keepdim)
    check(xl.var(x, dim, unbiased=unbiased, keepdim=keepdim), want_var, rtol=1e-5, atol=1e-6)
    check(xl.var(x, dim, correction=1 if unbiased else 0, keepdim=keepdim), want_var, rtol=1e-5, atol=1e-6)
    check(xl.std(x, dim, unbiased=unbiased, keepdim=keepdim), want_std, rtol=1e-5, atol=1e-6)
    check(xl.std(x, dim, correction=1 if unbiased else 0, keepdim=keepdim), want_std, rtol=1e-5, atol=1e-6)


def test_var_known_values():
    x = xl.tensor([1.0, 2.0, 3.0, 4.0])
    assert xl.var(x).item() == pytest.approx(5 / 3)
    assert xl.var(x, correction=0).item() == pytest.approx(1.25)
    assert xl.var(x, unbiased=False).item() == pytest.approx(1.25)
    assert xl.std(x).item() == pytest.approx(math.sqrt(5 / 3))
    assert x.var().item() == pytest.approx(5 / 3)
    assert x.std(correction=0).item() == pytest.approx(math.sqrt(1.25))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax(name, dim, dtype):
    x, t = pair((3, 4, 5), dtype, -5, 5, seed=25)
    fn = getattr(torch, name)
    check(getattr(xl, name)(x, dim), torch_in_float(lambda u: fn(u, dim), t))
    check(getattr(xl, name)(x, dim=dim), torch_in_float(lambda u: fn(u, dim), t))


def test_softmax_large_values_are_stable():
    got = xl.softmax(xl.tensor([1000.0, 1000.0, -1000.0]), 0).tolist()
    assert got == pytest.approx([0.5, 0.5, 0.0])
    assert xl.log_softmax(xl.tensor([1000.0, 1000.0]), 0).tolist() == pytest.approx([-math.log(2)] * 2)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_with_dim(name, dim, keepdim):
    x, t = pair((3, 5), "float32", seed=26)
    got = getattr(xl, name)(x, dim, keepdim)
    want = getattr(torch, name)(t, dim, keepdim)
    check(got.values, want.values)
    check(got.indices, want.indices)
    values, indices = got
    check(values, want.values)
    check(indices, want.indices)
    method = getattr(x, name)(dim, keepdim=keepdim)
    check(method.values, want.values)
    check(method.indices, want.indices)


def test_max_min_all_and_pairwise():
    x, t = pair((3, 5), "float32", seed=27)
    y, u = pair((3, 5), "float32", seed=28)
    check(xl.max(x), torch.max(t))
    check(xl.min(x), torch.min(t))
    check(xl.max(x, y), torch.max(t, u))
    check(xl.min(x, y), torch.min(t, u))
    check(xl.max(x, other=y), torch.maximum(t, u))
    assert xl.max(xl.tensor([[1, 9], [4, 2]]), 1).indices.tolist() == [1, 0]


def test_allclose_isclose():
    a = xl.tensor([1.0, 2.0, float("inf"), float("nan"), 1.0])
    b = xl.tensor([1.0 + 1e-7, 2.1, float("inf"), float("nan"), 1.001])
    ta, tb = to_torch(a), to_torch(b)
    check(xl.isclose(a, b), torch.isclose(ta, tb))
    check(xl.isclose(a, b, equal_nan=True), torch.isclose(ta, tb, equal_nan=True))
    check(xl.isclose(a, b, rtol=1e-2), torch.isclose(ta, tb, rtol=1e-2))
    check(xl.isclose(a, b, atol=0.2, rtol=0), torch.isclose(ta, tb, atol=0.2, rtol=0))
    x, t = pair((4,), "float32", seed=29)
    assert xl.allclose(x, x + 1e-7) is True
    assert xl.allclose(x, x + 1e-3) is False
    assert xl.allclose(x, x + 1e-3, atol=1e-2) is True
    assert xl.allclose(a, a) is False  # nan != nan
    assert xl.allclose(a, a, equal_nan=True) is True
    assert x.allclose(x) is True


def test_clone():
    x, t = pair((2, 3), "float32", seed=30)
    c = xl.clone(x)
    check(c, t)
    assert not c.is_same(x)
    x.add_(1)  # the clone keeps its value
    check(c, t)
    check(x, t + 1)
    b = xl.tensor([True, False])
    assert xl.clone(b).dtype == xl.bool and xl.clone(b).tolist() == [True, False]
    i = xl.tensor([3, 4], dtype=xl.int32)
    assert xl.clone(i).dtype == xl.int32 and i.clone().tolist() == [3, 4]


# --------------------------------------------------------------------------------------------------------------
# Shape ops


def test_reshape_view_expand_flatten():
    x, t = pair((2, 3, 4), "float32", seed=31)
    check(xl.reshape(x, (4, 6)), t.reshape(4, 6))
    check(xl.reshape(x, [-1, 3]), t.reshape(-1, 3))
    check(xl.reshape(x, (24,)), t.reshape(24))
    check(xl.reshape(x, 24), t.reshape(24))
    check(xl._xlite.view(x, (6, -1)), t.view(6, -1))
    check(x.view(6, 4), t.view(6, 4))
    check(x.view((2, 12)), t.view((2, 12)))
    check(x.reshape(2, 12), t.reshape(2, 12))
    check(x.reshape((3, 8)), t.reshape((3, 8)))
    check(x.reshape(-1), t.reshape(-1))
    y, u = pair((3, 1), "float32", seed=32)
    check(xl._xlite.expand(y, (2, 3, 5)), u.expand(2, 3, 5))
    check(y.expand(3, 4), u.expand(3, 4))
    check(y.expand(-1, 4), u.expand(-1, 4))
    check(y.expand((2, -1, 4)), u.expand((2, -1, 4)))
    check(xl.flatten(x), torch.flatten(t))
    check(xl.flatten(x, 1), torch.flatten(t, 1))
    check(xl.flatten(x, 0, 1), torch.flatten(t, 0, 1))
    check(xl.flatten(x, start_dim=-2, end_dim=-1), torch.flatten(t, -2, -1))
    check(x.flatten(1), t.flatten(1))


def test_squeeze_unsqueeze():
    x, t = pair((2, 1, 3, 1), "float32", seed=33)
    check(xl.squeeze(x), torch.squeeze(t))
    for d in (1, 3, -1, 0):
        check(xl.squeeze(x, d), torch.squeeze(t, d))
    check(x.squeeze(1), t.squeeze(1))
    for d in (0, 2, 4, -1, -5):
        check(xl.unsqueeze(x, d), torch.unsqueeze(t, d))
    check(x.unsqueeze(-2), t.unsqueeze(-2))
    assert xl.squeeze(xl.tensor([[5.0]])).shape == ()


def test_transpose_permute():
    x, t = pair((2, 3, 4), "float32", seed=34)
    check(xl.transpose(x, 0, 2), torch.transpose(t, 0, 2))
    check(xl.transpose(x, -1, 1), torch.transpose(t, -1, 1))
    check(x.transpose(0, 1), t.transpose(0, 1))
    for dims in [(2, 0, 1), (1, 2, 0), (0, 1, 2), (-1, 0, 1)]:
        check(xl.permute(x, dims), t.permute(dims))
        check(x.permute(*dims), t.permute(*dims))
        check(x.permute(list(dims)), t.permute(*dims))
    check(x.T, t.permute(2, 1, 0))
    y, u = pair((2, 3), "float32", seed=35)
    check(y.T, u.T)
    check(y.t(), u.t())
    check(y.mT, u.mT)


def test_broadcast_to():
    x, t = pair((3, 1), "float32", seed=36)
    check(xl.broadcast_to(x, (2, 3, 4)), torch.broadcast_to(t, (2, 3, 4)))
    check(xl.broadcast_to(x, [3, 5]), torch.broadcast_to(t, [3, 5]))
    check(xl.broadcast_to(x, (3, -1)), torch.broadcast_to(t, (3, -1)))
    check(x.broadcast_to((3, 2)), t.broadcast_to((3, 2)))


@pytest.mark.parametrize("dim, start, stop, step", [
    (0, 0, 5, 1), (0, 1, 4, 2), (1, -3, None, 1), (1, 0, -1, 2), (-1, 2, 100, 1), (0, -100, 2, 1),
    (1, 5, 2, 1), (1, 1, None, 3), (0, None, None, 4),
])
def test_slice(dim, start, stop, step):
    x, t = pair((5, 6), "float32", seed=37)
    a = np.asarray(x)
    index = [builtins.slice(None)] * 2
    index[dim] = builtins.slice(start, stop, step)
    want = a[tuple(index)]
    kwargs = {"step": step}
    if start is not None:
        kwargs["start"] = start
    if stop is not None:
        kwargs["stop"] = stop
    got = xl.slice(x, dim, **kwargs)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_narrow():
    x, t = pair((4, 6), "float32", seed=38)
    check(xl.narrow(x, 1, 2, 3), torch.narrow(t, 1, 2, 3))
    check(xl.narrow(x, 0, 0, 4), torch.narrow(t, 0, 0, 4))
    check(xl.narrow(x, -1, -3, 2), torch.narrow(t, -1, -3, 2))
    check(x.narrow(0, 1, 2), t.narrow(0, 1, 2))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_concat_stack(dim):
    (x, t), (y, u), (z, w) = (pair((2, 3), "float32", seed=s) for s in (39, 40, 41))
    check(xl.cat([x, y, z], dim), torch.cat([t, u, w], dim))
    check(xl.concat((x, y), dim=dim), torch.cat((t, u), dim=dim))
    check(xl.stack([x, y, z], dim), torch.stack([t, u, w], dim))
    check(xl.stack([x, y], dim=dim), torch.stack([t, u], dim=dim))
    big, bigt = pair((2, 5), "float32", seed=42)
    check(xl.cat([x, big], 1), torch.cat([t, bigt], 1))
    check(xl.stack([x]), torch.stack([t]))


def test_cat_promotes():
    got = xl.cat([xl.tensor([1, 2]), xl.tensor([0.5])])
    want = torch.cat([torch.tensor([1, 2]), torch.tensor([0.5])])
    check(got, want)


@pytest.mark.parametrize("size, dim", [(2, 0), (3, 0), (1, 1), (4, 1), ([1, 4], 0), ([2, 1, 2], 1), ((3, 2), 0)])
def test_split(size, dim):
    x, t = pair((5, 5), "float32", seed=43)
    got = xl.split(x, size, dim)
    want = torch.split(t, size, dim)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        check(g, w)
    got = x.split(size, dim)
    assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]


@pytest.mark.parametrize("n, chunks, dim", [(6, 3, 0), (5, 3, 0), (6, 4, 0), (5, 2, 1), (2, 5, 1), (5, 1, 1)])
def test_chunk(n, chunks, dim):
    shape = (n, 2) if dim == 0 else (2, n)
    x, t = pair(shape, "float32", seed=44)
    got = xl.chunk(x, chunks, dim)
    want = torch.chunk(t, chunks, dim)
    assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]
    for g, w in zip(got, want):
        check(g, w)
    assert len(x.chunk(chunks, dim)) == len(want)


@pytest.mark.parametrize("pads, value", [
    ([1, 2], 0), ([0, 1, 2, 0], 1.5), ([1, 1, 1, 1, 1, 1], -2), ((2, 0), 0), ([0, 0], 0), ([1, 1, 0, 0], 3),
])
def test_pad(pads, value):
    x, t = pair((2, 3, 4), "float32", seed=45)
    check(xl.pad(x, list(pads), value), F.pad(t, tuple(pads), value=value))
    check(xl.pad(x, list(pads), value=value), F.pad(t, tuple(pads), value=value))


def test_pad_default_and_int():
    x = xl.tensor([[1, 2]])
    got = xl.pad(x, [1, 1])
    assert got.tolist() == [[0, 1, 2, 0]]
    assert got.dtype == xl.int64
    assert xl.pad(x, [0, 0, 1, 0], 7).tolist() == [[7, 7], [1, 2]]


def test_pad_negative_crops():
    x, t = pair((3, 5), "float32", seed=46)
    check(xl.pad(x, [-1, 1]), F.pad(t, (-1, 1)))


@pytest.mark.parametrize("dims", [[0], [1], [-1], [0, 2], (0, 1, 2), 1])
def test_flip(dims):
    x, t = pair((2, 3, 4), "float32", seed=47)
    tdims = [dims] if isinstance(dims, builtins.int) else list(dims)
    check(xl.flip(x, dims), torch.flip(t, tdims))
    check(x.flip(dims), torch.flip(t, tdims))


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -5])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 5, 3)])
def test_tril_triu(name, diagonal, shape):
    x, t = pair(shape, "float32", seed=48)
    check(getattr(xl, name)(x, diagonal), getattr(torch, name)(t, diagonal))
    check(getattr(xl, name)(x, diagonal=diagonal), getattr(torch, name)(t, diagonal=diagonal))
    check(getattr(x, name)(diagonal), getattr(t, name)(diagonal))


def test_tril_known_values():
    assert xl.tril(xl.ones(3, 3)).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert xl.triu(xl.tensor([[1, 2], [3, 4]]), 1).tolist() == [[0, 2], [0, 0]]


# --------------------------------------------------------------------------------------------------------------
# Indexing ops


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_index_select(dim, index_dtype):
    x, t = pair((4, 5), "float32", seed=49)
    n = t.shape[dim]
    idx_np = np.array([n - 1, 0, 2, 2], dtype=index_dtype)
    idx = xl.tensor(idx_np)
    check(xl.index_select(x, dim, idx), torch.index_select(t, dim, torch.from_numpy(idx_np.astype(np.int64))))
    check(x.index_select(dim, idx), torch.index_select(t, dim, torch.from_numpy(idx_np.astype(np.int64))))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim):
    x, t = pair((3, 4), "float32", seed=50)
    rng = np.random.default_rng(51)
    idx = rng.integers(0, t.shape[dim], (3, 4) if dim == 0 else (3, 2))
    check(xl.gather(x, dim, xl.tensor(idx)), torch.gather(t, dim, torch.from_numpy(idx)))
    check(x.gather(dim, xl.tensor(idx)), torch.gather(t, dim, torch.from_numpy(idx)))


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add(dim):
    x, t = pair((3, 4), "float32", seed=52)
    rng = np.random.default_rng(53)
    idx = rng.integers(0, t.shape[dim], (2, 3))  # repeated indices accumulate
    src, st = pair((2, 3), "float32", seed=54)
    check(xl.scatter_add(x, dim, xl.tensor(idx), src), torch.scatter_add(t, dim, torch.from_numpy(idx), st))
    check(x.scatter_add(dim, xl.tensor(idx), src), torch.scatter_add(t, dim, torch.from_numpy(idx), st))
    z = xl.scatter_add(xl.zeros(3), 0, xl.tensor([0, 0, 2]), xl.tensor([1.0, 2.0, 5.0]))
    assert z.tolist() == [3.0, 0.0, 5.0]


def test_embedding():
    w, wt = pair((6, 3), "float32", seed=55)
    idx = np.array([[0, 5, 2], [2, 2, 1]])
    check(xl.embedding(xl.tensor(idx), w), F.embedding(torch.from_numpy(idx), wt))
    check(xl.embedding(input=xl.tensor([4]), weight=w), F.embedding(torch.tensor([4]), wt))


@pytest.mark.parametrize("num_classes", [-1, 5])
def test_one_hot(num_classes):
    idx = np.array([[0, 3], [2, 1]])
    want = F.one_hot(torch.from_numpy(idx), num_classes)
    check(xl.one_hot(xl.tensor(idx), num_classes), want)
    assert xl.one_hot(xl.tensor([1, 0])).tolist() == [[0, 1], [1, 0]]


# --------------------------------------------------------------------------------------------------------------
# Linear algebra, convolution, pooling


@pytest.mark.parametrize("sa, sb", [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)),
])
def test_matmul(sa, sb):
    x, t = pair(sa, "float32", seed=56)
    y, u = pair(sb, "float32", seed=57)
    check(xl.matmul(x, y), torch.matmul(t, u), rtol=1e-5, atol=1e-5)
    check(x @ y, t @ u, rtol=1e-5, atol=1e-5)
    check(x.matmul(y), t.matmul(u), rtol=1e-5, atol=1e-5)


def test_matmul_known_and_dtypes():
    a = xl.tensor([[1, 2], [3, 4]])
    assert xl.matmul(a, a).tolist() == [[7, 10], [15, 22]]
    assert xl.matmul(a, a).dtype == xl.int64
    h, ht = pair((3, 4), "float16", seed=58)
    g, gt = pair((4, 2), "float16", seed=59)
    check(xl.matmul(h, g), (ht.float() @ gt.float()).half(), rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [False, True])
def test_linear(shape, bias):
    x, t = pair(shape, "float32", seed=60)
    w, wt = pair((5, 4), "float32", seed=61)
    b, bt = pair((5,), "float32", seed=62)
    check(xl.linear(x, w, b if bias else None), F.linear(t, wt, bt if bias else None), rtol=1e-5, atol=1e-5)
    if bias:
        check(xl.linear(x, w, bias=b), F.linear(t, wt, bt), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw", [
    {}, {"stride": 2}, {"padding": 1}, {"stride": (1, 2), "padding": (2, 1)}, {"dilation": 2},
    {"dilation": (1, 2), "padding": [1, 0]}, {"groups": 2}, {"stride": 2, "padding": 1, "groups": 2},
])
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d(kw, bias):
    groups = kw.get("groups", 1)
    x, t = pair((2, 4, 7, 6), "float32", seed=63)
    w, wt = pair((6, 4 // groups, 3, 3), "float32", seed=64)
    b, bt = pair((6,), "float32", seed=65)
    got = xl.conv2d(x, w, b if bias else None, **kw)
    want = F.conv2d(t, wt, bt if bias else None, **{k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()})
    check(got, want, rtol=1e-4, atol=1e-4)


def test_conv2d_known_values():
    x = xl.arange(16.0).reshape(1, 1, 4, 4)
    w = xl.ones(1, 1, 2, 2)
    assert xl.conv2d(x, w, stride=2).tolist() == [[[[10.0, 18.0], [42.0, 50.0]]]]


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("kernel, stride, padding", [
    (2, None, 0), (3, 1, 0), (3, 2, 1), ((2, 3), (1, 2), 0), ((3, 3), None, (1, 0)), (2, 1, 1),
])
def test_pool2d(name, kernel, stride, padding):
    x, t = pair((2, 3, 7, 8), "float32", seed=66)
    fn = getattr(F, name)
    got = getattr(xl, name)(x, kernel, stride, padding)
    want = fn(t, kernel, stride, padding)
    check(got, want, rtol=1e-5, atol=1e-6)
    got = getattr(xl, name)(x, kernel_size=kernel, stride=stride, padding=padding)
    check(got, want, rtol=1e-5, atol=1e-6)


def test_pool2d_known_values():
    x = xl.arange(16.0).reshape(1, 1, 4, 4)
    assert xl.max_pool2d(x, 2).tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    assert xl.avg_pool2d(x, 2).tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]
    # padding counts as zeros for the average (count_include_pad), -inf for the maximum
    assert xl.avg_pool2d(xl.ones(1, 1, 2, 2), 2, 1, 1).tolist() == [[[[0.25, 0.5, 0.25], [0.5, 1.0, 0.5],
                                                                        [0.25, 0.5, 0.25]]]]
    assert xl.max_pool2d(xl.full((1, 1, 2, 2), -5.0), 2, 1, 1).tolist() == [[[[-5.0] * 3] * 3]]


# --------------------------------------------------------------------------------------------------------------
# Python's operators on Tensor

ARITH = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow,
    "%": operator.mod, "//": operator.floordiv,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def torch_operator(op, a, b):
    if op == "//":  # torch 1.13's // is floor division; written out so no deprecation path is involved
        ta = a if isinstance(a, torch.Tensor) else torch.tensor(a)
        tb = b if isinstance(b, torch.Tensor) else torch.tensor(b)
        out = torch.div(ta, tb, rounding_mode="floor")
        return out.to(torch.result_type(a, b))
    return ARITH[op](a, b)


@pytest.mark.parametrize("op", list(ARITH))
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("other", ["tensor", 3, -2.5, "scalar_left_int", "scalar_left_float"])
def test_operators(op, dtype, other):
    positive = op in ("**",)
    x, t = pair((3, 4), dtype, 1 if positive else -4, 4, seed=70)
    if op in ("/", "%", "//"):
        x, t = xl.where(x == 0, 1, x).to(x.dtype), torch.where(t == 0, torch.ones_like(t), t)
    if other == "tensor":
        y, u = pair((4,), dtype, 1 if positive else -4, 4, seed=71)
        if op in ("/", "%", "//", "**"):
            y, u = xl.where(y == 0, 1, y).to(y.dtype), torch.where(u == 0, torch.ones_like(u), u)
        if op == "**" and dtype == "int64":
            y, u = xl.abs(y), u.abs()
        check(ARITH[op](x, y), torch_operator(op, t, u))
    elif other == "scalar_left_int":
        if op == "**" and dtype == "int64":
            x, t = xl.abs(x), t.abs()
        check(ARITH[op](2, x), torch_operator(op, 2, t))
    elif other == "scalar_left_float":
        check(ARITH[op](1.5, x), torch_operator(op, 1.5, t))
    else:
        if op == "**" and other < 0 and dtype == "int64":
            pytest.skip("negative powers of integers")
        check(ARITH[op](x, other), torch_operator(op, t, other))


@pytest.mark.parametrize("op", ["&", "|", "^"])
@pytest.mark.parametrize("other", ["tensor", True, False, "left"])
def test_logical_operators(op, other):
    fn = {"&": operator.and_, "|": operator.or_, "^": operator.xor}[op]
    x, t = pair((3, 4), "bool", seed=72)
    if other == "tensor":
        y, u = pair((4,), "bool", seed=73)
        check(fn(x, y), fn(t, u))
    elif other == "left":
        check(fn(True, x), fn(True, t))
        check(fn(False, x), fn(False, t))
    else:
        check(fn(x, other), fn(t, other))


def test_unary_operators():
    x, t = pair((3, 4), "float32", seed=74)
    check(-x, -t)
    check(abs(x), abs(t))
    b, bt = pair((3, 4), "bool", seed=75)
    check(~b, ~bt)
    i, it = pair((5,), "int64", seed=76)
    check(-i, -it)
    check(abs(i), abs(it))
    check(x @ x.T, t @ t.T, rtol=1e-5, atol=1e-5)


def test_operator_known_values():
    x = xl.tensor([-7, -3, 3, 7])
    assert (x // 2).tolist() == [-4, -2, 1, 3]
    assert (x % 3).tolist() == [2, 0, 0, 1]
    assert (x / 2).tolist() == [-3.5, -1.5, 1.5, 3.5]
    assert (x ** 2).tolist() == [49, 9, 9, 49]
    assert (10 - x).tolist() == [17, 13, 7, 3]
    assert (7.0 // xl.tensor([2.0, -2.0])).tolist() == [3.0, -4.0]
    assert (2 ** xl.tensor([3, 4])).tolist() == [8, 16]
    assert (xl.tensor([1.0, 2.0]) == 2).tolist() == [False, True]
    assert (3 > xl.tensor([1, 5])).tolist() == [True, False]  # reflected: tensor < 3
    assert (3 == xl.tensor([1, 3])).tolist() == [False, True]
    assert (1 - xl.tensor([0.5])).tolist() == [0.5]
    assert (True & xl.tensor([True, False])).tolist() == [True, False]


def test_floor_divide_function():
    x, t = pair((3, 4), "int64", -9, 9, seed=82)
    y, u = pair((4,), "int64", 1, 4, seed=83)
    check(xl.floor_divide(x, y), torch.div(t, u, rounding_mode="floor"))
    check(x.floor_divide(3), torch.div(t, 3, rounding_mode="floor"))
    f, ft = pair((3, 4), "float32", -9, 9, seed=84)
    check(xl.floor_divide(f, 2.5), torch.div(ft, 2.5, rounding_mode="floor"))
    check(xl.floor_divide(7, y), torch.div(torch.tensor(7), u, rounding_mode="floor"))


@pytest.mark.parametrize("a, b", [(-100000007, 7), (16777217, 1), (2**60 + 1, 1)])
def test_floor_divide_large_integers_exact(a, b):
    got = xl.tensor([a]) // b
    assert got.dtype == xl.int64
    assert got.tolist() == [a // b] == (torch.tensor([a]) // b).tolist()


def test_floor_divide_integer_by_zero_raises():
    with pytest.raises(RuntimeError):
        torch.tensor([5, -5]) // 0
    with pytest.raises(xl.Error):
        (xl.tensor([5, -5]) // 0).tolist()


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
@pytest.mark.parametrize("other", ["tensor", 2, 0.5])
def test_inplace_operators(op, other):
    x, t = pair((3, 4), "float32", seed=77)
    y, u = pair((4,), "float32", 0.5, 2, seed=78)
    alias = x
    rhs_x, rhs_t = (y, u) if other == "tensor" else (other, other)
    before = id(x)
    if op == "+=":
        x += rhs_x
        t += rhs_t
    elif op == "-=":
        x -= rhs_x
        t -= rhs_t
    elif op == "*=":
        x *= rhs_x
        t *= rhs_t
    else:
        x /= rhs_x
        t /= rhs_t
    assert id(x) == before  # in place: the same object, as in torch
    check(x, t)
    check(alias, t)


def test_inplace_integer_and_promotion():
    i = xl.tensor([1, 2, 3])
    i += 2
    assert i.dtype == xl.int64 and i.tolist() == [3, 4, 5]
    i *= xl.tensor([2, 2, 2])
    assert i.tolist() == [6, 8, 10]
    # torch refuses to write a float result into an integer tensor
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2]).mul_(2.5)
    with pytest.raises(xl.Error, match=r"\[mul_\]"):
        i *= 2.5
    h = xl.tensor([1.0, 2.0], dtype=xl.float16)
    h *= 2.5
    assert h.dtype == xl.float16 and h.tolist() == [2.5, 5.0]
    f = xl.tensor([1.0, 2.0])
    f += xl.tensor([1, 1])
    assert f.dtype == xl.float32 and f.tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError):
        torch.tensor([5]).div_(2)
    with pytest.raises(xl.Error, match=r"\[div_\]"):
        j = xl.tensor([5])
        j /= 2
    with pytest.raises(RuntimeError):
        torch.ones(3).add_(torch.ones(2, 3))
    with pytest.raises(xl.Error, match=r"\[add_\]"):
        k = xl.ones(3)
        k += xl.ones(2, 3)  # the result would not have the tensor's shape
    m = xl.tensor([[1.0, 2.0], [3.0, 4.0]])
    m[0] += 1  # get, add in place, set
    assert m.tolist() == [[2.0, 3.0], [3.0, 4.0]]


def test_inplace_methods():
    x, t = pair((2, 3), "float32", seed=79)
    y, u = pair((2, 3), "float32", 0.5, 2, seed=80)
    assert x.add_(y) is x
    t.add_(u)
    check(x, t)
    x.sub_(1.5), t.sub_(1.5)
    x.mul_(y), t.mul_(u)
    x.div_(2), t.div_(2)
    check(x, t)
    x.zero_()
    assert x.tolist() == [[0.0] * 3] * 2
    x.fill_(4)
    assert x.tolist() == [[4.0] * 3] * 2
    x.copy_(y)
    check(x, u)


# --------------------------------------------------------------------------------------------------------------
# Method forms


def test_method_forms():
    x, t = pair((2, 3), "float32", seed=81)
    check(x.sum(1), t.sum(1))
    check(x.sum(), t.sum())
    check(x.sum((0, 1)), t.sum((0, 1)))
    check(x.mean(1, True), t.mean(1, True))
    check(x.mean(dim=0, keepdim=True), t.mean(dim=0, keepdim=True))
    check(x.reshape(3, 2), t.reshape(3, 2))
    check(x.reshape((3, 2)), t.reshape((3, 2)))
    check(x.reshape([6]), t.reshape([6]))
    check(x.max(0).values, t.max(0).values)
    check(x.max(0).indices, t.max(0).indices)
    check(x.min(1).values, t.min(1).values)
    check(x.max(), t.max())
    check(x.T, t.T)
    check(x.amax(1), t.amax(1))
    check(x.argmax(1), t.argmax(1))
    check(x.softmax(-1), t.softmax(-1))
    check(x.exp(), t.exp())
    check(x.pow(2), t.pow(2))
    check(x.masked_fill(x > 0, 0.0), t.masked_fill(t > 0, 0.0))
    i = xl.tensor([[1, 2, 3]])
    assert i.float().dtype == xl.float32 and i.float().tolist() == [[1.0, 2.0, 3.0]]
    assert i.long().dtype == xl.int64
    assert x.long().dtype == xl.int64
    check(x.long(), t.long())
    check(x.int(), t.int())
    check(x.double(), t.double())
    check(x.half(), t.half())
    check(x.bool(), t.bool())
    check(x.to(xl.float16), t.to(torch.float16))
    check(x.to("bfloat16"), t.to(torch.bfloat16))
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-1) == 3
    assert x.dim() == 2 and x.ndim == 2 and x.numel() == 6


def test_method_forms_with_keywords_and_numpy_ints():
    x, t = pair((2, 3), "float32", seed=85)
    check(x.sum(dim=(0, 1), keepdim=True), t.sum(dim=(0, 1), keepdim=True))
    check(x.max(dim=1).values, t.max(dim=1).values)
    check(x.argmax(dim=1, keepdim=True), t.argmax(dim=1, keepdim=True))
    check(x.reshape(np.int64(3), 2), t.reshape(np.int64(3), 2))
    check(x.view(np.int64(3), -1), t.view(np.int64(3), -1))
    check(x.reshape(x.shape[::-1]), t.reshape(t.shape[::-1]))
    check(x.transpose(-1, -2), t.transpose(-1, -2))


@pytest.mark.parametrize("method", ["reshape", "view"])
def test_method_shape_of_one_numpy_int(method):
    x, t = pair((2, 3), "float32", seed=86)
    want = getattr(t, method)(np.int64(6))
    check(getattr(x, method)(np.int64(6)), want)


# --------------------------------------------------------------------------------------------------------------
# Errors: xl.Error (a RuntimeError) whose message names the op


def test_error_is_runtime_error():
    assert issubclass(xl.Error, RuntimeError)


A23 = lambda: xl.ones(2, 3)  # noqa: E731


@pytest.mark.parametrize("op, fn", [
    ("matmul", lambda: xl.matmul(xl.ones(2, 3), xl.ones(4, 5))),
    ("matmul", lambda: xl.ones(2, 3) @ xl.ones(4, 5)),
    ("add", lambda: xl.ones(2, 3) + xl.ones(4, 5)),
    ("mul", lambda: xl.mul(xl.ones(2, 3), xl.ones(2, 4))),
    ("reshape", lambda: xl.reshape(A23(), (4, 2))),
    ("reshape", lambda: A23().reshape(5)),
    ("cat", lambda: xl.cat([A23(), xl.ones(4, 5)])),
    ("stack", lambda: xl.stack([A23(), xl.ones(3, 2)])),
    ("transpose", lambda: xl.transpose(A23(), 0, 3)),
    ("softmax", lambda: xl.softmax(A23(), 2)),
    ("sum", lambda: xl.sum(A23(), 5)),
    ("argmax", lambda: xl.argmax(A23(), 2)),
    ("var", lambda: xl.var(A23(), 3)),
    ("logsumexp", lambda: xl.logsumexp(A23(), 4)),
    ("conv2d", lambda: xl.conv2d(xl.ones(1, 3, 5, 5), xl.ones(2, 4, 3, 3))),
    ("broadcast_to", lambda: xl.broadcast_to(A23(), (3, 3))),
    ("permute", lambda: xl.permute(A23(), (0, 0))),
    ("narrow", lambda: xl.narrow(A23(), 1, 2, 5)),
    ("pad", lambda: xl.pad(A23(), [1])),
    ("split", lambda: xl.split(A23(), [1, 1], 1)),
    ("chunk", lambda: xl.chunk(A23(), 0)),
    ("max_pool2d", lambda: xl.max_pool2d(xl.ones(1, 1, 2, 2), 3)),
    ("avg_pool2d", lambda: xl.avg_pool2d(xl.ones(1, 1, 4, 4), 2, padding=2)),
    ("where", lambda: xl.where(xl.tensor([True, False]), A23(), 0.0)),
    ("flatten", lambda: xl.flatten(A23(), 1, 0)),
    ("tril", lambda: xl.tril(xl.ones(3))),
    ("unsqueeze", lambda: xl.unsqueeze(A23(), 4)),
    ("flip", lambda: xl.flip(A23(), [2])),
    ("slice", lambda: xl.slice(A23(), 2, 0)),
    ("clamp", lambda: xl.clamp(A23(), xl.ones(4), xl.ones(4))),
    ("linear", lambda: xl.linear(A23(), xl.ones(4, 4))),
    ("gelu", lambda: xl.gelu(A23(), "foo")),
    ("sub", lambda: xl.tensor([True]) - xl.tensor([False])),
    ("remainder", lambda: (xl.tensor([5]) % 0).tolist()),
    ("pow", lambda: (xl.tensor([2]) ** -1).tolist()),
    ("mean", lambda: xl.mean(xl.tensor([1, 2]))),
    ("var", lambda: xl.var(xl.tensor([1, 2]))),
    ("where", lambda: xl.where(xl.tensor([1, 0]), 1.0, 2.0)),
    ("cat", lambda: xl.cat([xl.tensor(1.0), xl.tensor(2.0)])),
    ("one_hot", lambda: xl.one_hot(xl.tensor([1.0]), 2)),
    ("index_select", lambda: xl.index_select(A23(), 0, xl.tensor([0, 5])).tolist()),
    ("index_select", lambda: xl.index_select(A23(), 1, xl.tensor([-1])).tolist()),
    ("gather", lambda: xl.gather(A23(), 1, xl.tensor([[0, 9]])).tolist()),
    ("scatter_add", lambda: xl.scatter_add(A23(), 0, xl.tensor([[0, 1, 2]]), xl.ones(1, 3)).tolist()),
    ("embedding", lambda: xl.embedding(xl.tensor([7]), xl.ones(3, 2)).tolist()),
    ("one_hot", lambda: xl.one_hot(xl.tensor([0, 3]), 2).tolist()),
])
def test_errors_name_the_op(op, fn):
    with pytest.raises(xl.Error, match=r"\[" + op + r"\]"):
        fn()


def test_index_select_error_raised_when_computed():
    """An out-of-range index that only a computation reveals raises at the value read."""
    idx = xl.tensor([0, 1]) * 5  # [0, 5], a pending value
    with pytest.raises(xl.Error, match=r"\[index_select\]"):
        xl.index_select(xl.ones(2, 3), 0, idx).tolist()
    with pytest.raises(RuntimeError):
        xl.index_select(xl.ones(2, 3), 0, idx + 1).tolist()
