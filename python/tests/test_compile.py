"""compile(fn) on Python callables: the C++ replay semantics, from Python."""
import threading

import pytest

import xlite as xl


def test_a_replay_does_not_run_the_python_body():
    calls = []

    @xl.compile
    def f(x, y):
        calls.append(1)
        return x * y + 1

    x, y = xl.ones(3), xl.full((3,), 2.0)
    for i in range(5):
        out = f(x, y)
        assert out.tolist() == [3.0, 3.0, 3.0]
    assert len(calls) == 2  # two traces agree, then replays
    assert f.last_call().replayed


def test_results_keep_their_structure_on_replay():
    f = xl.compile(lambda x: {"sum": x.sum(), "parts": [x * 2, (x + 1, None)]})
    for _ in range(4):
        out = f(xl.arange(3.0))
    assert f.last_call().replayed
    assert set(out) == {"sum", "parts"}
    assert out["sum"].item() == 3.0
    assert out["parts"][0].tolist() == [0.0, 2.0, 4.0]
    assert out["parts"][1][0].tolist() == [1.0, 2.0, 3.0] and out["parts"][1][1] is None
    assert isinstance(out["parts"][1], tuple)


@pytest.mark.parametrize("change, reason", [
    (lambda x, s: (xl.ones(4), s), "argument"),     # a new shape
    (lambda x, s: (x, 3.0), "argument"),            # a new Python number
    (lambda x, s: (x.to(xl.float64), s), "argument"),
])
def test_guards_trace_again(change, reason):
    f = xl.compile(lambda x, s: x * s)
    x = xl.ones(3)
    for _ in range(3):
        f(x, 2.0)
    assert f.last_call().replayed
    x2, s2 = change(x, 2.0)
    out = f(x2, s2)
    assert not f.last_call().replayed and reason in f.last_call().trace_reason
    assert out.tolist() == (x2 * s2).tolist()


def test_a_replay_reads_the_current_values_of_captured_tensors():
    w = xl.ones(2)
    f = xl.compile(lambda x: x + w)
    for _ in range(3):
        f(xl.ones(2))
    w.add_(10)
    xl.sync()
    assert f(xl.ones(2)).tolist() == [12.0, 12.0]
    assert f.last_call().replayed


def test_training_mode_is_a_guard():
    class Net(xl.nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = xl.nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(x) if self.training else x * 3

    net = Net()
    f = xl.compile(lambda x: net(x))
    x = xl.ones(8)
    for _ in range(3):
        f(x)
    net.eval()
    assert f(x).tolist() == [3.0] * 8
    assert not f.last_call().replayed


def test_a_python_exception_propagates_and_the_runtime_stays_usable():
    w = xl.zeros(2)

    def f(x):
        w.add_(x)
        raise ValueError("from the body")

    g = xl.compile(f)
    with pytest.raises(ValueError, match="from the body"):
        g(xl.ones(2))
    assert w.tolist() == [0.0, 0.0]  # the in-place update was undone
    assert (xl.ones(2) + 1).tolist() == [2.0, 2.0]


def test_options():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    g = xl.compile(f, force_retrace=True)
    for _ in range(3):
        g(xl.ones(1))
    assert len(calls) == 3
    strict = xl.compile(lambda x: x + x.sum().item(), full_graph=True)
    with pytest.raises(xl.Error, match="full_graph|host"):
        strict(xl.ones(2))
    few = xl.compile(lambda x: x + 1, max_different_graphs=1)
    few(xl.ones(2))
    with pytest.raises(xl.Error, match="max_different_graphs"):
        few(xl.ones(3))


def test_a_compiled_function_calling_itself_raises():
    holder = {}

    def f(x):
        return holder["g"](x)

    holder["g"] = xl.compile(f)
    with pytest.raises(xl.Error, match="its own compiled function"):
        holder["g"](xl.ones(1))


def test_calls_from_several_threads_take_turns():
    f = xl.compile(lambda x: (x * 2).sum())
    results, errors = [], []

    def worker():
        try:
            for _ in range(20):
                results.append(f(xl.ones(16)).item())
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == [32.0] * 80


def test_a_numpy_argument_is_never_replayed():
    # fn turns the array into a graph input; the array may change in place under the same identity.
    import numpy as np
    f = xl.compile(lambda a: xl.tensor(a) * 2)
    a = np.ones(3, dtype=np.float32)
    for _ in range(3):
        f(a)
    assert not f.last_call().replayed and "cannot guard" in f.last_call().trace_reason
    a[:] = 5
    assert f(a).tolist() == [10.0, 10.0, 10.0]


def test_objects_guarded_by_identity_stay_distinct():
    # A temporary argument dies after its call; the next one must not replay its program by taking its address.
    step = xl.compile(lambda t, f: f(t))
    t = xl.ones(2)
    assert [step(t, lambda u: u + k).tolist() for k in (1, 100, 1000)] == [[2.0] * 2, [101.0] * 2, [1001.0] * 2]


def test_a_bound_method_is_guarded_by_its_object():
    class Scale:
        def __init__(self, k):
            self.k = k

        def forward(self, t):
            return t * self.k

    run = xl.compile(lambda f, t: f(t))
    a, b, t = Scale(2.0), Scale(10.0), xl.ones(2)
    for _ in range(3):
        run(a.forward, t)  # a new method object each call, the same function and object
    assert run.last_call().replayed
    assert run(b.forward, t).tolist() == [10.0, 10.0]
    assert not run.last_call().replayed


def test_namedtuple_and_ordereddict_results_replay_as_themselves():
    import collections
    Out = collections.namedtuple("Out", "a b")
    g = xl.compile(lambda t: Out(t + 1, collections.OrderedDict(s=t * 2)))
    for _ in range(3):
        r = g(xl.ones(2))
    assert g.last_call().replayed
    assert isinstance(r, Out) and isinstance(r.b, collections.OrderedDict)
    assert r.a.tolist() == [2.0, 2.0] and r.b["s"].tolist() == [2.0, 2.0]


def test_a_compiled_method_takes_its_object():
    class Model(xl.nn.Module):
        def __init__(self, k):
            super().__init__()
            self.w = xl.nn.Parameter(xl.full((2,), k))

        @xl.compile
        def score(self, x):
            return (self.w * x).sum()

    a, b, x = Model(1.0), Model(5.0), xl.full((2,), 3.0)
    assert [a.score(x).item() for _ in range(3)] == [6.0, 6.0, 6.0]
    assert Model.score.last_call().replayed
    assert b.score(x).item() == 30.0
