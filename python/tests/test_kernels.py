"""Custom kernels from Python: the built-in ones, and a kernel written in Python over NumPy arrays."""
import numpy as np
import pytest

import xlite as xl

_registered = False


def register_scaled_softplus():
    global _registered
    if _registered:
        return
    _registered = True

    def shape(inputs, attrs):
        (x_shape, x_dtype), = inputs
        return [(x_shape, x_dtype)]

    def cpu(inputs, attrs):
        x, = inputs
        return np.log1p(np.exp(x)) * attrs["scale"]

    def backward(inputs, outputs, grads, attrs):
        x, = inputs
        return [grads[0] * xl.sigmoid(x) * attrs["scale"]]

    xl.kernels.register("py.scaled_softplus", shape, cpu, backward)


def test_a_python_kernel_runs_lazily_eagerly_and_compiled():
    register_scaled_softplus()
    x = xl.tensor([-1.0, 0.0, 2.0])
    want = np.log1p(np.exp([-1.0, 0.0, 2.0])) * 3
    y, = xl.kernels.call("py.scaled_softplus", [x], {"scale": 3.0})
    assert y.is_pending
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-6)
    with xl.eager_mode(True):
        y, = xl.kernels.call("py.scaled_softplus", [x], {"scale": 3.0})
        np.testing.assert_allclose(np.asarray(y), want, rtol=1e-6)
    f = xl.compile(lambda t: xl.kernels.call("py.scaled_softplus", [t * 1], {"scale": 3.0})[0])
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-6)
    assert f.last_call().replayed
    assert 'kernel="py.scaled_softplus"' in xl.debug.graph_text([xl.kernels.call("py.scaled_softplus", [x],
                                                                                   {"scale": 1.0})[0]])


def test_a_python_kernel_backward_matches_finite_differences():
    register_scaled_softplus()
    x = xl.tensor([-1.0, 0.5, 2.0], dtype=xl.float64).requires_grad_()
    xl.kernels.call("py.scaled_softplus", [x], {"scale": 2.0})[0].sum().backward()
    data = np.array([-1.0, 0.5, 2.0])
    eps = 1e-6
    numeric = (np.log1p(np.exp(data + eps)) - np.log1p(np.exp(data - eps))) / (2 * eps) * 2
    np.testing.assert_allclose(np.asarray(x.grad), numeric, rtol=1e-6)


def test_python_kernel_failures_are_xlite_errors():
    def shape(inputs, attrs):
        return [((2,), xl.float32)]

    def cpu(inputs, attrs):
        if attrs["mode"] == "raise":
            raise ValueError("bad data")
        return np.zeros(3)

    if not xl.kernels.is_registered("py.faulty"):
        xl.kernels.register("py.faulty", shape, cpu)
    with pytest.raises(xl.Error, match="bad data"):
        xl.kernels.call("py.faulty", [xl.ones(2)], {"mode": "raise"})[0].tolist()
    with pytest.raises(xl.Error, match="shape"):
        xl.kernels.call("py.faulty", [xl.ones(2)], {"mode": "wrong shape"})[0].tolist()
    with pytest.raises(xl.Error):
        xl.kernels.register("py.faulty", shape, cpu)  # a second registration
    assert (xl.ones(2) + 1).tolist() == [2.0, 2.0]


def test_flash_attention_matches_the_composite():
    q, k, v = (xl.randn(1, 2, 16, 8) for _ in range(3))
    scale = 8 ** -0.5
    got = xl.kernels.flash_attention(q, k, v, causal=True, sm_scale=scale)
    scores = (q @ k.transpose(-2, -1)) * scale
    mask = xl.tril(xl.ones(16, 16)) > 0
    want = xl.softmax(xl.where(mask, scores, float("-inf")), -1) @ v
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_gmm_multiplies_each_group_by_its_matrix():
    lhs, rhs = xl.randn(5, 3), xl.randn(2, 3, 4)
    sizes = xl.tensor([2, 3], dtype=xl.int32)
    got = np.asarray(xl.kernels.gmm(lhs, rhs, sizes))
    a, b = np.asarray(lhs), np.asarray(rhs)
    np.testing.assert_allclose(got, np.concatenate([a[:2] @ b[0], a[2:] @ b[1]]), rtol=1e-5, atol=1e-6)


# Each scenario runs in a subprocess with a time limit: a deadlock fails the test instead of hanging the suite.
_THREADED = r"""
import threading, numpy as np, xlite as xl
stop = threading.Event()
def eager_loop():
    with xl.eager_mode(True):
        while not stop.is_set():
            xl.ones(4) + 1
worker = threading.Thread(target=eager_loop)
worker.start()
try:
    for _ in range(30):
        %s
finally:
    stop.set()
    worker.join()
print("done")
"""


@pytest.mark.parametrize("body", [
    # A kernel written in Python runs while another thread's eager ops wait for the sync.
    'y = xl.kernels.call("py.scaled_softplus", [xl.ones(3)], {"scale": 1.0})[0]; y.tolist()',
    # Memory borrowed from NumPy is released by a program while another thread waits.
    't = xl.from_numpy(np.ones(8, np.float32)); y = t * 2; del t; y.tolist()',
])
def test_no_deadlock_between_python_threads(body):
    import subprocess
    import sys
    script = "import xlite as xl\nimport numpy as np\n" \
        "xl.kernels.register('py.scaled_softplus', lambda i, a: [i[0]], lambda i, a: np.log1p(np.exp(i[0])))\n" \
        + _THREADED % body
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "done" in out.stdout, out.stderr


def test_a_python_kernel_that_syncs_raises():
    if not xl.kernels.is_registered("py.syncs"):
        xl.kernels.register("py.syncs", lambda i, a: [i[0]], lambda i, a: i[0] + xl.ones(1).sum().item())
    with pytest.raises(xl.Error, match="must not sync"):
        xl.kernels.call("py.syncs", [xl.ones(2)])[0].tolist()
    assert (xl.ones(2) * 2).tolist() == [2.0, 2.0]


def test_a_python_kernel_with_a_0d_bf16_output():
    if not xl.kernels.is_registered("py.total"):
        xl.kernels.register("py.total", lambda i, a: [((), xl.bfloat16)], lambda i, a: i[0].astype("float32").sum())
    x = xl.tensor([1.5, 2.5], dtype=xl.bfloat16)
    total, = xl.kernels.call("py.total", [x])
    assert total.shape == () and total.dtype == xl.bfloat16 and total.item() == 4.0
