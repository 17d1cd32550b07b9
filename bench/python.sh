#!/usr/bin/env bash
# xlite from Python against xlite from C++ and against PyTorch eager from Python, interleaved run by run:
#  - eager mode, the 10-op sequence on 16-element tensors, host time per op: xlite from Python, xlite from
#    C++ (xlite_bench eager), PyTorch 2.x from .venv-bench and Debian's PyTorch 1.13, both from Python;
#  - a replayed compiled step of ~1000 IR nodes, per call: from Python and from C++ (train_bench overhead);
#  - chargpt training, tokens/s once compiled: examples/python/chargpt.py and the C++ example print the same
#    running tokens/s every 25 steps; the rate between step 25 and the last step leaves compilation out.
#
#   bash bench/python.sh      # after scripts/install-bench-deps.sh; make bench runs it
#
# BENCH_BUILD (default build-bench), BENCH_RUNS (timed runs per measurement, default 9), BENCH_REPEAT
# (default 3), BENCH_THREADS (default 2), BENCH_CHARGPT_STEPS (default 150, at least 50; 0 skips chargpt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BENCH_BUILD:-build-bench}
runs=${BENCH_RUNS:-9}
repeat=${BENCH_REPEAT:-3}
threads=${BENCH_THREADS:-2}
steps=${BENCH_CHARGPT_STEPS:-150}
out="$build/bench-results/python"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLITE_BUILD_BENCH=ON -DXLITE_BUILD_TESTS=OFF \
  -DXLITE_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$build" --target xlite_bench train_bench chargpt
make -s python
[ -x .venv-bench/bin/python ] || { echo "no .venv-bench: run scripts/install-bench-deps.sh" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.txt
export OMP_NUM_THREADS=$threads
unset OPENBLAS_CORETYPE
# Tokens/s between step 25 and the last step, from the running rates both examples print (batch 16 x 64).
steady_rate() {
  grep -E '^step' | sed -E 's/^step +([0-9]+) .* ([0-9.]+) tokens\/s.*/\1 \2/' | awk '
    $1 == 25 { s0 = $1; t0 = ($1 + 1) * 1024 / $2 } { s1 = $1; t1 = ($1 + 1) * 1024 / $2 }
    END { printf "%.0f", (s1 - s0) * 1024 / (t1 - t0) }'
}
for i in $(seq 1 "$repeat"); do
  echo "== [$i/$repeat] load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  {
    .venv/bin/python bench/python_bench.py eager "$runs"
    "$build/xlite_bench" eager "$runs" | grep -E '^eager_16elem.per_op_us'
    XLITE_BENCH_PEER=torch .venv-bench/bin/python bench/python_bench.py eager "$runs"
    XLITE_BENCH_PEER=torch .venv/bin/python bench/python_bench.py eager "$runs"
    .venv/bin/python bench/python_bench.py replay "$runs"
    "$build/train_bench" overhead "$runs" | grep -E '^overhead_1000.per_step_us'
    if [ "$steps" -gt 0 ]; then
      echo "chargpt.python_tokens_per_s $(.venv/bin/python examples/python/chargpt.py "$steps" | steady_rate) tokens/s"
      echo "chargpt.cpp_tokens_per_s $("$build/chargpt" "$steps" | steady_rate) tokens/s"
    fi
  } | tee "$out/run_$i.txt"
done
.venv/bin/python - "$out" <<'PY'
import glob, statistics, sys
runs = [dict((l.split()[0], float(l.split()[1])) for l in open(p) if l[0] != "#" and len(l.split()) == 3)
        for p in sorted(glob.glob(sys.argv[1] + "/run_*.txt"))]
def ratio(a, b):
    vals = [r[a] / r[b] for r in runs if a in r and b in r]
    return f"{statistics.median(vals):.2f} ({min(vals):.2f}-{max(vals):.2f})" if vals else "n/a"
def med(k):
    vals = [r[k] for r in runs if k in r]
    return f"{statistics.median(vals):.3g}" if vals else "n/a"
torch2 = next((k for r in runs for k in r if k.startswith("python_eager.torch_2")), None)
torch1 = next((k for r in runs for k in r if k.startswith("python_eager.torch_1")), None)
print(f"eager per op, us: xlite from Python {med('python_eager.xlite_per_op_us')}, from C++ "
      f"{med('eager_16elem.per_op_us')}, {torch2} {med(torch2)}, {torch1} {med(torch1)}")
print(f"  PyTorch 2 from Python / xlite from Python: {ratio(torch2, 'python_eager.xlite_per_op_us')}  (goal >= 1)")
print(f"  PyTorch 1.13 from Python / xlite from Python: {ratio(torch1, 'python_eager.xlite_per_op_us')}")
d = [r["python_replay.overhead_1000_per_step_us"] - r["overhead_1000.per_step_us"] for r in runs
     if "overhead_1000.per_step_us" in r]
print(f"replayed step, us per call: Python {med('python_replay.overhead_1000_per_step_us')}, C++ "
      f"{med('overhead_1000.per_step_us')}; Python - C++: {statistics.median(d):.1f} "
      f"({min(d):.1f} to {max(d):.1f})  (goal <= 10)")
print(f"chargpt tokens/s: Python {med('chargpt.python_tokens_per_s')}, C++ {med('chargpt.cpp_tokens_per_s')}; "
      f"Python / C++ {ratio('chargpt.python_tokens_per_s', 'chargpt.cpp_tokens_per_s')}  (goal >= 0.95)")
PY
