#!/usr/bin/env bash
# Folding at scale (issue 43): what repeats, found on generated graphs of
# four shapes (bench_fold: four chains of one kernel, a transformer-like
# stack, a wide fan-out, bench_json's fork/join blocks) at 10k, 100k and 1M
# nodes. Targets on the 2-core development machine: the summary (`graphscope
# dump FILE`, folding included) of 100k nodes at most 0.5 s and of 1M at
# most 6 s; `graphscope report` of 100k nodes written in at most 2 s; the
# import of a verbose cudaGraphDebugDotPrint file at most 1.3x cgraph's
# agread (bench_nvdot).
#
#   bench/fold_scale.sh [BUILD_DIR] [REFERENCE_BUILD_DIR] [ROUNDS] [SIZES]
#
# 1. find_repeats in one process (bench_fold): best, median and slowest of
#    ROUNDS calls, and the median CPU time.
# 2. The whole command, ROUNDS rounds through bench/compare.py (A/A: the
#    anchor twice a round): wall and CPU seconds (user + system) of
#    `dump FILE` for every shape and size, and of `report FILE -o OUT` at
#    100k. Where REFERENCE_BUILD_DIR (a build of the code before) is given,
#    its graphscope is the anchor and this build the candidate, at 10k and
#    100k; at 1M this build alone (its anchor is itself).
# 3. The DOT import: bench_nvdot on each shape's verbose DOT at 100k and on
#    bench/data/big100000.verbose.dot, this build's and the reference's.
#
# Inputs go to BUILD_DIR/bench_data/fold (made once, kept: 1M nodes take
# about 1.6 GB). GS_BENCH_SHAPES picks shapes (default: all four).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ref=${2:-}
rounds=${3:-5}
sizes=${4:-"10000 100000 1000000"}
shapes=${GS_BENCH_SHAPES:-"chains layers fan blocks"}
[ -n "$ref" ] && ref=$(cd "$ref" && pwd)
data=$build/bench_data/fold; mkdir -p "$data"
gs=$build/apps/graphscope
echo "== $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +'%Y-%m-%d %H:%M UTC')"
echo "== build $build${ref:+, reference $ref}"

echo "== find_repeats in one process (ms)"
for n in $sizes; do
  missing=0
  for s in $shapes; do [ -f "$data/$s.$n.json" ] || missing=1; done
  if [ $missing = 1 ]; then "$build/bench/bench_fold" "$n" "$rounds" "$data" $shapes
  else "$build/bench/bench_fold" "$n" "$rounds" "" $shapes; fi
done

# One configuration's command: the run's CPU time written as JSON beside it.
timed() {
  printf '/usr/bin/time -o "$GS_RUN_DIR/t" -f "%%U %%S" %s > /dev/null; awk '"'"'{printf "{\\"cpu_s\\": %%.2f}", $1 + $2}'"'"' "$GS_RUN_DIR/t" > "$GS_RUN_DIR/cpu.json"' "$1"
}
compare() {  # LABEL ARGS...: the anchor (reference or this build) and this build
  local label=$1; shift
  echo "== $label"
  local configs=()
  if [ -n "$ref" ]; then configs+=(ref="$(timed "$ref/apps/graphscope $*")"); fi
  configs+=(now="$(timed "$gs $*")")
  python3 "$root/bench/compare.py" --rounds "$rounds" --metric wall_s=wall \
    --metric cpu_s=json:cpu.json:cpu_s "${configs[@]}" | sed -n '/^wall_s,/,$p'
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in $sizes; do
  for s in $shapes; do
    if [ "$n" -le 100000 ]; then compare "dump $s.$n.json (summary)" dump "$data/$s.$n.json"
    else ref="" compare "dump $s.$n.json (summary)" dump "$data/$s.$n.json"; fi
  done
done
for s in $shapes; do
  [ -f "$data/$s.100000.json" ] && compare "report $s.100000.json" report "$data/$s.100000.json" -o "$out/page.html"
done

echo "== DOT import against agread (bench_nvdot, $rounds repeats)"
[ -f "$data/big100000.verbose.dot" ] || zcat "$root/bench/data/big100000.verbose.dot.gz" > "$data/big100000.verbose.dot"
for f in $(for s in $shapes; do echo "$data/$s.100000.verbose.dot"; done) "$data/big100000.verbose.dot"; do
  [ -f "$f" ] || continue
  for b in ${ref:+"$ref/bench/bench_nvdot"} "$build/bench/bench_nvdot"; do
    echo "-- $b"
    "$b" "$f" "$rounds"
  done
done
