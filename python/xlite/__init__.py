"""xlite: tensors traced lazily into graphs and compiled into fused native code.

    import xlite as xl
    a = xl.tensor(100.0, device=xl.device())
    b = xl.cos(a)   # nothing runs
    c = xl.sin(b)
    xl.sync()       # one graph computes b and c

The functions and classes come from the C++ library (xlite._xlite); this package adds the parts that are
plain Python: indexing, tensors from Python data, nn.Module, context managers and compile as a decorator.
"""
from . import _xlite
from ._xlite import (  # noqa: F401
    Device, Error, InternalError, Tensor, TracedFlag, StepCallInfo, CompiledFunction, MemoryInfo,
    device, devices, device_count, sync, is_eager_mode, is_grad_enabled, is_autocast_enabled, is_fast_math,
    is_excess_precision,
    # ops
    neg, abs, exp, expm1, log, log1p, sqrt, rsqrt, sin, cos, tan, tanh, sigmoid, relu, silu, erf, floor, ceil,
    round, sign, reciprocal, square, logical_not, isnan, isinf, gelu,
    add, sub, mul, div, pow, maximum, minimum, remainder, eq, ne, lt, le, gt, ge,
    logical_and, logical_or, logical_xor, where, clamp,
    sum, mean, prod, amax, amin, argmax, argmin, logsumexp, var, softmax, log_softmax,
    reshape, flatten, squeeze, unsqueeze, transpose, permute, broadcast_to, slice, narrow, select, cat, concat, stack,
    split, chunk, pad, flip, tril, triu, index_select, gather, scatter_add, embedding, one_hot,
    matmul, linear, conv2d, max_pool2d, avg_pool2d,
    asin, acos, atan, atan2, sinh, cosh, logaddexp, hypot, softplus, mish, hardsigmoid, hardswish, elu, leaky_relu,
    glu, clamp_min, clamp_max, nan_to_num, dropout, any, all, count_nonzero, std, norm, isclose, allclose, equal,
    cumsum, cumprod, cummax, cummin, sort, argsort, topk, kthvalue, median, mode, repeat_interleave, roll, diag,
    diagonal, trace, tile, clone, outer, bmm, addmm, baddbmm, cross, einsum, nonzero, masked_select, unique, conv1d,
    conv_transpose2d, avg_pool1d, max_pool1d, adaptive_avg_pool2d, interpolate, ValuesIndices,
    # factories
    zeros, ones, full, zeros_like, ones_like, full_like, rand, randn, rand_like, randn_like, arange, eye,
    manual_seed, set_default_dtype, get_default_dtype, randint, randperm, bernoulli, multinomial, linspace, logspace,
    # tools
    save, load, get_memory_info, reset_peak_memory, empty_cache, clear_caches, debug, metrics, kernels,
    set_printoptions,
)
from ._dtypes import (  # noqa: F401
    dtype, float32, float64, float16, bfloat16, int32, int64, uint8, bool, float, double, half, long, int,
)
from ._creation import tensor, from_numpy, from_dlpack, as_tensor  # noqa: F401
from ._modes import (  # noqa: F401
    eager_mode, no_grad, enable_grad, set_grad_enabled, set_fast_math, set_excess_precision, compile, autocast,
)
from ._autograd import grad, value_and_grad, custom_vjp  # noqa: F401
from ._functions import max, min, floor_divide  # noqa: F401
from . import _tensor  # noqa: F401  (attaches methods, indexing and printing to Tensor)
from . import nn, optim, experimental, utils  # noqa: F401

__version__ = _xlite.version()
