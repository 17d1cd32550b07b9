"""Python models: Module subclasses with C++ modules as children, state dicts, optimizers, checkpoints."""
import numpy as np
import pytest

import xlite as xl


class Block(xl.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = xl.nn.LayerNorm(6)
        self.fc = xl.nn.Linear(6, 6)
        self.scale = xl.nn.Parameter(xl.ones(6))
        self.register_buffer("steps", xl.zeros((), dtype=xl.int64))

    def forward(self, x):
        return self.fc(self.norm(x)) * self.scale


class Net(xl.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = xl.nn.ModuleList([Block(), Block()])
        self.head = xl.nn.Sequential(xl.nn.GELU(), xl.nn.Linear(6, 3))

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


def test_parameters_buffers_and_names():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names[:5] == ["blocks.0.scale", "blocks.0.norm.weight", "blocks.0.norm.bias", "blocks.0.fc.weight",
                         "blocks.0.fc.bias"]
    assert "head.1.weight" in names and len(names) == 12
    assert [n for n, _ in net.named_buffers()] == ["blocks.0.steps", "blocks.1.steps"]
    assert set(net.state_dict()) == set(names) | {"blocks.0.steps", "blocks.1.steps"}
    assert net.num_parameters() == 2 * (6 + 6 + 6 + 36 + 6) + 18 + 3
    assert all(p.requires_grad for p in net.parameters())
    assert isinstance(net.blocks[0].fc, xl.nn.Module)


def test_train_and_eval_reach_cpp_children():
    net = Net()
    net.eval()
    assert not net.training and not net.blocks[1].training and not net.blocks[1].fc.training
    net.train()
    assert net.head[1].training


def test_state_dict_round_trip_through_a_checkpoint(tmp_path):
    net, other = Net(), Net()
    x = xl.randn(2, 6)
    path = str(tmp_path / "net.safetensors")
    xl.save(dict(net.state_dict()), path)
    other.load_state_dict(xl.load(path))
    np.testing.assert_allclose(np.asarray(other(x)), np.asarray(net(x)), rtol=1e-6)
    with pytest.raises(xl.Error, match="missing"):
        other.load_state_dict({"blocks.0.scale": xl.ones(6)})
    bad = dict(net.state_dict())
    bad["blocks.0.scale"] = xl.ones(7)
    with pytest.raises(xl.Error, match="shape"):
        other.load_state_dict(bad)


@pytest.mark.parametrize("make", [
    lambda ps: xl.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: xl.optim.Adam(ps, lr=0.01),
    lambda ps: xl.optim.AdamW(ps, lr=0.01, weight_decay=0.01),
])
def test_optimizers_train_a_python_model(make):
    xl.manual_seed(1)
    net = Net()
    opt = make(net.parameters())
    x = xl.randn(32, 6)
    y = xl.argmax(x[:, :3], dim=1)

    @xl.compile
    def step(x, y):
        opt.zero_grad()
        loss = xl.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss

    first = step(x, y).item()
    for _ in range(40):
        last = step(x, y)
    assert step.last_call().replayed
    assert last.item() < 0.5 * first
    opt.lr = 0.0  # a new learning rate is a tensor value: the step still replays
    before = [p.tolist() for p in net.parameters()]
    step(x, y)
    assert step.last_call().replayed
    assert [p.tolist() for p in net.parameters()] == before
    assert "lr" in opt.state_dict()


def test_torch_initialisation_matches_bounds():
    fc = xl.nn.Linear(100, 10)
    w = np.asarray(fc.weight)
    assert w.shape == (10, 100) and np.abs(w).max() <= 0.1 + 1e-6
    fc.bias = xl.nn.Parameter(xl.zeros(10))
    assert fc.bias.tolist() == [0.0] * 10


def test_module_without_init_raises():
    class Broken(xl.nn.Module):
        def __init__(self):
            self.fc = xl.nn.Linear(2, 2)

    with pytest.raises(AttributeError, match="super"):
        Broken()


def test_assigning_a_plain_tensor_to_a_parameter_raises():
    block = Block()
    with pytest.raises(TypeError, match="Parameter"):
        block.scale = block.scale * 2
    block.scale = xl.nn.Parameter(xl.zeros(6))
    assert dict(block.named_parameters())["scale"].tolist() == [0.0] * 6


def test_tied_parameters_count_once():
    class Tied(xl.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = xl.nn.Parameter(xl.zeros(2))
            self.b = self.a

    m = Tied()
    assert len(m.parameters()) == 1 and m.num_parameters() == 2
    (m.a * 1).sum().backward()
    xl.optim.SGD(m.parameters(), lr=1.0).step()
    assert m.a.tolist() == [-1.0, -1.0]  # one update, not two
    assert set(m.state_dict()) == {"a", "b"}


def test_assigning_a_cpp_modules_weight_updates_what_everything_holds():
    fc = xl.nn.Linear(2, 2, bias=False)
    opt = xl.optim.SGD(fc.parameters(), lr=0.0)
    fc.weight = xl.ones(2, 2)
    assert fc.parameters()[0].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert fc.state_dict()["weight"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert fc(xl.ones(1, 2)).tolist() == [[2.0, 2.0]]
    opt.step()
    with pytest.raises(xl.Error, match="shape"):
        fc.weight = xl.ones(3, 3)
