#!/usr/bin/env bash
# The offline scale target of `graphscope profile`: the whole command on a
# 100k-node graph and a 1M-record trace (10 replays), read from files, at
# most 1 s and 1 GiB on the 2-core development machine. Each run prints its
# phases (GRAPHSCOPE_TIMINGS), then its wall time and peak memory.
#   bench/profile_offline.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-5}
data=$build/bench_data/profile100000; mkdir -p "$data"
[ -f "$data/trace.json" ] || "$build/bench/bench_profile" 100000 10 "$data" >/dev/null
echo "== $(nproc) cores; graph $(du -m "$data/graph.json" | cut -f1) MB, trace $(du -m "$data/trace.json" | cut -f1) MB"
for ((k = 1; k <= runs; ++k)); do
  GRAPHSCOPE_TIMINGS=1 /usr/bin/time -f "run $k: %e s wall, %U s user, %S s sys, %M KiB peak" \
    "$build/apps/graphscope" profile --graph "$data/graph.json" --trace "$data/trace.json" --json -o "$data/report.json"
done
"$build/apps/graphscope" profile --graph "$data/graph.json" --trace "$data/trace.json" | sed -n 1,6p
