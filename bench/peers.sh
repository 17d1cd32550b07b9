#!/usr/bin/env bash
# xlite against the frameworks users pick today, on the memory-bound workloads where they differ most
# (bench/peer_workloads.cpp; the peers in bench/peers.py): PyTorch 2.x eager and torch.compile (inductor),
# JAX jit and PyTorch/XLA (lazy), from the project's .venv-bench and .venv-xla (scripts/install-bench-deps.sh),
# and libtorch 1.13 in C++ (bench/torch_workloads_peer.cpp, where CMake finds Torch). The programs run one after
# another, each repeat in the same order, so every ratio is taken within one repeat; the table
# (bench/peers_table.py) shows medians over the repeats and each peer's fastest repeat, checks that every
# framework computed the same values, and draws the ratios into a PNG chart.
#
#   bash bench/peers.sh        # make bench runs it
#
# BENCH_BUILD (default build-bench), BENCH_RUNS (timed runs per case, default 9), BENCH_REPEAT (default 5),
# BENCH_THREADS (default 2), BENCH_PEERS (default "torch_eager inductor jax torch_xla libtorch"; inductor_max_autotune
# torch_xla_compile, jax_onednn and jax_no_xnnpack are the other choices), BENCH_WHAT (all, chains, rows or alone; default all), BENCH_CHART (where the PNG goes,
# default docs/bench/peers.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BENCH_BUILD:-build-bench}
runs=${BENCH_RUNS:-9}
repeat=${BENCH_REPEAT:-5}
threads=${BENCH_THREADS:-2}
peers=${BENCH_PEERS:-torch_eager inductor jax torch_xla libtorch}
what=${BENCH_WHAT:-all}
chart=${BENCH_CHART:-docs/bench/peers.png}
out="$build/bench-results/peers"
# shellcheck source=bench/peer_common.sh
. bench/peer_common.sh
peer_setup "$build" peer_workloads "$out" "$threads"
libtorch_setup "$build" torch_workloads_peer
for i in $(seq 1 "$repeat"); do
  echo "== [$i/$repeat] xlite, load before: $(load)"
  "$build/peer_workloads" "$what" "$runs" | tee "$out/xlite_$i.txt"
  for peer in $peers; do
    echo "== [$i/$repeat] $peer, load before: $(load)"
    if [ "$peer" = libtorch ]; then
      "${peer_env[@]}" "$build/torch_workloads_peer" "$what" "$runs" 2>"$out/${peer}_$i.err" | tee "$out/${peer}_$i.txt"
    else
      "${peer_env[@]}" "$(peer_python "$peer")" bench/peers.py "$peer" "$runs" "$what" 2>"$out/${peer}_$i.err" |
        tee "$out/${peer}_$i.txt"
    fi
  done
done
.venv-bench/bin/python bench/peers_table.py "$out" "$chart" "$peers"
