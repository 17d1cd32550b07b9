"""The peers' side of bench/peers.sh: the workloads of bench/peer_cases.h (which xlite's peer_workloads.cpp and
libtorch's torch_workloads_peer.cpp run), on the same inputs (bench/peer_inputs.h), in
PyTorch 2.x eager, torch.compile (inductor, default and max-autotune modes) and JAX jit.

    .venv-bench/bin/python bench/peers.py FRAMEWORK [runs] [what]

FRAMEWORK is torch_eager, inductor, inductor_max_autotune, jax (jax_onednn and jax_no_xnnpack: other XLA
flags, JAX_FLAGS), torch_xla or torch_xla_compile (PyTorch/XLA's
lazy tensors on its CPU PJRT device, cut after each call or under torch_xla.compile; run from .venv-xla);
what is all, chains, rows or alone (as in peer_workloads). Prints `<workload>.<size>.<framework>_ms`, `.<framework>_memcpy_ms` (NumPy copying as many
bytes in this process, so each process's bandwidth is known) and `.<framework>_check`, the weighted sum of
sampled outputs that peer_inputs.h computes. Each time is the median of `runs` timed calls after three
warm-up calls (which also compile).
"""

import functools
import os
import sys
import time
from types import SimpleNamespace

import numpy as np


def input_values(n):
    """The floats of peer_inputs.h: a hash of the index mapped to [-3, 3), rounded once to f32."""
    h = (np.arange(n, dtype=np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    return (h.astype(np.float64) / 4294967296.0 * 6.0 - 3.0).astype(np.float32)


def targets_for(rows, classes):
    return (np.arange(rows, dtype=np.int64) * 7919) % classes


def checksum(out):
    flat = np.asarray(out, dtype=np.float32).reshape(-1)
    k = np.arange(0, flat.size, 997)
    return float(np.sum(flat[k].astype(np.float64) * ((k % 13).astype(np.float64) - 6.0)))


def environment():
    names = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GLIBC_TUNABLES", "THP_MEM_ALLOC_ENABLE", "XLA_FLAGS")
    return " ".join(f"{n}={os.environ.get(n, '(unset)')}" for n in names)


# PyTorch's mode for each of its peer names: eager, torch.compile's modes, and PyTorch/XLA's two.
TORCH_MODES = {"torch_eager": "eager", "inductor": "default", "inductor_max_autotune": "max_autotune",
               "torch_xla": "xla_lazy", "torch_xla_compile": "xla_compile"}


# JAX's peer names and the XLA flags each adds: its defaults (XNNPACK for the products it supports), oneDNN
# for matmuls, and XLA's own dot emitter (neither library).
JAX_FLAGS = {"jax": "", "jax_onednn": "--xla_cpu_use_onednn=true", "jax_no_xnnpack": "--xla_cpu_use_xnnpack=false"}


def make_framework(tag, torch_class, xla_class, jax_class):
    """The framework a peer name stands for, made from one script's classes for PyTorch, PyTorch/XLA and JAX."""
    if tag in JAX_FLAGS:
        flags = " ".join(f for f in (os.environ.get("XLA_FLAGS", ""), JAX_FLAGS[tag]) if f)
        if flags:
            os.environ["XLA_FLAGS"] = flags  # read when jax is first imported, in jax_class()
        return jax_class()
    return (xla_class if tag.startswith("torch_xla") else torch_class)(TORCH_MODES[tag])


def open_xla():
    """PyTorch/XLA on its CPU PJRT device (unless PJRT_DEVICE says otherwise): (torch_xla, xla_model, device),
    with its settings printed."""
    os.environ.setdefault("PJRT_DEVICE", "CPU")
    import torch_xla
    import torch_xla.core.xla_model as xm

    device = torch_xla.device()
    print(f"# settings: torch_xla {torch_xla.__version__}, device {device}, PJRT_DEVICE={os.environ['PJRT_DEVICE']}")
    return torch_xla, xm, device


def median_time(fn, runs, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


# The elementwise workloads, written once over each framework's functions (Torch.fn, Jax.fn): the same
# ops, in the same order, as bench/peer_cases.h.
def chain_tanh_sigmoid_gelu(f, x):
    y = f.tanh(x * 0.5 + 0.1)
    y = f.sigmoid(y * 1.7 - 0.2)
    y = f.gelu(y * 3.0 - 1.0)
    y = y + 0.05
    return y * y * 0.9


def chain_exp_log_tanh(f, x):
    y = f.log(f.exp(x * 0.5) + 1.0)
    y = f.tanh(y * 2.0 - 0.3)
    return f.abs(y * 0.8 + 0.1) * 1.25


ALONE = {
    "tanh": lambda f, x: f.tanh(x),
    "sigmoid": lambda f, x: f.sigmoid(x),
    "gelu": lambda f, x: f.gelu(x),
    "exp": lambda f, x: f.exp(x),
    "log": lambda f, x: f.log(f.abs(x)),
}


class Torch:
    def __init__(self, mode):
        import torch
        import torch.nn.functional as F

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
        self.torch, self.F = torch, F
        self.mode = mode
        self.fn = SimpleNamespace(tanh=torch.tanh, sigmoid=torch.sigmoid, gelu=F.gelu, exp=torch.exp, log=torch.log,
                                  abs=torch.abs)
        print(f"# settings: torch {torch.__version__}, threads {torch.get_num_threads()}, mode {mode}, {environment()}")

    def wrap(self, fn):
        if self.mode == "eager":
            return fn
        compile_mode = "max-autotune" if self.mode == "max_autotune" else "default"
        return self.torch.compile(fn, mode=compile_mode, dynamic=False)

    def array(self, values, shape):
        return self.torch.from_numpy(values.reshape(shape))

    def targets(self, values):
        return self.torch.from_numpy(values)

    def run(self, fn, *args):
        return fn(*args)

    def host(self, out):
        return out.numpy()

    def softmax(self, x):
        return self.torch.softmax(x, -1)

    def layernorm(self, x, w, b):
        return self.F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)

    def rmsnorm(self, x, w):
        return self.F.rms_norm(x, (x.shape[-1],), w, 1e-6)

    def cross_entropy(self, x, target):
        return self.F.cross_entropy(x, target)

    def loss_and_gradient(self, loss_fn, x, target):
        """A call that computes loss_fn(x, target) (compiled as wrap compiles it) and, by backward(), its
        gradient for x, as a training step does; it returns the gradient."""
        compiled = self.wrap(loss_fn)

        def call():
            logits = x.detach().requires_grad_()
            compiled(logits, target).backward()
            return logits.grad

        return call


class TorchXla(Torch):
    """PyTorch/XLA on its CPU PJRT device (PJRT_DEVICE=CPU): lazy tensors cut into a graph after the workload
    (torch_xla.sync()), or the workload under torch_xla.compile; each call waits for the device."""

    def __init__(self, mode):
        super().__init__(mode)
        self.torch_xla, self.xm, self.device = open_xla()

    def wrap(self, fn):
        if self.mode == "xla_compile":
            return self.torch_xla.compile(fn)

        def lazy(*args):
            out = fn(*args)
            self.torch_xla.sync()
            return out

        return lazy

    def array(self, values, shape):
        return super().array(values, shape).to(self.device)

    def targets(self, values):
        return super().targets(values).to(self.device)

    def run(self, fn, *args):
        out = fn(*args)
        self.xm.wait_device_ops()
        return out

    def host(self, out):
        return out.cpu().numpy()

    def loss_and_gradient(self, loss_fn, x, target):
        def call():  # forward and backward in one graph, cut after the backward in either mode
            logits = x.detach().requires_grad_()
            loss_fn(logits, target).backward()
            self.torch_xla.sync()
            self.xm.wait_device_ops()
            return logits.grad

        return call


class Jax:
    def __init__(self):
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_platforms", "cpu")
        self.jax, self.jnp = jax, jnp
        self.fn = SimpleNamespace(tanh=jnp.tanh, sigmoid=jax.nn.sigmoid,
                                  gelu=functools.partial(jax.nn.gelu, approximate=False), exp=jnp.exp, log=jnp.log,
                                  abs=jnp.abs)
        print(f"# settings: jax {jax.__version__}, devices {jax.devices()}, {environment()}")

    def wrap(self, fn):
        return self.jax.jit(fn)

    def array(self, values, shape):
        return self.jax.device_put(values.reshape(shape))

    def targets(self, values):
        return self.jax.device_put(values.astype(np.int32))

    def run(self, fn, *args):
        return fn(*args).block_until_ready()

    def host(self, out):
        return np.asarray(out)

    def softmax(self, x):
        return self.jax.nn.softmax(x, axis=-1)

    def layernorm(self, x, w, b):
        jnp = self.jnp
        mean = jnp.mean(x, axis=-1, keepdims=True)
        c = x - mean
        var = jnp.mean(c * c, axis=-1, keepdims=True)
        return c * self.jax.lax.rsqrt(var + 1e-5) * w + b

    def rmsnorm(self, x, w):
        jnp = self.jnp
        return x * self.jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w

    def cross_entropy(self, x, target):
        jnp = self.jnp
        logp = self.jax.nn.log_softmax(x, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, target[:, None], axis=-1))

    def loss_and_gradient(self, loss_fn, x, target):
        step = self.jax.jit(self.jax.value_and_grad(loss_fn))

        def call():
            loss, grad = step(x, target)
            loss.block_until_ready()
            return grad.block_until_ready()

        return call


def run_case(fw, tag, name, fn, args, copy_bytes, runs):
    compiled = fw.wrap(fn)
    time_call(fw, tag, name, lambda: fw.run(compiled, *args), copy_bytes, runs)


def time_call(fw, tag, name, call, copy_bytes, runs):
    src = np.ones(copy_bytes // 4, dtype=np.float32)
    dst = np.empty_like(src)
    t = median_time(call, runs)
    t_copy = median_time(lambda: np.copyto(dst, src), runs)
    print(f"{name}.{tag}_ms {t * 1e3:.6g} ms")
    print(f"{name}.{tag}_memcpy_ms {t_copy * 1e3:.6g} ms")
    print(f"{name}.{tag}_check {checksum(fw.host(call())):.9g} check", flush=True)


def main():
    tag = sys.argv[1]
    runs = max(5, int(sys.argv[2])) if len(sys.argv) > 2 else 9
    what = sys.argv[3] if len(sys.argv) > 3 else "all"
    fw = make_framework(tag, Torch, TorchXla, Jax)
    if what in ("all", "chains"):
        for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26):
            x = fw.array(input_values(n), (n,))
            for chain in (chain_tanh_sigmoid_gelu, chain_exp_log_tanh):
                run_case(fw, tag, f"{chain.__name__}.{n >> 20}M", functools.partial(chain, fw.fn), (x,), n * 4, runs)
    if what in ("all", "alone"):
        n = 1 << 24
        x = fw.array(input_values(n), (n,))
        for name, fn in ALONE.items():
            run_case(fw, tag, f"alone.{name}", functools.partial(fn, fw.fn), (x,), n * 4, runs)
    if what in ("all", "rows"):
        cols = 1024
        for rows in (1 << 10, 1 << 12, 1 << 14, 1 << 16):
            x = fw.array(input_values(rows * cols), (rows, cols))
            w = fw.array(np.ones(cols, dtype=np.float32), (cols,))
            b = fw.array(np.zeros(cols, dtype=np.float32), (cols,))
            target = fw.targets(targets_for(rows, cols))
            size = f"{(rows * cols) >> 20}M"
            nbytes = rows * cols * 4
            run_case(fw, tag, f"softmax.{size}", fw.softmax, (x,), nbytes, runs)
            run_case(fw, tag, f"layernorm.{size}", fw.layernorm, (x, w, b), nbytes, runs)
            run_case(fw, tag, f"rmsnorm.{size}", fw.rmsnorm, (x, w), nbytes, runs)
            run_case(fw, tag, f"cross_entropy.{size}", fw.cross_entropy, (x, target), nbytes // 2, runs)
            time_call(fw, tag, f"cross_entropy_grad.{size}", fw.loss_and_gradient(fw.cross_entropy, x, target),
                      nbytes, runs)


if __name__ == "__main__":
    main()
