#!/usr/bin/env bash
# Runs the benchmarks of the offline path and prints their tables.
#   bench/run.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
data=$build/bench_data; mkdir -p "$data"
for f in big100000.verbose.dot big100000.dot; do
  [ -f "$data/$f" ] || zcat "$root/bench/data/$f.gz" > "$data/$f"
done
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$build/bench/bench_json" 100000 5
"$build/bench/bench_nvdot" "$data/big100000.verbose.dot" 5
"$build/bench/bench_nvdot" "$data/big100000.dot" 5
