#!/usr/bin/env bash
# Profiled replay against bare CUPTI tracing, side by side on the GPU machine.
# First the measurement that decides (target <= 1.05x): bare and graphscope
# rounds alternating in one process (bench_replay paired), the median of the
# rounds' ratios. Then, for comparison, the three ways in alternating
# processes, medians of their medians (the anchor drifts between processes).
#   bench/replay_overhead.sh BENCH_REPLAY [NODES] [REPLAYS] [RUNS] [ROUNDS]
set -euo pipefail
b=$1 nodes=${2:-10000} replays=${3:-20} runs=${4:-3} rounds=${5:-30}
"$b" paired "$nodes" "$replays" "$rounds"
log=$(mktemp)
for i in $(seq "$runs"); do
  for mode in plain bare graphscope; do "$b" "$mode" "$nodes" "$replays" 3 | tee -a "$log"; done
done
python3 - "$log" <<'PY'
import re, statistics, sys
m = {}
for line in open(sys.argv[1]):
    mode, med = line.split()[0], float(re.search(r"median ([0-9.]+)", line).group(1))
    m.setdefault(mode, []).append(med)
med = {k: statistics.median(v) for k, v in m.items()}
print("medians (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in med.items()))
print(f"graphscope / bare CUPTI: {med['graphscope'] / med['bare']:.3f}x (target <= 1.05)")
# The anchor drifts between processes: the ratio of each round's neighbours
# (bare and graphscope run one after the other) says more than the medians.
pairs = sorted(g / b for g, b in zip(m["graphscope"], m["bare"]))
print(f"per-round ratios: median {statistics.median(pairs):.3f}x, min {pairs[0]:.3f}x, max {pairs[-1]:.3f}x "
      f"over {len(pairs)} rounds")
PY
