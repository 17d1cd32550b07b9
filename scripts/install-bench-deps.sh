#!/usr/bin/env bash
# Installs what the benchmarks (bench/) need beyond the library's own dependencies, only if missing.
# libtorch-dev is the PyTorch 1.13 C++ peer. libopenblas0-openmp: without recommends, libtorch gets the slow
# reference BLAS (netlib libblas3) and its matmul runs ~20x slower than it does as Debian recommends it;
# OpenBLAS built on OpenMP keeps one threading runtime in the process (libtorch uses OpenMP).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh" libtorch-dev libopenblas0-openmp
