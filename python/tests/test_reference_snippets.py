"""The PyTorch/XLA 2.4 dev update's snippets, written with xlite's names almost word for word."""
import numpy as np

import xlite as xl


def executions():
    return xl.metrics.counter_value("Execute")


def test_lazy_tracing_runs_one_graph_at_sync():
    a = xl.tensor(100.0, device=xl.device())
    before = executions()
    # execution does not happen, we created a node called `cos` with an input
    b = xl.cos(a)
    c = xl.sin(b)
    assert executions() == before
    assert b.is_pending and c.is_pending
    # execution happens here, we construct a graph to calculate the value of both b and c
    xl.sync()
    assert executions() == before + 1
    assert not b.is_pending and not c.is_pending
    assert abs(b.item() - np.cos(100.0)) < 1e-6
    assert abs(c.item() - np.sin(np.cos(100.0))) < 1e-6
    assert xl.debug.last_sync().num_outputs == 2


def test_eager_mode_runs_each_op_at_once():
    xl.experimental.eager_mode(True)
    try:
        assert xl.is_eager_mode()
        a = xl.tensor(100.0, device=xl.device())
        before = executions()
        b = xl.cos(a)
        assert not b.is_pending
        assert executions() == before + 1
    finally:
        xl.experimental.eager_mode(False)
    assert not xl.is_eager_mode()


class Model(xl.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = xl.nn.Linear(8, 32)
        self.fc2 = xl.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(xl.relu(self.fc1(x)))


def test_the_recommended_training_step_compiles_and_replays():
    xl.experimental.eager_mode(True)
    try:
        model = Model()
        loss_fn = xl.nn.CrossEntropyLoss()
        optimizer = xl.optim.SGD(model.parameters(), lr=0.5)

        def step_fn(model, data, target, loss_fn, optimizer):
            optimizer.zero_grad()
            logits = model(data)
            loss = loss_fn(logits, target)
            loss.backward()
            optimizer.step()
            return loss

        step_fn = xl.experimental.compile(step_fn)
        data = xl.randn(64, 8)
        target = xl.argmax(data[:, :4], dim=1)  # a learnable rule
        losses = []
        for _ in range(30):
            loss = step_fn(model, data, target, loss_fn, optimizer)
            losses.append(loss.item())
        assert step_fn.last_call().replayed
        assert losses[-1] < 0.5 * losses[0]
    finally:
        xl.experimental.eager_mode(False)


def test_get_memory_info():
    before = xl.get_memory_info(xl.device())
    x = xl.ones(1024, 1024)
    xl.sync()
    after = xl.get_memory_info(xl.device())
    assert after["bytes_used"] >= before["bytes_used"] + 4 * 1024 * 1024
    assert after.bytes_limit > 0 and after.peak_bytes_used >= after.bytes_used
    del x
