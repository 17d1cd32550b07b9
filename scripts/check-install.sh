#!/usr/bin/env bash
# Installs xlite into a temporary prefix and builds a consumer with find_package(xlite CONFIG REQUIRED).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$root/build" --prefix "$work/prefix" >/dev/null
# The exported targets name no path of the machine that built them (the consumer sets no C++ standard: the
# target's cxx_std_20 requirement gives it).
targets=$(find "$work/prefix" -name 'xliteTargets*.cmake')
[ -n "$targets" ] || { echo "check-install: no xliteTargets*.cmake installed" >&2; exit 1; }
if grep -n "$root" $targets; then
  echo "check-install: the exported targets hold paths of the build tree" >&2
  exit 1
fi
mkdir -p "$work/app"
cat > "$work/app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer CXX)
find_package(xlite CONFIG REQUIRED)
add_executable(app main.cpp)
target_link_libraries(app xlite::xlite)
CMAKE
cat > "$work/app/main.cpp" <<'CPP'
#include <xlite/xlite.h>
#include <cmath>
#include <cstdio>
int main() {
  auto c = xlite::sin(xlite::cos(xlite::tensor(100.0f)));
  float v = c.item<float>();
  std::printf("installed xlite: sin(cos(100)) = %f\n", v);
  return std::fabs(v - std::sin(std::cos(100.0f))) < 1e-6f ? 0 : 1;
}
CPP
cmake -S "$work/app" -B "$work/app/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/app/build" >/dev/null
"$work/app/build/app"
echo "check-install: find_package(xlite) works"
