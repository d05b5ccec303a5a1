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
for ((k = 1; k <= runs; ++k)); do
  python3 "$app" "$@" --timing "$out/plain.$k.json" | sed "s/^/plain   $k: /"
  "$gs" capture --exec --out-dir "$out/capture.$k" -- python3 "$app" "$@" --timing "$out/capture.$k.json" \
    2> "$out/capture.$k.err" | grep "^serving" | sed "s/^/capture $k: /" || { cat "$out/capture.$k.err"; exit 1; }
  CUDA_INJECTION64_PATH=$bare python3 "$app" "$@" --timing "$out/cupti.$k.json" | sed "s/^/cupti   $k: /"
  "$gs" profile --exec --out-dir "$out/profile.$k" -o "$out/profile.$k.txt" -- python3 "$app" "$@" \
    --timing "$out/profile.$k.json" 2> "$out/profile.$k.err" | grep "^serving" | sed "s/^/profile $k: /" ||
    { tail -5 "$out/profile.$k.err"; }
done
python3 - "$out" "$runs" <<'PY'
import glob, json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
res = {c: [json.load(open("%s/%s.%d.json" % (out, c, k))) for k in range(1, runs + 1)]
       for c in ("plain", "capture", "cupti", "profile")}
med = {c: statistics.median(r["capture_instantiate_s"] for r in v) * 1e3 for c, v in res.items()}
for c, anchor in (("plain", "plain"), ("capture", "plain"), ("cupti", "cupti"), ("profile", "cupti")):
    tot = [r["capture_instantiate_s"] * 1e3 for r in res[c]]
    rep = {k: statistics.median(r["replay_us"][k] for r in res[c]) for k in res[c][0]["replay_us"]}
    print("%-8s capture+instantiate median %7.1f ms (%s), %.2fx %s; replay us (median of runs) %s" %
          (c, med[c], " ".join("%.1f" % t for t in tot), med[c] / med[anchor], anchor,
           " ".join("%s %.1f" % kv for kv in rep.items())))
idx = sorted(glob.glob("%s/capture.%d/pid-*/index.json" % (out, runs)))
for i in idx:
    x = json.load(open(i))
    nodes = [g["nodes"] for g in x["graphs"]]
    print("capture run %d dumped %d graphs, %d to %d nodes (%d in all), complete %s" %
          (runs, len(nodes), min(nodes or [0]), max(nodes or [0]), sum(nodes), x["complete"]))
PY
rm -rf "$out"
