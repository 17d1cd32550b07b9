#!/usr/bin/env bash
# What the libFuzzer harnesses need besides the build's own packages: clang, its fuzzer runtime, and its
# OpenMP runtime (the library is built with OpenMP; without libomp-19-dev CMake finds no OpenMP for clang).
set -euo pipefail
exec bash "$(dirname "$0")/install-deps.sh" clang-19 libclang-rt-19-dev libomp-19-dev
