#!/usr/bin/env bash
# What CUPTI's callbacks alone cost a capturing application: the capture +
# instantiate time of transformers' Llama (tests/gpu/torch/origins_app.py,
# as bench/origins_overhead.sh) under bench/bare_cupti_inject.cc in the
# modes that enable more and more callbacks, each doing nothing: none,
# subscribe (the exec-created callback), created (+ node created), nodes
# (+ node cloned, node destroy starting: what origins enable), launches
# (+ the driver's kernel launches). RUNS processes of each, interleaved,
# in one call on the GPU machine; then one more process in `launches` mode
# prints how many callbacks of each kind came. Processes are pinned as
# origins_overhead.sh pins them, and the fast end of all captures (after
# each process's first) is compared too, for the whole capture and for the
# forward as captured, where the node callbacks come (the host's speed
# changes for seconds at a time: BENCHMARKS.md, 2026-11-26).
#   bench/cupti_delivery.sh BARE_INJECT_LIB [RUNS] [CAPTURES] [LAYERS]
# GS_BENCH_MODES: the modes to run (default all; plain is always first).
set -euo pipefail
lib=$1; runs=${2:-3}; captures=${3:-10}; layers=${4:-8}
app=$(cd "$(dirname "$0")/.." && pwd)/tests/gpu/torch/origins_app.py
out=$(mktemp -d)
args=(llama --layers "$layers" --captures "$captures")
modes=(plain ${GS_BENCH_MODES:-none subscribe created nodes launches})
source "$(dirname "$0")/pin.sh"
echo "processes pinned to CPUs: ${cpus:-no}"
for ((k = 1; k <= runs; ++k)); do
  for m in "${modes[@]}"; do
    if [ "$m" = plain ]; then
      "${pin[@]}" python3 "$app" "${args[@]}" --timing "$out/$m.$k.json" > /dev/null
    else
      CUDA_INJECTION64_PATH=$lib GS_BARE_MODE=$m "${pin[@]}" python3 "$app" "${args[@]}" --timing "$out/$m.$k.json" > /dev/null
    fi
  done
done
CUDA_INJECTION64_PATH=$lib GS_BARE_MODE=launches GS_BARE_COUNT=1 python3 "$app" "${args[@]}" 2>&1 >/dev/null | grep "^bare:"
python3 - "$out" "$runs" "${modes[@]}" <<'PY'
import json, statistics, sys
out, runs, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
per = {m: [[t * 1e3 for t in json.load(open("%s/%s.%d.json" % (out, m, k)))["capture_instantiate_s"]]
           for k in range(1, runs + 1)] for m in modes}
base = statistics.median([t for p in per["plain"] for t in p])
for m in modes:
    v = [t for p in per[m] for t in p]
    print("%-10s median %6.2f ms over %d captures; ratio %.3fx; per-process medians %s" %
          (m, statistics.median(v), len(v), statistics.median(v) / base,
           " ".join("%.2f" % statistics.median(p) for p in per[m])))
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
fwd = {m: [ph[1] * 1e3 for k in range(1, runs + 1)
           for ph in json.load(open("%s/%s.%d.json" % (out, m, k)))["phases_s"][1:]] for m in modes}
pooled = {m: [t for p in per[m] for t in p[1:]] for m in modes}
for m in modes:
    print("%-10s pooled: 10th percentile %6.2f ms (%.3fx), 25th %6.2f ms (%.3fx); forward 10th %5.2f ms (%.3fx)" %
          (m, pct(pooled[m], .1), pct(pooled[m], .1) / pct(pooled["plain"], .1), pct(pooled[m], .25),
           pct(pooled[m], .25) / pct(pooled["plain"], .25), pct(fwd[m], .1), pct(fwd[m], .1) / pct(fwd["plain"], .1)))
PY
rm -rf "$out"
