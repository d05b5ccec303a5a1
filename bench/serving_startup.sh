#!/usr/bin/env bash
# Issue 17's start-up target: a serving-like PyTorch program
# (bench/serving_startup.py: 50 Llama decode graphs, batch sizes 50..1, and
# one graph of at least 3,000 nodes) run four ways, interleaved, RUNS times
# each, in one call on the GPU machine:
#   plain    no graphscope                        (anchor of capture)
#   capture  graphscope capture --exec (origins)  target <= 1.10x plain
#   cupti    bare CUPTI activity tracing          (anchor of profile;
#            bench/bare_cupti_inject.cc through CUDA_INJECTION64_PATH)
#   profile  graphscope profile --exec            target <= 1.10x cupti
#   limit    graphscope capture --exec --max-graphs (the program's number of
#            graphs): graphscope lets go of CUPTI once it has them all, so
#            the replays after start-up show what that gives back
#   base     capture --exec with the injection library in
#            GS_BENCH_BASELINE_INJECT, when set (another build: a change
#            side by side with the code before it)
# A last process under capture --exec with GRAPHSCOPE_DEBUG_TIMES=1 says
# where graphscope's time on the application's threads went.
# Prints each process's total capture + instantiate time and replay times,
# then per configuration the median of the totals, min-max, and the ratios;
# and the number of graphs and nodes graphscope dumped (from the last run).
#   bench/serving_startup.sh GRAPHSCOPE BARE_CUPTI_INJECT.so [RUNS] [-- program args]
set -euo pipefail
gs=$1; bare=$2; runs=${3:-3}
shift 3 || shift $#
[ "${1:-}" = "--" ] && shift
app=$(cd "$(dirname "$0")" && pwd)/serving_startup.py
out=$(mktemp -d)
# Every process on the same two CPUs (bench/pin.sh).
source "$(dirname "$0")/pin.sh"
echo "processes pinned to CPUs: ${cpus:-no}"
batches=50 prev=
for a in "$@"; do [ "$prev" = --batches ] && batches=$a; prev=$a; done
graphs=$((batches + 1))
for ((k = 1; k <= runs; ++k)); do
  "${pin[@]}" python3 "$app" "$@" --timing "$out/plain.$k.json" | sed "s/^/plain   $k: /"
  "${pin[@]}" "$gs" capture --exec --out-dir "$out/capture.$k" -- python3 "$app" "$@" --timing "$out/capture.$k.json" \
    2> "$out/capture.$k.err" | grep "^serving" | sed "s/^/capture $k: /" || { cat "$out/capture.$k.err"; exit 1; }
  CUDA_INJECTION64_PATH=$bare "${pin[@]}" python3 "$app" "$@" --timing "$out/cupti.$k.json" | sed "s/^/cupti   $k: /"
  "${pin[@]}" "$gs" profile --exec --out-dir "$out/profile.$k" -o "$out/profile.$k.txt" -- python3 "$app" "$@" \
    --timing "$out/profile.$k.json" 2> "$out/profile.$k.err" | grep "^serving" | sed "s/^/profile $k: /" ||
    { tail -5 "$out/profile.$k.err"; }
  "${pin[@]}" "$gs" capture --exec --max-graphs "$graphs" --out-dir "$out/limit.$k" -- python3 "$app" "$@" \
    --timing "$out/limit.$k.json" 2> "$out/limit.$k.err" | grep "^serving" | sed "s/^/limit   $k: /" || { cat "$out/limit.$k.err"; exit 1; }
  if [ -n "${GS_BENCH_BASELINE_INJECT:-}" ]; then
    GRAPHSCOPE_INJECTION_LIBRARY=$GS_BENCH_BASELINE_INJECT "${pin[@]}" "$gs" capture --exec --out-dir "$out/base.$k" -- \
      python3 "$app" "$@" --timing "$out/base.$k.json" 2> "$out/base.$k.err" | grep "^serving" | sed "s/^/base    $k: /" ||
      { cat "$out/base.$k.err"; exit 1; }
  fi
done
GRAPHSCOPE_DEBUG_TIMES=1 "${pin[@]}" "$gs" capture --exec --out-dir "$out/times" -- python3 "$app" "$@" 2>&1 |
  grep -E "^serving|calls|walk:|stack reads" | sed "s/^/times: /"
python3 - "$out" "$runs" "${GS_BENCH_BASELINE_INJECT:-}" <<'PY'
import glob, json, statistics, sys
out, runs, baseline = sys.argv[1], int(sys.argv[2]), sys.argv[3]
order = [("plain", "plain"), ("capture", "plain"), ("limit", "plain"), ("cupti", "cupti"), ("profile", "cupti")]
if baseline:
    order.append(("base", "plain"))
res = {c: [json.load(open("%s/%s.%d.json" % (out, c, k))) for k in range(1, runs + 1)] for c, _ in order}
med = {c: statistics.median(r["capture_instantiate_s"] for r in v) * 1e3 for c, v in res.items()}
for c, anchor in order:
    tot = [r["capture_instantiate_s"] * 1e3 for r in res[c]]
    rep = {k: statistics.median(r["replay_us"][k] for r in res[c]) for k in res[c][0]["replay_us"]}
    ref = {k: statistics.median(r["replay_us"][k] for r in res[anchor]) for k in rep}
    print("%-8s capture+instantiate median %7.1f ms (%s), %.2fx %s; replay us (median of runs, ratio) %s" %
          (c, med[c], " ".join("%.1f" % t for t in tot), med[c] / med[anchor], anchor,
           " ".join("%s %.1f (%.2fx)" % (k, v, v / ref[k]) for k, v in rep.items())))
idx = sorted(glob.glob("%s/capture.%d/pid-*/index.json" % (out, runs)))
for i in idx:
    x = json.load(open(i))
    nodes = [g["nodes"] for g in x["graphs"]]
    print("capture run %d dumped %d graphs, %d to %d nodes (%d in all), complete %s" %
          (runs, len(nodes), min(nodes or [0]), max(nodes or [0]), sum(nodes), x["complete"]))
PY
rm -rf "$out"
