"""xlite.set_excess_precision: bf16 and f16 arithmetic inside a fused kernel rounded once, where the kernel
stores it, instead of after every op; as a call or a scope, for the whole process."""
import os

import numpy as np
import pytest

import xlite as xl

pytestmark = pytest.mark.skipif(bool(os.environ.get("XLITE_EXCESS_PRECISION")), reason="set by the environment")

ONES = np.array([1.0, -1.0, 0.5, 4.0], dtype=np.float32)
SMALL = float(2.0**-9)  # below half a bf16 ulp of 1: 1 + SMALL rounds back to 1


def difference(dtype):
    one = xl.tensor(ONES).to(dtype)
    return np.asarray(((one + SMALL) - one).to(xl.float32))


def test_excess_precision_is_a_scope_that_rounds_once():
    assert not xl.is_excess_precision()
    by_op = difference(xl.bfloat16)
    with xl.set_excess_precision(True):
        assert xl.is_excess_precision()
        once = difference(xl.bfloat16)
    assert not xl.is_excess_precision()
    np.testing.assert_array_equal(by_op, [0.0, 0.0, 0.0, 0.0])
    # Kept in f32, every (x + 2^-9) - x is exactly 2^-9.
    np.testing.assert_array_equal(once, [SMALL] * 4)
    # The default program compiled again, not the excess one reused.
    np.testing.assert_array_equal(difference(xl.bfloat16), by_op)


def test_f32_is_the_same_in_both_modes():
    f32 = difference(xl.float32)
    with xl.set_excess_precision(True):
        np.testing.assert_array_equal(difference(xl.float32), f32)


def test_a_compiled_function_traces_again_when_the_mode_changes():
    @xl.compile
    def f(x):
        return (x + SMALL) - x

    x = xl.tensor(ONES).to(xl.bfloat16)
    for _ in range(3):
        f(x)
    assert f.last_call().replayed
    try:
        xl.set_excess_precision(True)
        out = f(x)
        assert not f.last_call().replayed
        assert f.last_call().trace_reason == "excess precision on (was excess precision off)"
        np.testing.assert_array_equal(np.asarray(out.to(xl.float32)), [SMALL] * 4)
    finally:
        xl.set_excess_precision(False)
    f(x)
    assert f.last_call().replayed
