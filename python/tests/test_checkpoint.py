"""xlite.utils.checkpoint.checkpoint against torch.utils.checkpoint: the same gradients for the inputs and for
the parameters the function reads."""
import numpy as np
import torch
import torch.utils.checkpoint

import xlite as xl
import xlite.utils.checkpoint


def run(m, checkpoint, use):
    w = m.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    x = m.tensor(np.linspace(0, 2, 6).reshape(2, 3), requires_grad=True)

    def block(h, scale):
        return m.tanh(h @ w) * scale

    y = checkpoint(block, x * 2, 3.0, use_reentrant=False) if use else block(x * 2, 3.0)
    (y ** 2).sum().backward()
    return np.asarray(y.detach()), np.asarray(w.grad), np.asarray(x.grad)


def test_checkpoint_gives_torchs_values_and_gradients():
    expected = run(torch, torch.utils.checkpoint.checkpoint, True)
    for use in (False, True):
        got = run(xl, xlite.utils.checkpoint.checkpoint, use)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10)
