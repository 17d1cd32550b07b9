#!/usr/bin/env bash
# Runs each fuzz harness for a bounded time; exits non-zero on any finding.
#
#   bash fuzz/run.sh <fuzz build dir> <seconds per harness>
set -euo pipefail
build=$1
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
corpus="$build/corpus"
findings="$build/findings"
mkdir -p "$corpus/load" "$corpus/ir" "$findings"
ASAN_OPTIONS=detect_leaks=1 "$build/xlite-fuzz-seeds" "$corpus/load" "$corpus/ir"
status=0
for harness in load ir; do
  echo "fuzz: $harness for $seconds s"
  # New inputs go into the first directory; the regressions are only read. OpenMP teams of one thread:
  # the fuzzer measures the code it reaches, not thread start-up.
  log="$build/fuzz-$harness.log"
  if OMP_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$build/fuzz_$harness" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=4096 \
      -artifact_prefix="$findings/$harness-" -print_final_stats=1 \
      "$corpus/$harness" "$root/fuzz/regressions/$harness" >"$log" 2>&1; then
    grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)|Done [0-9]+ runs" "$log" || true
  else
    tail -60 "$log"
    status=1
  fi
done
if ls "$findings"/* >/dev/null 2>&1; then
  echo "fuzz: findings in $findings:" >&2
  ls -l "$findings" >&2
  status=1
fi
exit $status
