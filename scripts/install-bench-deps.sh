#!/usr/bin/env bash
# Installs what the benchmarks (bench/) need beyond the library's own dependencies, only if missing.
# libtorch-dev is the PyTorch 1.13 C++ peer. libopenblas0-openmp: without recommends, libtorch gets the slow
# reference BLAS (netlib libblas3) and its matmul runs ~20x slower than it does as Debian recommends it;
# OpenBLAS built on OpenMP keeps one threading runtime in the process (libtorch uses OpenMP).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh" libtorch-dev libopenblas0-openmp

# PyTorch 2.x, the peer of the attention kernels (bench/attention_peer.py: SDPA, its own CPU flash
# attention), in a venv of its own: .venv keeps Debian's torch 1.13, which the interop tests are built on.
# The wheel brings its CUDA libraries as dependencies (about 5 GB); nothing here uses them.
bench_venv="$root/.venv-bench"
if ! "$bench_venv/bin/python" -c "import numpy, torch; assert torch.__version__.split('+')[0] == '2.15.0'" 2>/dev/null; then
  python3 -m venv "$bench_venv"
  "$bench_venv/bin/pip" install --quiet torch==2.15.0 numpy==2.4.6
fi
