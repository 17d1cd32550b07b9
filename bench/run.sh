#!/usr/bin/env bash
# Builds the benchmarks in build-bench/ (cmake -DXLITE_BUILD_BENCH=ON), runs xlite and the libtorch peer with
# their settings, and prints the table of the performance goals (also written to build-bench/bench-results/).
#
#   bash bench/run.sh            # or: make bench (installs the peer's packages first)
#
# Environment knobs: BENCH_BUILD (build dir, default build-bench), BENCH_JOBS (build jobs, default 1),
# BENCH_RUNS (timed runs per measurement, >= 5, default 9), BENCH_THREADS (threads for both, default 2),
# BENCH_REPEAT (how many times each program runs, alternating xlite and libtorch, default 3; the table
# shows medians over the repeats, and each ratio is the median of the ratios within each repeat, so one
# disturbed process does not decide; see bench/table.awk), BENCH_TRAIN (1: also the training benchmarks
# bench/train_bench.cpp and bench/torch_train_peer.cpp, the default; 0: skip them; only: run only them).
# The machine should be otherwise idle: with another process on one of 2 cores, every 2-thread OpenMP loop
# (xlite's, oneDNN's, libtorch's) runs 2-6x slower. The load average is printed before each program.
#
# Settings: xlite runs with OMP_NUM_THREADS=$BENCH_THREADS and nothing else set (OPENBLAS_CORETYPE is
# removed from the environment; xlite does not use OpenBLAS). libtorch runs with the fair settings of
# ../shared/design/MACHINE_FACTS.md: OPENBLAS_CORETYPE unset, OMP_WAIT_POLICY=PASSIVE,
# GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=17179869184 and
# $BENCH_THREADS threads. Every program prints its settings next to its numbers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BENCH_BUILD:-build-bench}
jobs=${BENCH_JOBS:-1}
runs=${BENCH_RUNS:-9}
threads=${BENCH_THREADS:-2}
repeat=${BENCH_REPEAT:-3}
train=${BENCH_TRAIN:-1}
case "$train" in 0|1|only) ;; *) echo "BENCH_TRAIN must be 0, 1 or only" >&2; exit 2 ;; esac
core=1; [ "$train" = only ] && core=0
out="$build/bench-results"

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLITE_BUILD_BENCH=ON -DXLITE_BUILD_TESTS=OFF \
  -DXLITE_BUILD_EXAMPLES=OFF >/dev/null
[ "$core" = 1 ] && cmake --build "$build" -j "$jobs" --target xlite_bench
[ "$train" != 0 ] && cmake --build "$build" -j "$jobs" --target train_bench
have_torch=0
if grep -q '^build torch_peer:' "$build/build.ninja"; then  # defined only when CMake found Torch
  [ "$core" = 1 ] && cmake --build "$build" -j "$jobs" --target torch_peer
  [ "$train" != 0 ] && cmake --build "$build" -j "$jobs" --target torch_train_peer
  have_torch=1
fi
mkdir -p "$out"

torch_tunables="glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=17179869184"
load() { cut -d' ' -f1-3 /proc/loadavg; }

{
  echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git status --porcelain 2>/dev/null | grep -qv '^??' && echo ' + uncommitted changes')"
} >"$out/machine.txt"

rm -f "$out"/xlite*.txt "$out"/compile*.txt "$out"/torch*.txt "$out"/train*.txt
torch_env() { env -u OPENBLAS_CORETYPE OMP_NUM_THREADS="$threads" OMP_WAIT_POLICY=PASSIVE GLIBC_TUNABLES="$torch_tunables" "$@"; }
for i in $(seq 1 "$repeat"); do
  rep=$(printf '%02d' "$i")  # zero-padded so the files sort in repeat order
  if [ "$core" = 1 ]; then
    echo "== [$i/$repeat] xlite (OMP_NUM_THREADS=$threads), load before: $(load)"
    env -u OPENBLAS_CORETYPE OMP_NUM_THREADS="$threads" "$build/xlite_bench" all "$runs" | tee "$out/xlite.$rep.txt"
    echo "== [$i/$repeat] xlite compile (fresh processes), load before: $(load)"
    env -u OPENBLAS_CORETYPE OMP_NUM_THREADS="$threads" "$build/xlite_bench" compile "$runs" | tee "$out/compile.$rep.txt"
    if [ "$have_torch" = 1 ]; then
      echo "== [$i/$repeat] libtorch peer, load before: $(load)"
      torch_env "$build/torch_peer" all "$runs" | tee "$out/torch.$rep.txt"
    fi
  fi
  if [ "$train" != 0 ]; then
    echo "== [$i/$repeat] xlite training (OMP_NUM_THREADS=$threads), load before: $(load)"
    env -u OPENBLAS_CORETYPE OMP_NUM_THREADS="$threads" "$build/train_bench" all "$runs" | tee "$out/train.$rep.txt"
    if [ "$have_torch" = 1 ]; then
      echo "== [$i/$repeat] libtorch training peer, load before: $(load)"
      torch_env "$build/torch_train_peer" all "$runs" | tee "$out/train_torch.$rep.txt"
    fi
  fi
done
[ "$have_torch" = 1 ] || echo "== libtorch peer not built (Torch not found: run scripts/install-bench-deps.sh)"
echo "# load after: $(load)" >>"$out/machine.txt"

# The table of goals (see bench/table.awk for how repeats are combined).
results() { for f in "$@"; do [ -e "$f" ] && echo "$f"; done; return 0; }  # the files that exist, in order
awk -f bench/table.awk $(results "$out"/xlite.*.txt "$out"/compile.*.txt "$out"/torch.*.txt "$out"/train.*.txt \
  "$out"/train_torch.*.txt) >"$out/table.md"

echo
cat "$out/machine.txt"
firsts=$(results "$out/xlite.01.txt" "$out/compile.01.txt" "$out/torch.01.txt" "$out/train.01.txt" "$out/train_torch.01.txt")
grep -h '^# settings' $firsts || true
echo "# each value: median over $repeat runs of each program of its medians over $runs timed runs"
echo
cat "$out/table.md"
echo
echo "Fusion decisions and checks:"
grep -h '^#' $(results "$out/xlite.01.txt" "$out/compile.01.txt" "$out/train.01.txt") | grep -v '^# settings' || true
echo
echo "Raw results: $out/{xlite,compile,torch,train,train_torch}.N.txt, table: $out/table.md"
