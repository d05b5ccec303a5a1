#!/usr/bin/env bash
# What origins cost, measured inside each process: every process captures
# 2 x CAPTURES graphs of transformers' Llama (tests/gpu/torch/origins_app.py),
# graphscope attached with --max-graphs CAPTURES. After the CAPTURES-th graph
# graphscope lets go of CUPTI (unsubscribe and finalize, on its writer thread;
# the app sleeps a second meanwhile), so the process's second half captures
# as if unattached. A process's ratio is the median capture + instantiate
# time of its first half over that of its second (the first capture of each
# half left out). Processes without graphscope run the same two halves: their
# ratio says how much the halves differ by themselves.
#
# Why: on the GPU hosts a process runs either fast or up to 1.6x slower in
# every phase, with or without graphscope, and neither ASLR nor Python's hash
# seed decides which (BENCHMARKS.md, 2026-11-26). Comparing processes
# (bench/origins_overhead.sh) measures that as much as graphscope; the idea
# was that two halves of one process share its speed. They do not: on the
# H200 host at 23:00 UTC on 2026-11-26 (5 processes each) the halves of
# processes without graphscope differed by 0.65-1.01x, so the host's speed
# changes within a process too. origins_overhead.sh pools the captures
# instead; this script stays for checking that on another host.
#   bench/origins_paired.sh GRAPHSCOPE [RUNS] [CAPTURES] [LAYERS]
# GS_BENCH_BASELINE_INJECT: another build's injection library, interleaved
# as a fourth configuration. GS_BENCH_CPUS: a taskset list (default 2,3
# where there are at least 4 CPUs).
set -euo pipefail
gs=$1; runs=${2:-4}; captures=${3:-10}; layers=${4:-8}
app=$(cd "$(dirname "$0")/.." && pwd)/tests/gpu/torch/origins_app.py
out=$(mktemp -d)
source "$(dirname "$0")/pin.sh"
echo "processes pinned to CPUs: ${cpus:-no}; $runs processes per configuration, $captures + $captures captures each"
args=(llama --layers "$layers" --captures $((2 * captures)) --pause-after "$captures")
attached() {  # NAME [ENV...]: graphscope attached, letting go after CAPTURES graphs
  local name=$1; shift
  env "$@" "${pin[@]}" "$gs" capture --exec --max-graphs "$captures" "${extra[@]}" --out-dir "$out/$name" -- \
    python3 "$app" "${args[@]}" --timing "$out/$name.json" > /dev/null 2> "$out/$name.err"
  # It must have let go, or the second half is not unattached.
  python3 -c 'import glob, json, sys
sys.exit(not any(json.load(open(f)).get("let_go", "").startswith("GRAPHSCOPE_MAX_GRAPHS")
                 for f in glob.glob(sys.argv[1] + "/*/index.json")))' "$out/$name" ||
    { echo "origins_paired: $name did not let go of CUPTI" >&2; cat "$out/$name.err" >&2; exit 1; }
}
for ((k = 1; k <= runs; ++k)); do
  "${pin[@]}" python3 "$app" "${args[@]}" --timing "$out/plain.$k.json" > /dev/null
  extra=(--no-origins); attached "off.$k"
  extra=(); attached "on.$k"
  if [ -n "${GS_BENCH_BASELINE_INJECT:-}" ]; then
    extra=(); attached "base.$k" GRAPHSCOPE_INJECTION_LIBRARY="$GS_BENCH_BASELINE_INJECT"
  fi
done
python3 - "$out" "$runs" "$captures" "${GS_BENCH_BASELINE_INJECT:-}" <<'PY'
import json, statistics, sys
out, runs, c, baseline = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
configs = [("plain", "no graphscope (both halves)"), ("off", "capture --exec --no-origins"),
           ("on", "capture --exec (origins)")]
if baseline:
    configs.append(("base", "origins, baseline library"))
ratios = {}
for key, label in configs:
    rows = []
    for k in range(1, runs + 1):
        t = [x * 1e3 for x in json.load(open("%s/%s.%d.json" % (out, key, k)))["capture_instantiate_s"]]
        first, second = statistics.median(t[1:c]), statistics.median(t[c + 1:])
        rows.append((first, second, first / second))
    ratios[key] = [r[2] for r in rows]
    print("%-30s %s" % (label, "  ".join("%.2f/%.2f ms %.2fx" % r for r in rows)))
control = statistics.median(ratios["plain"])
for key, label in configs:
    m = statistics.median(ratios[key])
    print("%-30s median ratio %.3fx (%.3f-%.3f); over the control %.3fx" %
          (label, m, min(ratios[key]), max(ratios[key]), m / control))
PY
rm -rf "$out"
