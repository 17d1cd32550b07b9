"""xlite.set_fast_math: faster f32 transcendentals within 4e-4, as a call or a scope, for the whole process."""
import numpy as np

import xlite as xl

X = np.linspace(-3, 3, 601, dtype=np.float32) + np.float32(0.00123)


def test_fast_math_is_a_scope_within_its_bound():
    assert not xl.is_fast_math()
    precise = np.asarray(xl.tanh(xl.tensor(X)))
    with xl.set_fast_math(True):
        assert xl.is_fast_math()
        fast = np.asarray(xl.tanh(xl.tensor(X)))
    assert not xl.is_fast_math()
    want = np.tanh(X.astype(np.float64))
    np.testing.assert_allclose(precise, want, rtol=1e-6)
    np.testing.assert_allclose(fast, want, rtol=4e-4)
    assert (fast != precise).sum() > len(X) // 2
    # The precise program compiled again, not the fast one reused.
    np.testing.assert_array_equal(np.asarray(xl.tanh(xl.tensor(X))), precise)


def test_a_compiled_function_traces_again_when_the_mode_changes():
    @xl.compile
    def f(x):
        return xl.sigmoid(x) * 2

    x = xl.tensor(X)
    for _ in range(3):
        f(x)
    assert f.last_call().replayed
    try:
        xl.set_fast_math(True)
        f(x)
        assert not f.last_call().replayed
        assert f.last_call().trace_reason == "fast math on (was fast math off)"
    finally:
        xl.set_fast_math(False)
    f(x)
    assert f.last_call().replayed
