#!/usr/bin/env bash
# Issue 17's "the application's own time per replay unchanged", for a server
# that idles between requests: bench/serving_startup.py with --pause 3
# --later 2 (its start-up, a 3 s pause, its replays again, then two graphs of
# new batch sizes), four ways interleaved, RUNS times each:
#   plain    no graphscope                                   (the anchor)
#   capture  graphscope capture --exec                       (lets go of CUPTI by
#            itself 2 s into the pause, where nothing is lost, and takes it
#            back when the later graphs' captures begin)
#   stay     graphscope capture --exec --stay-attached       (attached all along)
#   rest     graphscope capture --exec --let-go-after 1      (lets go after 1 s)
# Prints each process's replay times after the pause; per configuration the
# median of each graph's replay time and its ratio to plain; and the graphs
# each graphscope process dumped (each must have all of them, the later two
# too).
#   bench/replays_after_idle.sh GRAPHSCOPE [RUNS] [-- program args]
set -euo pipefail
gs=$1; runs=${2:-3}
shift 2 || shift $#
[ "${1:-}" = "--" ] && shift
app=$(cd "$(dirname "$0")" && pwd)/serving_startup.py
out=$(mktemp -d)
source "$(dirname "$0")/pin.sh"
echo "processes pinned to CPUs: ${cpus:-no}"
args=(--pause 3 --later 2 "$@")
attached() {  # NAME K graphscope-options...
  local c=$1 k=$2; shift 2
  "${pin[@]}" "$gs" capture --exec "$@" --out-dir "$out/$c.$k" -- python3 "$app" "${args[@]}" \
    --timing "$out/$c.$k.json" 2> "$out/$c.$k.err" | sed "s/^/$c $k: /" || { cat "$out/$c.$k.err"; exit 1; }
}
for ((k = 1; k <= runs; ++k)); do
  "${pin[@]}" python3 "$app" "${args[@]}" --timing "$out/plain.$k.json" | sed "s/^/plain $k: /"
  attached capture "$k"
  attached stay "$k" --stay-attached
  attached rest "$k" --let-go-after 1
done
python3 - "$out" "$runs" <<'PY'
import glob, json, os, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
configs = ("plain", "capture", "stay", "rest")
t = {c: [json.load(open(f"{out}/{c}.{k}.json")) for k in range(1, runs + 1)] for c in configs}
keys = list(t["plain"][0]["replay_after_pause_us"])
med = {c: {g: statistics.median(r["replay_after_pause_us"][g] for r in v) for g in keys} for c, v in t.items()}
for c in configs:
    print(f"replays after the pause, {c}, each process: " +
          "; ".join(" ".join(f"{g} {r['replay_after_pause_us'][g]:.1f}" for g in keys) for r in t[c]))
for c in configs:
    ratios = ", ".join(f"{g} {med[c][g]:.1f} us ({med[c][g] / med['plain'][g]:.3f}x)" for g in keys)
    print(f"replays after the pause, {c}: {ratios}")
want = t["plain"][0]["graphs"] + len(t["plain"][0]["later_graphs_s"])
for c in configs[1:]:
    for k in range(1, runs + 1):
        for f in glob.glob(f"{out}/{c}.{k}/pid-*/index.json"):
            x = json.load(open(f))
            n = len(x["graphs"])
            print(f"{c} {k}: {n} of {want} graphs dumped, let go {x.get('let_go_count', 0)}, "
                  f"taken back {x.get('taken_back_count', 0)}" + ("" if n == want else "  MISSING GRAPHS"))
PY
