#!/usr/bin/env bash
# Issue 17's start-up target: a serving-like PyTorch program
# (bench/serving_startup.py: 50 Llama decode graphs, batch sizes 50..1, and
# one graph of at least 3,000 nodes) run these ways, RUNS rounds in turn
# through bench/compare.py, in one call on the GPU machine (every process
# pinned as bench/pin.sh says):
#   plain    no graphscope                        (anchor of capture)
#   capture  graphscope capture --exec (origins)  target <= 1.10x plain
#   cupti    bare CUPTI activity tracing          (anchor of profile;
#            bench/bare_cupti_inject.cc through CUDA_INJECTION64_PATH)
#   profile  graphscope profile --exec            target <= 1.10x cupti
#   limit    graphscope capture --exec --max-graphs (the program's number of
#            graphs): graphscope lets go of CUPTI once it has them all, so
#            the replays after start-up show what that gives back
#   base     capture --exec with the injection library in
#            GS_BENCH_BASELINE_INJECT, when set (another build: a change
#            side by side with the code before it)
#   plain2   no graphscope again: the harness's A/A control, added to every
#            call (the anchor run twice a round; of the first configuration
#            where GS_BENCH_CONFIGS leaves plain out)
# GS_BENCH_CONFIGS (a list of the names above and below, in turn) runs those
# alone; these diagnostics run only so:
#   inline   capture --exec with GRAPHSCOPE_WALK_AT_DESTROY=0
#   noorig   capture --exec --no-origins
#   noliveness  capture --exec --liveness=off (what input liveness costs: capture against it)
#   eager    no graphscope, CUDA_MODULE_LOADING=EAGER
#   nodes    the bare injection library's GS_BARE_MODE=nodes (a subscriber
#            whose three node callbacks do nothing)
# The harness prints each process's line and the table of its total capture
# + instantiate time and of its replay times (bs1, bs50, the big graph):
# medians, spreads, ratios (profile against cupti) with the A/A beside them.
# A last process under capture --exec with GRAPHSCOPE_DEBUG_TIMES=1 says
# where graphscope's time on the application's threads went. Then:
# - the fast end: each graph's fastest capture over a configuration's
#   processes, summed (a process runs fast or up to 1.6x slower by the
#   host's moment; this takes every graph from a fast moment);
# - the same ratios against each process's own speed: its time over its
#   yardstick's and its warm-ups' (serving_startup.py). In four calls of
#   2026-11-27 (H100 and H200) the A/A over the warm-ups read 0.97-1.03x at
#   the median, over the CPU yardstick up to 1.19x: the warm-ups are the
#   better yardstick where only one side traces (tracing changes them:
#   profile's ran 0.91-0.96x of bare CUPTI's);
# - the capturing thread's CPU time, its waits, and the process's CPU time
#   in the captures, against the anchor's (milliseconds, medians);
# - the number of graphs and nodes graphscope dumped (from the last round).
#   bench/serving_startup.sh GRAPHSCOPE BARE_CUPTI_INJECT.so [RUNS] [-- program args]
# GS_BENCH_DRY_RUN=1: print what would run, run nothing.
set -euo pipefail
gs=$1; bare=$2; runs=${3:-3}
shift 3 || shift $#
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)
app=$here/serving_startup.py
source "$here/pin.sh"
batches=50 prev=
for a in "$@"; do [ "$prev" = --batches ] && batches=$a; prev=$a; done
graphs=$((batches + 1))
q() { local s; s=$(printf '%q ' "$@"); printf '%s' "${s% }"; }
py="$(q python3 "$app" "$@") --timing \"\$GS_RUN_DIR/timing.json\""
# att PREFIX: graphscope's command line PREFIX (quoted) around the program,
# dumping into the run's directory.
att() { printf '%s --out-dir "$GS_RUN_DIR/dump" -- %s' "$1" "$py"; }
declare -A cmd=(
  [plain]=$py
  [capture]=$(att "$(q "$gs" capture --exec)")
  [cupti]="$(q env CUDA_INJECTION64_PATH="$bare") $py"
  [profile]=$(att "$(q "$gs" profile --exec) -o \"\$GS_RUN_DIR/profile.txt\"")
  [limit]=$(att "$(q "$gs" capture --exec --max-graphs "$graphs")")
  [base]=$(att "$(q env GRAPHSCOPE_INJECTION_LIBRARY="${GS_BENCH_BASELINE_INJECT:-}" "$gs" capture --exec)")
  [inline]=$(att "$(q env GRAPHSCOPE_WALK_AT_DESTROY=0 "$gs" capture --exec)")
  [noorig]=$(att "$(q "$gs" capture --exec --no-origins)")
  [noliveness]=$(att "$(q "$gs" capture --exec --liveness=off)")
  [eager]="$(q env CUDA_MODULE_LOADING=EAGER) $py"
  [nodes]="$(q env GS_BARE_MODE=nodes CUDA_INJECTION64_PATH="$bare") $py"
)
if [ -n "${GS_BENCH_CONFIGS:-}" ]; then
  read -r -a names <<< "$GS_BENCH_CONFIGS"
else
  names=(plain capture cupti profile limit)
  [ -n "${GS_BENCH_BASELINE_INJECT:-}" ] && names+=(base)
fi
configs=() vs=()
for c in "${names[@]}"; do
  [ "$c" = plain2 ] && continue  # the harness adds the A/A itself
  [ -n "${cmd[$c]:-}" ] || { echo "serving_startup: unknown configuration $c" >&2; exit 2; }
  [ "$c" = base ] && [ -z "${GS_BENCH_BASELINE_INJECT:-}" ] && { echo "serving_startup: base needs GS_BENCH_BASELINE_INJECT" >&2; exit 2; }
  configs+=("$c=${cmd[$c]}")
done
anchor=plain; [[ " ${names[*]} " == *" plain "* ]] || anchor=${configs[0]%%=*}
[[ " ${names[*]} " == *" profile "* && " ${names[*]} " == *" cupti "* ]] && vs=(--vs profile=cupti)
harness=(python3 "$here/compare.py" --rounds "$runs" --cpus "${cpus:-}" --anchor "$anchor" "${vs[@]}" --show '^serving'
         --metric "capture_ms*1000=json:timing.json:capture_instantiate_s"
         --metric "bs1_us=json:timing.json:replay_us.bs1" --metric "bs${batches}_us=json:timing.json:replay_us.bs$batches"
         --metric "big_us=json:timing.json:replay_us.big")
if [ "${GS_BENCH_DRY_RUN:-0}" = 1 ]; then exec "${harness[@]}" --dry-run "${configs[@]}"; fi
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
"${harness[@]}" --out "$out" --json "$out/compare.json" "${configs[@]}"
echo
GRAPHSCOPE_DEBUG_TIMES=1 "${pin[@]}" "$gs" capture --exec --out-dir "$out/times" -- python3 "$app" "$@" 2>&1 |
  grep -E "^serving|calls|walk:|stack reads|reads through" | sed "s/^/times: /"
python3 - "$out" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
cmp = json.load(open(out + "/compare.json"))
runs, present, anchors, aa = cmp["rounds"], cmp["arms"], cmp["against"], cmp["aa"]
order = [(c, anchors[c]) for c in present]
res = {c: [json.load(open("%s/%s.%d/timing.json" % (out, c, k))) for k in range(1, runs + 1)] for c in present}
print()
# The fast end: each graph's fastest capture over the processes of a
# configuration, summed. The A/A line says how far it moves between
# processes of one code.
def fast_end(v):
    n = min(len(r["per_graph_s"]) for r in v)
    return (sum(min(r["per_graph_s"][i] for r in v) for i in range(n)) + min(r["big_graph_s"] for r in v)) * 1e3
fe = {c: fast_end(v) for c, v in res.items()}
for c, anchor in order:
    print("%-8s fast end: %7.1f ms, %.3fx %s" % (c, fe[c], fe[c] / fe[anchor], anchor))
# The same against each process's own speed: its capture + instantiate
# time over its yardstick's (serving_startup.py: small CPU ops timed before
# each capture, which no callback of graphscope's touches) and over its
# eager warm-ups'. Where the host's speed is a process's for its whole life,
# these leave it out; the A/A line and the spreads say whether they did.
# The yardstick's own ratio says whether graphscope touched it.
def norm(r, k):
    return r["capture_instantiate_s"] / sum(r[k])
for k, what in (("yardstick_s", "yardstick"), ("warm_s", "warm-ups")):
    if any(k not in r for v in res.values() for r in v):
        break
    nm = {c: statistics.median(norm(r, k) for r in v) for c, v in res.items()}
    for c, anchor in order:
        raw = [r["capture_instantiate_s"] for r in res[c]]
        n = [norm(r, k) for r in res[c]]
        own = statistics.median(sum(r[k]) for r in res[c]) / statistics.median(sum(r[k]) for r in res[anchor])
        line = "%-8s over its %s: median %.2f, %.3fx %s; spread max/min %.2f (raw %.2f); %s itself %.3fx" % (
            c, what, nm[c], nm[c] / nm[anchor], anchor, max(n) / min(n), max(raw) / min(raw), what, own)
        if c != anchor:
            rr = [norm(res[c][j], k) / norm(res[anchor][j], k) for j in range(runs)]
            line += "; in its round %.3fx (%.3f-%.3f)" % (statistics.median(rr), min(rr), max(rr))
        print(line)
# Where the capturing thread's time went: its own CPU time, and the rest
# of its wall-clock time (waiting: for the GPU, a lock, another thread, a
# CPU); and the whole process's CPU time in the captures (every thread's).
# CPU time does not count a wait, so a cost that is a wait shows only in
# the second column.
if all("capture_thread_cpu_s" in r for v in res.values() for r in v):
    def m(c, f):
        return statistics.median(f(r) for r in res[c]) * 1e3
    for c, anchor in order:
        cols = []
        for what, f in (("thread CPU", lambda r: r["capture_thread_cpu_s"]),
                        ("waited", lambda r: r["capture_instantiate_s"] - r["capture_thread_cpu_s"]),
                        ("process CPU", lambda r: r["capture_process_cpu_s"])):
            v, a = m(c, f), m(anchor, f)
            # (a wait of next to nothing makes no ratio)
            cols.append("%s %.1f ms (%+.1f%s)" % (what, v, v - a, "" if what == "waited" else ", %.3fx" % (v / a)))
        line = "%-8s capture time: %s" % (c, ", ".join(cols))
        if c != anchor:
            rr = [res[c][j]["capture_thread_cpu_s"] / res[anchor][j]["capture_thread_cpu_s"] for j in range(runs)]
            line += "; thread CPU in its round %.3fx (%.3f-%.3f)" % (statistics.median(rr), min(rr), max(rr))
        print(line)
for i in sorted(glob.glob("%s/capture.%d/dump/pid-*/index.json" % (out, runs))):
    x = json.load(open(i))
    nodes = [g["nodes"] for g in x["graphs"]]
    print("capture run %d dumped %d graphs, %d to %d nodes (%d in all), complete %s" %
          (runs, len(nodes), min(nodes or [0]), max(nodes or [0]), sum(nodes), x["complete"]))
PY
