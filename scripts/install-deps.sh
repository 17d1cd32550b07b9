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

# Debian 12 has no package for Python's safetensors or JAX: they go into a project-local virtual
# environment, .venv/, made from Debian's interpreter with --system-site-packages so that it sees Debian's
# torch and numpy. CMake finds .venv/bin/python at configure time.
# - safetensors: the newest whose torch loader works with torch 1.13 (checked by the interop test itself).
# - jax and jaxlib: the stablehlo_xla test compiles xlite's StableHLO export with XLA's CPU client from
#   jaxlib. 0.4.35 is the newest that runs on Debian's numpy; numpy is pinned to the version Debian
#   installed, so that pip never replaces the numpy that Debian's torch was built against. Their other
#   requirements are pinned too, for a reproducible set.
# - nanobind and scikit-build-core build the Python package (pyproject.toml; `make test` installs it into
#   .venv with `pip install --no-build-isolation .`), and pytest runs its tests.
safetensors_version=0.8.0
jax_version=0.4.35
python_pins=("safetensors==$safetensors_version" "jax==$jax_version" "jaxlib==$jax_version" "ml_dtypes==0.5.4"
             "opt_einsum==3.4.0" "scipy==1.15.3" "nanobind==3.1.0" "scikit-build-core==1.1.2" "packaging==26.4"
             "pathspec==1.1.1" "pytest==9.2.0" "pluggy==1.7.0" "iniconfig==2.3.1")
venv="$root/.venv"
venv_ok() {
  "$venv/bin/python" - "$safetensors_version" "$jax_version" 2>/dev/null <<'PY'
import importlib.util, sys
import jax, jaxlib, safetensors
sys.exit(safetensors.__version__ != sys.argv[1] or jax.__version__ != sys.argv[2] or
         jaxlib.__version__ != sys.argv[2] or
         any(importlib.util.find_spec(m) is None
             for m in ("numpy", "torch", "ml_dtypes", "nanobind", "scikit_build_core", "pytest")))
PY
}
if ! venv_ok; then
  echo "install-deps: installing ${python_pins[*]} into $venv"
  # --clear: a leftover .venv made some other way (another interpreter, no system site packages) is redone.
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import numpy, torch" 2>/dev/null; then
    /usr/bin/python3 -m venv --clear --system-site-packages "$venv"
  fi
  numpy_version=$(/usr/bin/python3 -c "import numpy; print(numpy.__version__)")
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "numpy==$numpy_version" "${python_pins[@]}"
  venv_ok || { echo "install-deps: $venv does not provide ${python_pins[*]}, numpy and torch" >&2; exit 1; }
fi
