#!/usr/bin/env bash
# What origins cost: the capture + instantiate time of transformers' Llama
# (8 layers, from a config; tests/gpu/torch/origins_app.py times each
# `with torch.cuda.graph(...)` block, which instantiates when it ends) with
# no graphscope (the anchor), under `graphscope capture --exec --no-origins`
# and under `graphscope capture --exec` (origins on). RUNS processes of each,
# interleaved, each capturing CAPTURES graphs of the same forward (as a
# server captures one per batch size), in one call on the GPU machine.
# Prints every process's times, then per configuration the median over all
# captures, min-max, the median of each process, and the ratios to the anchor;
# then the fastest process of each configuration against the anchor's, and
# the 10th and 25th percentiles of all captures pooled (with those of the
# forward and the exit).
# With GS_BENCH_BASELINE_INJECT set to another build's injection library, a
# fourth configuration, origins on with that library, is interleaved too
# (a change side by side with the code before it, in one call).
#   bench/origins_overhead.sh GRAPHSCOPE [RUNS] [CAPTURES] [LAYERS]
set -euo pipefail
gs=$1; runs=${2:-5}; captures=${3:-5}; layers=${4:-8}
app=$(cd "$(dirname "$0")/.." && pwd)/tests/gpu/torch/origins_app.py
out=$(mktemp -d)
show() { python3 -c "import json,sys; print('%s run %s (ms): %s' % (sys.argv[1], sys.argv[2], ' '.join('%.1f' % (t * 1e3) for t in json.load(open(sys.argv[3]))['capture_instantiate_s'])))" "$@"; }
# Every process on the same two CPUs (bench/pin.sh).
source "$(dirname "$0")/pin.sh"
echo "processes pinned to CPUs: ${cpus:-no}"
args=(llama --layers "$layers" --captures "$captures")
for ((k = 1; k <= runs; ++k)); do
  "${pin[@]}" python3 "$app" "${args[@]}" --timing "$out/plain.$k.json" > /dev/null
  show plain "$k" "$out/plain.$k.json"
  "${pin[@]}" "$gs" capture --exec --no-origins --out-dir "$out/off.$k" -- python3 "$app" "${args[@]}" \
    --timing "$out/off.$k.json" > /dev/null 2>&1
  show off "$k" "$out/off.$k.json"
  "${pin[@]}" "$gs" capture --exec --out-dir "$out/on.$k" -- python3 "$app" "${args[@]}" --timing "$out/on.$k.json" > /dev/null 2>&1
  show on "$k" "$out/on.$k.json"
  if [ -n "${GS_BENCH_BASELINE_INJECT:-}" ]; then
    GRAPHSCOPE_INJECTION_LIBRARY=$GS_BENCH_BASELINE_INJECT "${pin[@]}" "$gs" capture --exec --out-dir "$out/base.$k" -- \
      python3 "$app" "${args[@]}" --timing "$out/base.$k.json" > /dev/null 2>&1
    show base "$k" "$out/base.$k.json"
  fi
done
python3 - "$out" "$runs" "${GS_BENCH_BASELINE_INJECT:-}" <<'PY'
import json, statistics, sys
out, runs, baseline = sys.argv[1], int(sys.argv[2]), sys.argv[3]
configs = [("plain", "no graphscope"), ("off", "capture --exec --no-origins"), ("on", "capture --exec (origins)")]
if baseline:
    configs.append(("base", "origins, baseline library"))
per = {c: [[t * 1e3 for t in json.load(open("%s/%s.%d.json" % (out, c, k)))["capture_instantiate_s"]]
           for k in range(1, runs + 1)] for c, _ in configs}
base = statistics.median([t for p in per["plain"] for t in p])
for c, label in configs:
    v = [t for p in per[c] for t in p]
    m = statistics.median(v)
    meds = [statistics.median(p) for p in per[c]]
    print("%-28s median %6.1f ms over %d captures, min %6.1f max %6.1f; ratio %.2fx; per-process medians %s (%.2f-%.2fx)" %
          (label, m, len(v), min(v), max(v), m / base, " ".join("%.1f" % x for x in meds), min(meds) / base, max(meds) / base))
# On the H100 host the processes of every configuration, no graphscope
# included, fall into a fast and a slow group (every phase of a capture
# slower alike, by up to 1.6x): the medians above move with how many
# processes of each configuration landed in which group. The fastest
# process of each configuration, compared, does not; with the phases of
# torch.cuda.graph (entry, the forward as captured, the exit: end of
# capture and instantiation), medians of its captures after the first.
fastest = {}
for c, label in configs:
    k = min(range(runs), key=lambda i: statistics.median(per[c][i]))
    ph = json.load(open("%s/%s.%d.json" % (out, c, k + 1))).get("phases_s", [])[1:]
    fastest[c] = statistics.median(per[c][k])
    parts = " ".join("%s %.2f" % (n, statistics.median(p[i] for p in ph) * 1e3)
                     for i, n in enumerate(("entry", "forward", "exit"))) if ph else "no phases"
    print("%-28s fastest process: median %6.2f ms, ratio %.2fx; %s ms" % (label, fastest[c], fastest[c] / fastest["plain"], parts))
# The host's speed also changes within a process, for seconds at a time
# (bench/origins_paired.sh: the two halves of one process without
# graphscope differed by up to 1.55x), so every capture after each process's
# first is pooled and its fast end compared: the 10th and 25th percentiles.
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
pooled = {c: [t for p in per[c] for t in p[1:]] for c, _ in configs}
# The forward as captured (where origins read stacks) and the exit (end of
# capture, instantiation, graphscope's walk), pooled the same way.
phase = {c: [ph for k in range(runs) for ph in json.load(open("%s/%s.%d.json" % (out, c, k + 1))).get("phases_s", [])[1:]]
         for c, _ in configs}
for c, label in configs:
    p10, p25 = pct(pooled[c], 0.10), pct(pooled[c], 0.25)
    parts = ""
    if phase[c] and phase["plain"]:
        f, x = [pct([ph[i] * 1e3 for ph in phase[c]], 0.10) for i in (1, 2)]
        f0, x0 = [pct([ph[i] * 1e3 for ph in phase["plain"]], 0.10) for i in (1, 2)]
        parts = "; 10th percentiles of the forward %.2f ms (%+.2f), the exit %.2f ms (%+.2f)" % (f, f - f0, x, x - x0)
    print("%-28s pooled captures: 10th percentile %6.2f ms, ratio %.2fx; 25th %6.2f ms, ratio %.2fx%s" %
          (label, p10, p10 / pct(pooled["plain"], 0.10), p25, p25 / pct(pooled["plain"], 0.25), parts))
PY
rm -rf "$out"
