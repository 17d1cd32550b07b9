"""Helpers of the tests that compare xlite with PyTorch on the same inputs: dtypes by name, random data as an
xlite tensor and a torch tensor, and a check of dtype, shape and values with tolerances by dtype."""
import builtins
import math

import ml_dtypes
import numpy as np
import torch

import xlite as xl

DTYPES = {
    "float32": (xl.float32, torch.float32, np.float32),
    "float64": (xl.float64, torch.float64, np.float64),
    "float16": (xl.float16, torch.float16, np.float16),
    "bfloat16": (xl.bfloat16, torch.bfloat16, ml_dtypes.bfloat16),
    "int32": (xl.int32, torch.int32, np.int32),
    "int64": (xl.int64, torch.int64, np.int64),
    "uint8": (xl.uint8, torch.uint8, np.uint8),
    "bool": (xl.bool, torch.bool, np.bool_),
}
TORCH_OF = {v[0]: v[1] for v in DTYPES.values()}
FLOATS = ("float32", "float64", "float16", "bfloat16")

# (rtol, atol) by result dtype.
TOL = {
    torch.float32: (1e-5, 1e-6),
    torch.float64: (1e-10, 1e-12),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1.6e-2),
}


def data(shape, dtype="float32", lo=-2.0, hi=2.0, seed=0):
    """Random host data of a dtype name as a NumPy array (bf16 as float32 values already rounded to bf16)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int32", "int64"):
        return rng.integers(builtins.int(math.floor(lo)), builtins.int(math.ceil(hi)) + 1, shape).astype(dtype)
    if dtype == "uint8":
        return rng.integers(builtins.max(0, builtins.int(lo)), builtins.max(1, builtins.int(hi)) + 1,
                            shape).astype(np.uint8)
    values = rng.uniform(lo, hi, shape)
    if dtype == "bfloat16":
        return values.astype(ml_dtypes.bfloat16).astype(np.float32)
    return values.astype(dtype)


def pair(shape, dtype="float32", lo=-2.0, hi=2.0, seed=0):
    """The same random values as an xlite tensor and a torch tensor."""
    return from_array(data(shape, dtype, lo, hi, seed), dtype)


def from_array(array, dtype):
    """A NumPy array as an xlite tensor and a torch tensor of the dtype name."""
    xt = xl.tensor(array, dtype=DTYPES[dtype][0])
    tt = torch.from_numpy(np.array(array)).to(DTYPES[dtype][1])
    return xt, tt


def to_torch(x):
    """An xlite tensor's values as a torch tensor of the same dtype."""
    array = np.asarray(x)
    if x.dtype == xl.bfloat16:
        return torch.from_numpy(array.astype(np.float32)).bfloat16()
    return torch.from_numpy(np.array(array))


def check(x, ref, rtol=None, atol=None, dtype=True):
    """x (xlite) has ref's (torch) dtype, shape and values."""
    assert isinstance(x, xl.Tensor), type(x)
    if dtype:
        assert TORCH_OF[x.dtype] == ref.dtype, f"dtype {x.dtype} != torch's {ref.dtype}"
    assert tuple(x.shape) == tuple(ref.shape), f"shape {tuple(x.shape)} != torch's {tuple(ref.shape)}"
    r, a = TOL.get(ref.dtype, (0, 0))
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    got = np.asarray(x).astype(np.float64)
    want = ref.detach().to(torch.float64).numpy()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def torch_in_float(fn, *tensors):
    """fn applied to float16/bfloat16 torch tensors through float32 (torch 1.13's CPU lacks many Half kernels),
    a float32 result cast back to the dtype torch would have given."""
    low = [t.dtype for t in tensors if t.dtype in (torch.float16, torch.bfloat16)]
    if not low:
        return fn(*tensors)
    want = tensors[0].dtype if len(tensors) == 1 else torch.result_type(*tensors)
    out = fn(*[t.float() if t.dtype in (torch.float16, torch.bfloat16) else t for t in tensors])
    return out.to(want) if out.dtype == torch.float32 and want.is_floating_point else out


def mse_training_steps(net, opt, tnet, topt, compiled=False):
    """One training step on the mean squared error for xlite (compiled or not) and one for torch: each
    zero_grad() (torch's set_to_none, as xlite's default), backward() and step(); each returns its loss."""
    def step(x, y):
        opt.zero_grad()
        loss = xl.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        return loss

    def torch_step(x, y):
        topt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(tnet(x), y)
        loss.backward()
        topt.step()
        return loss

    return (xl.compile(step) if compiled else step), torch_step
