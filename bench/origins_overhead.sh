#!/usr/bin/env bash
# Issue 13's budget: the capture + instantiate time of transformers' Llama
# (8 layers, from a config; tests/gpu/torch/origins_app.py times each
# `with torch.cuda.graph(...)` block, which instantiates when it ends) with
# origins on at most 1.2x the program without graphscope. Configurations,
# RUNS rounds in turn through bench/compare.py (every process pinned as
# bench/pin.sh says), each process capturing CAPTURES graphs of the same
# forward (as a server captures one per batch size):
#   plain    no graphscope                         (the anchor)
#   off      graphscope capture --exec --no-origins
#   on       graphscope capture --exec             (origins on)
#   base     origins on with the injection library in GS_BENCH_BASELINE_INJECT,
#            when set (another build: a change side by side with the code
#            before it, in one call)
#   plain2   no graphscope again: the harness's A/A control
# The harness's table is of each process's median capture after its first.
# Then, per configuration: every process's captures; the median of all
# captures; the fastest process (with the phases of torch.cuda.graph: entry,
# the forward as captured, the exit); and the fast end of every capture
# after each process's first, pooled: the 10th and 25th percentiles, with
# those of the forward and the exit. The host's speed changes for seconds
# at a time, by up to 1.6x, with or without graphscope (BENCHMARKS.md):
# the median of all captures carries that (its A/A read 1.31x on
# 2026-11-27), the fast end much less (A/A 1.05x at the 10th percentile).
#   bench/origins_overhead.sh GRAPHSCOPE [RUNS] [CAPTURES] [LAYERS]
# GS_BENCH_DRY_RUN=1: print what would run, run nothing.
set -euo pipefail
gs=$1; runs=${2:-5}; captures=${3:-5}; layers=${4:-8}
here=$(cd "$(dirname "$0")" && pwd)
app=$(cd "$here/.." && pwd)/tests/gpu/torch/origins_app.py
source "$here/pin.sh"
q() { printf '%q ' "$@"; }
py="$(q python3 "$app" llama --layers "$layers" --captures "$captures")"'--timing "$GS_RUN_DIR/timing.json"'
attached() { local s; s=$(q "$@" "$gs" capture --exec); printf '%s' "${s% }"; }
configs=("plain=$py"
         "off=$(attached) --no-origins --out-dir \"\$GS_RUN_DIR/dump\" -- $py"
         "on=$(attached) --out-dir \"\$GS_RUN_DIR/dump\" -- $py")
if [ -n "${GS_BENCH_BASELINE_INJECT:-}" ]; then
  configs+=("base=$(attached env GRAPHSCOPE_INJECTION_LIBRARY="$GS_BENCH_BASELINE_INJECT") --out-dir \"\$GS_RUN_DIR/dump\" -- $py")
fi
slice=; [ "$captures" -gt 1 ] && slice='[1:]'
harness=(python3 "$here/compare.py" --rounds "$runs" --cpus "${cpus:-}"
         --metric "capture_ms*1000=json:timing.json:capture_instantiate_s$slice")
if [ "${GS_BENCH_DRY_RUN:-0}" = 1 ]; then exec "${harness[@]}" --dry-run "${configs[@]}"; fi
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
"${harness[@]}" --out "$out" --json "$out/compare.json" "${configs[@]}"
python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
cmp = json.load(open(out + "/compare.json"))
runs, present = cmp["rounds"], cmp["arms"]
labels = {"plain": "no graphscope", "off": "capture --exec --no-origins", "on": "capture --exec (origins)",
          "base": "origins, baseline library", "plain2": "no graphscope, again (A/A)"}
configs = [(c, labels[c]) for c in present]
doc = {c: [json.load(open("%s/%s.%d/timing.json" % (out, c, k))) for k in range(1, runs + 1)] for c in present}
per = {c: [[t * 1e3 for t in d["capture_instantiate_s"]] for d in doc[c]] for c in present}
print()
for c, _ in configs:
    for k, p in enumerate(per[c], 1):
        print("%s run %d (ms): %s" % (c, k, " ".join("%.1f" % t for t in p)))
base = statistics.median([t for p in per["plain"] for t in p])
for c, label in configs:
    v = [t for p in per[c] for t in p]
    m = statistics.median(v)
    meds = [statistics.median(p) for p in per[c]]
    print("%-28s median %6.1f ms over %d captures, min %6.1f max %6.1f; ratio %.2fx; per-process medians %s (%.2f-%.2fx)" %
          (label, m, len(v), min(v), max(v), m / base, " ".join("%.1f" % x for x in meds), min(meds) / base, max(meds) / base))
# The fastest process of each configuration, with the phases of
# torch.cuda.graph (entry, the forward as captured, the exit: end of capture
# and instantiation), medians of its captures after the first.
fastest = {}
for c, label in configs:
    k = min(range(runs), key=lambda i: statistics.median(per[c][i]))
    ph = doc[c][k].get("phases_s", [])[1:]
    fastest[c] = statistics.median(per[c][k])
    parts = " ".join("%s %.2f" % (n, statistics.median(p[i] for p in ph) * 1e3)
                     for i, n in enumerate(("entry", "forward", "exit"))) if ph else "no phases"
    print("%-28s fastest process: median %6.2f ms, ratio %.2fx; %s ms" % (label, fastest[c], fastest[c] / fastest["plain"], parts))
# Every capture after each process's first, pooled, and its fast end: the
# 10th and 25th percentiles; the forward as captured (where origins read
# stacks) and the exit (end of capture, instantiation, graphscope's walk)
# pooled the same way.
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
pooled = {c: [t for p in per[c] for t in p[1:]] for c in present}
phase = {c: [ph for d in doc[c] for ph in d.get("phases_s", [])[1:]] for c in present}
for c, label in configs:
    if not pooled[c]:
        break
    p10, p25 = pct(pooled[c], 0.10), pct(pooled[c], 0.25)
    parts = ""
    if phase[c] and phase["plain"]:
        f, x = [pct([ph[i] * 1e3 for ph in phase[c]], 0.10) for i in (1, 2)]
        f0, x0 = [pct([ph[i] * 1e3 for ph in phase["plain"]], 0.10) for i in (1, 2)]
        parts = "; 10th percentiles of the forward %.2f ms (%+.2f), the exit %.2f ms (%+.2f)" % (f, f - f0, x, x - x0)
    print("%-28s pooled captures: 10th percentile %6.2f ms, ratio %.2fx; 25th %6.2f ms, ratio %.2fx%s" %
          (label, p10, p10 / pct(pooled["plain"], 0.10), p25, p25 / pct(pooled["plain"], 0.25), parts))
PY
