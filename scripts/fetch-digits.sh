#!/usr/bin/env bash
# Puts the handwritten-digits data set (1797 8x8 images, 10 classes) that Debian's python3-sklearn ships
# into data/digits.csv, by downloading and unpacking the package without installing it. Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/data/digits.csv"
[ -s "$out" ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download python3-sklearn >/dev/null 2>&1; then
  apt-get update -q >/dev/null
  apt-get download python3-sklearn >/dev/null
fi
dpkg-deb -x python3-sklearn_*.deb unpacked
found=$(find unpacked -name digits.csv.gz | head -n 1)
[ -n "$found" ] || { echo "fetch-digits: digits.csv.gz not found in python3-sklearn" >&2; exit 1; }
mkdir -p "$root/data"
gunzip -c "$found" > "$out.tmp"
mv "$out.tmp" "$out"
echo "fetch-digits: wrote $out ($(wc -l < "$out") rows)"
