#!/usr/bin/env bash
# How the offline costs grow with the graph: for 1k, 10k, 100k and 1M nodes,
# the library's JSON write and read + validate (bench_json, in one process,
# with huge pages as the CLI uses them), and the whole CLI's `diff -q` of a
# graph with itself and `profile --graph --trace` of 10 replays (bench_profile
# makes both files): median wall time of RUNS and peak memory. Sizes whose
# profile input would pass MAX_PROFILE_NODES are not profiled. The walk's
# curve is bench_capture's, on the GPU machine.
#   bench/scale.sh [BUILD_DIR] [RUNS] [MAX_PROFILE_NODES]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-3}
max_profile=${3:-100000}
gs=$build/apps/graphscope
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "== $(nproc) cores, $(date -u +'%Y-%m-%d %H:%M UTC')"
printf "%-9s %-24s %-24s %-26s %-30s\n" nodes "JSON write (median)" "read+validate (median)" "diff -q: s / peak MiB" "profile 10 replays: s / peak MiB"
for n in 1000 10000 100000 1000000; do
  out=$(GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$build/bench/bench_json" "$n" "$runs")
  w=$(echo "$out" | awk '/^write_graph_json/ {print $3}')
  r=$(echo "$out" | awk '/^read \+ validate/ {print $5}')
  data=$build/bench_data/scale$n; mkdir -p "$data"
  replays=10; [ "$n" -gt "$max_profile" ] && replays=1
  [ -f "$data/graph.json" ] || "$build/bench/bench_profile" "$n" "$replays" "$data" > /dev/null
  ts=() mem=0
  for ((k = 0; k < runs; ++k)); do
    /usr/bin/time -o "$data/time" -f "%e %M" "$gs" diff -q "$data/graph.json" "$data/graph.json" || true
    t=$(cat "$data/time"); ts+=("${t% *}"); mem=${t#* }
  done
  d="$(printf "%s\n" "${ts[@]}" | median) s / $((mem / 1024))"
  p="not run (over $max_profile nodes)"
  if [ "$n" -le "$max_profile" ]; then
    ts=()
    for ((k = 0; k < runs; ++k)); do
      /usr/bin/time -o "$data/time" -f "%e %M" "$gs" profile --graph "$data/graph.json" --trace "$data/trace.json" \
        --json -o "$data/report.json"
      t=$(cat "$data/time"); ts+=("${t% *}"); mem=${t#* }
    done
    p="$(printf "%s\n" "${ts[@]}" | median) s / $((mem / 1024))"
  fi
  printf "%-9s %-24s %-24s %-26s %-30s\n" "$n" "$w ms" "$r ms" "$d" "$p"
done
