#!/usr/bin/env bash
# The offline commands on large documents, with and without transparent huge
# pages for graphscope's heap (GRAPHSCOPE_HUGE_PAGES=0 turns off the re-run
# with glibc.malloc.hugetlb=1, apps/graphscope/main.cc), side by side in one
# run: each pair alternates, RUNS times; prints wall-time medians, ranges and
# peak memory.
#   bench/offline_huge_pages.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-5}
gs=$build/apps/graphscope
data=$build/bench_data/huge_pages; mkdir -p "$data"
prof=$build/bench_data/profile100000; mkdir -p "$prof"
[ -f "$data/big.json" ] || { zcat "$root/bench/data/big100000.verbose.dot.gz" > "$data/big.dot";
  "$gs" dump --json "$data/big.dot" -o "$data/big.json"; }
[ -f "$prof/trace.json" ] || "$build/bench/bench_profile" 100000 10 "$prof" >/dev/null
echo "== $(nproc) cores, THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled); graph JSON $(du -m "$data/big.json" | cut -f1) MB, trace $(du -m "$prof/trace.json" | cut -f1) MB"
cases=(
  "check (read + validate + rules) of the 100k-node JSON|check --max-nodes 200000 $data/big.json"
  "dump summary of the 100k-node JSON|dump $data/big.json"
  "diff of the 100k-node JSON with itself|diff -q $data/big.json $data/big.json"
  "dump --json of the 100k-node verbose DOT|dump --json $data/big.dot -o $data/out.json"
  "profile: 100k nodes, 1M records|profile --graph $prof/graph.json --trace $prof/trace.json --json -o $prof/report.json"
)
stats() { sort -n | awk '{a[NR]=$1} END {printf "median %.3f s (%.3f-%.3f)", a[int((NR+1)/2)], a[1], a[NR]}'; }
printf "%-50s %-34s %-34s %s\n" case "huge pages (default)" "GRAPHSCOPE_HUGE_PAGES=0" ratio
for c in "${cases[@]}"; do
  name=${c%%|*} args=${c#*|}
  on=() off=() mem_on=0 mem_off=0
  for ((k = 0; k < runs; ++k)); do
    for mode in on off; do
      # shellcheck disable=SC2086
      env GRAPHSCOPE_HUGE_PAGES=$([ $mode = on ] && echo 1 || echo 0) /usr/bin/time -o "$data/time" -f "%e %M" \
        "$gs" $args > /dev/null 2>&1 || true
      r=$(tail -1 "$data/time")
      if [ $mode = on ]; then on+=("${r% *}"); mem_on=${r#* }; else off+=("${r% *}"); mem_off=${r#* }; fi
    done
  done
  a=$(printf "%s\n" "${on[@]}" | stats) b=$(printf "%s\n" "${off[@]}" | stats)
  ma=$(printf "%s\n" "${on[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  mb=$(printf "%s\n" "${off[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf "%-50s %-34s %-34s %.2fx faster (peak %d / %d MiB)\n" "$name" "$a" "$b" "$(echo "$mb / $ma" | bc -l)" \
    $((mem_on / 1024)) $((mem_off / 1024))
done
