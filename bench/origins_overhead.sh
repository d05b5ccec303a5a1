#!/usr/bin/env bash
# What origins cost: the capture + instantiate time of transformers' Llama
# (8 layers, from a config; tests/gpu/torch/origins_app.py times the
# `with torch.cuda.graph(...)` block, which instantiates when it ends) with
# no graphscope (the anchor), under `graphscope capture --exec --no-origins`
# and under `graphscope capture --exec` (origins on); RUNS times each,
# interleaved, in one call on the GPU machine. Prints every run, then the
# medians, min-max, and the ratios to the anchor.
#   bench/origins_overhead.sh GRAPHSCOPE [RUNS] [LAYERS]
set -euo pipefail
gs=$1; runs=${2:-7}; layers=${3:-8}
app=$(cd "$(dirname "$0")/.." && pwd)/tests/gpu/torch/origins_app.py
out=$(mktemp -d)
show() { python3 -c "import json,sys; print('%s run %s: %.1f ms' % (sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))['capture_instantiate_s'] * 1e3))" "$@"; }
for ((k = 1; k <= runs; ++k)); do
  python3 "$app" llama --layers "$layers" --timing "$out/plain.$k.json" > /dev/null
  show plain "$k" "$out/plain.$k.json"
  "$gs" capture --exec --no-origins --out-dir "$out/off" -- python3 "$app" llama --layers "$layers" \
    --timing "$out/off.$k.json" > /dev/null 2>&1
  show off "$k" "$out/off.$k.json"
  "$gs" capture --exec --out-dir "$out/on" -- python3 "$app" llama --layers "$layers" \
    --timing "$out/on.$k.json" > /dev/null 2>&1
  show on "$k" "$out/on.$k.json"
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
t = {c: [json.load(open("%s/%s.%d.json" % (out, c, k)))["capture_instantiate_s"] * 1e3 for k in range(1, runs + 1)]
     for c in ("plain", "off", "on")}
for c, v in t.items():
    print("%-6s runs (ms): %s" % (c, " ".join("%.1f" % x for x in v)))
base = statistics.median(t["plain"])
for c, label in (("plain", "no graphscope"), ("off", "capture --exec --no-origins"), ("on", "capture --exec (origins)")):
    m = statistics.median(t[c])
    print("%-30s median %7.1f ms  min %7.1f  max %7.1f  ratio %.2fx (min-max %.2f-%.2fx)" %
          (label, m, min(t[c]), max(t[c]), m / base, min(t[c]) / base, max(t[c]) / base))
PY
rm -rf "$out"
