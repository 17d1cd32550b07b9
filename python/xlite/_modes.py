"""Eager mode, grad mode and compile(fn), each usable as a call, a context manager or a decorator."""
import functools

from . import _xlite


class _Mode:
    """Sets a mode (of the thread, or of the process for the math modes) when made; as a context manager it
    restores the previous mode on exit."""

    def __init__(self, getter, setter, enabled):
        self._setter = setter
        self._previous = getter()
        setter(enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._setter(self._previous)
        return False


def eager_mode(enabled=True):
    """Runs each op of this thread at once (True) or traces lazily until sync (False, the default).

    Also a context manager: `with xl.eager_mode(True): ...` restores the previous mode on exit."""
    return _Mode(_xlite.is_eager_mode, _xlite._set_eager_mode, enabled)


def set_fast_math(enabled=True):
    """Compiles programs from now on with fast math (True) or precise math (False, the default), for the
    whole process: f32 exp, log, tanh, erf and sigmoid (and gelu, silu through them) within 4e-4 relative
    instead of 1e-6, with values below the smallest normal float read as zero. Programs of the other mode
    are not reused; compiled functions trace again. XLITE_FAST_MATH=1 starts with it on.

    Also a context manager: `with xl.set_fast_math(True): ...` restores the previous mode on exit."""
    return _Mode(_xlite.is_fast_math, _xlite._set_fast_math, enabled)


def set_excess_precision(enabled=True):
    """Compiles programs from now on with excess precision (True) or not (False, the default), for the whole
    process, as XLA's --xla_allow_excess_precision: inside a fused kernel the results of bf16 and f16 arithmetic
    stay in f32 and are rounded once, where the kernel stores them or compares, tests or converts them, instead
    of after every op. Faster, and usually closer to the exact value, but no longer the reference's values bit
    for bit (include/xlite/math_mode.h says what else it changes). Programs of the other mode are not reused;
    compiled functions trace again. XLITE_EXCESS_PRECISION=1 starts with it on.

    Also a context manager: `with xl.set_excess_precision(True): ...` restores the previous mode on exit."""
    return _Mode(_xlite.is_excess_precision, _xlite._set_excess_precision, enabled)


def set_grad_enabled(enabled):
    """Turns gradient recording on or off for this thread; as a context manager, for a scope."""
    return _Mode(_xlite.is_grad_enabled, _xlite._set_grad_enabled, enabled)


class _GradScope:
    """no_grad() and enable_grad(): context managers and decorators."""

    def __init__(self, enabled):
        self._enabled = enabled
        self._previous = []

    def __enter__(self):
        self._previous.append(_xlite.is_grad_enabled())
        _xlite._set_grad_enabled(self._enabled)
        return self

    def __exit__(self, *exc):
        _xlite._set_grad_enabled(self._previous.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def scoped(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return scoped


class autocast:
    """Mixed precision, as torch.autocast(device_type="cpu", dtype=torch.bfloat16): matrix products and
    convolutions take f32 operands in dtype, softmax, norms and losses compute in float32. A context manager
    and a decorator."""

    def __init__(self, device_type="cpu", dtype=None, enabled=True, cache_enabled=None):
        from . import _dtypes
        del device_type, cache_enabled  # one kind of device; casts are lazy ops, nothing to cache
        self._args = (_dtypes.bfloat16 if dtype is None else dtype, enabled)
        self._scopes = []

    def __enter__(self):
        scope = _xlite._AutocastScope(*self._args)
        scope.enter()
        self._scopes.append(scope)
        return self

    def __exit__(self, *exc):
        self._scopes.pop().exit()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def scoped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return scoped


class no_grad(_GradScope):
    """Ops in this scope record no gradients (evaluation, optimizer updates)."""

    def __init__(self):
        super().__init__(False)


class enable_grad(_GradScope):
    """Ops in this scope record gradients, also inside no_grad."""

    def __init__(self):
        super().__init__(True)


def compile(fn=None, *, force_retrace=False, full_graph=False, max_different_graphs=0):
    """fn compiled into one program per call signature (torch_xla.compile, jax.jit).

    The first calls trace fn lazily and end with one sync. Once two traces for the same signature agree, later
    calls replay the recorded program without running fn's Python body: they feed it the current arguments
    and the current values of the tensors fn reached by itself (module parameters, optimizer state), rebind
    the tensors it updates in place, and return its results.

    The signature is made of the tensors' dtypes, shapes and devices, Python numbers and strings by value,
    lists, tuples and dicts by structure, and any other object (a module, an optimizer, a function) by
    identity. Host state fn keeps to itself is not seen on a replay: fn must be a function of its arguments,
    the tensors it reads and TracedFlags (a module's training mode), as jax.jit requires.

    force_retrace: run fn on every call (PyTorch/XLA's behaviour); each distinct graph still compiles once.
    full_graph: raise where fn reads a value on the host, syncs or runs an eager op, instead of splitting.
    max_different_graphs: raise instead of compiling more than this many different graphs.

    Also a decorator: @xl.compile or @xl.compile(full_graph=True)."""
    if fn is None:
        return lambda f: compile(f, force_retrace=force_retrace, full_graph=full_graph,
                                 max_different_graphs=max_different_graphs)
    return _xlite._compile(fn, force_retrace, full_graph, max_different_graphs)
