#!/usr/bin/env bash
# The persistent compilation cache: chargpt's first training step in a fresh process, with an empty cache
# (cold: every kernel compiled by LLVM and written) and then with the cache the cold run filled (warm: every
# kernel loaded). Prints each run's first-step time and its compile time so far (the model's set-up included),
# and the medians of the warm/cold ratios.
#
#   bash bench/persistent_cache.sh [BUILD_DIR] [REPEATS]     # default build, 3
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
repeats=${2:-3}
program=$build/chargpt
[ -x "$program" ] || { echo "persistent_cache.sh: build $program first (make test builds it)" >&2; exit 1; }
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
results=()
for r in $(seq 1 "$repeats"); do
  rm -rf "$cache"/*
  for side in cold warm; do
    # chargpt 1 exits 1 (one step learns nothing): only its first-step line is read.
    line=$(OMP_NUM_THREADS=${BENCH_THREADS:-2} XLITE_CACHE_DIR=$cache "$program" 1 2>/dev/null | grep '^first step:' || true)
    [ -n "$line" ] || { echo "persistent_cache.sh: chargpt printed no first-step line" >&2; exit 1; }
    echo "run $r $side: $line"
    results+=("$side $(echo "$line" | sed -E 's/first step: ([0-9.]+) ms, compiling ([0-9.]+) ms so far.*/\1 \2/')")
  done
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin]
cold = [float(c) for s, w, c in rows if s == "cold"]; warm = [float(c) for s, w, c in rows if s == "warm"]
cold_step = [float(w) for s, w, c in rows if s == "cold"]; warm_step = [float(w) for s, w, c in rows if s == "warm"]
ratios = [w / c for w, c in zip(warm, cold)]
print("| metric | cold (empty cache) | warm (filled cache) | warm / cold |")
print("|---|---|---|---|")
print("| first step, ms | %.1f | %.1f | %.3f |" % (statistics.median(cold_step), statistics.median(warm_step),
      statistics.median(w / c for w, c in zip(warm_step, cold_step))))
print("| compile time until then (model set-up included), ms | %.1f | %.1f | %.3f |" % (statistics.median(cold), statistics.median(warm), statistics.median(ratios)))
'
