#!/usr/bin/env bash
# Issue 4's target: a profiled replay at most 1.05x the replay under bare
# CUPTI tracing, side by side on the GPU machine.
# First the measurement that decides: bare and graphscope rounds alternating
# in one process (bench_replay paired), the median of the rounds' ratios and
# its 95% interval. Then, for comparison, the three ways in processes of
# their own (CUPTI's buffer callbacks are per process), RUNS rounds in turn
# through bench/compare.py: plain (no CUPTI), bare (bare CUPTI tracing: the
# anchor), graphscope (its ActivityCollector), and bare again (the A/A
# control), each timing REPLAYS replays of a NODES-node graph three times in
# its process; the table is of each process's median replay window. Across
# processes the anchor drifted by about 20% (2026-11-22), which the A/A
# column shows. The harness pins these processes as bench/pin.sh says; the
# paired process runs unpinned, as it did when its figures were recorded.
#   bench/replay_overhead.sh BENCH_REPLAY [NODES] [REPLAYS] [RUNS] [ROUNDS]
# GS_BENCH_DRY_RUN=1: print what would run, run nothing.
set -euo pipefail
b=$1 nodes=${2:-10000} replays=${3:-20} runs=${4:-3} rounds=${5:-30}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/pin.sh"
q() { local s; s=$(printf '%q ' "$@"); printf '%s' "${s% }"; }
configs=()
for mode in plain bare graphscope; do configs+=("$mode=$(q "$b" "$mode" "$nodes" "$replays" 3)"); done
harness=(python3 "$here/compare.py" --rounds "$runs" --cpus "${cpus:-}" --anchor bare --show "^(plain|bare|graphscope) "
         --metric "replay_ms=re:median ([0-9.]+) ms")
if [ "${GS_BENCH_DRY_RUN:-0}" = 1 ]; then
  echo "paired: $(q "$b" paired "$nodes" "$replays" "$rounds")"
  exec "${harness[@]}" --dry-run "${configs[@]}"
fi
"$b" paired "$nodes" "$replays" "$rounds"  # unpinned, as when it was recorded
echo
"${harness[@]}" "${configs[@]}"
