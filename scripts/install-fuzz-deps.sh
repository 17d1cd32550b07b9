#!/usr/bin/env bash
# What the libFuzzer harnesses need besides the build's own packages: clang and its fuzzer runtime.
set -euo pipefail
exec bash "$(dirname "$0")/install-deps.sh" clang-19 libclang-rt-19-dev
