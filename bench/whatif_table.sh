#!/usr/bin/env bash
# The what-if model against live runs (issue 14), offline: the traces kept
# in bench/data/whatif (recorded on the H100 by tests/gpu/device_ranks.sh
# whatif; device.txt says which, when) are analysed by this build's
# `graphscope profile --graph --trace`, at 8 and at 1 hardware connections.
# Prints the BENCHMARKS.md table: per graph the measured makespan (median
# over replays) and the model's predictions as measured (each node's own
# delay) and fitted alone (the fitted latency and dispatch for every node),
# then the c8 run's model against the c1 measurement and back, and the
# prediction with zero dependency latency. Sample graphs are the recorded
# captures of tests/data/profiles (the same sample code).
#   bench/whatif_table.sh [GRAPHSCOPE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gs=${1:-$root/build/apps/graphscope}
data=$root/bench/data/whatif
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
graph_of() {  # graph_of NAME C
  case $1 in
    four_branch|llama8) echo "$data/$1.c$2.graph.json" ;;
    mixed.run*) echo "$root/tests/data/profiles/mixed.c8.graph.json" ;;
    *) echo "$root/tests/data/profiles/$1.c8.graph.json" ;;
  esac
}
echo "| graph | c8 measured | c8 as measured | c8 fitted alone | c1 measured | c1 as measured | c1 fitted alone | c1 from the c8 run | c8 from the c1 run | c8 zero latency |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for name in chain copies cublas_gemm forkjoin memalloc mixed mixed.run2 mixed.run3 pdl two_graphs.forward two_graphs.backward wide four_branch llama8; do
  for c in 8 1; do
    xz -dc "$data/$name.c$c.trace.json.xz" > "$tmp/t.json"
    "$gs" profile --graph "$(graph_of "$name" "$c")" --trace "$tmp/t.json" --json -o "$tmp/$name.c$c.json"
  done
  python3 - "$name" "$tmp/$name.c8.json" "$tmp/$name.c1.json" <<'PY'
import json, sys
name, a, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
def get(r):
    w = r["what_if"]
    return r["summary"]["makespan_us"], w["as_measured_us"], w["fitted_us"], w["zero_latency_us"]
m8, a8, f8, z8 = get(a)
m1, a1, f1, z1 = get(b)
def pc(x, y):
    t = "%+.1f%%" % (100 * (x - y) / y)
    return "0.0%" if t in ("+0.0%", "-0.0%") else t
print(f"| {name} | {m8:.1f} | {a8:.1f} ({pc(a8, m8)}) | {f8:.1f} ({pc(f8, m8)}) | {m1:.1f} | {a1:.1f} ({pc(a1, m1)}) | "
      f"{f1:.1f} ({pc(f1, m1)}) | {pc(a8, m1)} | {pc(a1, m8)} | {z8:.1f} |")
PY
done
# NVIDIA's conjugateGradientCudaGraphs under `profile --exec` (one run, the
# default connections; alloc and free nodes without records): the recorded
# profile's graph and trace, analysed again.
cg=$root/tests/data/attach/cg/pid-964
"$gs" profile --graph "$cg/graph-2.json" --trace "$cg/trace-2.json" --json -o "$tmp/cg.json"
python3 - "$tmp/cg.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w, m = r["what_if"], r["summary"]["makespan_us"]
def pc(x, y):
    t = "%+.1f%%" % (100 * (x - y) / y)
    return "0.0%" if t in ("+0.0%", "-0.0%") else t
a, f, z = w["as_measured_us"], w["fitted_us"], w["zero_latency_us"]
print(f"| conjugateGradientCudaGraphs (H200, one run) | {m:.1f} | {a:.1f} ({pc(a, m)}) | {f:.1f} ({pc(f, m)}) | - | - | - | - | - | {z:.1f} |")
PY
