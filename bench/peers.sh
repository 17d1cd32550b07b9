#!/usr/bin/env bash
# xlite against the frameworks users pick today, on the memory-bound workloads where they differ most
# (bench/peer_workloads.cpp; the peers in bench/peers.py): PyTorch 2.x eager and torch.compile (inductor),
# and JAX jit, from the project's .venv-bench (scripts/install-bench-deps.sh). The programs run one after
# another, each repeat in the same order, so every ratio is taken within one repeat; the table
# (bench/peers_table.py) shows medians over the repeats and each peer's fastest repeat, checks that every
# framework computed the same values, and draws the ratios into a PNG chart.
#
#   bash bench/peers.sh        # make bench runs it
#
# BENCH_BUILD (default build-bench), BENCH_RUNS (timed runs per case, default 9), BENCH_REPEAT (default 5),
# BENCH_THREADS (default 2), BENCH_PEERS (default "torch_eager inductor jax"; inductor_max_autotune is the
# other choice), BENCH_WHAT (all, chains, rows or alone; default all), BENCH_CHART (where the PNG goes,
# default docs/bench/peers.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BENCH_BUILD:-build-bench}
runs=${BENCH_RUNS:-9}
repeat=${BENCH_REPEAT:-5}
threads=${BENCH_THREADS:-2}
peers=${BENCH_PEERS:-torch_eager inductor jax}
what=${BENCH_WHAT:-all}
chart=${BENCH_CHART:-docs/bench/peers.png}
out="$build/bench-results/peers"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLITE_BUILD_BENCH=ON -DXLITE_BUILD_TESTS=OFF \
  -DXLITE_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target peer_workloads
[ -x .venv-bench/bin/python ] || { echo "no .venv-bench: run scripts/install-bench-deps.sh" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.txt
export OMP_NUM_THREADS=$threads
unset OPENBLAS_CORETYPE
# Inductor's compiled kernels and JAX's executables are cached between repeats in folders of this run's own.
export TORCHINDUCTOR_CACHE_DIR="$out/inductor-cache"
load() { cut -d' ' -f1-3 /proc/loadavg; }
peer_tunables="glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=17179869184"
for i in $(seq 1 "$repeat"); do
  echo "== [$i/$repeat] xlite, load before: $(load)"
  "$build/peer_workloads" "$what" "$runs" | tee "$out/xlite_$i.txt"
  for peer in $peers; do
    echo "== [$i/$repeat] $peer, load before: $(load)"
    # Every peer in its strongest settings here (bench/run.sh gives libtorch the same): without the malloc
    # tunables each fresh 64 MiB result is a new mapping, and in this VM its page faults cost more than the
    # op itself (JAX's tanh on 16M floats: 67 ms without, 14.5 ms with). THP_MEM_ALLOC_ENABLE=1 gives
    # PyTorch's large buffers transparent huge pages, as xlite's allocator does for its own.
    env OMP_WAIT_POLICY=PASSIVE GLIBC_TUNABLES="$peer_tunables" THP_MEM_ALLOC_ENABLE=1 .venv-bench/bin/python bench/peers.py "$peer" "$runs" "$what" 2>"$out/${peer}_$i.err" |
      tee "$out/${peer}_$i.txt"
  done
done
.venv-bench/bin/python bench/peers_table.py "$out" "$chart" "$peers"
