#!/usr/bin/env bash
# Installs what the benchmarks (bench/) need beyond scripts/install-deps.sh, on Debian 12, and only what is
# missing. Idempotent. libtorch-dev is the PyTorch 1.13 C++ peer; the xlite benchmark itself needs only
# the library's own dependencies (oneDNN is already one of them).
# libopenblas0-openmp: without recommends, libtorch gets the slow reference BLAS (netlib libblas3) and its
# matmul runs ~20x slower than it does as Debian recommends it; OpenBLAS built on OpenMP keeps one
# threading runtime in the process (libtorch uses OpenMP).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"

packages=(libtorch-dev libopenblas0-openmp)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-bench-deps: installing ${missing[*]}"
sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -q
$sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
