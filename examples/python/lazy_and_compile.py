"""The tour of xlite from Python: lazy tracing, one graph per sync, eager mode, and a compiled training step that
replays without running its Python body. `make demo` runs it."""
import xlite as xl

# Lazy by default: ops build a graph, and sync() compiles and runs it as one program.
a = xl.tensor(100.0, device=xl.device())
b = xl.cos(a)  # nothing runs
c = xl.sin(b)
print(xl.debug.graph_text([b, c]))
runs = xl.metrics.counter_value("Execute")
xl.sync()  # one graph computes b and c
print(f"b = {b.item():.6f}, c = {c.item():.6f}; programs run by the sync: {xl.metrics.counter_value('Execute') - runs}")


# Eager mode plus compile: the recommended training set-up of PyTorch/XLA 2.4.
class Model(xl.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = xl.nn.Linear(16, 64)
        self.fc2 = xl.nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(xl.gelu(self.fc1(x)))


xl.eager_mode(True)


def step_fn(model, data, target, loss_fn, optimizer):
    optimizer.zero_grad()
    logits = model(data)
    loss = loss_fn(logits, target)
    loss.backward()
    optimizer.step()
    return loss


step_fn = xl.compile(step_fn)
xl.manual_seed(0)
model = Model()
optimizer = xl.optim.AdamW(model.parameters(), lr=1e-2)
data = xl.randn(256, 16)
target = xl.argmax(data[:, :4], dim=1)
for i in range(100):
    loss = step_fn(model, data, target, xl.nn.functional.cross_entropy, optimizer)
    if i % 25 == 0 or i == 99:
        info = step_fn.last_call()
        print(f"step {i:3d}  loss {loss.item():.4f}  " + ("replayed" if info.replayed else f"traced: {info.trace_reason}"))
print(f"memory: {xl.get_memory_info(xl.device())}")
