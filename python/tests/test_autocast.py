"""xlite.autocast against torch.autocast on the CPU: which ops compute in bfloat16 and which in float32."""
import numpy as np
import pytest
import torch

import xlite as xl


def dtypes(m, autocast):
    a = m.tensor(np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8))
    b = m.tensor(np.linspace(1, -1, 24, dtype=np.float32).reshape(8, 3))
    with autocast(device_type="cpu", dtype=m.bfloat16):
        product = a @ b
        loss = m.nn.functional.cross_entropy(product, m.tensor([0, 1, 2, 0])) if m is torch else \
            xl.nn.cross_entropy(product, xl.tensor([0, 1, 2, 0]))
        plain = a + 1
    return [str(t.dtype).split(".")[-1] for t in (product, loss, plain)], np.asarray(product.float())


def test_autocast_lists_match_torch():
    (got, got_values), (want, want_values) = dtypes(xl, xl.autocast), dtypes(torch, torch.autocast)
    assert got == want
    np.testing.assert_allclose(got_values, want_values, rtol=2e-2, atol=2e-2)


def test_autocast_is_a_scope_and_a_decorator():
    assert not xl.is_autocast_enabled()

    @xl.autocast()
    def inside():
        return xl.is_autocast_enabled(), (xl.ones((2, 2)) @ xl.ones((2, 2))).dtype

    assert inside() == (True, xl.bfloat16)
    assert not xl.is_autocast_enabled()
    with pytest.raises(xl.Error, match="bf16 or f16"):
        with xl.autocast(dtype=xl.int32):
            pass
