#!/usr/bin/env bash
# Issue 17's "the application's own time per replay unchanged", for a server
# that idles between requests: bench/serving_startup.py with --pause 3
# --later 2 (its start-up, a 3 s pause, its replays again, then two graphs of
# new batch sizes), these ways, RUNS rounds in turn through bench/compare.py
# (every process pinned as bench/pin.sh says):
#   plain    no graphscope                                   (the anchor)
#   capture  graphscope capture --exec                       (lets go of CUPTI by
#            itself 2 s into the pause, where nothing is lost, and takes it
#            back when the later graphs' captures begin)
#   stay     graphscope capture --exec --stay-attached       (attached all along)
#   rest     graphscope capture --exec --let-go-after 1      (lets go after 1 s)
#   plain2   no graphscope again: the harness's A/A control
# The harness prints the table of each graph's replay time after the pause
# (bs1, bs50, the big graph): medians, spreads, ratios to plain with the A/A
# beside them. Then each process's replay times, and the graphs each
# graphscope process dumped (each must have all of them, the later two
# too; exit 1 otherwise).
#   bench/replays_after_idle.sh GRAPHSCOPE [RUNS] [-- program args]
# GS_BENCH_DRY_RUN=1: print what would run, run nothing.
set -euo pipefail
gs=$1; runs=${2:-3}
shift 2 || shift $#
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)
app=$here/serving_startup.py
source "$here/pin.sh"
batches=50 prev=
for a in "$@"; do [ "$prev" = --batches ] && batches=$a; prev=$a; done
q() { local s; s=$(printf '%q ' "$@"); printf '%s' "${s% }"; }
py="$(q python3 "$app" --pause 3 --later 2 "$@") --timing \"\$GS_RUN_DIR/timing.json\""
att() { printf '%s --out-dir "$GS_RUN_DIR/dump" -- %s' "$(q "$gs" capture --exec "$@")" "$py"; }
configs=("plain=$py" "capture=$(att)" "stay=$(att --stay-attached)" "rest=$(att --let-go-after 1)")
key=json:timing.json:replay_after_pause_us
harness=(python3 "$here/compare.py" --rounds "$runs" --cpus "${cpus:-}" --show '^serving|^after'
         --metric "bs1_us=$key.bs1" --metric "bs${batches}_us=$key.bs$batches" --metric "big_us=$key.big")
if [ "${GS_BENCH_DRY_RUN:-0}" = 1 ]; then exec "${harness[@]}" --dry-run "${configs[@]}"; fi
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
"${harness[@]}" --out "$out" --json "$out/compare.json" "${configs[@]}"
python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
cmp = json.load(open(out + "/compare.json"))
runs, arms = cmp["rounds"], cmp["arms"]
t = {c: [json.load(open(f"{out}/{c}.{k}/timing.json")) for k in range(1, runs + 1)] for c in arms}
keys = list(t["plain"][0]["replay_after_pause_us"])
print()
for c in arms:
    print(f"replays after the pause, {c}, each process: " +
          "; ".join(" ".join(f"{g} {r['replay_after_pause_us'][g]:.1f}" for g in keys) for r in t[c]))
want = t["plain"][0]["graphs"] + len(t["plain"][0]["later_graphs_s"])
missing = 0
for c in ("capture", "stay", "rest"):
    for k in range(1, runs + 1):
        for f in glob.glob(f"{out}/{c}.{k}/dump/pid-*/index.json"):
            x = json.load(open(f))
            n = len(x["graphs"])
            missing += n != want
            print(f"{c} {k}: {n} of {want} graphs dumped, let go {x.get('let_go_count', 0)}, "
                  f"taken back {x.get('taken_back_count', 0)}" + ("" if n == want else "  MISSING GRAPHS"))
sys.exit(1 if missing else 0)
PY
