#!/usr/bin/env bash
# cli.ranks: `graphscope ranks` on multi-rank run directories made from the
# recorded single-process --exec output of tests/data/attach/profile (a
# profiled run): its process directory copied as rank-0 and rank-1, a rank
# written into each index, the run index written as `--exec` writes it. Then
# a variant whose rank 1 graph has one extra collective node, and hostile
# ones. No GPU is needed.
#   ranks_cli.sh GRAPHSCOPE DATA_DIR WORK_DIR
set -uo pipefail
gs=$1 data=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
status=0
fail() { echo "FAIL $*"; status=1; }
expect() {  # expect CODE NAME ARGS...: runs graphscope, checks the exit code
  local want=$1 name=$2; shift 2
  "$gs" "$@" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "$name: exit $rc, expected $want: $(cat "$work/$name.err")"
}

# make_run DIR [extra]: rank-0 and rank-1 from the recorded process; with
# "extra", rank 1's graph gets one more node, an NCCL all-reduce after the
# last one.
make_run() {
  python3 - "$data/attach/profile" "$1" "${2:-}" <<'PY'
import json, os, shutil, sys
rec, out, variant = sys.argv[1], sys.argv[2], sys.argv[3]
run = json.load(open(os.path.join(rec, "index.json")))
src = run["processes"][0]
procs = []
for rank in (0, 1):
    d = "rank-%d" % rank
    shutil.copytree(os.path.join(rec, src["dir"]), os.path.join(out, d))
    index = json.load(open(os.path.join(out, d, "index.json")))
    index["pid"] = 787 + rank
    index["rank"] = {"rank": rank, "local_rank": rank, "world_size": 2, "source": "RANK"}
    index["device"]["ordinal"] = rank
    if rank == 1 and variant == "extra":
        path = os.path.join(out, d, index["graphs"][0]["file"])
        g = json.load(open(path))
        nodes = g["nodes"]
        last = nodes[-1]
        new = dict(last)
        new["index"] = len(nodes)
        new["node_id"] = last["node_id"] + 1
        new["tools_id"] = last["tools_id"] + 1
        new["kernel_name"] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
        new.pop("kernel_name_demangled", None)
        new.pop("origin", None)
        new["dependencies"] = [last["index"]]
        new["dependents"] = []
        last["dependents"] = last.get("dependents", []) + [new["index"]]
        nodes.append(new)
        json.dump(g, open(path, "w"), indent=1)
        index["graphs"][0]["nodes"] += 1
        index["graphs"][0]["nodes_with_bodies"] += 1
    json.dump(index, open(os.path.join(out, d, "index.json"), "w"), indent=1)
    p = dict(index, dir=d)
    p.pop("graphscope_version", None)
    procs.append(p)
run["processes"] = procs
json.dump(run, open(os.path.join(out, "index.json"), "w"), indent=1)
PY
}

# Two ranks with the same graph: exit 0, the header names both.
make_run "$work/same" || fail "could not make the run directory"
expect 0 same ranks "$work/same"
grep -q "^ranks: rank 0 (pid 787, GPU 0); rank 1 (pid 788, GPU 1)" "$work/same.out" || fail "same: no header line"
grep -q "^graph #0: all 2 ranks agree (6 nodes, 0 collectives)" "$work/same.out" || fail "same: no agreement line"
grep -q "^  makespan" "$work/same.out" || fail "same: no profiles side by side"
expect 0 same_json ranks "$work/same" --json -o "$work/same.json"
python3 - "$work/same.json" <<'PY' || fail "same: the JSON does not say so"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "graphscope.ranks/1" and r["same"] is True, r
assert [x["rank"] for x in r["ranks"]] == [0, 1]
assert r["graphs"][0]["ranks"][1]["profile"]["launches"] == 30
PY
# The merged trace: a process per rank, named, on one clock.
expect 0 same_trace ranks "$work/same" --trace "$work/merged.json"
python3 - "$work/merged.json" "$data/attach/profile/pid-787/trace-2.json" <<'PY' || fail "the merged trace is wrong"
import json, sys
m = json.load(open(sys.argv[1]))
one = json.load(open(sys.argv[2]))
names = {e["pid"]: e["args"]["name"] for e in m["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"}
assert names == {0: "rank 0 (pid 787, GPU 0)", 1: "rank 1 (pid 788, GPU 1)"}, names
x = [e for e in m["traceEvents"] if e.get("ph") == "X"]
per = [len([e for e in x if e["pid"] == r]) for r in (0, 1)]
kernels = len([e for e in one["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"])
assert per == [kernels, kernels], (per, kernels)
# The same recording twice: the same times, on the common clock.
assert sorted(e["ts"] for e in x if e["pid"] == 0) == sorted(e["ts"] for e in x if e["pid"] == 1)
assert m["baseTimeNanoseconds"] == one["graphscope"]["time_base_ns"]
PY

# Rank 1 with one extra collective node: exit 1, naming rank 1 and the node.
make_run "$work/extra" extra || fail "could not make the variant"
expect 1 extra ranks "$work/extra"
grep "rank 1 differs from rank 0: +1 node 6 ncclDevKernel_AllReduce_Sum_f32_RING_LL" "$work/extra.out" |
  grep -q "(collectives 1 vs 0)" || fail "extra: rank 1's node not named: $(cat "$work/extra.out")"
expect 1 extra_json ranks "$work/extra" --json
grep -q '"same": false' "$work/extra_json.out" || fail "extra: JSON says same"

# Bad input: one line on stderr, exit 3, no output file.
bad() {  # bad NAME ARGS...
  local name=$1; shift
  expect 3 "$name" ranks "$@" -o "$work/$name.written"
  [ "$(wc -l < "$work/$name.err")" -eq 1 ] || fail "$name: not one line: $(cat "$work/$name.err")"
  grep -q "^graphscope: " "$work/$name.err" || fail "$name: not a graphscope: line"
  [ -e "$work/$name.written" ] && fail "$name: an output was written"
}
bad missing_dir "$work/nowhere"
mkdir -p "$work/badindex"; echo '{"schema": "graphscope.attach-run/1", "command": ' > "$work/badindex/index.json"
bad bad_index "$work/badindex"
make_run "$work/nograph"; rm "$work/nograph/rank-1/graph-2.json"
bad missing_graph "$work/nograph"
make_run "$work/onerank"
python3 - "$work/onerank/index.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["processes"][1].pop("rank"); json.dump(r, open(sys.argv[1], "w"))
PY
bad one_rank "$work/onerank"
grep -q "1 ranked process" "$work/one_rank.err" || fail "one_rank: does not say why"
make_run "$work/escape"
python3 - "$work/escape/index.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["processes"][1]["dir"] = ".."; json.dump(r, open(sys.argv[1], "w"))
PY
bad escape "$work/escape"

# The one resolver of a run directory's names (lib/inspect/runs/run_dir.h):
# `report RUN_DIR` and `ranks RUN_DIR` refuse alike every name that leaves
# the run directory (.., an absolute name, a process dir of ../.., a
# symlink pointing out) and every name that is no regular file (a FIFO as a
# graph or as index.json): exit 3, one line naming the index entry, nothing
# written. Under timeout: a FIFO opened for reading would block forever.
# secret.json sits beside the run directories: a real graph, so that
# following a name to it would succeed.
cp "$data/attach/profile/pid-787/graph-2.json" "$work/secret.json"
edit() {  # edit DIR CODE [VALUE]: runs CODE on the run index r (v: VALUE), writes it back
  python3 - "$1/index.json" "$2" "${3:-}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v = sys.argv[3]
exec(sys.argv[2])
json.dump(r, open(sys.argv[1], "w"))
PY
}
refused() {  # refused NAME DIR TEXT: both commands exit 3 with one line holding TEXT
  local name=$1 dir=$2 text=$3 cmd out rc
  for cmd in report ranks; do
    out="$work/$name.$cmd.html"
    timeout 30 "$gs" "$cmd" "$dir" -o "$out" > "$work/$name.$cmd.out" 2> "$work/$name.$cmd.err"
    rc=$?
    [ "$rc" -eq 124 ] && fail "$name ($cmd): still running after 30 s (blocked?)"
    [ "$rc" -eq 3 ] || fail "$name ($cmd): exit $rc, expected 3: $(cat "$work/$name.$cmd.err")"
    [ "$(wc -l < "$work/$name.$cmd.err")" -eq 1 ] || fail "$name ($cmd): not one line: $(cat "$work/$name.$cmd.err")"
    grep -q "^graphscope: " "$work/$name.$cmd.err" || fail "$name ($cmd): not a graphscope: line"
    grep -qF -- "$text" "$work/$name.$cmd.err" || fail "$name ($cmd): does not say '$text': $(cat "$work/$name.$cmd.err")"
    [ -e "$out" ] && fail "$name ($cmd): an output was written"
  done
}
# The same run, untouched, makes a page: the refusals below are the names'.
timeout 60 "$gs" report "$work/same" -o "$work/same.html" 2> "$work/same_report.err" ||
  fail "same: report failed: $(cat "$work/same_report.err")"
[ -s "$work/same.html" ] || fail "same: report wrote no page"
make_run "$work/esc_dotdot"
edit "$work/esc_dotdot" 'r["processes"][0]["graphs"][0]["file"] = "../../secret.json"'
refused esc_dotdot "$work/esc_dotdot" \
  "esc_dotdot/index.json (processes[0].graphs[0].file: \"../../secret.json\" resolves outside the run directory)"
make_run "$work/esc_trace"
edit "$work/esc_trace" 'r["processes"][1]["graphs"][0]["trace"] = "../../secret.json"'
refused esc_trace "$work/esc_trace" '(processes[1].graphs[0].trace: "../../secret.json" resolves outside the run directory)'
make_run "$work/esc_absolute"
edit "$work/esc_absolute" 'r["processes"][0]["graphs"][0]["file"] = v' "$work/secret.json"
refused esc_absolute "$work/esc_absolute" "(processes[0].graphs[0].file: \"$work/secret.json\" is an absolute path"
make_run "$work/esc_dir"
edit "$work/esc_dir" 'r["processes"][1]["dir"] = "../.."'
refused esc_dir "$work/esc_dir" '(processes[1].dir: "../.." resolves outside the run directory)'
make_run "$work/esc_symlink"
rm "$work/esc_symlink/rank-0/graph-2.json"
ln -s ../../secret.json "$work/esc_symlink/rank-0/graph-2.json"
refused esc_symlink "$work/esc_symlink" '(processes[0].graphs[0].file: "graph-2.json" resolves outside the run directory)'
make_run "$work/fifo_graph"
rm "$work/fifo_graph/rank-1/graph-2.json"
mkfifo "$work/fifo_graph/rank-1/graph-2.json"
refused fifo_graph "$work/fifo_graph" '(processes[1].graphs[0].file: "graph-2.json" is a FIFO, not a regular file)'
make_run "$work/fifo_index"
rm "$work/fifo_index/index.json"
mkfifo "$work/fifo_index/index.json"
refused fifo_index "$work/fifo_index" "fifo_index/index.json (is a FIFO, not a regular file)"

# A trace is read once however many entries name it: the recorded profiled
# run with each rank's graph entry repeated 2,000 times (4,000 entries, each
# rank's trace named by 2,000). Before the trace cache every row read and
# parsed each rank's trace again; 60 s bounds it on any machine with the cache.
cp -R "$data/ranks/r_prof" "$work/many"
edit "$work/many" '
for p in r["processes"]:
    p["graphs"] = [dict(g) for g in p["graphs"] for _ in range(2000)]'
start=$(date +%s)
timeout 60 "$gs" ranks "$work/many" --json -o "$work/many.json" 2> "$work/many.err"
rc=$?
echo "ranks of 4,000 entries naming 2 traces: exit $rc in $(( $(date +%s) - start )) s"
if [ "$rc" -ne 0 ]; then
  fail "many: exit $rc$([ "$rc" -eq 124 ] && echo ', still running after 60 s'): $(cat "$work/many.err")"
else
  python3 - "$work/many.json" <<'PY' || fail "many: not every row has its waits"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["graphs"]) == 2000, len(r["graphs"])
for g in r["graphs"]:
    p = [x["profile"] for x in g["ranks"]]
    assert p[1]["arrived_last"] == 19 and p[0]["collective_wait_us"] > 1, p
PY
fi
# No trace to merge in a run that was not profiled.
make_run "$work/noprof"
python3 - "$work/noprof/index.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["processes"]:
    for g in p["graphs"]:
        for k in ("profile", "trace", "fake", "blocking", "makespan_us", "critical_path_us", "launches", "replays_analysed"):
            g.pop(k, None)
    p["profile"] = False
r["profile"] = False
json.dump(r, open(sys.argv[1], "w"))
PY
expect 3 noprof_trace ranks "$work/noprof" --trace "$work/noprof.trace.json"
[ -e "$work/noprof.trace.json" ] && fail "noprof: a trace was written"
[ -s "$work/noprof_trace.out" ] && fail "noprof: a report was written before the trace failed"

# --exec finds rank-R directories, lists ranked processes by rank and ends
# with the cross-rank verdict, its exit code still the application's. The
# "application" copies the two ranks in as the injection library would have
# written them (a build without the library skips this part).
app="cp -R '$work/extra/rank-0' '$work/extra/rank-1' \$GRAPHSCOPE_OUT/; exit 7"
"$gs" capture --exec --out-dir "$work/exec" -- sh -c "$app" > "$work/exec.out" 2> "$work/exec.err"
rc=$?
if [ "$rc" -eq 4 ] && grep -Eq "injection library|built without CUDA" "$work/exec.err"; then
  echo "skipped the --exec part: $(cat "$work/exec.err")"
else
  [ "$rc" -eq 7 ] || fail "exec: exit $rc, expected the application's 7: $(cat "$work/exec.err")"
  grep -q "^rank 0, pid 787 " "$work/exec.out" || fail "exec: rank 0 not listed first: $(cat "$work/exec.out")"
  grep -q "^graphscope: ranks: 1 graph differs across 2 ranks: see graphscope ranks " "$work/exec.err" ||
    fail "exec: no cross-rank line: $(cat "$work/exec.err")"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert [p['dir'] for p in r['processes']] == ['rank-0', 'rank-1'], r" \
    "$work/exec/index.json" || fail "exec: the run index does not list rank-0 and rank-1"
fi

# The runs recorded on two H100s (tests/data/ranks, torchrun with an NCCL
# all-reduce captured in each rank's graph): they agree; the variant whose
# rank 1 captured one more all-reduce is caught, naming the rank and node;
# the profiled run's ranks side by side, their waits at the all-reduce and
# one merged trace whose all-reduces end together on both ranks.
rec=$data/ranks
expect 0 rec_equal ranks "$rec/r_equal"
grep -q "^graph #0: all 2 ranks agree (11 nodes, 1 collective)$" "$work/rec_equal.out" || fail "rec_equal: $(cat "$work/rec_equal.out")"
grep -q "has no rank" "$work/rec_equal.out" && fail "rec_equal: the launcher (no rank, no graphs) is mentioned"
expect 1 rec_extra ranks "$rec/r_extra"
grep -q "rank 1 differs from rank 0: .*+1 node 10 ncclDevKernel_AllReduce_Sum_f32_RING_LL.*(collectives 2 vs 1)" "$work/rec_extra.out" ||
  fail "rec_extra: $(cat "$work/rec_extra.out")"
expect 0 rec_prof ranks "$rec/r_prof" --trace "$work/rec_prof.trace.json"
grep -q "^  waited at collectives " "$work/rec_prof.out" || fail "rec_prof: no waits: $(cat "$work/rec_prof.out")"
grep -q "^  arrived last  *0 of 19  *19 of 19$" "$work/rec_prof.out" || fail "rec_prof: arrivals: $(cat "$work/rec_prof.out")"
python3 - "$work/rec_prof.trace.json" <<'PY' || fail "rec_prof: the merged trace"
import json, sys
t = json.load(open(sys.argv[1]))
names = sorted(e["args"]["name"] for e in t["traceEvents"] if e.get("ph") == "M" and e.get("name") == "process_name")
assert names == ["rank 0 (pid 1314, GPU 0)", "rank 1 (pid 1315, GPU 1)"], names
per = {}
for e in t["traceEvents"]:
    if e.get("ph") == "X" and e["args"].get("collective") == "nccl":
        assert e["name"].startswith("ncclDevKernel_AllReduce_Sum_f32_RING_LL("), e["name"]
        per.setdefault(e["pid"], []).append(e["ts"] + e["dur"])
assert sorted(per) == [0, 1] and len(per[0]) == len(per[1]) == 19, {k: len(v) for k, v in per.items()}
# One clock: each all-reduce ends on both ranks within a microsecond.
worst = max(abs(a - b) for a, b in zip(sorted(per[0]), sorted(per[1])))
assert worst < 1.0, worst
PY
"$gs" ranks "$rec/r_prof" --json -o "$work/rec_prof.json" && python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
p = [x['profile'] for x in r['graphs'][0]['ranks']]
assert p[0]['collective_wait_us'] > 1 and p[1]['collective_wait_us'] == 0 and p[1]['arrived_last'] == 19, p
" "$work/rec_prof.json" || fail "rec_prof: the JSON waits"

[ $status -eq 0 ] && echo "ok: ranks agree, differ and refuse bad input as documented"
cat "$work/extra.out"
exit $status
