"""Conv2d, MaxPool2d and AvgPool2d with rectangular sizes given as ints or tuples, and zero_grad's set_to_none,
checked against torch.nn and torch.optim 1.13 on the same inputs and weights."""
import numpy as np
import pytest
import torch

import xlite as xl
from torch_compare import check, mse_training_steps, pair


def torch_conv_like(conv, torch_conv):
    """torch_conv with conv's weights."""
    with torch.no_grad():
        torch_conv.weight.copy_(torch.from_numpy(np.array(conv.weight)))
        if conv.bias is not None:
            torch_conv.bias.copy_(torch.from_numpy(np.array(conv.bias)))
    return torch_conv


CONV_ARGS = [
    {"kernel_size": (1, 3)},
    {"kernel_size": (3, 1), "padding": (1, 0)},
    {"kernel_size": (2, 3), "stride": (2, 1), "padding": (0, 1), "dilation": (1, 2)},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": [2, 2], "groups": 2, "bias": False},
]


@pytest.mark.parametrize("kw", CONV_ARGS, ids=str)
def test_conv2d_matches_torch(kw):
    x, t = pair((2, 4, 7, 9), seed=1)
    conv = xl.nn.Conv2d(4, 6, **kw)
    tconv = torch_conv_like(conv, torch.nn.Conv2d(4, 6, **kw))
    assert tuple(conv.weight.shape) == tuple(tconv.weight.shape)
    check(conv(x), tconv(t), 1e-5, 1e-5)


def test_conv2d_takes_torchs_positional_arguments():
    conv = xl.nn.Conv2d(3, 2, (1, 3), (1, 2), (0, 1))
    tconv = torch_conv_like(conv, torch.nn.Conv2d(3, 2, (1, 3), (1, 2), (0, 1)))
    x, t = pair((1, 3, 4, 8), seed=2)
    check(conv(x), tconv(t), 1e-5, 1e-5)


POOL_ARGS = [
    {"kernel_size": (2, 1)},
    {"kernel_size": (1, 3), "stride": (1, 2), "padding": (0, 1)},
    {"kernel_size": (3, 2), "stride": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 2},
]


@pytest.mark.parametrize("name", ["MaxPool2d", "AvgPool2d"])
@pytest.mark.parametrize("kw", POOL_ARGS, ids=str)
def test_pooling_matches_torch(name, kw):
    x, t = pair((2, 3, 6, 7), seed=3)
    check(getattr(xl.nn, name)(**kw)(x), getattr(torch.nn, name)(**kw)(t))


def test_pooling_takes_torchs_positional_arguments():
    x, t = pair((1, 2, 5, 6), seed=4)
    check(xl.nn.MaxPool2d((3, 2), (2, 1), (1, 0))(x), torch.nn.MaxPool2d((3, 2), (2, 1), (1, 0))(t))
    check(xl.nn.AvgPool2d((3, 2), (2, 1), (1, 0))(x), torch.nn.AvgPool2d((3, 2), (2, 1), (1, 0))(t))


@pytest.mark.parametrize("make, message", [
    (lambda: xl.nn.Conv2d(1, 1, (1, 2, 3)), r"\[Conv2d\] kernel_size must be one or two values >= 1, got \[1,2,3\]"),
    (lambda: xl.nn.Conv2d(1, 1, 3, stride=(0, 1)), r"\[Conv2d\] stride must be one or two values >= 1"),
    (lambda: xl.nn.Conv2d(1, 1, 3, padding=-1), r"\[Conv2d\] padding must be one or two values >= 0, got \[-1\]"),
    (lambda: xl.nn.MaxPool2d((2, 0)), r"\[MaxPool2d\] kernel_size must be one or two values >= 1, got \[2,0\]"),
    (lambda: xl.nn.AvgPool2d(2, padding=(0, 2)), r"\[AvgPool2d\] padding \[0,2\] must be at most half"),
])
def test_bad_sizes_raise_naming_the_module(make, message):
    with pytest.raises(xl.Error, match=message):
        make()


def test_optimizer_zero_grad_sets_to_none_by_default():
    w = xl.tensor([1.0, 2.0]).requires_grad_()
    opt = xl.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(np.asarray(w.grad), [0.0, 0.0])
    opt.zero_grad()
    assert w.grad is None
    (w * 3.0).sum().backward()
    np.testing.assert_array_equal(np.asarray(w.grad), [3.0, 3.0])


def test_grad_can_be_set_to_none_only():
    w = xl.tensor([1.0]).requires_grad_()
    (w * 2.0).sum().backward()
    w.grad = None
    assert w.grad is None
    with pytest.raises(xl.Error, match="only None"):
        w.grad = xl.tensor([1.0])


class Net(xl.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = xl.nn.Conv2d(1, 3, (1, 3), padding=(0, 1))
        self.pool = xl.nn.MaxPool2d((2, 1))
        self.head = xl.nn.Linear(3 * 2 * 5, 2)
        self.unused = xl.nn.Linear(2, 2)  # gets no gradient: the optimizer must leave it alone

    def forward(self, x):
        return self.head(self.pool(xl.relu(self.conv(x))).reshape(x.shape[0], -1))


class TorchNet(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.conv = torch_conv_like(net.conv, torch.nn.Conv2d(1, 3, (1, 3), padding=(0, 1)))
        self.pool = torch.nn.MaxPool2d((2, 1))
        self.head = torch.nn.Linear(3 * 2 * 5, 2)
        self.unused = torch.nn.Linear(2, 2)
        with torch.no_grad():
            for mine, theirs in [(net.head, self.head), (net.unused, self.unused)]:
                theirs.weight.copy_(torch.from_numpy(np.array(mine.weight)))
                theirs.bias.copy_(torch.from_numpy(np.array(mine.bias)))

    def forward(self, x):
        return self.head(self.pool(torch.relu(self.conv(x))).reshape(x.shape[0], -1))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_training_with_zero_grad_set_to_none_matches_torch(compiled):
    net = Net()
    tnet = TorchNet(net)
    # Weight decay and momentum would move the unused layer if its missing gradient counted as zero.
    opt = xl.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    topt = torch.optim.SGD(tnet.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    x, t = pair((4, 1, 4, 5), seed=5)
    y, u = pair((4, 2), seed=6)

    step, torch_step = mse_training_steps(net, opt, tnet, topt, compiled)
    for i in range(4):
        loss = step(x, y)
        tloss = torch_step(t, u)
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5, abs=1e-7), f"step {i}"
        if compiled and i == 3:  # traces: momentum buffers appear, then two agreeing traces
            assert step.last_call().replayed, step.last_call().trace_reason
    for (name, p), q in zip(net.named_parameters(), tnet.parameters()):
        check(p, q, 1e-4, 1e-5)
    assert net.unused.weight.grad is None
    net.zero_grad(set_to_none=False)
    assert net.unused.weight.grad is None and not np.asarray(net.conv.weight.grad).any()
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
