#!/usr/bin/env bash
# Installs what building and testing xlite needs on Debian 12, and only what is missing. Idempotent.
# Extra package names given as arguments are installed the same way (scripts/install-bench-deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# llvm-19-tools: lit and FileCheck, which run the text-IR tests in tests/xir. clang-format-19: make format-check.
# graphviz: a test renders debug::graph_dot with dot.
# libdw-dev (elfutils): symbolises the user call sites that XLITE_DEBUG prints (file:line from DWARF).
# python3-pil: tools/trace_png.py draws XLITE_PROFILE traces (and the test that checks them runs it).
# python3-*: the checkpoint interop test (tests/python/safetensors_interop.py) reads and writes
# safetensors files with Python's safetensors package, NumPy and PyTorch (Debian's torch is 1.13).
packages=(g++ cmake ninja-build make libgtest-dev llvm-19-dev llvm-19-tools clang-format-19 libdnnl-dev nlohmann-json3-dev
          python3-venv python3-numpy python3-torch graphviz libdw-dev python3-pil "$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -q
  $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian 12 has no package for Python's safetensors: it goes into a project-local virtual environment,
# .venv/, made from Debian's interpreter with --system-site-packages so that it sees Debian's torch and
# numpy. CMake finds .venv/bin/python at configure time. The pinned version is the newest whose torch
# loader works with torch 1.13 (checked by the interop test itself).
safetensors_version=0.8.0
venv="$root/.venv"
venv_ok() {
  "$venv/bin/python" - "$safetensors_version" 2>/dev/null <<'PY'
import importlib.util, sys
import safetensors
sys.exit(safetensors.__version__ != sys.argv[1] or
         any(importlib.util.find_spec(m) is None for m in ("numpy", "torch")))
PY
}
if ! venv_ok; then
  echo "install-deps: installing safetensors $safetensors_version into $venv"
  # --clear: a leftover .venv made some other way (another interpreter, no system site packages) is redone.
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import numpy, torch" 2>/dev/null; then
    /usr/bin/python3 -m venv --clear --system-site-packages "$venv"
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "safetensors==$safetensors_version"
  venv_ok || { echo "install-deps: $venv does not provide safetensors $safetensors_version, numpy and torch" >&2; exit 1; }
fi
