#!/usr/bin/env bash
# The attention kernels against their peers: flash_attention (forward, forward+backward, memory plan)
# against the same attention written in ops and compiled by xlite, and against PyTorch 2.x's SDPA, in f32
# and (against the f32 kernel and SDPA) in bf16; and
# paged_attention's decode against contiguous-cache attention in ops and SDPA, with memcpy bandwidth.
#
#   bash bench/attention.sh        # after scripts/install-bench-deps.sh (make bench runs both)
#
# BENCH_BUILD (default build-bench), BENCH_RUNS (timed runs per case, default 3), BENCH_REPEAT (how many
# times each program runs, alternating xlite and PyTorch, default 3), BENCH_THREADS (default 2). The table
# shows medians over the repeats. The largest composite cases hold S x S matrices of 2 GB: a run takes
# about ten minutes and up to 12 GB of memory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BENCH_BUILD:-build-bench}
runs=${BENCH_RUNS:-3}
repeat=${BENCH_REPEAT:-3}
threads=${BENCH_THREADS:-2}
out="$build/bench-results/attention"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLITE_BUILD_BENCH=ON -DXLITE_BUILD_TESTS=OFF \
  -DXLITE_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target xlite_bench
[ -x .venv-bench/bin/python ] || { echo "no .venv-bench: run scripts/install-bench-deps.sh" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.txt
for i in $(seq 1 "$repeat"); do
  echo "== [$i/$repeat] xlite, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  OMP_NUM_THREADS=$threads "$build/xlite_bench" paged "$runs" | tee "$out/xlite_$i.txt"
  OMP_NUM_THREADS=$threads "$build/xlite_bench" attention "$runs" | tee -a "$out/xlite_$i.txt"
  OMP_NUM_THREADS=$threads "$build/xlite_bench" attention_bf16 "$runs" | tee -a "$out/xlite_$i.txt"
  echo "== [$i/$repeat] PyTorch, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  OMP_NUM_THREADS=$threads .venv-bench/bin/python bench/attention_peer.py "$runs" "$threads" 2>/dev/null |
    tee "$out/torch_$i.txt"
done
.venv-bench/bin/python bench/attention_table.py "$out"
