"""The Tensor class: factories, dtypes and devices, printing, modes, errors, threads, debug and metrics."""
import threading

import numpy as np
import pytest
import torch

import xlite as xl


def test_factories_take_pytorch_keywords():
    assert xl.zeros(2, 3).shape == (2, 3)
    assert xl.zeros((2, 3), dtype=xl.int32).dtype == xl.int32
    assert xl.ones([4], dtype="float64").dtype == xl.float64
    assert xl.full((2,), 7).dtype == xl.int64 and xl.full((2,), 7.0).dtype == xl.float32
    assert xl.full((2,), True).dtype == xl.bool
    assert xl.arange(5).dtype == xl.int64 and xl.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert xl.arange(2, 8, 3).tolist() == [2, 5]
    assert xl.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert xl.zeros(3, requires_grad=True).requires_grad
    assert xl.tensor(3).dtype == xl.int64 and xl.tensor(3.0).dtype == xl.float32
    assert xl.tensor([True, False]).dtype == xl.bool
    assert xl.tensor([[1, 2], [3, 4]], dtype=xl.float16).dtype == xl.float16
    assert xl.zeros_like(xl.ones(2, dtype=xl.int32)).dtype == xl.int32
    assert xl.full_like(xl.ones(2), 5).tolist() == [5.0, 5.0]


def test_random_draws_are_seeded():
    xl.manual_seed(7)
    a = xl.randn(1000)
    xl.manual_seed(7)
    b = xl.randn(1000)
    assert a.tolist() == b.tolist()
    u = np.asarray(xl.rand(10000))
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.02


def test_attributes():
    x = xl.ones(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.size() == (2, 3, 4) and x.size(-1) == 4
    assert x.ndim == 3 and x.dim() == 3 and x.numel() == 24 and len(x) == 2
    assert x.dtype == xl.float32 and x.device == xl.device() and str(x.device) == "cpu:0"
    assert x.dtype.itemsize == 4 and x.element_size() == 4
    assert repr(xl.float32) == "xlite.float32"
    assert xl.device("cpu") == xl.device(0)
    with pytest.raises(xl.Error, match="unknown device"):
        xl.device("gpu")


def test_repr_like_pytorch():
    for values in ([1.0, 2.5], [1, 2], [1.0, float("nan"), -float("inf")], [[1e-8, 1.0], [3.0, 2e9]], [0.5] * 2000,
                   [[1, -200], [30, 4]], [True, False], []):
        assert repr(xl.tensor(values)) == repr(torch.tensor(values)), values
    assert repr(xl.tensor([1.0], dtype=xl.float64)) == "tensor([1.], dtype=xlite.float64)"
    assert "requires_grad=True" in repr(xl.ones(1).requires_grad_())
    assert "..." in repr(xl.zeros(5000))


def test_to_converts_and_moves():
    x = xl.arange(3)
    assert x.to(xl.float32).dtype == xl.float32
    assert x.to("float64").dtype == xl.float64
    assert x.to("cpu").tolist() == [0, 1, 2]
    assert x.to(xl.device(), xl.float16).dtype == xl.float16
    assert x.float().dtype == xl.float32 and x.double().dtype == xl.float64 and x.bool().dtype == xl.bool


def test_in_place_ops_rebind_every_alias():
    x = xl.zeros(3)
    alias = xl.Tensor(x)
    x += 1
    x.mul_(4).sub_(1)
    assert alias.tolist() == [3.0, 3.0, 3.0]
    x.fill_(2)
    assert alias.tolist() == [2.0] * 3
    x.zero_()
    assert alias.tolist() == [0.0] * 3
    x.copy_(xl.tensor([1, 2, 3]))
    assert x.tolist() == [1.0, 2.0, 3.0] and x.dtype == xl.float32


def test_errors_are_xlite_errors_with_the_op():
    with pytest.raises(xl.Error, match=r"\[matmul\]"):
        xl.ones(2, 3) @ xl.ones(4, 5)
    with pytest.raises(RuntimeError):
        xl.ones(2).reshape(3)
    with pytest.raises(xl.Error, match="ambiguous"):
        bool(xl.ones(2))
    with pytest.raises(TypeError):
        xl.ones(2) + "a"
    with pytest.raises(xl.Error, match="load"):
        xl.load("/nonexistent/file.safetensors")


def test_sync_of_some_tensors_leaves_others_pending():
    a, b = xl.ones(2) * 2, xl.ones(2) * 3
    xl.sync([a])
    assert not a.is_pending and b.is_pending


def test_value_reads_release_the_gil():
    # A thread that computes a large graph does not stop a thread that only runs Python.
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        x = xl.randn(512, 512)
        for _ in range(10):
            x = xl.tanh(x @ x * 0.01)
        before = len(ticks)
        x.sum().item()
        during = len(ticks) - before
    finally:
        stop.set()
        t.join()
    assert during > 0


def test_debug_and_metrics():
    x = xl.ones(4)
    y = xl.exp(x) + 1
    text = xl.debug.graph_text([y])
    assert "exp" in text and "f32[4]" in text
    assert "fusion" in xl.debug.optimized_text([y])
    assert "digraph" in xl.debug.graph_dot([y])
    assert "stablehlo" in xl.debug.stablehlo([y])
    stats = xl.debug.memory_stats([y])
    assert stats.output_bytes == 16
    xl.sync()
    assert xl.debug.last_sync().cause == "user sync"
    assert xl.metrics.counter_value("Execute") > 0
    assert "Execute" in xl.metrics.metrics_report()
    samples, total, recent = xl.metrics.metric_data("ExecuteTime")
    assert samples > 0 and total > 0
    assert any(name == "executable cache" for name, _ in xl.debug.runtime_state())


def test_typed_stubs_describe_the_module_and_its_submodules():
    import ast
    import os
    folder = os.path.join(os.path.dirname(xl.__file__), "_xlite")
    parsed = {}
    for name in ("__init__", "nn", "optim/__init__", "optim/lr_scheduler", "debug", "metrics", "kernels"):
        with open(os.path.join(folder, name + ".pyi")) as f:
            parsed[name] = ast.parse(f.read())

    def names(tree):
        return {node.name for node in ast.walk(tree) if isinstance(node, (ast.ClassDef, ast.FunctionDef))}

    assert {"Tensor", "matmul", "sync", "zeros", "softmax"} <= names(parsed["__init__"])
    assert {"Linear", "LayerNorm", "cross_entropy"} <= names(parsed["nn"])
    assert {"AdamW", "RMSprop", "Lion", "warmup_cosine_lr", "clip_grad_norm_"} <= names(parsed["optim/__init__"])
    assert {"StepLR", "OneCycleLR", "ReduceLROnPlateau"} <= names(parsed["optim/lr_scheduler"])
    assert {"add_", "zero_", "requires_grad_", "copy_"} <= names(parsed["__init__"])
    assert {"flash_attention", "register"} <= names(parsed["kernels"])
    assert os.path.exists(os.path.join(os.path.dirname(xl.__file__), "py.typed"))


def test_numpy_operands_on_either_side_give_tensors():
    x = xl.ones(3)
    for result in (np.float64(0.5) * x, np.ones(3) + x, x - np.ones(3), np.ones(3) == x):
        assert isinstance(result, xl.Tensor)
    assert (np.arange(3.0) * x).tolist() == [0.0, 1.0, 2.0]
    assert (x + np.ones(3)).dtype == xl.float64  # the array keeps its dtype, then promotion, as in PyTorch


def test_python_types_as_dtypes_follow_pytorch():
    assert xl.zeros(2, dtype=int).dtype == xl.int64
    assert xl.zeros(2, dtype=float).dtype == xl.float64
    assert xl.zeros(2, dtype=bool).dtype == xl.bool


def test_bitwise_operators_are_logical_on_bools_and_refused_on_integers():
    b = xl.tensor([True, False])
    assert (b & True).tolist() == [True, False] and (~b).tolist() == [False, True]
    assert (b ^ xl.tensor([True, True])).tolist() == [False, True]
    with pytest.raises(xl.Error, match="bitwise"):
        xl.tensor([6, 5]) & 3
    with pytest.raises(xl.Error, match="bitwise"):
        ~xl.tensor([1, 2])


def test_masked_fill_keeps_the_dtype():
    x = xl.tensor([5, 6, 7])
    out = x.masked_fill(xl.tensor([True, False, True]), 1.7)
    assert out.dtype == xl.int64 and out.tolist() == [1, 6, 1]
    y = xl.zeros(2, dtype=xl.float64).masked_fill(xl.tensor([True, False]), 0.1)
    assert y.tolist() == [0.1, 0.0]
