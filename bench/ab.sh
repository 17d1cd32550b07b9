#!/usr/bin/env bash
# A/B of xlite_bench between an older commit and the working tree: builds the older commit in a git
# worktree with today's bench/xlite_bench.cpp (so both sides time the same cases), then runs the two
# programs alternately and prints, per case, the median time of each side and the median of the
# per-run ratios against memcpy taken in the same process.
#
#   bash bench/ab.sh COMMIT [CASES] [REPEATS]     # e.g. bash bench/ab.sh f07599e^ "sums norm" 5
#
# CASES are xlite_bench's groups (default "sums norm"); REPEATS is how many times each side runs (default 5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
commit=${1:?usage: bench/ab.sh COMMIT [CASES] [REPEATS]}
cases=${2:-sums norm}
repeats=${3:-5}
before=build-ab/before
after=build-bench

rm -rf build-ab && mkdir -p build-ab
git worktree add -f --detach "$before" "$commit" >/dev/null
trap 'git worktree remove --force "$before" >/dev/null 2>&1 || true' EXIT
cp bench/xlite_bench.cpp "$before/bench/xlite_bench.cpp"
for side in "$before" .; do
  build=$([ "$side" = . ] && echo "$after" || echo "$before/build")
  cmake -S "$side" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLITE_BUILD_BENCH=ON -DXLITE_BUILD_TESTS=OFF \
    -DXLITE_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$build" -j "${BENCH_JOBS:-2}" --target xlite_bench >/dev/null
done

results=build-ab/results.txt
: >"$results"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq 1 "$repeats"); do
  for side in before after; do
    program=$([ "$side" = after ] && echo "$after/xlite_bench" || echo "$before/build/xlite_bench")
    for group in $cases; do
      env -u OPENBLAS_CORETYPE OMP_NUM_THREADS="${BENCH_THREADS:-2}" "$program" "$group" 9 |
        awk -v side="$side" '$2 ~ /^[0-9.]+$/ && $1 ~ /_ms$/ {print side, $1, $2}' >>"$results"
    done
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$commit" <<'EOF'
import collections, statistics, sys
times = collections.defaultdict(list)
for line in open(sys.argv[1]):
    side, key, value = line.split()
    times[(side,) + tuple(key.rsplit('.', 1))].append(float(value))
print(f"| case | {sys.argv[2]} (ms) | working tree (ms) | memcpy / xlite before | after |")
print("|---|---|---|---|---|")
for case in sorted({k[1] for k in times}):
    row = [case]
    for side in ("before", "after"):
        t = times[(side, case, "xlite_ms")]
        row.append(f"{statistics.median(t):.2f} ({min(t):.2f}-{max(t):.2f})")
    for side in ("before", "after"):
        t, m = times[(side, case, "xlite_ms")], times.get((side, case, "memcpy_ms"))
        row.append(f"{statistics.median(c / x for x, c in zip(t, m)):.3f}" if m else "-")
    print("| " + " | ".join(row) + " |")
EOF
