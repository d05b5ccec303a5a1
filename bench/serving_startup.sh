#!/usr/bin/env bash
# Issue 17's start-up target: a serving-like PyTorch program
# (bench/serving_startup.py: 50 Llama decode graphs, batch sizes 50..1, and
# one graph of at least 3,000 nodes) run these ways, interleaved, RUNS times
# each, in one call on the GPU machine:
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
#   plain2   no graphscope again (A/A): how far each estimate moves between
#            two processes of the same code
# GS_BENCH_CONFIGS (a list of the names above and below, in turn) runs those
# alone; these diagnostics run only so:
#   inline   capture --exec with GRAPHSCOPE_WALK_AT_DESTROY=0
#   noorig   capture --exec --no-origins
#   eager    no graphscope, CUDA_MODULE_LOADING=EAGER
#   nodes    the bare injection library's GS_BARE_MODE=nodes (a subscriber
#            whose three node callbacks do nothing)
# A last process under capture --exec with GRAPHSCOPE_DEBUG_TIMES=1 says
# where graphscope's time on the application's threads went.
# Prints each process's total capture + instantiate time and replay times,
# then per configuration the median of the totals, min-max, and the ratios,
# the fast end, and each process against its anchor's of the same round;
# the capturing thread's CPU time and its waits, and the process's CPU
# time, against the anchor's (milliseconds, medians);
# and the number of graphs and nodes graphscope dumped (from the last run).
# The fast end sums each graph's fastest capture over a configuration's
# processes. Then the same ratios against each process's own speed (its
# time over its yardstick's and its warm-ups', serving_startup.py). In four
# calls of 2026-11-27 (H100 and H200) the A/A over the warm-ups read
# 0.97-1.03x at the median, over the CPU yardstick up to 1.19x: the
# warm-ups are the better yardstick where only one side traces (tracing
# changes them: profile's ran 0.91-0.96x of bare CUPTI's).
# With GS_BENCH_TOGETHER=1 a round's processes run at once, each on CPUs of
# its own (bench/together.sh), `limit` left out; replay times then say
# nothing (the processes share the GPU). On the H100 host of 2026-11-27
# 10:42 UTC the A/A read 0.90-0.95x by round, so processes run in turn by
# default.
#   bench/serving_startup.sh GRAPHSCOPE BARE_CUPTI_INJECT.so [RUNS] [-- program args]
set -euo pipefail
gs=$1; bare=$2; runs=${3:-3}
shift 3 || shift $#
[ "${1:-}" = "--" ] && shift
app=$(cd "$(dirname "$0")" && pwd)/serving_startup.py
out=$(mktemp -d)
# Every process on the same two CPUs (bench/pin.sh), one at a time; or,
# with GS_BENCH_TOGETHER=1, every configuration at once (bench/together.sh).
source "$(dirname "$0")/pin.sh"
source "$(dirname "$0")/together.sh"
batches=50 prev=
for a in "$@"; do [ "$prev" = --batches ] && batches=$a; prev=$a; done
graphs=$((batches + 1))
app_args=("$@")
serve() {  # CONFIG K CPUS [-- graphscope's command line...]: one process, its line
  local c=$1 k=$2 on=$3; shift 3
  if [ "${1:-}" != -- ]; then
    pinned "$on" python3 "$app" "${app_args[@]}" --timing "$out/$c.$k.json" | sed "s/^/$c $k: /"
    return
  fi
  shift
  pinned "$on" "$gs" "$@" --out-dir "$out/$c.$k" -- python3 "$app" "${app_args[@]}" --timing "$out/$c.$k.json" \
    2> "$out/$c.$k.err" | grep "^serving" | sed "s/^/$c $k: /" || { tail -5 "$out/$c.$k.err"; return 1; }
}
run_plain() { serve plain "$@"; }
run_plain2() { serve plain2 "$@"; }
run_capture() { serve capture "$@" -- capture --exec; }
run_cupti() { CUDA_INJECTION64_PATH=$bare serve cupti "$@"; }
run_profile() { serve profile "$@" -- profile --exec -o "$out/profile.$1.txt"; }
run_limit() { serve limit "$@" -- capture --exec --max-graphs "$graphs"; }
run_base() { GRAPHSCOPE_INJECTION_LIBRARY=$GS_BENCH_BASELINE_INJECT serve base "$@" -- capture --exec; }
# Diagnostics, run only when GS_BENCH_CONFIGS names them.
run_inline() { GRAPHSCOPE_WALK_AT_DESTROY=0 serve inline "$@" -- capture --exec; }
run_noorig() { serve noorig "$@" -- capture --exec --no-origins; }
run_eager() { CUDA_MODULE_LOADING=EAGER serve eager "$@"; }
run_nodes() { GS_BARE_MODE=nodes CUDA_INJECTION64_PATH=$bare serve nodes "$@"; }
# plain2: a second process without graphscope in every round (A/A).
configs=(plain capture cupti profile)
if [ -n "${GS_BENCH_CONFIGS:-}" ]; then
  read -r -a configs <<< "$GS_BENCH_CONFIGS"
  echo "processes pinned to CPUs: ${cpus:-no}"
  in_turn "$runs" "${configs[@]}"
elif [ "${GS_BENCH_TOGETHER:-0}" = 1 ]; then
  [ -n "${GS_BENCH_BASELINE_INJECT:-}" ] && configs+=(base)
  configs+=(plain2)
  echo "together: ${configs[*]} at once, each on its own pair of CPUs, $runs rounds"
  together "$runs" "${configs[@]}"
else
  configs+=(limit)
  [ -n "${GS_BENCH_BASELINE_INJECT:-}" ] && configs+=(base)
  configs+=(plain2)
  echo "processes pinned to CPUs: ${cpus:-no}"
  in_turn "$runs" "${configs[@]}"
fi
GRAPHSCOPE_DEBUG_TIMES=1 "${pin[@]}" "$gs" capture --exec --out-dir "$out/times" -- python3 "$app" "$@" 2>&1 |
  grep -E "^serving|calls|walk:|stack reads|reads through" | sed "s/^/times: /"
python3 - "$out" "$runs" "${configs[*]}" <<'PY'
import glob, json, statistics, sys
out, runs, present = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
anchors = {"plain": "plain", "plain2": "plain", "capture": "plain", "limit": "plain", "base": "plain",
           "inline": "plain", "noorig": "plain", "eager": "plain", "nodes": "plain", "cupti": "cupti", "profile": "cupti"}
# (an anchor left out of GS_BENCH_CONFIGS: the first configuration instead)
anchors = {c: a if a in present else present[0] for c, a in anchors.items()}
order = [(c, anchors[c]) for c in present]
res = {c: [json.load(open("%s/%s.%d.json" % (out, c, k))) for k in range(1, runs + 1)] for c, _ in order}
med = {c: statistics.median(r["capture_instantiate_s"] for r in v) * 1e3 for c, v in res.items()}
for c, anchor in order:
    tot = [r["capture_instantiate_s"] * 1e3 for r in res[c]]
    rep = {k: statistics.median(r["replay_us"][k] for r in res[c]) for k in res[c][0]["replay_us"]}
    ref = {k: statistics.median(r["replay_us"][k] for r in res[anchor]) for k in rep}
    print("%-8s capture+instantiate median %7.1f ms (%s), %.2fx %s; replay us (median of runs, ratio) %s" %
          (c, med[c], " ".join("%.1f" % t for t in tot), med[c] / med[anchor], anchor,
           " ".join("%s %.1f (%.2fx)" % (k, v, v / ref[k]) for k, v in rep.items())))
# The fast end: each graph's fastest capture over the processes of a
# configuration, summed (a process runs fast or up to 1.6x slower by the
# host's moment; this takes every graph from a fast moment). The A/A line
# (plain2, when run) says how far it moves between processes of one code.
def fast_end(v):
    n = min(len(r["per_graph_s"]) for r in v)
    return (sum(min(r["per_graph_s"][i] for r in v) for i in range(n)) + min(r["big_graph_s"] for r in v)) * 1e3
fe = {c: fast_end(v) for c, v in res.items()}
for c, anchor in order:
    print("%-8s fast end: %7.1f ms, %.3fx %s" % (c, fe[c], fe[c] / fe[anchor], anchor))
# Each process against its anchor's process of the same round (run in turn,
# the one just before it; together, the one beside it). The A/A line
# (plain2) is what two processes of the same code differ by this way.
if "plain2" in present:
    for c, anchor in order:
        if c == anchor:
            continue
        r = [res[c][k]["capture_instantiate_s"] / res[anchor][k]["capture_instantiate_s"] for k in range(runs)]
        print("%-8s against %s in its round: median ratio %.3fx (%.3f-%.3f); rounds %s" %
              (c, anchor, statistics.median(r), min(r), max(r), " ".join("%.3f" % x for x in r)))
# The same against each process's own speed: its capture + instantiate
# time over its yardstick's (serving_startup.py: small CPU ops timed before
# each capture, which no callback of graphscope's touches) and over its
# eager warm-ups'. Where the host's speed is a process's for its whole life,
# these leave it out; the A/A line (plain2) and the spreads say whether
# they did. The yardstick's own ratio says whether graphscope touched it.
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
        if "plain2" in present and c != anchor:
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
        if "plain2" in present and c != anchor:
            rr = [res[c][j]["capture_thread_cpu_s"] / res[anchor][j]["capture_thread_cpu_s"] for j in range(runs)]
            line += "; thread CPU in its round %.3fx (%.3f-%.3f)" % (statistics.median(rr), min(rr), max(rr))
        print(line)
idx = sorted(glob.glob("%s/capture.%d/pid-*/index.json" % (out, runs)))
for i in idx:
    x = json.load(open(i))
    nodes = [g["nodes"] for g in x["graphs"]]
    print("capture run %d dumped %d graphs, %d to %d nodes (%d in all), complete %s" %
          (runs, len(nodes), min(nodes or [0]), max(nodes or [0]), sum(nodes), x["complete"]))
PY
rm -rf "$out"
