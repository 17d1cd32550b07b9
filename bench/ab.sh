#!/usr/bin/env bash
# A/B of xlite_bench between an older commit and the working tree: builds the older commit in a git
# worktree with today's bench/xlite_bench.cpp (so both sides time the same cases), then runs the two
# programs alternately and prints, per case, the median time of each side and the median of the
# per-run ratios against memcpy taken in the same process.
#
#   bash bench/ab.sh COMMIT [CASES] [REPEATS]     # e.g. bash bench/ab.sh f07599e^ "sums norm" 5
#
# CASES are xlite_bench's groups (default "sums norm"); REPEATS is how many times each side runs (default 5).
# Every metric a group prints in ms or us gets a row (compiled, eager, xlite, per-op times).
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
        awk -v side="$side" '$2 ~ /^[0-9.]+$/ && $1 ~ /_(ms|us)$/ {print side, $1, $2}' >>"$results"
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
# Every xlite metric of a case gets a row; the limit or peer measured in the same process (memcpy, oneDNN)
# gives the ratio column, taken run by run.
print(f"| case | metric | {sys.argv[2]} | working tree | limit / xlite before | after |")
print("|---|---|---|---|---|---|")
peers = ("memcpy_ms", "dnnl_ms")
for case, metric in sorted({(k[1], k[2]) for k in times if k[2] not in peers}):
    row = [case, metric]
    for side in ("before", "after"):
        t = times[(side, case, metric)]
        row.append(f"{statistics.median(t):.3f} ({min(t):.3f}-{max(t):.3f})" if t else "-")
    for side in ("before", "after"):
        t = times[(side, case, metric)]
        peer = next((times[(side, case, p)] for p in peers if times.get((side, case, p))), None)
        row.append(f"{statistics.median(c / x for x, c in zip(t, peer)):.3f}" if peer and t and metric.endswith("_ms") else "-")
    print("| " + " | ".join(row) + " |")
EOF
