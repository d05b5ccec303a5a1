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
# (a change side by side with the code before it, in one call). Every round
# also runs a second process without graphscope (A/A): each estimate's
# ratio for it says how far the estimate moves between two processes of the
# same code, and each process is compared with the round's process without
# graphscope too.
# With GS_BENCH_TOGETHER=1 a round's processes run at once, each on CPUs of
# its own (bench/together.sh). On the H100 host of 2026-11-27 10:41 UTC that
# did not help: processes that ran at the same moment did not share a speed
# (A/A 0.63-1.82x by round), so processes run in turn by default.
#   bench/origins_overhead.sh GRAPHSCOPE [RUNS] [CAPTURES] [LAYERS]
set -euo pipefail
gs=$1; runs=${2:-5}; captures=${3:-5}; layers=${4:-8}
app=$(cd "$(dirname "$0")/.." && pwd)/tests/gpu/torch/origins_app.py
out=$(mktemp -d)
# Every process on the same two CPUs (bench/pin.sh), one at a time; or,
# with GS_BENCH_TOGETHER=1, every configuration at once (bench/together.sh).
source "$(dirname "$0")/pin.sh"
source "$(dirname "$0")/together.sh"
args=(llama --layers "$layers" --captures "$captures")
show() { python3 -c "import json,sys; print('%s run %s (ms): %s' % (sys.argv[1], sys.argv[2], ' '.join('%.1f' % (t * 1e3) for t in json.load(open(sys.argv[3]))['capture_instantiate_s'])))" "$@"; }
app_run() {  # CONFIG K CPUS [-- graphscope's options...]: one process
  local c=$1 k=$2 on=$3; shift 3
  if [ "${1:-}" != -- ]; then
    pinned "$on" python3 "$app" "${args[@]}" --timing "$out/$c.$k.json" > /dev/null
  else
    shift
    pinned "$on" "$gs" capture --exec "$@" --out-dir "$out/$c.$k" -- python3 "$app" "${args[@]}" \
      --timing "$out/$c.$k.json" > /dev/null 2>&1
  fi
  show "$c" "$k" "$out/$c.$k.json"
}
run_plain() { app_run plain "$@"; }
run_plain2() { app_run plain2 "$@"; }
run_off() { app_run off "$@" -- --no-origins; }
run_on() { app_run on "$@" --; }
run_base() { GRAPHSCOPE_INJECTION_LIBRARY=$GS_BENCH_BASELINE_INJECT app_run base "$@" --; }
# plain2, a second process without graphscope in every round (A/A), says
# how far each estimate below moves between two processes of the same code.
configs=(plain off on)
[ -n "${GS_BENCH_BASELINE_INJECT:-}" ] && configs+=(base)
configs+=(plain2)
if [ "${GS_BENCH_TOGETHER:-0}" = 1 ]; then
  echo "together: ${configs[*]} at once, each on its own pair of CPUs, $runs rounds"
  together "$runs" "${configs[@]}"
else
  echo "processes pinned to CPUs: ${cpus:-no}"
  in_turn "$runs" "${configs[@]}"
fi
python3 - "$out" "$runs" "${configs[*]}" <<'PY'
import json, statistics, sys
out, runs, present = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
labels = {"plain": "no graphscope", "off": "capture --exec --no-origins", "on": "capture --exec (origins)",
          "base": "origins, baseline library", "plain2": "no graphscope, again (A/A)"}
configs = [(c, labels[c]) for c in present]
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
# Each process against the round's process without graphscope (run in turn,
# the one just before it; together, the one beside it), by the median of its
# captures after the first. The A/A line is what two processes of the same
# code differ by this way.
if "plain2" in present:
    for c, label in configs[1:]:
        r = [statistics.median(per[c][k][1:]) / statistics.median(per["plain"][k][1:]) for k in range(runs)]
        print("%-28s against no graphscope in its round: median ratio %.3fx (%.3f-%.3f); rounds %s" %
              (label, statistics.median(r), min(r), max(r), " ".join("%.3f" % x for x in r)))
PY
rm -rf "$out"
