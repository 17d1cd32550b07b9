"""The wider op set of xlite's Python module (python/src/ops_breadth.cpp) checked against PyTorch 1.13 on the same
random inputs: activations and elementwise functions, reductions, scans, sorting, repetition, products,
data-dependent shapes, 1-D convolution and pooling, resampling, their method forms and gradients, the draws and
ranges, and the errors the ops raise.

Every xlite function is looked up when a test runs, not at import, so that this file collects against a build
that lacks some of them."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import xlite as xl
from torch_compare import DTYPES, FLOATS, check, data, from_array, pair, torch_in_float

# --------------------------------------------------------------------------------------------------------------
# Helpers (the shared ones are in torch_compare.py)

INTEGERS = ("int32", "int64", "uint8", "bool")

# For ops written as several primitives (each rounding in a low-precision dtype): a few roundings more.
COMPOSITE_TOL = {
    torch.float32: (2e-5, 2e-6),
    torch.float64: (1e-10, 1e-12),
    torch.float16: (5e-3, 5e-3),
    torch.bfloat16: (3e-2, 3e-2),
}
# Running sums and products accumulated in a low-precision dtype.
SCAN_TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-10, 1e-12),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 8e-2),
}


def ties(shape, dtype, hi=3, seed=0):
    """Small whole numbers 0..hi (many equal values) as an xlite tensor and a torch tensor of the dtype name."""
    array = np.random.default_rng(seed).integers(0, hi + 1, shape)
    if dtype == "bool":
        array = array > hi // 2
    return from_array(array.astype(np.float32) if dtype in FLOATS else array.astype(DTYPES[dtype][2]), dtype)


def check_tol(x, ref, table):
    """check with the tolerances of a table for ref's dtype (exact for integers and bools)."""
    rtol, atol = table.get(ref.dtype, (0, 0))
    check(x, ref, rtol, atol)


def check_pair(got, want, values_tol=None, indices=True):
    """A (values, indices) result of xlite against torch's return type."""
    assert isinstance(got, xl.ValuesIndices), type(got)
    if values_tol is None:
        check(got.values, want.values)
    else:
        check(got.values, want.values, *values_tol)
    if indices:
        check(got.indices, want.indices)


def torch_pair_in_float(fn, t):
    """A (values, indices) torch result for a float16/bfloat16 tensor, computed in float32 (exact for ops that
    only pick elements), the values cast back."""
    if t.dtype not in (torch.float16, torch.bfloat16):
        return fn(t)
    r = fn(t.float())
    return type(r)((r.values.to(t.dtype), r.indices))


def force(result):
    """Reads every tensor of a result, so that an error found only when values are computed is raised."""
    if isinstance(result, xl.Tensor):
        np.asarray(result)
    elif isinstance(result, (tuple, list)):
        for r in result:
            force(r)
    elif hasattr(result, "values") and hasattr(result, "indices"):
        force(result.values)
        force(result.indices)
    return result


# --------------------------------------------------------------------------------------------------------------
# Unary elementwise functions and activations without options

# name: (torch function, low, high) of the input values.
UNARY = {
    "asin": (torch.asin, -0.95, 0.95),
    "acos": (torch.acos, -0.95, 0.95),
    "atan": (torch.atan, -4, 4),
    "sinh": (torch.sinh, -4, 4),
    "cosh": (torch.cosh, -4, 4),
    "mish": (F.mish, -5, 5),
    "hardsigmoid": (F.hardsigmoid, -5, 5),
    "hardswish": (F.hardswish, -5, 5),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary(name, dtype):
    fn, lo, hi = UNARY[name]
    x, t = pair((4, 6), dtype, lo, hi, seed=1)
    check_tol(getattr(xl, name)(x), torch_in_float(fn, t), COMPOSITE_TOL)
    if hasattr(t, name):
        check_tol(getattr(x, name)(), torch_in_float(lambda u: getattr(u, name)(), t), COMPOSITE_TOL)
    check_tol(getattr(xl, name)(input=x), torch_in_float(fn, t), COMPOSITE_TOL)


@pytest.mark.parametrize("name", ["asin", "acos", "atan", "sinh", "cosh"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_unary_of_integers_is_float32(name, dtype):
    x, t = pair((3, 4), dtype, -1, 1, seed=2)
    fn = UNARY[name][0]
    got = getattr(xl, name)(x)
    assert got.dtype == xl.float32
    check_tol(got, fn(t), COMPOSITE_TOL)


def test_unary_special_values():
    values = [-1.0, 1.0, 0.0, -0.0, 2.0, -2.0, float("inf"), -float("inf"), float("nan"), 1e-6, -1e-6]
    x = xl.tensor(values)
    t = torch.tensor(values)
    for name in ("asin", "acos", "atan"):
        check_tol(getattr(xl, name)(x), getattr(torch, name)(t), COMPOSITE_TOL)
    big = [100.0, -100.0, 88.0, -88.0, 1e-7, -1e-7, 0.0, float("inf"), -float("inf"), float("nan")]
    for name in ("sinh", "cosh"):
        check_tol(getattr(xl, name)(xl.tensor(big)), getattr(torch, name)(torch.tensor(big)), COMPOSITE_TOL)
    act = [-1000.0, -3.0, 3.0, 0.0, 1000.0, float("nan")]
    for name in ("mish", "hardsigmoid", "hardswish"):
        check_tol(getattr(xl, name)(xl.tensor(act)), getattr(F, name)(torch.tensor(act)), COMPOSITE_TOL)
    assert xl.asin(xl.tensor([1.0])).item() == pytest.approx(math.pi / 2)
    assert xl.acos(xl.tensor([-1.0])).item() == pytest.approx(math.pi)
    assert math.isnan(xl.asin(xl.tensor([1.5])).item())


# --------------------------------------------------------------------------------------------------------------
# Binary elementwise functions: atan2, logaddexp, hypot

BINARY = {
    "atan2": (torch.atan2, -3, 3),
    "logaddexp": (torch.logaddexp, -5, 5),
    "hypot": (torch.hypot, -3, 3),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_binary(name, dtype):
    fn, lo, hi = BINARY[name]
    x, t = pair((3, 4), dtype, lo, hi, seed=3)
    y, u = pair((4,), dtype, lo, hi, seed=4)  # broadcasts
    check_tol(getattr(xl, name)(x, y), torch_in_float(fn, t, u), COMPOSITE_TOL)
    check_tol(getattr(xl, name)(y, x), torch_in_float(fn, u, t), COMPOSITE_TOL)
    check_tol(getattr(xl, name)(input=x, other=y), torch_in_float(fn, t, u), COMPOSITE_TOL)
    check_tol(getattr(x, name)(y), torch_in_float(lambda a, b: getattr(a, name)(b), t, u), COMPOSITE_TOL)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_promotes(name):
    fn = BINARY[name][0]
    h, ht = pair((3, 4), "float16", seed=5)
    f, ft = pair((4,), "float32", seed=6)
    check_tol(getattr(xl, name)(h, f), fn(ht.float(), ft), COMPOSITE_TOL)  # float16 with float32 is float32
    d, dt = pair((3, 4), "float64", seed=7)
    check_tol(getattr(xl, name)(f, d), fn(ft.double(), dt), COMPOSITE_TOL)
    i, it = pair((3, 4), "int64", -3, 3, seed=8)
    j, jt = pair((3, 4), "int32", -3, 3, seed=9)
    got = getattr(xl, name)(i, j)
    assert got.dtype == xl.float32  # integers compute in the default float dtype, as torch.atan2
    check_tol(got, fn(it.float(), jt.float()), COMPOSITE_TOL)
    if name == "atan2":
        check_tol(got, torch.atan2(it, jt), COMPOSITE_TOL)


def test_binary_special_values():
    inf, nan = float("inf"), float("nan")
    ys = [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, inf, -inf, inf, -inf, 1.0, 0.0, nan, 2.0, -2.0]
    xs = [0.0, 0.0, -0.0, -0.0, -inf, -inf, inf, inf, -inf, -inf, 0.0, -1.0, 1.0, -0.0, -0.0]
    got = xl.atan2(xl.tensor(ys), xl.tensor(xs))
    want = torch.atan2(torch.tensor(ys), torch.tensor(xs))
    check_tol(got, want, COMPOSITE_TOL)
    # The signs of zeros and of pi follow torch too (a NaN's sign is left open).
    number = ~np.isnan(want.numpy())
    np.testing.assert_array_equal(np.signbit(np.asarray(got))[number], np.signbit(want.numpy())[number])
    a = [1000.0, -1000.0, inf, -inf, -inf, 0.0, nan, 88.0]
    b = [1000.0, -1000.0, inf, -inf, 5.0, -inf, 1.0, -88.0]
    check_tol(xl.logaddexp(xl.tensor(a), xl.tensor(b)), torch.logaddexp(torch.tensor(a), torch.tensor(b)),
              COMPOSITE_TOL)
    a = [1e30, 1e-30, 0.0, inf, -inf, 3.0, nan, inf]
    b = [1e30, 1e-30, 0.0, 1.0, 2.0, -4.0, 1.0, nan]
    check_tol(xl.hypot(xl.tensor(a), xl.tensor(b)), torch.hypot(torch.tensor(a), torch.tensor(b)), COMPOSITE_TOL)
    assert xl.hypot(xl.tensor([3.0]), xl.tensor([4.0])).tolist() == [5.0]


# --------------------------------------------------------------------------------------------------------------
# Activations with options


@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (2.0, 20.0), (0.5, 1.0), (1.0, 2.0), (-1.0, 20.0)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_softplus(beta, threshold, dtype):
    x, t = pair((4, 8), dtype, -8, 8, seed=10)
    want = torch_in_float(lambda u: F.softplus(u, beta, threshold), t)
    check_tol(xl.softplus(x, beta, threshold), want, COMPOSITE_TOL)
    check_tol(xl.softplus(x, beta=beta, threshold=threshold), want, COMPOSITE_TOL)
    if beta == 1.0 and threshold == 20.0:
        check_tol(xl.softplus(x), torch_in_float(F.softplus, t), COMPOSITE_TOL)


def test_softplus_extremes():
    v = [-200.0, -30.0, 0.0, 19.9, 20.1, 200.0]
    check_tol(xl.softplus(xl.tensor(v)), F.softplus(torch.tensor(v)), COMPOSITE_TOL)
    d = [-700.0, -40.0, 40.0, 700.0]
    check_tol(xl.softplus(xl.tensor(d, dtype=xl.float64), threshold=1000.0),
              F.softplus(torch.tensor(d, dtype=torch.float64), threshold=1000.0), COMPOSITE_TOL)


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.5])
@pytest.mark.parametrize("dtype", FLOATS)
def test_elu(alpha, dtype):
    x, t = pair((4, 6), dtype, -4, 4, seed=11)
    want = torch_in_float(lambda u: F.elu(u, alpha), t)
    check_tol(xl.elu(x, alpha), want, COMPOSITE_TOL)
    check_tol(xl.elu(x, alpha=alpha), want, COMPOSITE_TOL)
    if alpha == 1.0:
        check_tol(xl.elu(x), torch_in_float(F.elu, t), COMPOSITE_TOL)


@pytest.mark.parametrize("slope", [0.01, 0.2, 1.5])
@pytest.mark.parametrize("dtype", FLOATS)
def test_leaky_relu(slope, dtype):
    x, t = pair((4, 6), dtype, -4, 4, seed=12)
    want = torch_in_float(lambda u: F.leaky_relu(u, slope), t)
    check_tol(xl.leaky_relu(x, slope), want, COMPOSITE_TOL)
    check_tol(xl.leaky_relu(x, negative_slope=slope), want, COMPOSITE_TOL)
    if slope == 0.01:
        check_tol(xl.leaky_relu(x), torch_in_float(F.leaky_relu, t), COMPOSITE_TOL)


@pytest.mark.parametrize("shape, dim", [((4, 6), -1), ((4, 6), 0), ((4, 6), 1), ((2, 4, 6), 1), ((2, 3, 4), -3),
                                        ((6,), 0)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_glu(shape, dim, dtype):
    x, t = pair(shape, dtype, -3, 3, seed=13)
    want = torch_in_float(lambda u: F.glu(u, dim), t)
    check_tol(xl.glu(x, dim), want, COMPOSITE_TOL)
    check_tol(xl.glu(x, dim=dim), want, COMPOSITE_TOL)
    if dim == -1:
        check_tol(xl.glu(x), torch_in_float(F.glu, t), COMPOSITE_TOL)


# --------------------------------------------------------------------------------------------------------------
# clamp_min, clamp_max, nan_to_num


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32"])
@pytest.mark.parametrize("bound", [0, 1, -0.5, 1.5])
def test_clamp_min_max(name, dtype, bound):
    x, t = pair((3, 5), dtype, -3, 3, seed=14)
    want = torch_in_float(lambda u: getattr(torch, name)(u, bound), t)
    check(getattr(xl, name)(x, bound), want)
    check(getattr(x, name)(bound), want)
    key = "min" if name == "clamp_min" else "max"
    check(getattr(xl, name)(x, **{key: bound}), want)


def test_clamp_min_max_nan_and_values():
    v = [float("nan"), -2.0, 0.5, 3.0]
    check(xl.clamp_min(xl.tensor(v), 0.0), torch.clamp_min(torch.tensor(v), 0.0))
    check(xl.clamp_max(xl.tensor(v), 1.0), torch.clamp_max(torch.tensor(v), 1.0))
    assert xl.clamp_min(xl.tensor([-3, 4]), 0).tolist() == [0, 4]
    assert xl.clamp_min(xl.tensor([-3, 4]), 0).dtype == xl.int64
    assert xl.clamp_max(xl.tensor([1, 4], dtype=xl.int32), 2).dtype == xl.int32


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kw", [{}, {"nan": 1.5}, {"posinf": 100.0}, {"neginf": -7.0},
                                {"nan": -1.0, "posinf": 2.0, "neginf": -3.0}], ids=str)
def test_nan_to_num(dtype, kw):
    values = np.array([[float("nan"), float("inf"), -float("inf")], [1.25, -0.5, 0.0]], dtype=np.float32)
    x, t = from_array(values, dtype)
    want = torch.nan_to_num(t, **kw)  # the default replacements depend on the dtype: torch's own, not float32's
    check(xl.nan_to_num(x, **kw), want, rtol=0, atol=0)
    check(x.nan_to_num(**kw), want, rtol=0, atol=0)


def test_nan_to_num_positional_and_integers():
    values = [float("nan"), float("inf"), -float("inf"), 2.0]
    check(xl.nan_to_num(xl.tensor(values), 0.5, 9.0, -9.0), torch.nan_to_num(torch.tensor(values), 0.5, 9.0, -9.0))
    i, it = pair((2, 3), "int64", -5, 5, seed=15)
    check(xl.nan_to_num(i), torch.nan_to_num(it))
    b, bt = pair((2, 3), "bool", seed=16)
    check(xl.nan_to_num(b), torch.nan_to_num(bt))


# --------------------------------------------------------------------------------------------------------------
# any, all, count_nonzero, std, norm

MIXED = np.array([[0, 1, 2, 0, 3], [1, 1, 1, 1, 2], [0, 0, 0, 0, 5]])  # rows and columns of each kind


@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "bool"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1, -2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_any_all(name, dtype, dim, keepdim):
    x, t = from_array(MIXED.astype(DTYPES[dtype][2]) if dtype != "bool" else MIXED != 0, dtype)
    fn = getattr(torch, name)
    if dim is None:
        if keepdim:
            pytest.skip("torch 1.13's any/all without a dim take no keepdim")
        want = fn(t)
        check(getattr(xl, name)(x), want)
        check(getattr(x, name)(), want)
    else:
        want = fn(t, dim, keepdim)
        check(getattr(xl, name)(x, dim, keepdim), want)
        check(getattr(xl, name)(x, dim=dim, keepdim=keepdim), want)
        check(getattr(x, name)(dim, keepdim=keepdim), want)
    assert getattr(xl, name)(x).dtype == xl.bool


@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("dims", [(0, 1), (1, 2), (0, 2), (-1, 0), (0, 1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_any_all_over_several_dims(name, dims, keepdim):
    x, t = ties((2, 3, 4), "int64", hi=2, seed=17)
    fn = getattr(torch, name)
    want = t
    for d in sorted((d % 3 for d in dims), reverse=True):
        want = fn(want, d, True)
    if not keepdim:
        want = want.reshape([s for i, s in enumerate(t.shape) if i not in {d % 3 for d in dims}])
    check(getattr(xl, name)(x, dims, keepdim), want)


def test_any_all_of_empty_and_known_values():
    check(xl.any(xl.zeros(0)), torch.any(torch.zeros(0)))  # False
    check(xl.all(xl.zeros(0)), torch.all(torch.zeros(0)))  # True
    assert xl.all(xl.zeros(0)).item()
    assert xl.any(xl.tensor([0.0, float("nan")])).item()  # NaN is non-zero, as in torch
    assert torch.any(torch.tensor([0.0, float("nan")])).item()
    assert xl.all(xl.tensor([[1, 2], [3, 0]]), 1).tolist() == [True, False]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1), (1, -1), (0, 1, 2)], ids=str)
def test_count_nonzero(dtype, dim):
    x, t = ties((2, 3, 4), dtype, hi=2, seed=18)
    want = torch.count_nonzero(t, dim)
    got = xl.count_nonzero(x, dim)
    assert got.dtype == xl.int64
    check(got, want)
    check(xl.count_nonzero(x, dim=dim), want)
    check(x.count_nonzero(dim), want)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 2), (-1, 0)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("unbiased", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_std(dim, keepdim, unbiased, dtype):
    x, t = pair((3, 4, 5), dtype, seed=19)
    want = torch.std(t, dim, unbiased=unbiased, keepdim=keepdim)
    check(xl.std(x, dim, unbiased=unbiased, keepdim=keepdim), want, 1e-5, 1e-6)
    check(xl.std(x, dim, correction=1 if unbiased else 0, keepdim=keepdim), want, 1e-5, 1e-6)
    check(x.std(dim, unbiased=unbiased, keepdim=keepdim), want, 1e-5, 1e-6)


def test_std_defaults_and_corrections():
    x, t = pair((4, 6), "float32", seed=20)
    check(xl.std(x), torch.std(t), 1e-5, 1e-6)
    check(x.std(), t.std(), 1e-5, 1e-6)
    check(xl.std(x, 1, correction=2), torch.std(t, 1, correction=2), 1e-5, 1e-6)
    check(xl.std(x, dim=0, correction=0, keepdim=True), torch.std(t, dim=0, correction=0, keepdim=True), 1e-5, 1e-6)
    h, ht = pair((4, 6), "float16", seed=21)
    check_tol(xl.std(h, 1), torch_in_float(lambda u: torch.std(u, 1), ht), COMPOSITE_TOL)


NORM_PS = [1, 2, 3, 0.5, 0, float("inf"), -float("inf"), "fro"]


@pytest.mark.parametrize("p", NORM_PS, ids=str)
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 2), (-1, 1)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_norm(p, dim, keepdim):
    x, t = pair((2, 3, 4), "float32", seed=22)
    ord_ = 2 if p == "fro" else p
    want = torch.linalg.vector_norm(t, ord_, dim, keepdim)
    check(xl.norm(x, p, dim, keepdim), want, 1e-5, 1e-5)
    check(xl.norm(x, p=p, dim=dim, keepdim=keepdim), want, 1e-5, 1e-5)
    check(x.norm(p, dim, keepdim=keepdim), want, 1e-5, 1e-5)


def test_norm_like_torch_norm():
    x, t = pair((3, 4), "float32", seed=23)
    check(xl.norm(x), torch.norm(t), 1e-5, 1e-6)
    check(x.norm(), t.norm(), 1e-5, 1e-6)
    check(xl.norm(x, 1, 1), torch.norm(t, 1, 1), 1e-5, 1e-6)
    check(xl.norm(x, "fro", (0, 1)), torch.norm(t, "fro", (0, 1)), 1e-5, 1e-6)
    check(xl.norm(x, float("inf"), -1, True), torch.norm(t, float("inf"), -1, True), 1e-5, 1e-6)
    check(x.norm(p=3, dim=0), t.norm(p=3, dim=0), 1e-5, 1e-6)
    d, dt = pair((5,), "float64", seed=24)
    check(xl.norm(d), torch.norm(dt))
    assert xl.norm(xl.tensor([3.0, -4.0])).item() == 5.0


# --------------------------------------------------------------------------------------------------------------
# max/min along a dim (values and indices), isclose, allclose, equal


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_along_dim_as_values_indices(name, dim, keepdim):
    x, t = pair((3, 5), "float32", seed=25)
    want = getattr(torch, name)(t, dim, keepdim)
    r = getattr(x, name)(dim=dim, keepdim=keepdim)
    assert isinstance(r, xl.ValuesIndices)
    assert len(r) == 2
    values, indices = r  # unpacks like torch.return_types
    check(values, want.values)
    check(indices, want.indices)
    check(r.values, want.values)
    check(r.indices, want.indices)
    check(r[0], want.values)
    check(r[1], want.indices)
    check(r[-1], want.indices)
    with pytest.raises(IndexError):
        r[2]
    check_pair(getattr(xl, name)(x, dim, keepdim), want)
    check_pair(getattr(xl, name)(x, dim=dim, keepdim=keepdim), want)
    assert "values=" in repr(r) and "indices=" in repr(r)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float64", "float16"])
def test_max_min_along_dim_dtypes_and_ties(dtype):
    x, t = ties((4, 6), dtype, hi=3, seed=26)  # many ties: the first index of the extreme, as torch's CPU
    for name in ("max", "min"):
        for dim in (0, 1):
            check_pair(getattr(x, name)(dim), torch_pair_in_float(lambda u: getattr(u, name)(dim), t))


def test_max_min_along_dim_with_nan():
    v = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [4.0, 2.0, 0.0, 1.0]])
    x = xl.tensor(v.numpy())
    check_pair(x.max(1), v.max(1))
    check_pair(x.min(dim=1), v.min(dim=1))


def test_isclose_allclose_equal():
    x, t = pair((3, 4), "float32", seed=27)
    y, u = pair((4,), "float32", seed=28)
    check(xl.isclose(x, y), torch.isclose(t, u))
    check(xl.isclose(x, x + 1e-6), torch.isclose(t, t + 1e-6))
    check(x.isclose(x + 1e-3, rtol=1e-2, atol=0.0), t.isclose(t + 1e-3, rtol=1e-2, atol=0.0))
    i, it = pair((3, 4), "int64", seed=29)
    check(xl.isclose(i, i + 1, atol=1), torch.isclose(it, it + 1, atol=1))
    check(xl.isclose(i, i + 1), torch.isclose(it, it + 1))
    assert xl.allclose(x, x.clone()) is True
    assert x.allclose(x + 1e-3) is False
    assert xl.allclose(x, x + 1e-3, rtol=0.0, atol=1e-2) is True
    assert torch.equal(t, t.clone()) and xl.equal(x, x.clone()) is True
    assert xl.equal(x, x + 1e-3) is False
    assert x.equal(x) is True
    assert not torch.equal(torch.ones(2), torch.ones(3))
    assert xl.equal(xl.ones(2), xl.ones(3)) is False  # different shapes
    assert xl.equal(xl.tensor([1, 2]), xl.tensor([1, 2])) is True
    assert xl.equal(xl.tensor([True]), xl.tensor([False])) is False


# --------------------------------------------------------------------------------------------------------------
# Scans

ALL_DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool")


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_cumsum_cumprod(name, dtype, dim):
    if name == "cumprod":
        lo, hi = (0.5, 1.5) if dtype in FLOATS else (0, 3)
    elif dtype in ("float16", "bfloat16"):
        lo, hi = -1, 1  # small partial sums: a rounding at each step stays within the tolerance
    else:
        lo, hi = (-2, 2) if dtype not in ("uint8",) else (0, 5)
    x, t = pair((4, 5), dtype, lo, hi, seed=30)
    want = torch_in_float(lambda u: getattr(torch, name)(u, dim), t)
    got = getattr(xl, name)(x, dim)
    if dtype in INTEGERS:
        assert got.dtype == xl.int64  # integers and bools accumulate in int64, as torch
    check_tol(got, want, SCAN_TOL)
    check_tol(getattr(xl, name)(input=x, dim=dim), want, SCAN_TOL)
    check_tol(getattr(x, name)(dim), want, SCAN_TOL)


def test_cumsum_cumprod_shapes_and_values():
    x, t = pair((2, 3, 4), "float64", seed=31)
    for dim in (0, 1, 2, -3):
        check(xl.cumsum(x, dim), torch.cumsum(t, dim))
        check(xl.cumprod(x, dim), torch.cumprod(t, dim))
    check(x.cumsum(0), t.cumsum(0))  # the method form
    s = xl.tensor(2.5)
    check(xl.cumsum(s, 0), torch.cumsum(torch.tensor(2.5), 0))
    check(xl.cumprod(s, -1), torch.cumprod(torch.tensor(2.5), -1))
    assert xl.cumsum(xl.tensor([1, 2, 3]), 0).tolist() == [1, 3, 6]
    assert xl.cumprod(xl.tensor([1.0, 2.0, 0.0, 4.0]), 0).tolist() == [1.0, 2.0, 0.0, 0.0]
    big = xl.tensor([2**40, 2**40], dtype=xl.int64)
    assert xl.cumsum(big, 0).tolist() == [2**40, 2**41]  # exact in int64


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cummax_cummin(name, dtype, dim):
    x, t = ties((5, 6), dtype, hi=3, seed=32)  # ties: the index is the latest one of the running extreme
    want = torch_pair_in_float(lambda u: getattr(torch, name)(u, dim), t)
    check_pair(getattr(xl, name)(x, dim), want)
    check_pair(getattr(xl, name)(x, dim=dim), want)
    values, indices = getattr(x, name)(dim)
    check(values, want.values)
    check(indices, want.indices)


def test_cummax_cummin_with_nan_and_known_values():
    v = torch.tensor([1.0, float("nan"), 3.0, 0.0, float("nan")])
    x = xl.tensor(v.numpy())
    check_pair(xl.cummax(x, 0), torch.cummax(v, 0))
    check_pair(xl.cummin(x, 0), torch.cummin(v, 0))
    r = xl.cummax(xl.tensor([1.0, 3.0, 3.0, 2.0, 3.0, 5.0]), 0)
    assert r.values.tolist() == [1.0, 3.0, 3.0, 3.0, 3.0, 5.0]
    assert r.indices.tolist() == [0, 1, 2, 2, 4, 5]


# --------------------------------------------------------------------------------------------------------------
# Sorting: sort, argsort, topk, kthvalue, median, mode


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_is_stable_like_torch(dtype, dim, descending):
    x, t = ties((5, 7), dtype, hi=4, seed=33)  # ties: stable, equal values keep their order
    want = torch_pair_in_float(lambda u: torch.sort(u, dim=dim, descending=descending, stable=True), t)
    check_pair(xl.sort(x, dim, descending), want)
    check_pair(xl.sort(x, dim=dim, descending=descending), want)
    check_pair(x.sort(dim, descending=descending), want)
    got = xl.argsort(x, dim, descending)
    assert got.dtype == xl.int64
    check(got, want.indices)
    check(x.argsort(dim=dim, descending=descending), want.indices)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sort_random_floats(dtype):
    x, t = pair((4, 9), dtype, seed=34)
    for descending in (False, True):
        want = torch_pair_in_float(lambda u: torch.sort(u, descending=descending, stable=True), t)
        check_pair(xl.sort(x, descending=descending), want)
    check_pair(x.sort(descending=True), torch_pair_in_float(lambda u: u.sort(descending=True, stable=True), t))
    check_pair(xl.sort(x), torch_pair_in_float(lambda u: torch.sort(u, stable=True), t))  # dim -1 by default
    check(xl.argsort(x), torch_pair_in_float(lambda u: torch.sort(u, stable=True), t).indices)


def test_sort_nan_and_infinities():
    v = torch.tensor([float("nan"), 1.0, -float("inf"), float("inf"), float("nan"), 0.0, 1.0, -2.0])
    x = xl.tensor(v.numpy())
    for descending in (False, True):
        want = torch.sort(v, descending=descending, stable=True)
        check_pair(xl.sort(x, descending=descending), want)


@pytest.mark.parametrize("k", [0, 1, 3, 6])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_topk(k, dim, largest, dtype):
    x, t = pair((6, 7), dtype, seed=35)
    if dtype == "bfloat16":
        x, t = from_array(np.random.default_rng(35).permutation(42).reshape(6, 7).astype(np.float32), dtype)
    want = torch_pair_in_float(lambda u: torch.topk(u, k, dim, largest), t)
    check_pair(xl.topk(x, k, dim, largest), want)
    check_pair(xl.topk(x, k, dim=dim, largest=largest), want)
    check_pair(x.topk(k, dim, largest=largest), want)


def test_topk_defaults_integers_and_nan():
    x, t = pair((3, 8), "float32", seed=36)
    check_pair(x.topk(2), t.topk(2))  # the method form, along the last dim
    check_pair(xl.topk(x, 3), torch.topk(t, 3))
    i, it = ties((3, 8), "int64", hi=20, seed=37)
    check_pair(xl.topk(i, 3), torch.topk(it, 3), indices=False)  # ties: torch's order of equal values is open
    got = xl.topk(i, 3)
    np.testing.assert_array_equal(np.take_along_axis(np.asarray(i), np.asarray(got.indices), 1),
                                  np.asarray(got.values))
    v = torch.tensor([1.0, float("nan"), -1.0, 5.0])
    check_pair(xl.topk(xl.tensor(v.numpy()), 2), torch.topk(v, 2))  # NaN is the largest


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(k, dim, keepdim):
    x, t = pair((5, 6), "float32", seed=38)
    want = torch.kthvalue(t, k, dim, keepdim)
    check_pair(xl.kthvalue(x, k, dim, keepdim), want)
    check_pair(xl.kthvalue(x, k, dim=dim, keepdim=keepdim), want)
    check_pair(x.kthvalue(k, dim, keepdim), want)


def test_kthvalue_default_dim_and_integers():
    x, t = pair((3, 7), "float64", seed=39)
    check_pair(xl.kthvalue(x, 4), torch.kthvalue(t, 4))
    i, it = ties((3, 7), "int32", hi=3, seed=40)
    check_pair(xl.kthvalue(i, 2, 1), torch.kthvalue(it, 2, 1), indices=False)


@pytest.mark.parametrize("shape", [(5, 6), (4, 6), (3, 4, 5)])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median(shape, dim, keepdim):
    x, t = pair(shape, "float32", seed=41)
    want = torch.median(t, dim, keepdim)  # the lower median for an even count
    check_pair(xl.median(x, dim, keepdim), want)
    check_pair(xl.median(x, dim=dim, keepdim=keepdim), want)
    check_pair(x.median(dim, keepdim=keepdim), want)
    check(xl.median(x), torch.median(t))
    check(x.median(), t.median())


def test_median_integers_and_nan():
    i, it = ties((4, 6), "int64", hi=4, seed=42)
    check(xl.median(i), torch.median(it))
    check_pair(xl.median(i, 1), torch.median(it, 1), indices=False)
    v = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [4.0, 2.0, 0.0, 1.0]])
    x = xl.tensor(v.numpy())
    check_pair(xl.median(x, 1), torch.median(v, 1))  # a NaN is the median, at the first NaN
    check(xl.median(x), torch.median(v))
    assert xl.median(xl.tensor([4.0, 1.0, 3.0, 2.0])).item() == 2.0


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_mode(dtype, dim, keepdim):
    x, t = ties((5, 7), dtype, hi=3, seed=43)
    want = torch.mode(t, dim, keepdim)  # the smallest of the most frequent values, at its last position
    check_pair(xl.mode(x, dim, keepdim), want)
    check_pair(xl.mode(x, dim=dim, keepdim=keepdim), want)
    check_pair(x.mode(dim, keepdim), want)


def test_mode_default_and_known_values():
    x, t = ties((4, 9), "int64", hi=4, seed=44)
    check_pair(xl.mode(x), torch.mode(t))
    check_pair(x.mode(), t.mode())
    r = xl.mode(xl.tensor([[1, 2, 2, 1, 3], [5, 5, 4, 4, 4]]), 1)
    assert r.values.tolist() == [1, 4] and r.indices.tolist() == [3, 4]


# --------------------------------------------------------------------------------------------------------------
# repeat, tile, repeat_interleave, roll, diag, diagonal, trace, unfold, clone


@pytest.mark.parametrize("repeats", [(1, 1), (2, 3), (2, 1, 2), (0, 2), (3, 1, 1, 2)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_repeat(repeats, dtype):
    x, t = pair((2, 3), dtype, seed=45)
    want = t.repeat(*repeats)
    check(x.repeat(*repeats), want)
    check(x.repeat(repeats), t.repeat(repeats))
    check(x.repeat(list(repeats)), want)
    check(xl._xlite.repeat(x, repeats), want)  # the function the method calls


@pytest.mark.parametrize("dims", [(2,), (2, 2), (1, 2, 3), (3, 1), (2, 1, 1, 2)], ids=str)
def test_tile(dims):
    x, t = pair((2, 3), "float32", seed=46)
    want = torch.tile(t, dims)
    check(xl.tile(x, dims), want)
    check(xl.tile(x, list(dims)), want)
    check(x.tile(*dims), t.tile(*dims))
    check(x.tile(dims), t.tile(dims))
    v, vt = pair((4,), "int64", seed=47)
    check(xl.tile(v, dims), torch.tile(vt, dims))


@pytest.mark.parametrize("repeats, dim", [(2, None), (3, 0), (2, 1), (1, -1), (0, 1), ([1, 0, 2], 1), ([2, 1], 0),
                                          ([2], 1), ([1, 2, 0, 1, 3, 1], None)], ids=str)
def test_repeat_interleave(repeats, dim):
    x, t = pair((2, 3), "float32", seed=48)
    if isinstance(repeats, list):
        got_repeats, want_repeats = xl.tensor(repeats), torch.tensor(repeats)
    else:
        got_repeats = want_repeats = repeats
    want = torch.repeat_interleave(t, want_repeats, dim)
    check(xl.repeat_interleave(x, got_repeats, dim), want)
    check(xl.repeat_interleave(x, got_repeats, dim=dim), want)
    check(x.repeat_interleave(got_repeats, dim=dim), t.repeat_interleave(want_repeats, dim=dim))


def test_repeat_interleave_integers():
    i = xl.tensor([1, 2, 3], dtype=xl.int32)
    got = xl.repeat_interleave(i, 2)
    assert got.dtype == xl.int32 and got.tolist() == [1, 1, 2, 2, 3, 3]
    assert xl.repeat_interleave(xl.tensor([1, 2, 3]), xl.tensor([3, 0, 1])).tolist() == [1, 1, 1, 3]
    assert xl.repeat_interleave(xl.tensor([1, 2]), xl.tensor([2, 1], dtype=xl.int32)).tolist() == [1, 1, 2]


@pytest.mark.parametrize("shifts, dims", [(1, None), (-2, None), (13, None), (1, 0), (-1, 1), (5, -1),
                                          ((1, -1), (0, 1)), ((2, 1), (-1, 0)), ([3], [1]), ((0, 0), (0, 1))],
                         ids=str)
def test_roll(shifts, dims):
    x, t = pair((3, 4), "float32", seed=49)
    want = torch.roll(t, shifts, dims)
    check(xl.roll(x, shifts, dims), want)
    check(xl.roll(x, shifts=shifts, dims=dims), want)
    check(x.roll(shifts, dims), t.roll(shifts, dims))
    i, it = pair((3, 4), "int64", seed=50)
    check(xl.roll(i, shifts, dims), torch.roll(it, shifts, dims))


@pytest.mark.parametrize("offset", [0, 1, -1, 2, -3])
def test_diag(offset):
    v, vt = pair((4,), "float32", seed=51)
    check(xl.diag(v, offset), torch.diag(vt, offset))
    check(xl.diag(v, diagonal=offset), torch.diag(vt, diagonal=offset))
    check(v.diag(offset), vt.diag(offset))
    for shape in ((4, 4), (3, 5), (5, 3)):
        m, mt = pair(shape, "float32", seed=52)
        check(xl.diag(m, offset), torch.diag(mt, offset))
        check(m.diag(offset), mt.diag(offset))
    i, it = pair((3,), "int64", seed=53)
    check(xl.diag(i), torch.diag(it))


@pytest.mark.parametrize("shape, offset, dim1, dim2", [
    ((4, 4), 0, 0, 1), ((3, 5), 1, 0, 1), ((3, 5), -2, 0, 1), ((3, 5), 0, 1, 0), ((2, 3, 4), 0, 0, 1),
    ((2, 3, 4), 1, 1, 2), ((2, 3, 4), -1, -1, 0), ((2, 3, 4), 0, 2, 0), ((2, 3, 4), 2, -2, -1), ((3, 3), 5, 0, 1),
])
def test_diagonal(shape, offset, dim1, dim2):
    x, t = pair(shape, "float32", seed=54)
    want = torch.diagonal(t, offset, dim1, dim2)
    check(xl.diagonal(x, offset, dim1, dim2), want)
    check(xl.diagonal(x, offset=offset, dim1=dim1, dim2=dim2), want)
    check(x.diagonal(offset, dim1, dim2), t.diagonal(offset, dim1, dim2))
    if (offset, dim1, dim2) == (0, 0, 1):
        check(xl.diagonal(x), torch.diagonal(t))


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (4, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_trace(shape, dtype):
    x, t = pair(shape, dtype, seed=55)
    want = torch.trace(t)  # integers sum in int64
    check(xl.trace(x), want)
    check(x.trace(), t.trace())


@pytest.mark.parametrize("shape, dimension, size, step", [
    ((6,), 0, 2, 1), ((6,), 0, 3, 2), ((6,), 0, 6, 1), ((7,), 0, 2, 3), ((5, 4), 0, 2, 2), ((5, 4), 1, 3, 1),
    ((5, 4), -1, 2, 1), ((2, 5, 3), 1, 2, 2), ((2, 5, 3), -2, 5, 1),
])
def test_unfold(shape, dimension, size, step):
    x, t = pair(shape, "float32", seed=56)
    want = t.unfold(dimension, size, step)
    check(x.unfold(dimension, size, step), want)
    check(xl._xlite.unfold(x, dimension, size, step), want)


def test_unfold_method_example():
    x, t = pair((5,), "int64", seed=57)
    check(x.unfold(0, 2, 1), t.unfold(0, 2, 1))


def test_clone_is_independent():
    x, t = pair((2, 3), "float32", seed=58)
    c = xl.clone(x)
    check(c, t)
    x.add_(1)
    check(c, t)
    for dtype in ("int32", "bool", "float16"):
        y, u = pair((3,), dtype, seed=59)
        check(y.clone(), u.clone())


# --------------------------------------------------------------------------------------------------------------
# Products: outer, bmm, addmm, baddbmm, cross, einsum


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_outer_bmm(dtype):
    a, at = pair((3,), dtype, seed=60)
    b, bt = pair((4,), dtype, seed=61)
    check(xl.outer(a, b), torch.outer(at, bt))
    check(xl.outer(input=a, vec2=b), torch.outer(at, bt))
    check(a.outer(b), at.outer(bt))
    x, t = pair((2, 3, 4), dtype, seed=62)
    y, u = pair((2, 4, 5), dtype, seed=63)
    check(xl.bmm(x, y), torch.bmm(t, u), 1e-5, 1e-5)
    check(xl.bmm(input=x, mat2=y), torch.bmm(t, u), 1e-5, 1e-5)
    check(x.bmm(y), t.bmm(u), 1e-5, 1e-5)


@pytest.mark.parametrize("input_shape", [(3, 5), (5,), (1, 5), (3, 1)], ids=str)
@pytest.mark.parametrize("beta, alpha", [(1.0, 1.0), (0.5, 2.0), (0.0, 1.0), (2.0, 0.0), (-1.0, 0.5)])
def test_addmm(input_shape, beta, alpha):
    c, ct = pair(input_shape, "float32", seed=64)
    a, at = pair((3, 4), "float32", seed=65)
    b, bt = pair((4, 5), "float32", seed=66)
    want = torch.addmm(ct, at, bt, beta=beta, alpha=alpha)
    check(xl.addmm(c, a, b, beta=beta, alpha=alpha), want, 1e-5, 1e-5)
    check(c.addmm(a, b, beta=beta, alpha=alpha), ct.addmm(at, bt, beta=beta, alpha=alpha), 1e-5, 1e-5)
    if beta == 1.0 and alpha == 1.0:
        check(xl.addmm(c, a, b), torch.addmm(ct, at, bt), 1e-5, 1e-5)


def test_addmm_beta_zero_ignores_nan():
    c = torch.full((2, 2), float("nan"))
    a, at = pair((2, 3), "float32", seed=67)
    b, bt = pair((3, 2), "float32", seed=68)
    want = torch.addmm(c, at, bt, beta=0.0)
    got = xl.addmm(xl.tensor(c.numpy()), a, b, beta=0.0)
    assert not np.isnan(np.asarray(got)).any()
    check(got, want, 1e-5, 1e-5)


@pytest.mark.parametrize("input_shape", [(2, 3, 5), (3, 5), (1, 1, 5)], ids=str)
@pytest.mark.parametrize("beta, alpha", [(1.0, 1.0), (0.5, -2.0), (0.0, 1.5)])
def test_baddbmm(input_shape, beta, alpha):
    c, ct = pair(input_shape, "float32", seed=69)
    a, at = pair((2, 3, 4), "float32", seed=70)
    b, bt = pair((2, 4, 5), "float32", seed=71)
    want = torch.baddbmm(ct, at, bt, beta=beta, alpha=alpha)
    if beta == 0:  # torch 1.13 leaves garbage in a broadcast input's place with beta 0; the docs say it is ignored
        want = torch.bmm(at, bt) * alpha + torch.zeros(input_shape)
    check(xl.baddbmm(c, a, b, beta=beta, alpha=alpha), want, 1e-5, 1e-5)
    check(c.baddbmm(a, b, beta=beta, alpha=alpha), want, 1e-5, 1e-5)


@pytest.mark.parametrize("shape_a, shape_b, dim", [
    ((3,), (3,), 0), ((4, 3), (4, 3), -1), ((4, 3), (4, 3), 1), ((3, 4), (3, 4), 0), ((2, 3, 5), (2, 3, 5), 1),
    ((4, 3), (1, 3), -1), ((2, 3, 5), (1, 3, 1), -2),
], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_cross(shape_a, shape_b, dim, dtype):
    a, at = pair(shape_a, dtype, seed=72)
    b, bt = pair(shape_b, dtype, seed=73)
    want = torch.linalg.cross(at, bt, dim=dim)
    check(xl.cross(a, b, dim), want, 1e-5, 1e-5)
    check(xl.cross(a, b, dim=dim), want, 1e-5, 1e-5)
    if shape_a == shape_b:
        check(a.cross(b, dim=dim), torch.cross(at, bt, dim=dim), 1e-5, 1e-5)


def test_cross_default_dim_is_last():
    a, at = pair((4, 3), "float32", seed=74)
    b, bt = pair((4, 3), "float32", seed=75)
    check(xl.cross(a, b), torch.cross(at, bt, dim=-1), 1e-5, 1e-5)
    assert xl.cross(xl.tensor([1.0, 0.0, 0.0]), xl.tensor([0.0, 1.0, 0.0])).tolist() == [0.0, 0.0, 1.0]


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ii->", [(4, 4)]),
    ("bii->bi", [(2, 3, 3)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ab,ab->ab", [(3, 4), (3, 4)]),
    ("ab,ab->a", [(3, 4), (3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ijk,jil->kl", [(3, 2, 4), (2, 3, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("Ab,bc->Ac", [(3, 4), (4, 2)]),
    ("aB,Bc,cD", [(2, 3), (3, 4), (4, 5)]),  # implicit output: upper case before lower case, as torch
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(1, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("b...,b...->b", [(2, 3, 4), (2, 3, 4)]),
    ("i j , j k -> i k", [(3, 4), (4, 5)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum(equation, shapes):
    pairs = [pair(s, "float32", seed=76 + i) for i, s in enumerate(shapes)]
    xs, ts = [p[0] for p in pairs], [p[1] for p in pairs]
    want = torch.einsum(equation, *ts)
    check(xl.einsum(equation, *xs), want, 1e-5, 1e-5)
    check(xl.einsum(equation, xs), torch.einsum(equation, ts), 1e-5, 1e-5)  # the operands as one list


def test_einsum_float64_and_integers():
    a, at = pair((3, 4), "float64", seed=80)
    b, bt = pair((4, 2), "float64", seed=81)
    check(xl.einsum("ij,jk->ik", a, b), torch.einsum("ij,jk->ik", at, bt))
    i, it = pair((3, 4), "int64", seed=82)
    check(xl.einsum("ij->i", i), torch.einsum("ij->i", it))


# --------------------------------------------------------------------------------------------------------------
# Data-dependent shapes: nonzero, masked_select, unique


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint8"])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4)], ids=str)
def test_nonzero(dtype, shape):
    x, t = ties(shape, dtype, hi=2, seed=83)
    want = torch.nonzero(t)
    got = xl.nonzero(x)
    assert got.dtype == xl.int64
    check(got, want)
    check(x.nonzero(), t.nonzero())
    got_tuple = x.nonzero(as_tuple=True)
    want_tuple = t.nonzero(as_tuple=True)
    assert len(got_tuple) == len(want_tuple)
    for g, w in zip(got_tuple, want_tuple):
        check(g, w)


def test_nonzero_empty_and_scalar():
    check(xl.nonzero(xl.zeros(3, 4)), torch.nonzero(torch.zeros(3, 4)))
    check(xl.nonzero(xl.tensor(3.0)), torch.nonzero(torch.tensor(3.0)))
    assert xl.nonzero(xl.tensor([0, 5, 0, 7])).tolist() == [[1], [3]]


@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (3, 1), (1, 4)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_masked_select(mask_shape, dtype):
    x, t = pair((3, 4), dtype, seed=84)
    m, mt = pair(mask_shape, "bool", seed=85)
    want = torch.masked_select(t, mt)
    check(xl.masked_select(x, m), want)
    check(xl.masked_select(input=x, mask=m), want)
    check(x.masked_select(m), t.masked_select(mt))


@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "bool", "float64"])
@pytest.mark.parametrize("return_inverse", [False, True])
@pytest.mark.parametrize("return_counts", [False, True])
def test_unique(dtype, return_inverse, return_counts):
    x, t = ties((3, 5), dtype, hi=4, seed=86)
    want = torch.unique(t, sorted=True, return_inverse=return_inverse, return_counts=return_counts)
    got = xl.unique(x, sorted=True, return_inverse=return_inverse, return_counts=return_counts)
    method = x.unique(return_inverse=return_inverse, return_counts=return_counts)
    if not return_inverse and not return_counts:
        check(got, want)
        check(method, want)
        check(xl.unique(x), want)
        return
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, m, w in zip(got, method, want):
        check(g, w)
        check(m, w)


def test_unique_known_values():
    values, inverse, counts = xl.unique(xl.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    assert values.tolist() == [1, 2, 3]
    assert inverse.tolist() == [2, 0, 2, 1]
    assert counts.tolist() == [1, 1, 2]
    assert xl.unique(xl.tensor([2.5, -1.0, 2.5])).tolist() == [-1.0, 2.5]


# --------------------------------------------------------------------------------------------------------------
# conv1d, conv_transpose2d, 1-D pooling, adaptive average pooling, interpolate


@pytest.mark.parametrize("kw", [
    {}, {"stride": 2}, {"padding": 1}, {"dilation": 2}, {"groups": 2}, {"stride": 2, "padding": 2, "dilation": 2},
    {"stride": 3, "padding": 1, "groups": 2},
], ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_conv1d(kw, bias):
    groups = kw.get("groups", 1)
    x, t = pair((2, 4, 11), "float32", seed=87)
    w, wt = pair((6, 4 // groups, 3), "float32", seed=88)
    b, bt = pair((6,), "float32", seed=89)
    want = F.conv1d(t, wt, bt if bias else None, **kw)
    check(xl.conv1d(x, w, b if bias else None, **kw), want, 1e-4, 1e-4)
    if bias:
        check(xl.conv1d(x, w, bias=b, **kw), want, 1e-4, 1e-4)


def test_conv1d_known_values():
    x = xl.arange(6.0).reshape(1, 1, 6)
    assert xl.conv1d(x, xl.ones(1, 1, 2)).tolist() == [[[1.0, 3.0, 5.0, 7.0, 9.0]]]


@pytest.mark.parametrize("kw", [
    {}, {"stride": 2}, {"padding": 1}, {"stride": 2, "padding": 1, "output_padding": 1}, {"stride": (2, 1)},
    {"stride": (1, 2), "padding": (1, 0)}, {"dilation": 2}, {"dilation": (1, 2), "padding": 1}, {"groups": 2},
    {"stride": 2, "groups": 2, "dilation": 2, "output_padding": 1}, {"stride": 3, "padding": 2, "output_padding": 2},
], ids=str)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("kernel", [(3, 3), (2, 3)], ids=str)
def test_conv_transpose2d(kw, bias, kernel):
    groups = kw.get("groups", 1)
    x, t = pair((2, 4, 5, 6), "float32", seed=90)
    w, wt = pair((4, 3) + kernel, "float32", seed=91)  # [C_in, C_out / groups, KH, KW]
    b, bt = pair((3 * groups,), "float32", seed=92)
    want = F.conv_transpose2d(t, wt, bt if bias else None, **kw)
    check(xl.conv_transpose2d(x, w, b if bias else None, **kw), want, 1e-4, 1e-4)
    check(xl.nn.functional.conv_transpose2d(x, w, b if bias else None, **kw), want, 1e-4, 1e-4)


def test_conv_transpose2d_positional_and_list_arguments():
    x, t = pair((1, 2, 3, 4), "float32", seed=93)
    w, wt = pair((2, 2, 3, 3), "float32", seed=94)
    check(xl.conv_transpose2d(x, w, None, 2, 1, 1, 1, 1), F.conv_transpose2d(t, wt, None, 2, 1, 1, 1, 1), 1e-4, 1e-4)
    check(xl.conv_transpose2d(x, w, stride=[2, 1], padding=[0, 1]),
          F.conv_transpose2d(t, wt, stride=(2, 1), padding=(0, 1)), 1e-4, 1e-4)


@pytest.mark.parametrize("name", ["avg_pool1d", "max_pool1d"])
@pytest.mark.parametrize("kernel, stride, padding", [(2, None, 0), (3, 1, 0), (3, 2, 1), (4, 3, 2), (1, 1, 0),
                                                     (5, None, 2)])
def test_pool1d(name, kernel, stride, padding):
    x, t = pair((2, 3, 10), "float32", seed=95)
    want = getattr(F, name)(t, kernel, stride, padding)
    check(getattr(xl, name)(x, kernel, stride, padding), want, 1e-5, 1e-6)
    check(getattr(xl, name)(x, kernel_size=kernel, stride=stride, padding=padding), want, 1e-5, 1e-6)
    if stride is None and padding == 0:
        check(getattr(xl, name)(x, kernel), getattr(F, name)(t, kernel), 1e-5, 1e-6)


@pytest.mark.parametrize("size", [1, 3, (3, 4), [2, 5], (7, 9), (10, 12), (4, 1)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adaptive_avg_pool2d(size, dtype):
    x, t = pair((2, 3, 7, 9), dtype, seed=96)
    want = F.adaptive_avg_pool2d(t, size if not isinstance(size, list) else tuple(size))
    check(xl.adaptive_avg_pool2d(x, size), want, 1e-5, 1e-6)
    check(xl.adaptive_avg_pool2d(x, output_size=size), want, 1e-5, 1e-6)


@pytest.mark.parametrize("mode, align_corners", [("nearest", None), ("bilinear", False), ("bilinear", True),
                                                 ("bilinear", None)])
@pytest.mark.parametrize("size", [(8, 12), (3, 5), (7, 7), (1, 1), (4, 6), 5, (9, 2)], ids=str)
def test_interpolate(mode, align_corners, size):
    x, t = pair((2, 3, 4, 6), "float32", seed=97)
    want = F.interpolate(t, size=size, mode=mode, align_corners=align_corners)
    check(xl.interpolate(x, size, mode, align_corners), want, 1e-5, 1e-5)
    check(xl.interpolate(x, size=size, mode=mode, align_corners=align_corners), want, 1e-5, 1e-5)
    if mode == "nearest":
        check(xl.interpolate(x, size), F.interpolate(t, size=size), 1e-5, 1e-5)  # nearest by default


def test_interpolate_float64_and_known_values():
    x, t = pair((1, 2, 3, 3), "float64", seed=98)
    check(xl.interpolate(x, (5, 4), "bilinear", True), F.interpolate(t, size=(5, 4), mode="bilinear",
                                                                     align_corners=True))
    grid = xl.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    assert xl.interpolate(grid, (4, 4)).tolist() == [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0],
                                                       [3.0, 3.0, 4.0, 4.0], [3.0, 3.0, 4.0, 4.0]]]]


# --------------------------------------------------------------------------------------------------------------
# Gradients through backward, against torch's .grad

MASK = np.array([[True, False, True, True, False], [False, False, True, False, True], [True, True, True, False, False]])

# name: (xlite function, torch function, input shapes, low, high of the input values)
GRADS = {
    "cumsum": (lambda x: xl.cumsum(x, 1), lambda t: torch.cumsum(t, 1), [(3, 5)], -2, 2),
    "cumsum_method_dim0": (lambda x: x.cumsum(0), lambda t: t.cumsum(0), [(3, 5)], -2, 2),
    "cumprod": (lambda x: xl.cumprod(x, -1), lambda t: torch.cumprod(t, -1), [(3, 5)], 0.5, 1.5),
    "cumprod_dim0": (lambda x: xl.cumprod(x, 0), lambda t: torch.cumprod(t, 0), [(4, 3)], 0.5, 1.5),
    "cummax": (lambda x: xl.cummax(x, 1).values, lambda t: torch.cummax(t, 1).values, [(3, 5)], -2, 2),
    "cummin": (lambda x: xl.cummin(x, 0).values, lambda t: torch.cummin(t, 0).values, [(4, 3)], -2, 2),
    "sort": (lambda x: xl.sort(x, 1).values, lambda t: torch.sort(t, 1).values, [(3, 5)], -2, 2),
    "sort_descending": (lambda x: x.sort(0, descending=True).values, lambda t: t.sort(0, descending=True).values,
                        [(4, 3)], -2, 2),
    "topk": (lambda x: xl.topk(x, 2, 1).values, lambda t: torch.topk(t, 2, 1).values, [(3, 5)], -2, 2),
    "topk_smallest": (lambda x: x.topk(3, dim=0, largest=False).values,
                      lambda t: t.topk(3, dim=0, largest=False).values, [(4, 3)], -2, 2),
    "kthvalue": (lambda x: xl.kthvalue(x, 2, 1).values, lambda t: torch.kthvalue(t, 2, 1).values, [(3, 5)], -2, 2),
    "median": (lambda x: xl.median(x, 1).values, lambda t: torch.median(t, 1).values, [(3, 5)], -2, 2),
    "median_all": (lambda x: xl.median(x), lambda t: torch.median(t), [(3, 5)], -2, 2),
    "max_dim": (lambda x: x.max(dim=1).values, lambda t: t.max(dim=1).values, [(3, 5)], -2, 2),
    "einsum_matmul": (lambda a, b: xl.einsum("ij,jk->ik", a, b), lambda a, b: torch.einsum("ij,jk->ik", a, b),
                      [(3, 4), (4, 5)], -2, 2),
    "einsum_batched": (lambda a, b: xl.einsum("bij,bjk->bik", a, b), lambda a, b: torch.einsum("bij,bjk->bik", a, b),
                       [(2, 3, 4), (2, 4, 5)], -2, 2),
    "einsum_diagonal": (lambda a: xl.einsum("ii->i", a), lambda a: torch.einsum("ii->i", a), [(4, 4)], -2, 2),
    "einsum_outer": (lambda a, b: xl.einsum("i,j->ij", a, b), lambda a, b: torch.einsum("i,j->ij", a, b),
                     [(3,), (4,)], -2, 2),
    "einsum_three": (lambda a, b, c: xl.einsum("ij,jk,kl->il", a, b, c),
                     lambda a, b, c: torch.einsum("ij,jk,kl->il", a, b, c), [(2, 3), (3, 4), (4, 2)], -2, 2),
    "einsum_ellipsis": (lambda a, b: xl.einsum("...ij,...jk->...ik", a, b),
                        lambda a, b: torch.einsum("...ij,...jk->...ik", a, b), [(1, 3, 4), (2, 4, 5)], -2, 2),
    "conv_transpose2d": (lambda x, w, b: xl.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
                         lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
                         [(2, 4, 4, 5), (4, 3, 3, 3), (3,)], -1, 1),
    "conv_transpose2d_groups": (lambda x, w, b: xl.conv_transpose2d(x, w, b, groups=2, dilation=2),
                                lambda x, w, b: F.conv_transpose2d(x, w, b, groups=2, dilation=2),
                                [(1, 4, 4, 4), (4, 2, 2, 3), (4,)], -1, 1),
    "interpolate_bilinear": (lambda x: xl.interpolate(x, (7, 9), "bilinear", align_corners=False),
                             lambda t: F.interpolate(t, size=(7, 9), mode="bilinear", align_corners=False),
                             [(2, 3, 4, 5)], -2, 2),
    "interpolate_bilinear_aligned": (lambda x: xl.interpolate(x, (3, 8), "bilinear", align_corners=True),
                                     lambda t: F.interpolate(t, size=(3, 8), mode="bilinear", align_corners=True),
                                     [(2, 3, 4, 5)], -2, 2),
    "interpolate_nearest": (lambda x: xl.interpolate(x, (7, 3)), lambda t: F.interpolate(t, size=(7, 3)),
                            [(1, 2, 4, 5)], -2, 2),
    "adaptive_avg_pool2d": (lambda x: xl.adaptive_avg_pool2d(x, (3, 4)), lambda t: F.adaptive_avg_pool2d(t, (3, 4)),
                            [(2, 3, 7, 9)], -2, 2),
    "logaddexp": (lambda a, b: xl.logaddexp(a, b), lambda a, b: torch.logaddexp(a, b), [(3, 4), (4,)], -3, 3),
    "atan2": (lambda a, b: xl.atan2(a, b), lambda a, b: torch.atan2(a, b), [(3, 4), (3, 4)], 0.5, 2),
    "hypot": (lambda a, b: xl.hypot(a, b), lambda a, b: torch.hypot(a, b), [(3, 4), (4,)], 0.5, 2),
    "asin": (lambda x: xl.asin(x), lambda t: torch.asin(t), [(3, 4)], -0.9, 0.9),
    "acos": (lambda x: xl.acos(x), lambda t: torch.acos(t), [(3, 4)], -0.9, 0.9),
    "atan": (lambda x: xl.atan(x), lambda t: torch.atan(t), [(3, 4)], -3, 3),
    "sinh": (lambda x: xl.sinh(x), lambda t: torch.sinh(t), [(3, 4)], -3, 3),
    "cosh": (lambda x: xl.cosh(x), lambda t: torch.cosh(t), [(3, 4)], -3, 3),
    "mish": (lambda x: xl.mish(x), lambda t: F.mish(t), [(3, 4)], -4, 4),
    "softplus": (lambda x: xl.softplus(x, 2.0, 3.0), lambda t: F.softplus(t, 2.0, 3.0), [(3, 4)], -4, 4),
    "elu": (lambda x: xl.elu(x, 0.7), lambda t: F.elu(t, 0.7), [(3, 4)], -3, 3),
    "leaky_relu": (lambda x: xl.leaky_relu(x, 0.1), lambda t: F.leaky_relu(t, 0.1), [(3, 4)], -3, 3),
    "hardswish": (lambda x: xl.hardswish(x), lambda t: F.hardswish(t), [(3, 4)], -5, 5),
    "hardsigmoid": (lambda x: xl.hardsigmoid(x), lambda t: F.hardsigmoid(t), [(3, 4)], -5, 5),
    "glu": (lambda x: xl.glu(x, 0), lambda t: F.glu(t, 0), [(4, 3)], -3, 3),
    "clamp_min": (lambda x: xl.clamp_min(x, 0.3), lambda t: torch.clamp_min(t, 0.3), [(3, 4)], -2, 2),
    "clamp_max": (lambda x: x.clamp_max(-0.3), lambda t: t.clamp_max(-0.3), [(3, 4)], -2, 2),
    "nan_to_num": (lambda x: xl.nan_to_num(x), lambda t: torch.nan_to_num(t), [(3, 4)], -2, 2),
    "norm2": (lambda x: xl.norm(x, 2, 1), lambda t: torch.linalg.vector_norm(t, 2, 1), [(3, 4)], -2, 2),
    "norm3": (lambda x: xl.norm(x, 3), lambda t: torch.linalg.vector_norm(t, 3), [(3, 4)], -2, 2),
    "norm_fro": (lambda x: xl.norm(x), lambda t: torch.norm(t), [(3, 4)], -2, 2),
    "norm_inf": (lambda x: xl.norm(x, float("inf"), 0), lambda t: torch.linalg.vector_norm(t, float("inf"), 0),
                 [(3, 4)], -2, 2),
    "std": (lambda x: xl.std(x, 1), lambda t: torch.std(t, 1), [(3, 4)], -2, 2),
    "roll": (lambda x: xl.roll(x, (1, -2), (0, 1)), lambda t: torch.roll(t, (1, -2), (0, 1)), [(3, 4)], -2, 2),
    "repeat": (lambda x: x.repeat(2, 3), lambda t: t.repeat(2, 3), [(2, 3)], -2, 2),
    "tile": (lambda x: xl.tile(x, (2, 1, 2)), lambda t: torch.tile(t, (2, 1, 2)), [(2, 3)], -2, 2),
    "repeat_interleave": (lambda x: xl.repeat_interleave(x, 2, 1), lambda t: torch.repeat_interleave(t, 2, 1),
                          [(2, 3)], -2, 2),
    "repeat_interleave_tensor": (lambda x: xl.repeat_interleave(x, xl.tensor([1, 0, 3]), dim=1),
                                 lambda t: torch.repeat_interleave(t, torch.tensor([1, 0, 3]), dim=1),
                                 [(2, 3)], -2, 2),
    "diag_vector": (lambda x: xl.diag(x, 1), lambda t: torch.diag(t, 1), [(4,)], -2, 2),
    "diag_matrix": (lambda x: xl.diag(x, -1), lambda t: torch.diag(t, -1), [(4, 5)], -2, 2),
    "diagonal": (lambda x: xl.diagonal(x, 1, 2, 0), lambda t: torch.diagonal(t, 1, 2, 0), [(3, 2, 4)], -2, 2),
    "trace": (lambda x: xl.trace(x), lambda t: torch.trace(t), [(3, 4)], -2, 2),
    "unfold": (lambda x: x.unfold(1, 3, 2), lambda t: t.unfold(1, 3, 2), [(2, 7)], -2, 2),
    "clone": (lambda x: xl.clone(x) * 3, lambda t: torch.clone(t) * 3, [(3, 4)], -2, 2),
    "outer": (lambda a, b: xl.outer(a, b), lambda a, b: torch.outer(a, b), [(3,), (4,)], -2, 2),
    "bmm": (lambda a, b: xl.bmm(a, b), lambda a, b: torch.bmm(a, b), [(2, 3, 4), (2, 4, 5)], -2, 2),
    "addmm": (lambda c, a, b: xl.addmm(c, a, b, beta=0.5, alpha=2.0),
              lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0), [(5,), (3, 4), (4, 5)], -2, 2),
    "baddbmm": (lambda c, a, b: xl.baddbmm(c, a, b, beta=-1.0, alpha=0.5),
                lambda c, a, b: torch.baddbmm(c, a, b, beta=-1.0, alpha=0.5), [(3, 5), (2, 3, 4), (2, 4, 5)], -2, 2),
    "cross": (lambda a, b: xl.cross(a, b, 0), lambda a, b: torch.linalg.cross(a, b, dim=0), [(3, 4), (3, 4)], -2, 2),
    "masked_select": (lambda x: xl.masked_select(x, xl.tensor(MASK)),
                      lambda t: torch.masked_select(t, torch.from_numpy(MASK)), [(3, 5)], -2, 2),
    "conv1d": (lambda x, w, b: xl.conv1d(x, w, b, stride=2, padding=1, groups=2),
               lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, groups=2), [(2, 4, 9), (6, 2, 3), (6,)], -1, 1),
    "avg_pool1d": (lambda x: xl.avg_pool1d(x, 3, 2, 1), lambda t: F.avg_pool1d(t, 3, 2, 1), [(2, 3, 8)], -2, 2),
    "max_pool1d": (lambda x: xl.max_pool1d(x, 3, 2, 1), lambda t: F.max_pool1d(t, 3, 2, 1), [(2, 3, 8)], -2, 2),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_torch(name):
    xfn, tfn, shapes, lo, hi = GRADS[name]
    arrays = [data(s, "float32", lo, hi, seed=100 + i) for i, s in enumerate(shapes)]
    xs = [xl.tensor(a).requires_grad_() for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, u = xfn(*xs), tfn(*ts)
    check(y, u, 1e-4, 1e-5)
    # A weighted sum, so that every output element gets a gradient of its own.
    w = data(tuple(u.shape), "float32", -1, 1, seed=200)
    (y * xl.tensor(w)).sum().backward()
    (u * torch.from_numpy(np.array(w))).sum().backward()
    for i, (x, t) in enumerate(zip(xs, ts)):
        assert x.grad is not None, f"input {i} has no gradient"
        check(x.grad, t.grad, 1e-4, 1e-5)


def test_gradient_of_dropout_is_its_mask():
    x = xl.ones(2000).requires_grad_()
    y = xl.dropout(x, 0.25)
    y.sum().backward()
    kept = np.asarray(y) != 0
    g = np.asarray(x.grad)
    np.testing.assert_allclose(g[kept], 1 / 0.75, rtol=1e-6)
    assert (g[~kept] == 0).all()


# --------------------------------------------------------------------------------------------------------------
# Draws and ranges


def test_randint_range_dtype_and_seed():
    x = xl.randint(3, 10, (2000,))
    assert x.dtype == xl.int64 and x.shape == (2000,)
    values = np.asarray(x)
    assert values.min() == 3 and values.max() == 9
    assert set(values.tolist()) == set(range(3, 10))  # every value, roughly evenly
    counts = np.bincount(values - 3)
    assert counts.min() > 2000 / 7 * 0.7
    y = xl.randint(5, size=(300,))
    assert set(np.asarray(y).tolist()) == set(range(5))
    z = xl.randint(-4, 4, [3, 4], dtype=xl.int32)
    assert z.dtype == xl.int32 and z.shape == (3, 4)
    assert -4 <= np.asarray(z).min() and np.asarray(z).max() < 4
    assert xl.randint(0, 1, (5,)).tolist() == [0] * 5
    xl.manual_seed(11)
    a = xl.randint(0, 100, (50,)).tolist()
    xl.manual_seed(11)
    b = xl.randint(0, 100, (50,)).tolist()
    assert a == b
    assert xl.randint(0, 100, (50,)).tolist() != b  # the generator moves on


def test_randint_high_and_size_positional_like_torch():
    """torch.randint(high, size): the docstring of xl.randint promises this form too."""
    want = torch.randint(10, (3, 4))
    got = xl.randint(10, (3, 4))
    assert got.shape == tuple(want.shape) and got.dtype == xl.int64
    assert 0 <= np.asarray(got).min() and np.asarray(got).max() < 10


@pytest.mark.parametrize("n", [0, 1, 2, 7, 200])
def test_randperm(n):
    p = xl.randperm(n)
    assert p.dtype == xl.int64 and p.shape == (n,)
    assert sorted(p.tolist()) == list(range(n))
    q = xl.randperm(n, dtype=xl.int32)
    assert q.dtype == xl.int32 and sorted(q.tolist()) == list(range(n))
    if n == 200:
        assert p.tolist() != list(range(n)) and p.tolist() != q.tolist()


def test_bernoulli():
    p = xl.full((20000,), 0.3)
    draws = np.asarray(xl.bernoulli(p))
    assert set(np.unique(draws).tolist()) <= {0.0, 1.0}
    assert abs(draws.mean() - 0.3) < 0.02
    assert xl.bernoulli(p).dtype == xl.float32
    exact = xl.tensor([0.0, 1.0, 1.0, 0.0], dtype=xl.float64)
    got = xl.bernoulli(exact)
    assert got.dtype == xl.float64 and got.tolist() == [0.0, 1.0, 1.0, 0.0]
    assert exact.bernoulli().tolist() == [0.0, 1.0, 1.0, 0.0]  # the method form, as torch's Tensor.bernoulli()
    rows = np.asarray(xl.bernoulli(xl.tensor([[0.1] * 5000, [0.9] * 5000])))
    assert abs(rows[0].mean() - 0.1) < 0.03 and abs(rows[1].mean() - 0.9) < 0.03
    assert torch.bernoulli(torch.tensor([0.0, 1.0])).tolist() == [0.0, 1.0]


def test_multinomial_with_replacement_follows_the_weights():
    weights = xl.tensor([0.3, 0.6, 0.0, 2.1])  # not normalised
    draws = xl.multinomial(weights, 20000, replacement=True)
    assert draws.dtype == xl.int64 and draws.shape == (20000,)
    counts = np.bincount(np.asarray(draws), minlength=4) / 20000
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.0, 0.7], atol=0.02)
    assert counts[2] == 0  # a zero weight is never drawn
    rows = xl.multinomial(xl.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), 6, True)
    assert rows.shape == (2, 6) and rows.tolist() == [[0] * 6, [2] * 6]
    want = torch.multinomial(torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), 6, True)
    assert rows.tolist() == want.tolist()


def test_multinomial_without_replacement():
    probs, _ = pair((4, 6), "float32", 0.1, 1.0, seed=210)
    full = xl.multinomial(probs, 6)
    assert full.shape == (4, 6) and full.dtype == xl.int64
    for row in full.tolist():
        assert sorted(row) == list(range(6))  # every index once
    some = xl.multinomial(probs, 3, replacement=False)
    for row in some.tolist():
        assert len(set(row)) == 3 and all(0 <= i < 6 for i in row)
    sparse = xl.tensor([1.0, 0.0, 2.0, 0.0, 1.0])
    for _ in range(5):
        assert sorted(xl.multinomial(sparse, 3).tolist()) == [0, 2, 4]  # zero weights are never drawn
    # The first draw follows the weights (each row draws on its own).
    firsts = np.asarray(xl.multinomial(xl.tensor([[1.0, 3.0]] * 4000), 1))
    assert firsts.shape == (4000, 1)
    assert abs(firsts.mean() - 0.75) < 0.03
    pairs = np.asarray(xl.multinomial(xl.tensor([[1.0, 3.0, 0.0]] * 4000), 2))
    assert (np.sort(pairs, 1) == [0, 1]).all()  # both non-zero weights, never the zero one
    assert abs((pairs[:, 0] == 1).mean() - 0.75) < 0.03


def test_dropout():
    x = xl.ones(20000)
    y = np.asarray(xl.dropout(x, 0.3))
    zeros = (y == 0).mean()
    assert abs(zeros - 0.3) < 0.02
    np.testing.assert_allclose(y[y != 0], np.float32(1 / 0.7), rtol=1e-6)  # the kept ones scaled by 1 / (1 - p)
    v, vt = pair((3, 4), "float32", seed=211)
    check(xl.dropout(v, 0.5, training=False), F.dropout(vt, 0.5, training=False), 0, 0)
    check(xl.dropout(v, 0.0), F.dropout(vt, 0.0), 0, 0)
    check(xl.dropout(v, p=1.0), F.dropout(vt, p=1.0), 0, 0)
    check(xl.nn.functional.dropout(v, 0.2, False), F.dropout(vt, 0.2, False), 0, 0)
    assert np.asarray(xl.dropout(v, 0.5)).shape == (3, 4)
    a, b = np.asarray(xl.dropout(x, 0.5)), np.asarray(xl.dropout(x, 0.5))
    assert (a != b).any()  # a new mask each call
    default = np.asarray(xl.dropout(x))  # p = 0.5, training by default, as F.dropout
    assert abs((default == 0).mean() - 0.5) < 0.02


# Cases whose values are exactly representable or where both evaluation orders agree.
LINSPACE_EXACT = [(0, 1, 5), (2.5, -3.5, 9), (0, 1, 1), (3, 3, 4), (0, 1, 2), (0, 1, 0), (-4, 4, 9), (0, 10, 11)]


@pytest.mark.parametrize("start, end, steps", LINSPACE_EXACT, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_exact(start, end, steps, dtype):
    want = torch.linspace(start, end, steps, dtype=DTYPES[dtype][1])
    got = xl.linspace(start, end, steps, dtype=DTYPES[dtype][0])
    check(got, want, 0, 0)
    if dtype == "float32":
        check(xl.linspace(start, end, steps), torch.linspace(start, end, steps), 0, 0)  # float32 by default


@pytest.mark.parametrize("start, end, steps", [(-1, 1, 11), (-5, 5, 100), (0.001, 1.0, 50), (-2.2, 7.7, 31)],
                         ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_close(start, end, steps, dtype):
    """torch 1.13's vectorised CPU kernel rounds some inner values differently from a scalar evaluation: a few
    ulps apart, with both ends exact."""
    want = torch.linspace(start, end, steps, dtype=DTYPES[dtype][1])
    got = xl.linspace(start, end, steps, dtype=DTYPES[dtype][0])
    check(got, want, 4e-7 if dtype == "float32" else 1e-15, 1e-6 if dtype == "float32" else 2e-15)
    values = np.asarray(got)
    assert values[0] == want[0].item() and values[-1] == want[-1].item()


@pytest.mark.parametrize("start, end, steps, base", [(0, 3, 4, 10.0), (0, 10, 11, 2.0), (1, -1, 3, 2.0),
                                                     (0, 0, 1, 10.0), (2, 2, 0, 10.0)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logspace_exact(start, end, steps, base, dtype):
    want = torch.logspace(start, end, steps, base, dtype=DTYPES[dtype][1])
    check(xl.logspace(start, end, steps, base, dtype=DTYPES[dtype][0]), want, 0, 0)
    check(xl.logspace(start, end, steps, base=base, dtype=DTYPES[dtype][0]), want, 0, 0)
    if base == 10.0 and dtype == "float32":
        check(xl.logspace(start, end, steps), torch.logspace(start, end, steps), 0, 0)


@pytest.mark.parametrize("start, end, steps, base", [(-3, 0, 4, 10.0), (-2, 2, 5, 10.0), (-2.2, 7.7, 31, 10.0),
                                                     (0.001, 1.0, 50, 2.0), (-5, 5, 100, 3.0)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logspace_close(start, end, steps, base, dtype):
    want = torch.logspace(start, end, steps, base, dtype=DTYPES[dtype][1])
    got = xl.logspace(start, end, steps, base, dtype=DTYPES[dtype][0])
    # torch rounds the exponents to float32 before raising the base: about 1e-6 relative for exponents near 8.
    check(got, want, 3e-6 if dtype == "float32" else 1e-14, 0)


# --------------------------------------------------------------------------------------------------------------
# Errors: xl.Error whose message names the op

A23 = lambda: xl.ones(2, 3)  # noqa: E731


@pytest.mark.parametrize("op, fn", [
    ("topk", lambda: xl.topk(A23(), 4)),
    ("topk", lambda: xl.topk(A23(), 3, dim=0)),
    ("topk", lambda: A23().topk(-1)),
    ("kthvalue", lambda: xl.kthvalue(A23(), 0)),
    ("kthvalue", lambda: xl.kthvalue(A23(), 4, 1)),
    ("cross", lambda: xl.cross(xl.ones(4, 2), xl.ones(4, 2))),
    ("cross", lambda: xl.cross(xl.ones(3, 4), xl.ones(3, 4), dim=1)),
    ("glu", lambda: xl.glu(xl.ones(2, 3))),
    ("glu", lambda: xl.glu(xl.tensor(1.0))),
    ("softplus", lambda: xl.softplus(A23(), beta=0.0)),
    ("bmm", lambda: xl.bmm(xl.ones(2, 3, 4), xl.ones(2, 5, 4))),
    ("bmm", lambda: xl.bmm(xl.ones(3, 4), xl.ones(4, 5))),
    ("outer", lambda: xl.outer(A23(), xl.ones(3))),
    ("addmm", lambda: xl.addmm(xl.ones(2, 2), xl.ones(2, 3, 1), xl.ones(3, 2))),
    ("einsum", lambda: xl.einsum("ij,jk->ik", A23())),
    ("einsum", lambda: xl.einsum("ij->i", xl.ones(2, 3, 4))),
    ("einsum", lambda: xl.einsum("ij,jk->ik", A23(), xl.ones(4, 5))),
    ("einsum", lambda: xl.einsum("ij->iz", A23())),
    ("einsum", lambda: xl.einsum("i1->i", A23())),
    ("unfold", lambda: A23().unfold(1, 4, 1)),
    ("unfold", lambda: A23().unfold(0, 1, 0)),
    ("diag", lambda: xl.diag(xl.ones(2, 2, 2))),
    ("diagonal", lambda: xl.diagonal(A23(), 0, 1, 1)),
    ("diagonal", lambda: xl.diagonal(xl.ones(3))),
    ("trace", lambda: xl.trace(xl.ones(3))),
    ("repeat", lambda: A23().repeat(2)),
    ("repeat", lambda: A23().repeat(2, -1)),
    ("roll", lambda: xl.roll(A23(), (1, 2), (0,))),
    ("roll", lambda: xl.roll(A23(), (1, 2))),
    ("repeat_interleave", lambda: xl.repeat_interleave(A23(), -1)),
    ("repeat_interleave", lambda: xl.repeat_interleave(A23(), xl.tensor([1.0, 2.0]), dim=0)),
    ("repeat_interleave", lambda: xl.repeat_interleave(A23(), xl.tensor([1, 2]), dim=1)),
    ("masked_select", lambda: xl.masked_select(A23(), xl.ones(2, 3))),
    ("norm", lambda: xl.norm(A23(), "nuc")),
    ("norm", lambda: xl.norm(A23(), "nonsense")),
    ("conv1d", lambda: xl.conv1d(A23(), xl.ones(1, 2, 1))),
    ("conv1d", lambda: xl.conv1d(xl.ones(1, 3, 5), xl.ones(2, 4, 3))),
    ("conv_transpose2d", lambda: xl.conv_transpose2d(xl.ones(1, 3, 4, 4), xl.ones(2, 2, 3, 3))),
    ("conv_transpose2d", lambda: xl.conv_transpose2d(xl.ones(1, 2, 4, 4), xl.ones(2, 2, 3, 3), stride=2,
                                                     output_padding=2)),
    ("conv_transpose2d", lambda: xl.conv_transpose2d(xl.ones(2, 4, 4), xl.ones(2, 2, 3, 3))),
    ("avg_pool1d", lambda: xl.avg_pool1d(A23(), 2)),
    ("max_pool1d", lambda: xl.max_pool1d(A23(), 2)),
    ("adaptive_avg_pool2d", lambda: xl.adaptive_avg_pool2d(xl.ones(1, 1, 4, 4, dtype=xl.int64), 2)),
    ("adaptive_avg_pool2d", lambda: xl.adaptive_avg_pool2d(xl.ones(1, 1, 4, 4), 0)),
    ("adaptive_avg_pool2d", lambda: xl.adaptive_avg_pool2d(xl.ones(1, 4, 4), 2)),
    ("interpolate", lambda: xl.interpolate(xl.ones(1, 1, 4, 4), (2, 2), "bicubic")),
    ("interpolate", lambda: xl.interpolate(xl.ones(1, 4, 4), (2, 2))),
    ("interpolate", lambda: xl.interpolate(xl.ones(1, 1, 4, 4), (2, 2, 2))),
    ("dropout", lambda: xl.dropout(A23(), 1.5)),
    ("dropout", lambda: xl.dropout(A23(), -0.1)),
    ("randint", lambda: xl.randint(5, 5, (3,))),
    ("randint", lambda: xl.randint(0, size=(3,))),
    ("randperm", lambda: xl.randperm(-1)),
    ("bernoulli", lambda: xl.bernoulli(xl.tensor([0, 1]))),
    ("multinomial", lambda: xl.multinomial(xl.ones(3), 4)),
    ("multinomial", lambda: xl.multinomial(xl.ones(3), 0)),
    ("multinomial", lambda: xl.multinomial(xl.ones(2, 2, 2), 1)),
    ("multinomial", lambda: xl.multinomial(xl.tensor([1, 2]), 1)),
    ("linspace", lambda: xl.linspace(0, 1, -1)),
    ("logspace", lambda: xl.logspace(0, 1, -2)),
    ("cumsum", lambda: xl.cumsum(A23(), 2)),
    ("cumprod", lambda: xl.cumprod(A23(), -3)),
    ("cummax", lambda: xl.cummax(A23(), 5)),
    ("sort", lambda: xl.sort(A23(), 2)),
    ("median", lambda: xl.median(xl.ones(0))),
    ("mode", lambda: xl.mode(xl.ones(2, 0), 1)),
])
def test_errors_name_the_op(op, fn):
    with pytest.raises(xl.Error, match=r"\[" + op + r"\]"):
        force(fn())


def test_topk_and_cross_errors_match_torch_refusals():
    with pytest.raises(RuntimeError):
        torch.topk(torch.ones(2, 3), 4)
    with pytest.raises(xl.Error, match=r"\[topk\].*out of range"):
        force(xl.topk(A23(), 4))
    with pytest.raises(RuntimeError):
        torch.linalg.cross(torch.ones(4, 2), torch.ones(4, 2))
    with pytest.raises(xl.Error, match=r"\[cross\].*size 3"):
        force(xl.cross(xl.ones(4, 2), xl.ones(4, 2)))
    assert issubclass(xl.Error, RuntimeError)
