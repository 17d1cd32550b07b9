"""module.to(dtype), .double() and x.data = value, as in PyTorch: the same tensors change type in place."""
import numpy as np
import pytest
import torch

import xlite as xl


class Net(xl.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = xl.nn.Linear(3, 2)
        self.norm = xl.nn.BatchNorm1d(2)
        self.scale = xl.nn.Parameter(xl.ones(2))


def test_module_to_converts_parameters_and_buffers_in_place():
    net = Net()
    weight = net.fc.weight
    assert net.double() is net
    assert weight.dtype == xl.float64 and net.fc.weight.dtype == xl.float64
    assert net.scale.dtype == xl.float64 and net.scale.requires_grad
    states = dict(net.state_dict())
    assert states["norm.running_mean"].dtype == xl.float64
    assert states["norm.num_batches_tracked"].dtype == xl.int64
    y = net.scale * net.norm(net.fc(xl.ones((4, 3), dtype=xl.float64)))
    y.sum().backward()
    assert net.fc.weight.grad.dtype == xl.float64
    with pytest.raises(xl.Error, match="must be floating"):
        net.to(xl.int32)


def test_data_assignment_replaces_the_value_as_in_torch():
    def run(m):
        p = m.zeros(2, 2, requires_grad=True)
        alias = p
        p.data = m.arange(6, dtype=m.float64).reshape(2, 3)
        return alias.detach(), p.requires_grad

    (got, got_rg), (want, want_rg) = run(xl), run(torch)
    assert got_rg == want_rg
    assert tuple(got.shape) == tuple(want.shape) and got.dtype == xl.float64
    np.testing.assert_array_equal(np.asarray(got), want.numpy())
