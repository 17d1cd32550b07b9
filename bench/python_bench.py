"""Host cost of xlite from Python against the same work from C++ and against PyTorch eager from Python.

usage: python_bench.py eager|replay [runs]
  eager   the 10-op sequence of eager_step in bench/xlite_bench.cpp on 16-element tensors, in eager mode, per
          op; with PyTorch imported instead of xlite when XLITE_BENCH_PEER=torch (the same sequence in
          bench/torch_peer.cpp).
  replay  a replayed compiled step called from Python: the step of train_bench's `overhead` (a chain of
          250 x (mul, add, sin, mul) on 4-element tensors and an in-place parameter update), per call.
Prints `name value unit` lines like the C++ benchmarks, with the settings first.
"""
import os
import statistics
import sys
import time

PEER = os.environ.get("XLITE_BENCH_PEER", "xlite")
STEPS = 2000
OPS_PER_STEP = 10
OVERHEAD_ELEMS, OVERHEAD_ITERS, CALLS = 4, 250, 200


def emit(name, value, unit):
    print(f"{name} {value:.6g} {unit}", flush=True)


def timed(run, runs):
    run()  # warm-up: compiles what it needs
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def eager(runs):
    if PEER == "torch":
        import torch
        torch.manual_seed(4)
        a, b = torch.randn(16), torch.randn(16)
        relu, tanh, maximum, exp, neg, total = torch.relu, torch.tanh, torch.maximum, torch.exp, torch.neg, torch.sum
        prefix = f"python_eager.torch_{torch.__version__.split('+')[0]}"
        print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}")
    else:
        import xlite as xl
        xl.manual_seed(4)
        a, b = xl.randn(16), xl.randn(16)
        xl.sync()
        relu, tanh, maximum, exp, neg, total = xl.relu, xl.tanh, xl.maximum, xl.exp, xl.neg, xl.sum
        xl.eager_mode(True)
        prefix = "python_eager.xlite"
        print(f"# xlite {xl.__version__} from Python, eager mode")

    def run():
        for _ in range(STEPS):
            t = a + b
            t = t * a
            t = relu(t)
            t = t - b
            t = tanh(t)
            t = maximum(t, a)
            t = exp(t)
            t = t * 0.5
            t = neg(t)
            total(t, 0)

    emit(prefix + "_per_op_us", timed(run, runs) / (STEPS * OPS_PER_STEP) * 1e6, "us")


def replay(runs):
    import xlite as xl
    xl.manual_seed(5)
    p, a, b, c = (xl.rand(OVERHEAD_ELEMS) for _ in range(4))
    xl.sync()

    @xl.compile
    def step():
        h = p
        for _ in range(OVERHEAD_ITERS):
            h = xl.sin(h * a + b) * c
        p.sub_(h * 1e-3)
        return h

    def run():
        for _ in range(CALLS):
            step()

    per_call = timed(run, runs) / CALLS
    assert step.last_call().replayed, step.last_call()
    emit("python_replay.overhead_1000_per_step_us", per_call * 1e6, "us")


if __name__ == "__main__":
    what = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    {"eager": eager, "replay": replay}[what](runs)
