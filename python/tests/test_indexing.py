"""Tensor.__getitem__ and __setitem__ checked against NumPy on the same data (and against PyTorch where the two
differ: xlite follows PyTorch), plus len(), iteration, bool(), item(), tolist(), int() and float()."""
import math

import numpy as np
import pytest
import torch

import xlite as xl

SHAPE = (4, 5, 6)


def base(dtype=np.float32):
    """Distinct values, so a wrong element or a wrong order shows."""
    return np.arange(np.prod(SHAPE)).reshape(SHAPE).astype(dtype)


def np_index(v):
    return np.array(v)


def xl_index(v):
    return xl.tensor(v) if isinstance(v, (list, bool)) else xl.tensor(np.asarray(v))


def torch_index(v):
    return torch.from_numpy(np.array(v))


# Each case builds an index from T, which makes an index array (NumPy's, xlite's or torch's) from a list.
GETITEM = {
    # ints
    "int": lambda T: 1,
    "neg_int": lambda T: -1,
    "int_tuple": lambda T: (1, 2),
    "all_ints": lambda T: (-1, -2, -3),
    "int_slice_int": lambda T: (0, slice(None), 2),
    "numpy_int": lambda T: np.int64(2),
    # slices
    "slice": lambda T: slice(1, 3),
    "slice_open": lambda T: slice(2, None),
    "slice_step": lambda T: slice(None, None, 2),
    "slice_step3": lambda T: (slice(None), slice(1, None, 3)),
    "slice_neg_bounds": lambda T: slice(-3, -1),
    "slice_neg_stop_step": lambda T: (slice(None), slice(None, -1, 2)),
    "slice_out_of_range": lambda T: slice(-100, 100),
    "slice_empty": lambda T: slice(3, 1),
    "slice_past_end": lambda T: slice(10, 20),
    "slices_all_dims": lambda T: (slice(1, None), slice(None, 4, 3), slice(-4, None, 2)),
    "int_and_slices": lambda T: (slice(1, 3), -2, slice(None, None, 4)),
    # None and Ellipsis
    "none": lambda T: None,
    "none_int": lambda T: (None, 0),
    "slice_none_int": lambda T: (slice(None), None, 1),
    "none_ellipsis_none": lambda T: (None, Ellipsis, None),
    "ellipsis": lambda T: Ellipsis,
    "ellipsis_int": lambda T: (Ellipsis, 0),
    "int_ellipsis_int": lambda T: (0, Ellipsis, 1),
    "ellipsis_none": lambda T: (Ellipsis, None),
    "ellipsis_slice": lambda T: (Ellipsis, slice(1, None, 2)),
    "int_ellipsis": lambda T: (1, Ellipsis),
    "ellipsis_empty": lambda T: (1, 2, Ellipsis, 3),
    # integer arrays and lists
    "int_array": lambda T: T([0, 2, 2]),
    "int_array_neg": lambda T: T([-1, 0, -4]),
    "int_array_2d": lambda T: T([[0, 1], [3, -1]]),
    "int_array_dim1": lambda T: (slice(None), T([4, 0, -2])),
    "int_array_last": lambda T: (Ellipsis, T([5, 0])),
    "int_array_empty": lambda T: T(np.zeros(0, np.int64)),
    "list": lambda T: [0, 3],
    "list_neg": lambda T: [-1, -2, 0],
    "list_dim1": lambda T: (slice(None), [1, -1]),
    "adjacent_first": lambda T: (T([0, 1, 3]), T([2, 0, -1])),
    "adjacent_middle": lambda T: (slice(None), T([0, 2]), T([1, 3])),
    "adjacent_last": lambda T: (slice(None), slice(1, 3), T([0, 5])),
    "adjacent_broadcast": lambda T: (T([[0], [1]]), T([0, 2, 1])),
    "adjacent_2d": lambda T: (slice(None), T([[0, 1], [2, 3]]), T([[5, 4], [3, 2]])),
    "three_arrays": lambda T: (T([0, 3]), T([1, 4]), T([5, -6])),
    "separated": lambda T: (T([0, 1]), slice(None), T([1, 3])),
    "separated_2d": lambda T: (T([[0, 1]]), slice(1, 3), T([[1], [3]])),
    "separated_lists": lambda T: ([1, 2], slice(None), [0, -1]),
    "int_then_array": lambda T: (1, T([0, 2])),
    "array_then_int": lambda T: (T([0, 2]), 1),
    "array_none": lambda T: (T([1, 0]), None),
    "none_array": lambda T: (None, T([1, 0])),
    "slice_none_array": lambda T: (slice(None), None, T([1, 0])),
    "ellipsis_array_none": lambda T: (Ellipsis, T([1, 0]), None),
    "array_none_array": lambda T: (slice(None), T([1, 0]), None, T([0, 2])),
    "array_and_step": lambda T: (T([3, 1]), slice(None, None, 2), slice(1, None)),
    # boolean masks
    "mask_dim0": lambda T: T([True, False, True, True]),
    "mask_dim0_none_true": lambda T: T([False] * 4),
    "mask_dim1": lambda T: (slice(None), T([True, False, False, True, True])),
    "mask_last": lambda T: (Ellipsis, T([False, True, True, False, False, True])),
    "mask_2d": lambda T: T(np.arange(20).reshape(4, 5) % 3 == 0),
    "mask_2d_last": lambda T: (slice(None), T(np.arange(30).reshape(5, 6) % 4 == 1)),
    "mask_full": lambda T: T(base() % 7 < 3),
    "mask_list": lambda T: [True, False, False, True],
    "mask_and_int": lambda T: (T([True, False, True, False]), 2),
    "mask_and_array": lambda T: (T([True, False, True, True]), slice(None), T([0, 1, 5])),
    "mask_and_slice": lambda T: (slice(1, None), T([True, True, False, False, True])),
    "mask_zero_dim": lambda T: T(True),
    "mask_zero_dim_false": lambda T: T(False),
    "two_masks": lambda T: (T([True, False, True, False]), T([False, True, False, True, False])),
    "mask_none": lambda T: (None, T([True, False, True, True])),
}


@pytest.mark.parametrize("case", sorted(GETITEM))
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_getitem_matches_numpy(case, dtype):
    a = base(dtype)
    x = xl.tensor(a)
    want = a[GETITEM[case](np_index)]
    got = x[GETITEM[case](xl_index)]
    assert isinstance(got, xl.Tensor)
    assert tuple(got.shape) == want.shape
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)
    # torch agrees with NumPy on every one of these
    t = torch.from_numpy(a)
    assert tuple(t[GETITEM[case](torch_index)].shape) == want.shape


# An int counts as an advanced index in NumPy (so that separated advanced indices move to the front) but as a
# plain select in PyTorch; xlite follows PyTorch.
TORCH_ONLY = {
    "int_sep_array": lambda T: (slice(None), 0, slice(None), T([1, 3])),
    "int_slice_array": lambda T: (0, slice(None), T([1, 2])),
    "neg_int_slice_array": lambda T: (-1, slice(None), T([0, 2])),
}


@pytest.mark.parametrize("case", sorted(TORCH_ONLY))
def test_getitem_int_with_array_follows_torch(case):
    a = np.arange(120).reshape(2, 3, 4, 5).astype(np.float32)
    x, t = xl.tensor(a), torch.from_numpy(a)
    want = t[TORCH_ONLY[case](torch_index)].numpy()
    assert want.shape != a[TORCH_ONLY[case](np_index)].shape  # the case where the two differ
    got = x[TORCH_ONLY[case](xl_index)]
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_getitem_index_dtypes():
    a = base()
    x = xl.tensor(a)
    for dtype in (np.int32, np.int64, np.uint8):
        idx = np.array([3, 0, 1], dtype=dtype)
        np.testing.assert_array_equal(np.asarray(x[xl.tensor(idx)]), a[idx])
    np.testing.assert_array_equal(np.asarray(x[np.array([1, -1])]), a[np.array([1, -1])])  # an ndarray index
    np.testing.assert_array_equal(np.asarray(x[xl.tensor(2)]), a[2])  # a 0-d integer tensor
    np.testing.assert_array_equal(np.asarray(x[x[0, 0, 3].long()]), a[3])


def test_getitem_mask_from_comparison():
    a = base()
    x = xl.tensor(a)
    np.testing.assert_array_equal(np.asarray(x[x > 50]), a[a > 50])
    np.testing.assert_array_equal(np.asarray(x[(x % 2 == 0) & (x < 30)]), a[(a % 2 == 0) & (a < 30)])
    np.testing.assert_array_equal(np.asarray(x[0][x[0] > 10]), a[0][a[0] > 10])


def test_getitem_of_pending_and_chained():
    a = base()
    x = xl.tensor(a) * 2 + 1  # a pending value
    want = a * 2 + 1
    np.testing.assert_array_equal(np.asarray(x[1:3][:, [0, 2]][..., -1]), want[1:3][:, [0, 2]][..., -1])
    np.testing.assert_array_equal(np.asarray(x[::2, 1][[1, 0]]), want[::2, 1][[1, 0]])


def test_getitem_does_not_change_the_tensor():
    a = base()
    x = xl.tensor(a)
    x[0, [1, 2]]
    x[x > 3]
    np.testing.assert_array_equal(np.asarray(x), a)


@pytest.mark.parametrize("index", [True, False, (0, True), (Ellipsis, False)], ids=repr)
def test_getitem_python_bool(index):
    a = base()
    x = xl.tensor(a)
    want = a[index]
    assert tuple(torch.from_numpy(a)[index].shape) == want.shape
    got = x[index]
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


# --------------------------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("index", [4, -5, (0, 5), (0, 0, 6), (0, 0, -7), (slice(None), 9), (Ellipsis, 6)], ids=repr)
def test_int_out_of_range_raises_index_error(index):
    x = xl.tensor(base())
    with pytest.raises(IndexError):
        base()[index]
    with pytest.raises(IndexError):
        x[index]


@pytest.mark.parametrize("index", [(0, 0, 0, 0), (0, 0, 0, None, 0), (slice(None),) * 4, (Ellipsis, 0, 0, 0, 0)],
                         ids=repr)
def test_too_many_indices_raises_index_error(index):
    x = xl.tensor(base())
    with pytest.raises(IndexError):
        base()[index]
    with pytest.raises(IndexError):
        x[index]


def test_other_index_errors():
    x = xl.tensor(base())
    with pytest.raises(IndexError):
        x[..., ...]  # two ellipses
    with pytest.raises(IndexError):
        x[xl.tensor([0.0, 1.0])]  # float indices
    with pytest.raises(IndexError):
        x[xl.tensor([True, False])]  # mask shape does not match
    with pytest.raises(IndexError):
        x["a"]
    with pytest.raises(ValueError):
        x[::-1]  # torch refuses negative steps too
    with pytest.raises(ValueError):
        torch.arange(3)[::-1]
    with pytest.raises((IndexError, xl.Error)):
        x[xl.tensor([0, 9])].tolist()  # an index tensor out of range
    with pytest.raises((IndexError, xl.Error)):
        x[:, [-6]].tolist()


# --------------------------------------------------------------------------------------------------------------
# __setitem__

# (index builder, value): the value is a Python number or a list/array made into an array of the tensor's dtype.
SETITEM = {
    "int": (lambda T: 1, 7.0),
    "neg_int": (lambda T: -1, -3.0),
    "int_tuple": (lambda T: (1, 2, 3), 9.0),
    "ints_row": (lambda T: (0, -1), np.arange(6.0) + 100),
    "slice": (lambda T: slice(1, 3), 5.0),
    "slice_step": (lambda T: (slice(None), slice(None, None, 2)), -1.0),
    "slice_neg": (lambda T: (Ellipsis, slice(-3, -1)), 8.0),
    "slice_broadcast_value": (lambda T: (slice(1, 3), 2), np.arange(6.0)),
    "slice_full_value": (lambda T: slice(0, 2), np.arange(60.0).reshape(2, 5, 6)),
    "slice_empty": (lambda T: slice(3, 1), 5.0),
    "slice_out_of_range": (lambda T: (slice(-100, 100), slice(3, 50)), 6.0),
    "int_slice_int": (lambda T: (-2, slice(1, 4), 0), np.array([1.0, 2.0, 3.0])),
    "ellipsis": (lambda T: Ellipsis, 0.5),
    "ellipsis_int": (lambda T: (Ellipsis, 0), 4.0),
    "none": (lambda T: (None, 0), 3.0),
    "int_array": (lambda T: T([0, 2]), 11.0),
    "int_array_neg": (lambda T: T([-1, 1]), np.arange(30.0).reshape(5, 6)),
    "list": (lambda T: [3, 0], 2.0),
    "int_array_2d": (lambda T: (slice(None), T([[0, 1], [4, 3]])), 6.0),
    "adjacent": (lambda T: (T([0, 1, 3]), T([2, 0, -1])), np.array([10.0, 20.0, 30.0])[:, None]),
    "separated": (lambda T: (T([0, 1]), slice(None), T([1, 3])), 12.0),
    "int_and_array": (lambda T: (2, T([0, 4])), np.arange(12.0).reshape(2, 6)),
    "mask_dim0": (lambda T: T([True, False, True, False]), 1.5),
    "mask_full": (lambda T: T(base() % 5 == 0), -2.0),
    "mask_full_values": (lambda T: T(base() > 100), np.arange(19.0)),
    "mask_dim1": (lambda T: (slice(None), T([True, False, False, True, True])), 13.0),
    "mask_none_true": (lambda T: T(np.zeros(SHAPE, bool)), 99.0),
    "mask_and_slice": (lambda T: (T([False, True, True, False]), slice(1, 3)), 14.0),
}


def value_for(value, dtype, make):
    return value if isinstance(value, float) else make(np.asarray(value).astype(dtype))


@pytest.mark.parametrize("case", sorted(SETITEM))
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float64])
def test_setitem_matches_numpy(case, dtype):
    index, value = SETITEM[case]
    want = base(dtype)
    x = xl.tensor(base(dtype))
    want[index(np_index)] = value_for(value, dtype, np.asarray)
    x[index(xl_index)] = value_for(value, dtype, xl.tensor)
    assert x.dtype == xl.tensor(want).dtype
    assert tuple(x.shape) == want.shape
    np.testing.assert_array_equal(np.asarray(x), want)


@pytest.mark.parametrize("index, shape", [(0, (1, 5, 6)), ([0, 2], (1, 1, 5, 6)), ((slice(1, 3), 0), (1, 2, 6))],
                         ids=["int", "array", "slice"])
def test_setitem_value_with_leading_ones(index, shape):
    want = base()
    t = torch.from_numpy(base())
    x = xl.tensor(base())
    value = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    want[index] = value
    t[index] = torch.from_numpy(value)
    np.testing.assert_array_equal(t.numpy(), want)
    x[index] = xl.tensor(value)
    np.testing.assert_array_equal(np.asarray(x), want)


def test_setitem_aliases_see_the_write():
    a = base()
    x = xl.tensor(a)
    alias = x
    x[0, 0] = 100.0
    a[0, 0] = 100.0
    assert alias is x
    np.testing.assert_array_equal(np.asarray(alias), a)


def test_setitem_other_dtypes():
    b = xl.tensor([True, False, True])
    b[1] = True
    assert b.dtype == xl.bool and b.tolist() == [True, True, True]
    b[xl.tensor([0, 2])] = False
    assert b.tolist() == [False, True, False]
    h = xl.tensor([1.0, 2.0, 3.0], dtype=xl.float16)
    h[1:] = 0.5
    assert h.dtype == xl.float16 and h.tolist() == [1.0, 0.5, 0.5]
    i = xl.tensor([1, 2, 3])
    i[0] = 2.7  # truncated towards zero, as NumPy and torch do
    i[1] = -2.7
    n = np.array([1, 2, 3])
    n[0], n[1] = 2.7, -2.7
    assert i.dtype == xl.int64 and i.tolist() == n.tolist()
    f = xl.tensor([1.0, 2.0])
    f[0] = xl.tensor(7)  # an int tensor value into a float tensor
    assert f.tolist() == [7.0, 2.0]
    g = xl.tensor([1.0, 2.0, 3.0])
    g[1] = float("inf")
    g[2] = float("nan")
    assert g.tolist()[:2] == [1.0, math.inf] and math.isnan(g.tolist()[2])


def test_setitem_value_from_a_pending_tensor():
    a = base()
    x = xl.tensor(a)
    x[1] = x[0] * 2
    a[1] = a[0] * 2
    np.testing.assert_array_equal(np.asarray(x), a)
    x[:, 0] = x[:, 1]
    a[:, 0] = a[:, 1]
    np.testing.assert_array_equal(np.asarray(x), a)


def test_setitem_repeated_index():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    x = xl.tensor(a)
    t = torch.from_numpy(a.copy())
    a[[0, 0]] = 5.0
    t[[0, 0]] = 5.0
    assert t.tolist() == a.tolist()
    x[[0, 0]] = 5.0
    np.testing.assert_array_equal(np.asarray(x), a)


@pytest.mark.parametrize("index", [1, [1], (slice(1, 2),), "mask"], ids=repr)
def test_setitem_int64_keeps_large_values(index):
    if index == "mask":
        index = xl.tensor([False, True, False])
    x = xl.tensor([2**60 + 1, 7, -(2**62) - 3])
    x[index] = 2**60 + 5
    assert x.tolist() == [2**60 + 1, 2**60 + 5, -(2**62) - 3]


@pytest.mark.parametrize("index", [0, [0], "mask"], ids=repr)
def test_setitem_float64_keeps_double_precision(index):
    if index == "mask":
        index = xl.tensor([True, False])
    x = xl.zeros(2, dtype=xl.float64)
    x[index] = 0.1
    assert x.tolist() == [0.1, 0.0]


@pytest.mark.parametrize("index", [4, (0, 5), (0, 0, 0, 0)], ids=repr)
def test_setitem_index_errors(index):
    x = xl.tensor(base())
    with pytest.raises(IndexError):
        x[index] = 1.0
    np.testing.assert_array_equal(np.asarray(x), base())


# --------------------------------------------------------------------------------------------------------------
# len, iteration, bool and Python numbers


def test_len():
    assert len(xl.tensor(base())) == 4
    assert len(xl.zeros(0, 3)) == 0
    assert len(xl.tensor([1, 2, 3])) == 3
    with pytest.raises(TypeError):
        len(xl.tensor(1.0))


def test_iteration_over_dim0():
    a = base()
    rows = list(xl.tensor(a))
    assert len(rows) == 4
    for row, want in zip(rows, a):
        assert isinstance(row, xl.Tensor)
        assert tuple(row.shape) == want.shape
        np.testing.assert_array_equal(np.asarray(row), want)
    assert [v.item() for v in xl.tensor([3, 1, 2])] == [3, 1, 2]
    assert list(xl.zeros(0, 2)) == []
    with pytest.raises(TypeError):
        iter(xl.tensor(1.0))
    a2, b2 = xl.tensor([[1, 2], [3, 4]])  # unpacking
    assert a2.tolist() == [1, 2] and b2.tolist() == [3, 4]


@pytest.mark.parametrize("value, want", [
    ([0.0], False), ([2.5], True), ([[3]], True), ([[0]], False), (True, True), (False, False), (-1, True),
    ([float("nan")], True),
])
def test_bool_of_one_element(value, want):
    t = xl.tensor(value)
    assert bool(t) is want
    assert bool(torch.tensor(value)) is want
    assert (1 if t else 0) == int(want)


@pytest.mark.parametrize("value", [[1.0, 2.0], [[True, True]], [0, 0, 0]])
def test_bool_of_several_elements_raises(value):
    with pytest.raises(RuntimeError):
        bool(torch.tensor(value))
    with pytest.raises(xl.Error, match=r"\[bool\]"):
        bool(xl.tensor(value))
    with pytest.raises(RuntimeError):
        if xl.tensor(value):
            pass


def test_bool_of_empty_raises():
    with pytest.raises(RuntimeError):
        bool(xl.zeros(0))


def test_item():
    assert xl.tensor(2.5).item() == 2.5 and type(xl.tensor(2.5).item()) is float
    assert xl.tensor([7]).item() == 7 and type(xl.tensor([7]).item()) is int
    assert xl.tensor([[True]]).item() is True
    assert xl.tensor(3, dtype=xl.int32).item() == 3 and type(xl.tensor(3, dtype=xl.int32).item()) is int
    assert xl.tensor(250, dtype=xl.uint8).item() == 250
    assert xl.tensor(0.1, dtype=xl.float64).item() == 0.1
    assert xl.tensor(0.1).item() == float(np.float32(0.1))
    assert xl.tensor(1.5, dtype=xl.bfloat16).item() == 1.5
    assert xl.tensor(2**60 + 1).item() == 2**60 + 1
    assert (xl.tensor([1.0, 2.0]).sum()).item() == 3.0
    with pytest.raises(xl.Error, match=r"\[item\]"):
        xl.tensor([1, 2]).item()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_])
def test_tolist(dtype):
    a = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    got = xl.tensor(a).tolist()
    assert got == a.tolist()
    assert type(got[0][1]) is type(a.tolist()[0][1])
    assert xl.tensor(a)[0, 1].tolist() == a[0, 1].tolist()  # a 0-d tensor gives a number
    assert type(xl.tensor(a)[0, 1].tolist()) is type(a[0, 1].tolist())
    assert xl.zeros(0, 2).tolist() == []
    assert xl.zeros(2, 0).tolist() == [[], []]


def test_int_float_index():
    assert int(xl.tensor(3.7)) == 3 == int(torch.tensor(3.7))
    assert int(xl.tensor(-3.7)) == -3 == int(torch.tensor(-3.7))
    assert int(xl.tensor([5])) == 5
    assert float(xl.tensor(3)) == 3.0 and type(float(xl.tensor(3))) is float
    assert float(xl.tensor([[0.25]])) == 0.25
    assert int(xl.tensor(True)) == 1
    assert list(range(10))[xl.tensor(4)] == 4  # __index__
    assert [0, 1, 2][xl.tensor([2])] == 2
    with pytest.raises(TypeError):
        [0, 1, 2][xl.tensor(1.0)]
    with pytest.raises(xl.Error):
        int(xl.tensor([1, 2]))
    with pytest.raises(xl.Error):
        float(xl.tensor([1.0, 2.0]))
