"""The peers' side of bench/train_peers.sh: the training cases of bench/peer_training.cpp, from the same
weights and data (bench/train_common.h, written again here in NumPy), in PyTorch 2.x eager, torch.compile
(inductor) and JAX jit, one case per process.

    .venv-bench/bin/python bench/train_peers.py FRAMEWORK CASE [runs]

FRAMEWORK is torch_eager, inductor, inductor_max_autotune, jax (jax_onednn and jax_no_xnnpack: other XLA
flags, bench/peers.py's JAX_FLAGS), or torch_xla and torch_xla_compile
(PyTorch/XLA's lazy tensors on its CPU PJRT device, cut at each step, or under torch_xla.compile; from
.venv-xla, see scripts/install-bench-deps.sh). CASE is mlp.b<batch>, transformer.s<seq>,
transformer_bf16.s<seq> or chargpt.b<batch>. Each framework runs in its strongest usual form: PyTorch's
attention is scaled_dot_product_attention(is_causal=True) and its bf16 is torch.autocast (PyTorch/XLA's
too, on its device); JAX, which has no autocast, casts the products' operands to bf16 itself; inductor compiles the model's
forward and backward and, separately, the optimizer's step; JAX jits the whole step (value_and_grad and the
SGD or AdamW update, parameters and optimizer state donated) and uses
jax.nn.dot_product_attention(is_causal=True). Prints `<case>.<framework>_ms` (median of `runs` timed calls
after warm-up calls, which compile), `<case>.<framework>_check` (as peer_training.cpp) and
`<case>.<framework>_peak_MiB` and `_steady_MiB` (peak resident memory above the resident memory once the
parameters and inputs exist, over the whole case and over the timed calls alone, from /proc/self/status as
bench/process_memory.h reads it). Inductor compiles in worker processes, whose memory is not counted.
"""

import functools
import os
import sys

import numpy as np

from peers import environment, make_framework, median_time, open_xla

MLP_DIMS = (784, 1024, 1024, 10)
MLP_LR = 0.01
MODEL, HEADS, HIDDEN, BLOCK_TOKENS = 512, 8, 2048, 2048
GPT_LAYERS, GPT_HEADS, GPT_MODEL, GPT_CONTEXT, GPT_VOCAB = 4, 4, 128, 64, 96
GPT_LR, GPT_BETAS, GPT_EPS, GPT_WEIGHT_DECAY = 3e-3, (0.9, 0.99), 1e-8, 0.01
MASK64 = (1 << 64) - 1


def uniform(count, seed, scale, offset=0.0):
    """train_common.h's uniform(): a splitmix-style hash of (seed, index) mapped to offset + scale * [-1, 1)."""
    with np.errstate(over="ignore"):
        z = np.uint64((seed << 32) & MASK64) + np.arange(count, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    u = (z >> np.uint64(40)).astype(np.float32) / np.float32(8388608.0) - np.float32(1.0)
    return np.float32(offset) + np.float32(scale) * u


def seed_of(name):
    h = 2166136261
    for c in name.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def linear_init(name, out, fan_in, bias):
    bound = np.float32(1.0 / np.sqrt(np.float32(fan_in)))
    return uniform(out if bias else out * fan_in, seed_of(name), bound)


def labels(count, classes, seed):
    u = uniform(count, seed, 0.5, 0.5)
    return np.minimum(classes - 1, (u * classes).astype(np.int64))


def mlp_params():
    """{name: array} in PyTorch's Linear layout ([out, in] weights)."""
    p = {}
    for i in range(3):
        fan_in, out = MLP_DIMS[i], MLP_DIMS[i + 1]
        p[f"l{i}.weight"] = linear_init(f"l{i}.weight", out, fan_in, False).reshape(out, fan_in)
        p[f"l{i}.bias"] = linear_init(f"l{i}.bias", out, fan_in, True)
    return p


def block_shapes(d, prefix=""):
    return {
        prefix + "ln1.weight": (d,), prefix + "ln1.bias": (d,),
        prefix + "attn.qkv.weight": (3 * d, d), prefix + "attn.qkv.bias": (3 * d,),
        prefix + "attn.proj.weight": (d, d), prefix + "attn.proj.bias": (d,),
        prefix + "ln2.weight": (d,), prefix + "ln2.bias": (d,),
        prefix + "mlp.fc.weight": (4 * d, d), prefix + "mlp.fc.bias": (4 * d,),
        prefix + "mlp.proj.weight": (d, 4 * d), prefix + "mlp.proj.bias": (d,),
    }


def named_params(shapes):
    """train_common.h's named_param_init for every parameter: layer norms, embeddings, linear layers."""
    p = {}
    for name, shape in shapes.items():
        is_bias = name.endswith(".bias")
        count = int(np.prod(shape))
        if any(part in name for part in ("ln1.", "ln2.", "final_norm.")):
            p[name] = uniform(shape[0], seed_of(name), 0.1, 0.0 if is_bias else 1.0)
        elif any(part in name for part in ("tokens.", "positions.")):
            p[name] = uniform(count, seed_of(name), 0.1).reshape(shape)
        else:
            fan_in = shapes[name[: -len("bias")] + "weight"][1] if is_bias else shape[1]
            p[name] = linear_init(name, shape[0], fan_in, is_bias).reshape(shape)
    return p


def block_params():
    return named_params(block_shapes(MODEL))


def gpt_shapes():
    shapes = {"tokens.weight": (GPT_VOCAB, GPT_MODEL), "positions.weight": (GPT_CONTEXT, GPT_MODEL)}
    for i in range(GPT_LAYERS):
        shapes.update(block_shapes(GPT_MODEL, f"block{i}."))
    shapes.update({"final_norm.weight": (GPT_MODEL,), "final_norm.bias": (GPT_MODEL,),
                   "head.weight": (GPT_VOCAB, GPT_MODEL), "head.bias": (GPT_VOCAB,)})
    return shapes


def status_mib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return -1.0


def reset_peak_rss():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


class Torch:
    def __init__(self, mode):
        import torch
        import torch.nn.functional as F

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
        self.torch, self.F, self.mode = torch, F, mode
        self.device = None
        print(f"# settings: torch {torch.__version__}, threads {torch.get_num_threads()}, mode {mode}, {environment()}")

    def compiled(self, fn):
        if self.mode in ("eager", "xla_lazy", "xla_compile"):
            return fn
        return self.torch.compile(fn, mode="max-autotune" if self.mode == "max_autotune" else "default", dynamic=False)

    def on_device(self, values):
        t = self.torch.from_numpy(values)
        return t if self.device is None else t.to(self.device)

    def stepper(self, step):
        """The timed call: the step itself on the CPU; on an XLA device, also its execution, waited for."""
        return step

    def loss_steps(self, opt, loss, x, y):
        """A training step of loss(x, y) and opt, compiled as the mode says, timed through stepper; the check is
        the loss after one update from the shared initial weights, which checks the gradients too."""
        loss_of, update = self.compiled(loss), self.compiled(opt.step)

        def one_step():
            opt.zero_grad(set_to_none=True)
            out = loss_of(x, y)
            out.backward()
            update()
            return out

        step = self.stepper(one_step)

        def check():
            step()
            return float(step().item())

        return check, step

    def mlp(self, batch):
        torch, F = self.torch, self.F
        layers = [torch.nn.Linear(MLP_DIMS[i], MLP_DIMS[i + 1]) for i in range(3)]
        net = torch.nn.Sequential(layers[0], torch.nn.ReLU(), layers[1], torch.nn.ReLU(), layers[2])
        with torch.no_grad():
            for name, values in mlp_params().items():
                i, kind = int(name[1]), name.split(".")[1]
                getattr(layers[i], kind).copy_(torch.from_numpy(values))
        if self.device is not None:
            net.to(self.device)
        opt = torch.optim.SGD(net.parameters(), lr=MLP_LR)
        x = self.on_device(uniform(batch * MLP_DIMS[0], seed_of("mlp.x"), 1.0).reshape(batch, MLP_DIMS[0]))
        y = self.on_device(labels(batch, MLP_DIMS[3], seed_of("mlp.y")))
        return self.loss_steps(opt, lambda x, y: F.cross_entropy(net(x), y), x, y)

    def block_forward(self, p, prefix, heads, x):
        """The pre-LN block of train_models.h on [B, T, d], its parameters p[prefix + name]."""
        F = self.F
        b, t, d = x.shape
        dh = d // heads
        h = F.layer_norm(x, (d,), p[prefix + "ln1.weight"], p[prefix + "ln1.bias"], 1e-5)
        q, k, v = F.linear(h, p[prefix + "attn.qkv.weight"], p[prefix + "attn.qkv.bias"]).split(d, -1)
        q, k, v = (z.view(b, t, heads, dh).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        h = x + F.linear(a, p[prefix + "attn.proj.weight"], p[prefix + "attn.proj.bias"])
        m = F.layer_norm(h, (d,), p[prefix + "ln2.weight"], p[prefix + "ln2.bias"], 1e-5)
        m = F.gelu(F.linear(m, p[prefix + "mlp.fc.weight"], p[prefix + "mlp.fc.bias"]), approximate="tanh")
        return h + F.linear(m, p[prefix + "mlp.proj.weight"], p[prefix + "mlp.proj.bias"])

    def gpt(self, batch):
        torch, F = self.torch, self.F
        p = {n: self.on_device(v).requires_grad_() for n, v in named_params(gpt_shapes()).items()}
        opt = torch.optim.AdamW(p.values(), lr=GPT_LR, betas=GPT_BETAS, eps=GPT_EPS, weight_decay=GPT_WEIGHT_DECAY)
        x = self.on_device(labels(batch * GPT_CONTEXT, GPT_VOCAB, seed_of("gpt.x")).reshape(batch, GPT_CONTEXT))
        y = self.on_device(labels(batch * GPT_CONTEXT, GPT_VOCAB, seed_of("gpt.y")).reshape(batch, GPT_CONTEXT))

        def loss(x, y):
            h = F.embedding(x, p["tokens.weight"]) + p["positions.weight"][: x.shape[1]]
            for i in range(GPT_LAYERS):
                h = self.block_forward(p, f"block{i}.", GPT_HEADS, h)
            h = F.layer_norm(h, (GPT_MODEL,), p["final_norm.weight"], p["final_norm.bias"], 1e-5)
            logits = F.linear(h, p["head.weight"], p["head.bias"])
            return F.cross_entropy(logits.reshape(-1, GPT_VOCAB), y.reshape(-1))

        return self.loss_steps(opt, loss, x, y)

    def block(self, seq, bf16):
        torch, F = self.torch, self.F
        p = {n: self.on_device(v).requires_grad_() for n, v in block_params().items()}
        batch = BLOCK_TOKENS // seq
        x = self.on_device(uniform(batch * seq * MODEL, seed_of("tf.x"), 1.0).reshape(batch, seq, MODEL))
        forward = functools.partial(self.block_forward, p, "", HEADS)

        def loss(x):
            # On PyTorch/XLA's device its own autocast policy: products in bf16, as on the CPU.
            device_type = "cpu" if self.device is None else self.device.type
            with torch.autocast(device_type, dtype=torch.bfloat16, enabled=bf16):
                return forward(x).float().mean()

        loss_of = self.compiled(loss)

        def one_step():
            for t in p.values():
                t.grad = None
            out = loss_of(x)
            out.backward()
            return out

        step = self.stepper(one_step)

        def check():
            step()
            return float(sum(float((t.grad.detach().cpu().double() ** 2).sum()) for t in p.values()))

        return check, step


class TorchXla(Torch):
    """PyTorch/XLA on its CPU PJRT device: lazy tensors cut into a graph at each step (torch_xla.sync()), or
    the step under torch_xla.compile; each timed call waits for the device to finish."""

    def __init__(self, mode):
        super().__init__(mode)
        self.torch_xla, self.xm, self.device = open_xla()

    def stepper(self, step):
        run = self.torch_xla.compile(step) if self.mode == "xla_compile" else step

        def synced():
            out = run()
            if self.mode != "xla_compile":
                self.torch_xla.sync()
            self.xm.wait_device_ops()
            return out

        return synced


class Jax:
    def __init__(self):
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_platforms", "cpu")
        self.jax, self.jnp = jax, jnp
        print(f"# settings: jax {jax.__version__}, devices {jax.devices()}, {environment()}")

    def mlp(self, batch):
        jax, jnp = self.jax, self.jnp
        params = {n: jax.device_put(v) for n, v in mlp_params().items()}
        x = jax.device_put(uniform(batch * MLP_DIMS[0], seed_of("mlp.x"), 1.0).reshape(batch, MLP_DIMS[0]))
        y = jax.device_put(labels(batch, MLP_DIMS[3], seed_of("mlp.y")).astype(np.int32))

        def loss_fn(p, x, y):
            h = x
            for i in range(3):
                h = h @ p[f"l{i}.weight"].T + p[f"l{i}.bias"]
                if i < 2:
                    h = jax.nn.relu(h)
            logp = jax.nn.log_softmax(h, axis=-1)
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=-1))

        @functools.partial(jax.jit, donate_argnums=0)
        def update(p, x, y):
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            return jax.tree_util.tree_map(lambda a, b: a - MLP_LR * b, p, g), loss

        state = {"p": params}

        def step():
            state["p"], loss = update(state["p"], x, y)
            return loss.block_until_ready()

        def check():
            step()
            return float(step())

        return check, step

    def layer_norm(self, x, w, b):
        jnp = self.jnp
        c = x - jnp.mean(x, axis=-1, keepdims=True)
        return c * self.jax.lax.rsqrt(jnp.mean(c * c, axis=-1, keepdims=True) + 1e-5) * w + b

    def block_forward(self, p, prefix, heads, x, dtype=None):
        """The pre-LN block of train_models.h on [B, T, d], its parameters p[prefix + name]. With dtype bf16, the
        products and attention take bf16 operands (and give bf16), as torch.autocast does; the residual stream
        and the layer norms stay f32 (JAX promotes f32 + bf16 to f32)."""
        jax, jnp = self.jax, self.jnp
        b, t, d = x.shape

        def linear(x, name):
            w, bias = p[prefix + name + ".weight"], p[prefix + name + ".bias"]
            if dtype is None:
                return x @ w.T + bias
            # As autocast's linear: bf16 operands, the product accumulated and the bias added in f32, one
            # rounding to bf16 at the end.
            product = jnp.matmul(x.astype(dtype), w.T.astype(dtype), preferred_element_type=jnp.float32)
            return (product + bias.astype(dtype).astype(jnp.float32)).astype(dtype)

        h = self.layer_norm(x, p[prefix + "ln1.weight"], p[prefix + "ln1.bias"])
        q, k, v = (z.reshape(b, t, heads, d // heads) for z in jnp.split(linear(h, "attn.qkv"), 3, axis=-1))
        a = jax.nn.dot_product_attention(q, k, v, is_causal=True).reshape(b, t, d)
        h = x + linear(a, "attn.proj")
        m = self.layer_norm(h, p[prefix + "ln2.weight"], p[prefix + "ln2.bias"])
        return h + linear(jax.nn.gelu(linear(m, "mlp.fc"), approximate=True), "mlp.proj")

    def gpt(self, batch):
        jax, jnp = self.jax, self.jnp
        params = {n: jax.device_put(v) for n, v in named_params(gpt_shapes()).items()}
        x = jax.device_put(labels(batch * GPT_CONTEXT, GPT_VOCAB, seed_of("gpt.x")).reshape(batch, GPT_CONTEXT))
        y = jax.device_put(labels(batch * GPT_CONTEXT, GPT_VOCAB, seed_of("gpt.y")).reshape(batch, GPT_CONTEXT))
        b1, b2 = GPT_BETAS

        def loss_fn(p, x, y):
            h = p["tokens.weight"][x] + p["positions.weight"][: x.shape[1]]
            for i in range(GPT_LAYERS):
                h = self.block_forward(p, f"block{i}.", GPT_HEADS, h)
            h = self.layer_norm(h, p["final_norm.weight"], p["final_norm.bias"])
            logp = jax.nn.log_softmax(h @ p["head.weight"].T + p["head.bias"], axis=-1)
            return -jnp.mean(jnp.take_along_axis(logp, y[..., None], axis=-1))

        # AdamW as torch.optim.AdamW computes it: decay first, then the bias-corrected step.
        @functools.partial(jax.jit, donate_argnums=(0, 1, 2))
        def update(p, m, v, t, x, y):
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            t = t + 1
            m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
            v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
            c1, c2 = 1 - b1**t, 1 - b2**t

            def new(p, m, v):
                return p * (1 - GPT_LR * GPT_WEIGHT_DECAY) - GPT_LR * (m / c1) / (jnp.sqrt(v) / jnp.sqrt(c2) + GPT_EPS)

            return jax.tree_util.tree_map(new, p, m, v), m, v, t, loss

        zeros = {n: jnp.zeros_like(a) for n, a in params.items()}
        state = {"p": params, "m": zeros, "v": {n: jnp.zeros_like(a) for n, a in params.items()}, "t": 0}

        def step():
            state["p"], state["m"], state["v"], state["t"], loss = update(
                state["p"], state["m"], state["v"], state["t"], x, y)
            return loss.block_until_ready()

        def check():
            step()
            return float(step())

        return check, step

    def block(self, seq, bf16):
        jax, jnp = self.jax, self.jnp
        params = {n: jax.device_put(v) for n, v in block_params().items()}
        batch = BLOCK_TOKENS // seq
        x = jax.device_put(uniform(batch * seq * MODEL, seed_of("tf.x"), 1.0).reshape(batch, seq, MODEL))

        def loss_fn(p, x):
            return jnp.mean(self.block_forward(p, "", HEADS, x, jnp.bfloat16 if bf16 else None).astype(jnp.float32))

        grads_of = jax.jit(jax.value_and_grad(loss_fn))

        def step():
            return jax.block_until_ready(grads_of(params, x))

        def check():
            _, g = step()
            return float(sum(float(np.sum(np.asarray(t, dtype=np.float64) ** 2)) for t in g.values()))

        return check, step


def main():
    tag, case = sys.argv[1], sys.argv[2]
    runs = max(5, int(sys.argv[3])) if len(sys.argv) > 3 else 9
    fw = make_framework(tag, Torch, TorchXla, Jax)
    workload, size = case.rsplit(".", 1)
    if workload == "mlp":
        made = fw.mlp(int(size[1:]))
    elif workload == "chargpt":
        made = fw.gpt(int(size[1:]))
    else:
        made = fw.block(int(size[1:]), workload == "transformer_bf16")
    check, step = made
    base = status_mib("VmRSS")
    reset_peak_rss()
    value = check()
    for _ in range(2 if workload.startswith("transformer") else 3):
        step()
    first = status_mib("VmHWM") - base
    reset_peak_rss()
    t = median_time(step, runs, 0)
    steady = status_mib("VmHWM") - base
    print(f"{case}.{tag}_ms {t * 1e3:.6g} ms")
    print(f"{case}.{tag}_peak_MiB {max(first, steady):.6g} MiB")
    print(f"{case}.{tag}_steady_MiB {steady:.6g} MiB")
    print(f"{case}.{tag}_check {value:.9g} check", flush=True)


if __name__ == "__main__":
    main()
