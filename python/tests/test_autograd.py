"""Autograd from Python: backward and .grad, grad/value_and_grad over Python functions, custom_vjp, grad mode."""
import numpy as np
import pytest

import xlite as xl


def finite_difference(fn, x, eps=1e-3):
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in range(x.size):
        up, down = x.copy(), x.copy()
        up.flat[i] += eps
        down.flat[i] -= eps
        g.flat[i] = (fn(up) - fn(down)) / (2 * eps)
    return g


def test_backward_matches_finite_differences():
    data = np.random.default_rng(0).normal(size=(3, 4))

    def f(t):
        return (xl.tanh(t) * t).sum() + xl.log_softmax(t, 1).mean()

    x = xl.tensor(data, dtype=xl.float64).requires_grad_()
    f(x).backward()
    want = finite_difference(lambda a: f(xl.tensor(a)).item(), data)
    np.testing.assert_allclose(np.asarray(x.grad), want, rtol=1e-5, atol=1e-7)


def test_grad_and_value_and_grad_over_argnums():
    f = lambda x, y, scale: (x * y).sum() * scale  # noqa: E731
    x, y = xl.tensor([1.0, 2.0]), xl.tensor([3.0, 4.0])
    gx = xl.grad(f)(x, y, 2.0)
    assert gx.tolist() == [6.0, 8.0]
    value, (gx, gy) = xl.value_and_grad(f, argnums=(0, 1))(x, y, 2.0)
    assert value.item() == 22.0 and gy.tolist() == [2.0, 4.0]
    with pytest.raises(xl.Error, match="not a tensor"):
        xl.grad(f, argnums=2)(x, y, 2.0)


def test_custom_vjp_uses_the_python_backward():
    seen = []

    def backward(inputs, output, g):
        seen.append(output.shape)
        return (g * 100, None)

    f = xl.custom_vjp(lambda x, y: x * y, backward)
    x, y = xl.ones(3).requires_grad_(), xl.ones(3).requires_grad_()
    f(x, y).sum().backward()
    assert x.grad.tolist() == [100.0] * 3
    assert y.grad is None or y.grad.tolist() == [0.0] * 3
    assert seen == [(3,)]


def test_an_exception_in_a_custom_backward_propagates():
    def backward(inputs, output, g):
        raise KeyError("custom backward")

    f = xl.custom_vjp(lambda x: x * 2, backward)
    x = xl.ones(2).requires_grad_()
    with pytest.raises(KeyError):
        f(x).sum().backward()
    assert (xl.ones(2) * 3).tolist() == [3.0, 3.0]


def test_grad_modes():
    x = xl.ones(2).requires_grad_()
    with xl.no_grad():
        assert not xl.is_grad_enabled()
        assert not (x * 2).requires_grad
        with xl.enable_grad():
            assert (x * 2).requires_grad
    assert xl.is_grad_enabled()

    @xl.no_grad()
    def evaluate(t):
        return t * 2

    assert not evaluate(x).requires_grad
    with xl.set_grad_enabled(False):
        assert not xl.is_grad_enabled()
    assert xl.is_grad_enabled()
    assert not x.detach().requires_grad
    x.requires_grad = False
    assert not x.requires_grad


def test_an_exception_in_a_function_under_grad_propagates():
    def f(x):
        raise ZeroDivisionError("inside grad")

    with pytest.raises(ZeroDivisionError, match="inside grad"):
        xl.grad(f)(xl.ones(2))
    assert xl.grad(lambda x: (x * x).sum())(xl.ones(2)).tolist() == [2.0, 2.0]


def test_assignment_into_a_box_passes_gradients_to_both_sides():
    x = xl.ones(3, 4).requires_grad_()
    v = xl.full((4,), 2.0).requires_grad_()
    y = x * 1
    y[1] = v * 3
    (y * y).sum().backward()
    assert x.grad.tolist() == [[2.0] * 4, [0.0] * 4, [2.0] * 4]
    assert v.grad.tolist() == [36.0] * 4
