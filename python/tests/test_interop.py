"""NumPy, DLPack (PyTorch 1.13 and JAX 0.4.35) and safetensors files: values, dtypes, memory sharing."""
import math

import jax
import jax.dlpack
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import torch
import torch.utils.dlpack
from jax.experimental import enable_x64

import xlite as xl

# dtype name: (xlite dtype, NumPy dtype, torch dtype)
DTYPES = {
    "float32": (xl.float32, np.dtype(np.float32), torch.float32),
    "float64": (xl.float64, np.dtype(np.float64), torch.float64),
    "float16": (xl.float16, np.dtype(np.float16), torch.float16),
    "bfloat16": (xl.bfloat16, np.dtype(ml_dtypes.bfloat16), torch.bfloat16),
    "int32": (xl.int32, np.dtype(np.int32), torch.int32),
    "int64": (xl.int64, np.dtype(np.int64), torch.int64),
    "uint8": (xl.uint8, np.dtype(np.uint8), torch.uint8),
    "bool": (xl.bool, np.dtype(np.bool_), torch.bool),
}
VALUES = [[1.5, -2.25, 0.0], [3.0, 100.0, -0.5]]


def host(name):
    """Sample values of a dtype as a NumPy array of that dtype."""
    if name == "bool":
        return np.array([[True, False, True], [False, False, True]])
    if name == "uint8":
        return np.array([[1, 255, 0], [7, 128, 3]], np.uint8)
    if name in ("int32", "int64"):
        return np.array([[1, -2, 0], [2**30, -(2**31), 5]], name)
    return np.array(VALUES, np.float32).astype(DTYPES[name][1])


def as_float64(array):
    return np.asarray(array).astype(np.float64)


# --------------------------------------------------------------------------------------------------------------
# NumPy


@pytest.mark.parametrize("name", list(DTYPES))
def test_asarray_values_and_dtype(name):
    a = host(name)
    x = xl.tensor(a)
    assert x.dtype == DTYPES[name][0]
    view = np.asarray(x)
    assert view.dtype == DTYPES[name][1]
    assert view.shape == a.shape
    np.testing.assert_array_equal(as_float64(view), as_float64(a))
    np.testing.assert_array_equal(as_float64(x.numpy()), as_float64(a))


@pytest.mark.parametrize("name", list(DTYPES))
def test_asarray_of_computed_values(name):
    xd, nd, _ = DTYPES[name]
    x = xl.zeros(2, 3, dtype=xd) + xl.ones(3, dtype=xd)  # a pending value
    view = np.asarray(x)
    assert view.dtype == nd
    np.testing.assert_array_equal(as_float64(view), np.ones((2, 3)))


@pytest.mark.parametrize("name", list(DTYPES))
def test_asarray_is_read_only(name):
    x = xl.tensor(host(name))
    view = np.asarray(x)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0, 0] = 1
    copy = np.array(x)  # np.array copies: that copy is the caller's
    copy[0, 0] = 0
    np.testing.assert_array_equal(as_float64(np.asarray(x)), as_float64(host(name)))


def test_asarray_conversions():
    x = xl.tensor([1.5, 2.5])
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.asarray(x, dtype=np.int32).tolist() == [1, 2]
    assert np.asarray(xl.tensor(2.5)).shape == ()
    assert np.asarray(xl.zeros(0, 3)).shape == (0, 3)
    b = np.asarray(xl.tensor([1.0, 2.0], dtype=xl.bfloat16))
    assert b.dtype == ml_dtypes.bfloat16
    assert b.astype(np.float32).tolist() == [1.0, 2.0]
    assert np.add(x, 1).tolist() == [2.5, 3.5]  # NumPy functions take tensors


@pytest.mark.parametrize("data, want", [
    ([1.0, 2.0], xl.float32),
    ([[1, 2], [3, 4]], xl.int64),
    ([True, False], xl.bool),
    ([1, 2.5], xl.float32),
    ([], xl.float32),
    (2.5, xl.float32),
    (3, xl.int64),
    (True, xl.bool),
    ([np.float32(1.0), np.float32(2.0)], xl.float32),
], ids=repr)
def test_tensor_from_python_dtype_rules(data, want):
    x = xl.tensor(data)
    t = torch.tensor(data)
    assert x.dtype == want
    assert DTYPES[[k for k, v in DTYPES.items() if v[0] == want][0]][2] == t.dtype  # as torch.tensor
    assert tuple(x.shape) == tuple(t.shape)
    np.testing.assert_array_equal(as_float64(x), t.double().numpy())


@pytest.mark.parametrize("name", list(DTYPES))
def test_tensor_from_ndarray_keeps_dtype(name):
    a = host(name)
    x = xl.tensor(a)
    assert x.dtype == DTYPES[name][0]
    np.testing.assert_array_equal(as_float64(x), as_float64(a))
    if name != "bfloat16":  # torch 1.13 has no NumPy bfloat16
        assert torch.tensor(a).dtype == DTYPES[name][2]


def test_tensor_with_dtype_and_copies():
    assert xl.tensor([1, 2], dtype=xl.float16).dtype == xl.float16
    assert xl.tensor([1.7, -1.7], dtype=xl.int64).tolist() == [1, -1]
    assert xl.tensor(np.array([1.0, 2.0]), dtype="float32").dtype == xl.float32
    assert xl.tensor([1.0, 2.0], dtype=np.float64).dtype == xl.float64
    a = np.array([1.0, 2.0], np.float32)
    x = xl.tensor(a)  # a copy
    a[0] = 50.0
    assert x.tolist() == [1.0, 2.0]
    y = xl.tensor(x)
    x.add_(1)
    assert y.tolist() == [1.0, 2.0]
    with pytest.raises(xl.Error, match=r"\[tensor\]"):
        xl.tensor(np.array([1, 2], np.int16))
    with pytest.raises(ValueError):
        xl.tensor([[1, 2], [3]])


@pytest.mark.parametrize("make", [
    lambda: xl.tensor(np.float32(1.5)),
    lambda: xl.tensor(np.array(1.5, np.float32)),
    lambda: xl.tensor(np.int64(3)),
    lambda: xl.tensor(2.5, dtype=xl.float16),
    lambda: xl.from_numpy(np.array(2.5, np.float32)),
    lambda: xl.as_tensor(np.array(7)),
], ids=["np.float32", "0-d ndarray", "np.int64", "float+dtype", "from_numpy 0-d", "as_tensor 0-d"])
def test_zero_dim_arrays_keep_shape(make):
    assert make().shape == ()


def test_tensor_of_numpy_float64_scalar():
    t = torch.tensor(np.float64(1.5))
    x = xl.tensor(np.float64(1.5))
    assert DTYPES["float64"][2] == t.dtype
    assert x.dtype == xl.float64 and x.shape == () and x.item() == 1.5


@pytest.mark.parametrize("name", list(DTYPES))
def test_from_numpy_shares_memory(name):
    a = np.ascontiguousarray(host(name))
    x = xl.from_numpy(a)
    assert x.dtype == DTYPES[name][0]
    assert np.asarray(x).ctypes.data == a.ctypes.data  # no copy
    np.testing.assert_array_equal(as_float64(x), as_float64(a))


def test_from_numpy_reads_the_array_memory():
    a = np.arange(6, dtype=np.float32)
    x = xl.from_numpy(a)
    a[0] = 100.0  # the array's memory as it is when the tensor is read
    assert x.tolist() == [100.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert xl.as_tensor(a).tolist()[0] == 100.0


def test_inplace_op_does_not_write_the_array():
    a = np.arange(6, dtype=np.float32)
    x = xl.from_numpy(a)
    x.add_(1)
    x.mul_(2)
    x += 1
    x[0] = -7.0
    assert x.tolist() == [-7.0, 5.0, 7.0, 9.0, 11.0, 13.0]
    np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32))
    y = xl.from_numpy(a)
    y.copy_(xl.zeros(6))
    y.zero_()
    np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32))


@pytest.mark.parametrize("make", [
    lambda: np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2],
    lambda: np.arange(24, dtype=np.float32).reshape(4, 6).T,
    lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    lambda: np.arange(24, dtype=np.int64).reshape(2, 3, 4)[:, 1:, ::-1],
    lambda: np.arange(10, dtype=np.float32)[::3],
], ids=["strided", "transposed", "fortran", "reversed", "step"])
def test_non_contiguous_arrays_are_copied(make):
    a = make()
    assert not a.flags.c_contiguous
    for fn in (xl.from_numpy, xl.tensor, xl.as_tensor):
        x = fn(a)
        assert tuple(x.shape) == a.shape
        assert np.asarray(x).dtype == a.dtype
        np.testing.assert_array_equal(np.asarray(x), a)


def test_from_numpy_rejects():
    with pytest.raises(xl.Error, match=r"\[from_numpy\]"):
        xl.from_numpy([1, 2])
    with pytest.raises(xl.Error, match=r"\[from_numpy\]"):
        xl.from_numpy(np.array([1, 2], np.int16))


# --------------------------------------------------------------------------------------------------------------
# DLPack

ROUND_TRIP = ["float32", "float16", "bfloat16", "int64", "bool"]


def torch_supports(dtype):
    """Whether torch 1.13's DLPack takes this dtype (checked, not assumed)."""
    try:
        torch.utils.dlpack.to_dlpack(torch.zeros(1, dtype=dtype))
        return True
    except (RuntimeError, TypeError):
        return False


def test_dlpack_device():
    assert xl.tensor([1.0]).__dlpack_device__() == (1, 0)
    assert (xl.ones(2) * 2).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_torch_from_dlpack(name):
    xd, _, td = DTYPES[name]
    if not torch_supports(td):
        pytest.skip(f"torch 1.13's DLPack has no {td}")
    a = host(name)
    x = xl.tensor(a)
    t = torch.from_dlpack(x)
    assert t.dtype == td
    assert tuple(t.shape) == a.shape
    np.testing.assert_array_equal(t.to(torch.float64).numpy(), as_float64(a))
    assert t.data_ptr() == np.asarray(x).ctypes.data  # zero copy
    t2 = torch.utils.dlpack.from_dlpack(x.__dlpack__())  # the capsule form
    np.testing.assert_array_equal(t2.to(torch.float64).numpy(), as_float64(a))


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_xlite_from_torch(name):
    xd, _, td = DTYPES[name]
    if not torch_supports(td):
        pytest.skip(f"torch 1.13's DLPack has no {td}")
    t = torch.from_numpy(host(name).astype(np.float32) if name == "bfloat16" else host(name)).to(td)
    x = xl.from_dlpack(t)
    assert x.dtype == xd
    assert tuple(x.shape) == tuple(t.shape)
    np.testing.assert_array_equal(as_float64(x), t.to(torch.float64).numpy())
    assert np.asarray(x).ctypes.data == t.data_ptr()  # zero copy
    back = torch.from_dlpack(x * 1 if name != "bool" else x)  # and back, through a computed value
    assert back.dtype == td
    np.testing.assert_array_equal(back.to(torch.float64).numpy(), t.to(torch.float64).numpy())


def test_torch_bool_dlpack_is_unsupported_in_torch_1_13():
    """Documents why the bool cases above skip: torch 1.13 itself has no DLPack bool."""
    if torch_supports(torch.bool):
        pytest.skip("this torch supports bool DLPack")
    with pytest.raises((RuntimeError, TypeError)):
        torch.from_dlpack(xl.tensor([True, False]))


def test_torch_dlpack_pending_and_shapes():
    x = xl.arange(6.0).reshape(2, 3) * 2  # pending until DLPack reads it
    t = torch.from_dlpack(x)
    assert t.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    assert t.data_ptr() == np.asarray(x).ctypes.data
    assert tuple(torch.from_dlpack(xl.tensor(2.5)).shape) == ()
    assert tuple(torch.from_dlpack(xl.zeros(0, 3)).shape) == (0, 3)
    # a non-contiguous torch tensor is taken too
    nc = torch.arange(6.0).reshape(2, 3).T
    np.testing.assert_array_equal(np.asarray(xl.from_dlpack(nc)), nc.numpy())


def test_xlite_from_torch_reads_its_memory():
    t = torch.arange(4.0)
    x = xl.from_dlpack(t)
    t[0] = 9.0
    assert x.tolist() == [9.0, 1.0, 2.0, 3.0]
    x.add_(1)  # an in-place op gives the tensor a new buffer
    assert t.tolist() == [9.0, 1.0, 2.0, 3.0]


def jax_dtype(name):
    return jnp.bfloat16 if name == "bfloat16" else jnp.dtype(name)


@pytest.mark.parametrize("name", ROUND_TRIP)
@pytest.mark.parametrize("reader", ["jnp.from_dlpack", "jax.dlpack.from_dlpack"])
def test_jax_from_xlite(name, reader):
    fn = jnp.from_dlpack if reader == "jnp.from_dlpack" else jax.dlpack.from_dlpack
    a = host(name)
    x = xl.tensor(a)
    with enable_x64(True):  # JAX keeps int64 only with x64 on
        j = fn(x)
        assert j.dtype == jax_dtype(name)
        assert j.shape == a.shape
        np.testing.assert_array_equal(np.asarray(j).astype(np.float64), as_float64(a))


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_xlite_from_jax(name):
    xd = DTYPES[name][0]
    a = host(name)
    with enable_x64(True):
        j = jnp.asarray(a, dtype=jax_dtype(name))
        x = xl.from_dlpack(j)
        assert x.dtype == xd
        assert tuple(x.shape) == a.shape
        np.testing.assert_array_equal(as_float64(x), as_float64(a))
        assert np.asarray(x).ctypes.data == j.unsafe_buffer_pointer()  # zero copy
        back = jnp.from_dlpack(xl.clone(x))
        assert back.dtype == jax_dtype(name)
        np.testing.assert_array_equal(np.asarray(back).astype(np.float64), as_float64(a))


def test_xlite_from_numpy_dlpack():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = xl.from_dlpack(a)
    assert x.dtype == xl.float32
    assert np.asarray(x).ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(x), a)


def test_from_dlpack_rejects_unknown_dtypes():
    with pytest.raises((xl.Error, TypeError)):
        xl.from_dlpack(torch.zeros(2, dtype=torch.int16))


# --------------------------------------------------------------------------------------------------------------
# save and load


def test_save_load_round_trip(tmp_path):
    tensors = {
        "f32": xl.tensor([[1.0, -2.5], [3.25, 0.0]]),
        "f64": xl.tensor(np.array([math.pi, -1e300])),
        "f16": xl.tensor([1.5, -65504.0], dtype=xl.float16),
        "bf16": xl.tensor([1.5, -2.25, 3.0e38], dtype=xl.bfloat16),
        "i32": xl.tensor(np.array([-(2**31), 7], np.int32)),
        "i64": xl.tensor([2**62 + 1, -3]),
        "u8": xl.tensor(np.array([0, 255], np.uint8)),
        "bool": xl.tensor([True, False, True]),
        "scalar": xl.tensor(2.5),
        "empty": xl.zeros(0, 3),
        "computed": xl.arange(6.0).reshape(2, 3) * 2,
        "nested.name": xl.ones(1, 1, 2),
    }
    path = tmp_path / "model.safetensors"
    xl.save(tensors, str(path))
    assert path.stat().st_size > 0
    loaded = xl.load(str(path))
    assert sorted(loaded) == sorted(tensors)
    for name, want in tensors.items():
        got = loaded[name]
        assert got.dtype == want.dtype, name
        assert tuple(got.shape) == tuple(want.shape), name
        a, b = np.asarray(got), np.asarray(want)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a.astype(np.float64), b.astype(np.float64), err_msg=name)
    assert loaded["i64"].tolist() == [2**62 + 1, -3]
    assert np.asarray(loaded["bf16"]).dtype == ml_dtypes.bfloat16


def test_load_map_location(tmp_path):
    path = str(tmp_path / "t.safetensors")
    xl.save({"w": xl.tensor([1.0, 2.0])}, path)
    assert xl.load(path, map_location="cpu")["w"].tolist() == [1.0, 2.0]
    assert xl.load(path, xl.device())["w"].device == xl.device()


@pytest.mark.parametrize("content", [b"", b"garbage" * 3, b"\x08\x00\x00\x00\x00\x00\x00\x00{bad json", "truncated"],
                         ids=["empty", "garbage", "bad header", "truncated"])
def test_load_corrupt_file_raises(tmp_path, content):
    path = tmp_path / "bad.safetensors"
    if content == "truncated":
        good = tmp_path / "good.safetensors"
        xl.save({"a": xl.ones(4, 4), "b": xl.tensor([1, 2, 3])}, str(good))
        content = good.read_bytes()[:-8]
    path.write_bytes(content)
    with pytest.raises(xl.Error, match=r"\[load\]"):
        xl.load(str(path))


def test_load_missing_file_raises(tmp_path):
    with pytest.raises(xl.Error, match=r"\[load\]"):
        xl.load(str(tmp_path / "missing.safetensors"))


def test_save_is_readable_by_the_format(tmp_path):
    """The file is safetensors: an 8-byte little-endian header length, a JSON header, then the raw bytes."""
    import json
    import struct

    path = tmp_path / "f.safetensors"
    xl.save({"x": xl.tensor([1.0, 2.0]), "b": xl.tensor([1.0], dtype=xl.bfloat16)}, str(path))
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert header["x"]["dtype"] == "F32" and header["x"]["shape"] == [2]
    assert header["b"]["dtype"] == "BF16"
    begin, end = header["x"]["data_offsets"]
    assert np.frombuffer(raw[8 + n + begin:8 + n + end], np.float32).tolist() == [1.0, 2.0]
