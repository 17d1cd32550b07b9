#!/usr/bin/env bash
# Installs what the benchmarks (bench/) need beyond the library's own dependencies, only if missing.
# libtorch-dev is the PyTorch 1.13 C++ peer. libopenblas0-openmp: without recommends, libtorch gets the slow
# reference BLAS (netlib libblas3) and its matmul runs ~20x slower than it does as Debian recommends it;
# OpenBLAS built on OpenMP keeps one threading runtime in the process (libtorch uses OpenMP).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh" libtorch-dev libopenblas0-openmp

# The Python peers, in a venv of their own (.venv keeps Debian's torch 1.13, which the interop tests are built
# on): PyTorch 2.x (bench/attention_peer.py: SDPA, its own CPU flash attention; bench/peers.py: eager and
# inductor), JAX (bench/peers.py) and matplotlib for the chart of bench/peers_table.py. The torch wheel brings
# its CUDA libraries as dependencies (about 5 GB); nothing here uses them.
# venv_with VENV PINS: makes VENV with exactly these pinned versions, unless it already has them.
venv_with() {
  local venv=$1 pins=$2
  if ! "$venv/bin/python" - "$pins" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
for pin in sys.argv[1].split():
    name, wanted = pin.split("==")
    assert version(name).split("+")[0] == wanted, pin
PY
  then
    python3 -m venv "$venv"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install --quiet $pins
  fi
}
venv_with "$root/.venv-bench" "torch==2.15.0 numpy==2.4.6 jax==0.10.2 jaxlib==0.10.2 matplotlib==3.11.2"

# PyTorch/XLA (bench/peers.py and bench/train_peers.py, on its CPU PJRT device) needs the torch release it was
# built with, so it gets a venv of its own: torch_xla 2.9.0, the newest on the package index, with torch 2.9.0.
venv_with "$root/.venv-xla" "torch==2.9.0 torch_xla==2.9.0 numpy==2.4.6"
