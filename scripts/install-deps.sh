#!/usr/bin/env bash
# Installs what building and testing xlite needs on Debian 12, and only what is missing. Idempotent.
# Extra package names given as arguments are installed the same way (scripts/install-bench-deps.sh).
set -euo pipefail

packages=(g++ cmake ninja-build make libgtest-dev llvm-19-dev libdnnl-dev nlohmann-json3-dev "$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -q
$sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
