#!/usr/bin/env bash
# xlite against the frameworks users pick today on training steps (bench/peer_training.cpp; the cases in
# bench/training_cases.h): PyTorch 2.x eager and torch.compile (inductor), JAX jit and PyTorch/XLA (lazy and
# torch_xla.compile) in bench/train_peers.py, from the project's .venv-bench and .venv-xla
# (scripts/install-bench-deps.sh), libtorch 1.13 in C++ (bench/torch_training_peer.cpp, where CMake finds
# Torch), and xlite's own eager mode. Every case runs in a process of its own (so each process's peak memory is
# that case's), the programs one after another in the same order in every repeat, so every ratio is taken
# within one repeat; bench/peers_table.py prints the medians over the repeats, each peer's fastest repeat, the
# check values, peak memory, and draws the ratios into a PNG chart.
#
#   bash bench/train_peers.sh        # make bench runs it
#
# BENCH_BUILD (default build-bench), BENCH_RUNS (timed steps per case, default 5), BENCH_REPEAT (default 5),
# BENCH_THREADS (default 2), BENCH_PEERS (default "xlite_eager torch_eager inductor jax torch_xla
# torch_xla_compile libtorch"; inductor_max_autotune, jax_onednn, jax_no_xnnpack and xlite_excess_precision
# (xlite under xlite::set_excess_precision) are the other choices),
# BENCH_CASES (default: the MLP at batch 64 to 4096, the block at sequence 128 to 2048 with 2048 tokens a step,
# the block under bf16 autocast at 256 and 1024, and chargpt's model and AdamW at batch 16, as
# examples/chargpt.cpp trains it, and 64), BENCH_CHART (default docs/bench/train_peers.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BENCH_BUILD:-build-bench}
runs=${BENCH_RUNS:-5}
repeat=${BENCH_REPEAT:-5}
threads=${BENCH_THREADS:-2}
peers=${BENCH_PEERS:-xlite_eager torch_eager inductor jax torch_xla torch_xla_compile libtorch}
cases=${BENCH_CASES:-mlp.b64 mlp.b256 mlp.b1024 mlp.b4096 transformer.s128 transformer.s256 transformer.s1024
  transformer.s2048 transformer_bf16.s256 transformer_bf16.s1024 chargpt.b16 chargpt.b64}
chart=${BENCH_CHART:-docs/bench/train_peers.png}
out="$build/bench-results/train_peers"
# shellcheck source=bench/peer_common.sh
. bench/peer_common.sh
peer_setup "$build" peer_training "$out" "$threads"
libtorch_setup "$build" torch_training_peer
for i in $(seq 1 "$repeat"); do
  for case in $cases; do
    echo "== [$i/$repeat] $case, load before: $(load)"
    "$build/peer_training" "$case" "$runs" | tee -a "$out/xlite_$i.txt"
    for peer in $peers; do
      if [ "$peer" = xlite_eager ] || [ "$peer" = xlite_excess_precision ]; then
        "$build/peer_training" "$case" "$runs" "${peer#xlite_}" | tee -a "$out/${peer}_$i.txt"
      elif [ "$peer" = libtorch ]; then
        "${peer_env[@]}" "$build/torch_training_peer" "$case" "$runs" 2>>"$out/${peer}_$i.err" |
          tee -a "$out/${peer}_$i.txt"
      else
        "${peer_env[@]}" "$(peer_python "$peer")" bench/train_peers.py "$peer" "$case" "$runs" 2>>"$out/${peer}_$i.err" |
          tee -a "$out/${peer}_$i.txt"
      fi
    done
  done
done
.venv-bench/bin/python bench/peers_table.py "$out" "$chart" "$peers" fma
