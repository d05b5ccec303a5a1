#!/usr/bin/env python3
"""Checks one output directory of tests/gpu/attach_native.sh.

    check_attach_native.py CASE OUT_DIR LOG

CASE is threads, update, update_profile, update_idle, fork, reset, reset_handoff,
kill, limit, idle, idle_static or idle_shared. Prints what it found; exits 1 with a line per problem."""
import collections
import glob
import json
import os
import sys

case, out, log = sys.argv[1:4]
problems = []


def bad(msg):
    problems.append(msg)


def load(path):
    with open(path) as f:
        return json.load(f)


pids = sorted(glob.glob(os.path.join(out, "pid-*")))
if len(pids) != 1:
    print(f"FAIL expected one process directory, found {len(pids)}: {pids}")
    sys.exit(1)
pdir = pids[0]
index = load(os.path.join(pdir, "index.json"))  # valid JSON in every case, SIGKILL too
graphs = index["graphs"]
for g in graphs:
    path = os.path.join(pdir, g["file"])
    if not os.path.exists(path):
        bad(f"the index lists {g['file']}, which does not exist")
    else:
        g["doc"] = load(path)
text = open(log).read()


def total_nodes(nodes):
    return sum(1 + sum(total_nodes(b["nodes"]) for b in n.get("bodies", [])) for n in nodes)


# Each entry's summary (made from the walk's answers, before its document
# was made off the application's thread) agrees with the document.
for g in graphs:
    if "doc" not in g:
        continue
    nodes = g["doc"]["nodes"]
    if g["nodes"] != len(nodes) or g["nodes_with_bodies"] != total_nodes(nodes):
        bad(f"{g['file']}: the index says {g['nodes']} nodes ({g['nodes_with_bodies']} with bodies), "
            f"the document has {len(nodes)} ({total_nodes(nodes)})")
    first = [n["kernel_name"] for n in nodes if n["node_type"] == "kernel"][:3]
    if len(g["first_kernels"]) != len(first) or not all(g["first_kernels"]):
        bad(f"{g['file']}: first kernels {g['first_kernels']} in the index, the document's are {first}")


def kernels(doc):
    return [n for n in doc["nodes"] if n["node_type"] == "kernel"]


def idle_app_ran(counts=None):
    """attach_stress idle's seven checks passed and it exited normally; with
    counts (its graphs' node counts), every graph was recorded whole: 201
    nodes, then a memset and 4 kernels, then thread t's memset and t+2
    kernels."""
    if counts is not None and (counts[:2] != [201, 5] or sorted(counts[2:]) != [3, 4, 5, 6]):
        bad(f"graphs {[(g['file'], g['nodes']) for g in graphs]}, expected 201 and 5 nodes, then 3, 4, 5 and 6")
    if not index["complete"]:
        bad("index not complete after a normal exit")
    checks = [l for l in text.splitlines() if l.startswith(("replays ", "second graph", "thread ")) and l.endswith("ok")]
    if len(checks) != 7:
        bad(f"the application's seven checks did not all pass ({len(checks)} did)")


if case == "threads":
    if len(graphs) != 20:
        bad(f"{len(graphs)} graphs dumped, expected 20 (4 threads x 5)")
    shapes = collections.Counter()
    for g in graphs:
        ks = kernels(g["doc"])
        grids = {tuple(k["kernel"]["grid"]) for k in ks}
        shapes[(len(ks), tuple(sorted(grids)))] += 1
    # Thread t: t+2 kernels, all of grid t+1: a mixed-up graph has another shape.
    want = {(t + 2, ((t + 1, 1, 1),)): 5 for t in range(4)}
    if dict(shapes) != want:
        bad(f"graph shapes {dict(shapes)}, expected {want}")
    ids = [g["exec_graph_id"] for g in graphs]
    if len(set(ids)) != len(ids):
        bad("an exec graph was dumped twice")
    if not index["complete"]:
        bad("index not complete after a normal exit")
    # Origins are on: every kernel carries the native function that launched
    # it, also while other threads capture and instantiate at once.
    bare = sum(1 for g in graphs for k in kernels(g["doc"]) if not k.get("origin"))
    if bare:
        bad(f"{bare} kernel nodes without an origin")
    print(f"threads: {len(graphs)} graphs, shapes {dict(shapes)}, every kernel with an origin")

elif case in ("update", "update_profile", "update_idle"):
    # Kernel arguments are recorded (issue 46): the last, argument-only
    # setter (mul 2 -> 3) is a version of its own.
    if len(graphs) != 4:
        bad(f"{len(graphs)} index entries, expected 4 versions of one exec graph")
    else:
        v1, v2, v3, v4 = graphs
        if len({g["exec_graph_id"] for g in graphs}) != 1:
            bad("the versions name different exec graphs")
        if [g.get("version", 1) for g in graphs] != [1, 2, 3, 4]:
            bad(f"versions {[g.get('version', 1) for g in graphs]}")
        if not (v1.get("superseded") and v2.get("superseded") and v3.get("superseded") and not v4.get("superseded")):
            bad("superseded marks wrong")
        if v2.get("updated_by") != ["cuGraphExecUpdate"]:
            bad(f"version 2 updated_by {v2.get('updated_by')}")
        if sorted(v3.get("updated_by", [])) != ["cuGraphExecKernelNodeSetParams", "cuGraphExecMemsetNodeSetParams"]:
            bad(f"version 3 updated_by {v3.get('updated_by')}")
        if v4.get("updated_by") != ["cuGraphExecKernelNodeSetParams"]:
            bad(f"version 4 updated_by {v4.get('updated_by')}")
        d1, d2, d3 = v1["doc"], v2["doc"], v3["doc"]
        a3 = [a[2] for a in kernels(d3)[0]["kernel"].get("args", [])] if kernels(d3) else []
        a4 = [a[2] for a in kernels(v4["doc"])[0]["kernel"].get("args", [])] if kernels(v4["doc"]) else []
        if len(a3) != 3 or len(a4) != 3 or a3[2] != "0x2" or a4[2] != "0x3" or a3[:2] != a4[:2]:
            bad(f"scale_kernel's arguments {a3} -> {a4}, expected only the multiplier 0x2 -> 0x3 to change")
        if {tuple(k["kernel"]["grid"]) for k in kernels(d1)} != {(1, 1, 1)}:
            bad("version 1 does not show grid 1")
        if {tuple(k["kernel"]["grid"]) for k in kernels(d2)} != {(4, 1, 1)}:
            bad("version 2 does not show cudaGraphExecUpdate's grid 4")
        if d2.get("exec_version", {}).get("version") != 2 or d3.get("exec_version", {}).get("version") != 3:
            bad("documents do not say their version")
        memset = [n for n in d3["nodes"] if n["node_type"] == "memset"]
        if not memset or memset[0]["memset"]["value"] != 10:
            bad("version 3 does not show the memset of 10")
        k3 = kernels(d3)
        names = d3.get("kernel_names", {})
        first = names.get(k3[0]["kernel_name"], k3[0]["kernel_name"]) if k3 else ""
        if "scale_kernel" not in first:
            bad(f"version 3's first kernel is {first}, expected scale_kernel")
        if [n.get("tools_id") for n in d1["nodes"]] != [n.get("tools_id") for n in d3["nodes"]] or \
           [n.get("tools_id") for n in d1["nodes"]] != [n.get("tools_id") for n in d2["nodes"]]:
            bad("node ids differ between versions (records carry the instantiated graph's)")
        if case == "update_profile":
            for g in graphs:
                if not g.get("profile"):
                    bad(f"version {g.get('version', 1)} not profiled: {g.get('profile_error')}")
                    continue
                p = load(os.path.join(pdir, g["profile"]))
                # Each version's replays join its own document: nothing unmatched.
                sm = p["summary"]
                if sm["unmatched_records"] or sm["nodes_without_records"] or p["replays"] < 1:
                    bad(f"version {g.get('version', 1)}: {p['replays']} replays, {sm['nodes_without_records']} nodes "
                        f"without records, {sm['unmatched_records']} records matching no node")
            report = open(out + ".txt").read() if os.path.exists(out + ".txt") else ""
            for v in (2, 3):
                if f"version {v} (" not in report:
                    bad(f"report.txt has no block for version {v}")
            lines = [l for l in report.splitlines() if l.startswith("records") or l.startswith("==")]
            print("\n".join(lines))
    if "updated (cuGraphExecUpdate): version 2" not in text:
        bad("stderr does not say the graph was updated")
    if case == "update_idle":
        # graphscope let go before each of the three changes (the process
        # idle 3 s, more than the default 2 s, every call through the shared
        # runtime) and took CUPTI back at each change's call: every version
        # recorded as without the pauses.
        if index.get("let_go_count") != 3 or index.get("taken_back_count") != 3:
            bad(f"let_go_count {index.get('let_go_count')}, taken_back_count {index.get('taken_back_count')}: "
                "expected 3, 3")
        for call in ("cudaGraphExecUpdate", "cudaGraphExecMemsetNodeSetParams", "cudaGraphExecKernelNodeSetParams"):
            if f"took CUPTI back ({call})" not in text:
                bad(f"graphscope did not say it took CUPTI back at {call}")
        if "let_go" in index or "stays_attached" in index:
            bad(f"let_go {index.get('let_go')!r}, stays_attached {index.get('stays_attached')!r} at the end")
    print(f"update: {[(g.get('version', 1), g.get('updated_by'), g.get('unchanged_updates', 0)) for g in graphs]}"
          + (f", let go {index.get('let_go_count')} times, taken back {index.get('taken_back_count')} times"
             if case == "update_idle" else ""))

elif case == "fork":
    if "child: exited 7, ok" not in text:
        bad("the child did not exit 7")
    if len(graphs) != 2 or not index["complete"]:
        bad(f"parent: {len(graphs)} graphs, complete {index['complete']}: expected 2, true")
    print(f"fork: parent {index['pid']}: {len(graphs)} graphs, complete {index['complete']}")

elif case in ("reset", "reset_handoff"):
    want = [3, 4] if case == "reset" else [3, 3, 4]
    if len(graphs) != len(want) or not index["complete"]:
        bad(f"{len(graphs)} graphs, complete {index['complete']}: expected {len(want)} (both sides of the reset), true")
    got = sorted(len(kernels(g["doc"])) for g in graphs if "doc" in g)
    if got != want:
        bad(f"kernels per graph {got}, expected {want}")
    print(f"reset: {len(graphs)} graphs, kernels {got}, errors {index.get('errors')}")

elif case == "kill":
    if index["complete"]:
        bad("a killed process's index says complete")
    # The second graph was dumped microseconds before the kill: its document
    # and index snapshot may still have been queued. Then the run index (made
    # by graphscope after the process died) must say so from the journal.
    run = load(os.path.join(out, "index.json"))
    unindexed = [u for p in run["processes"] for u in p.get("unindexed", [])]
    if len(graphs) + len(unindexed) != 2:
        bad(f"{len(graphs)} graphs listed and {len(unindexed)} said not in the index ({unindexed}): expected 2 in all")
    if unindexed and "not in its index" not in text:
        bad("the summary does not say which documents are not in the index")
    print(f"kill: complete {index['complete']}, {len(graphs)} graphs listed (files present and valid), "
          f"not in the index: {unindexed}")

elif case == "limit":
    if len(graphs) != 2:
        bad(f"{len(graphs)} graphs dumped, expected 2 (--max-graphs 2)")
    if "GRAPHSCOPE_MAX_GRAPHS (2)" not in index.get("let_go", ""):
        bad(f"let_go is {index.get('let_go')!r}")
    if not index["complete"]:
        bad("index not complete after a normal exit")
    print(f"limit: {len(graphs)} graphs, let_go {index.get('let_go')!r}")

elif case == "idle":
    # The 200-kernel graph dumped; graphscope let go during the pause, so the
    # graphs made after it are not recorded (a static CUDA runtime: nothing
    # says when they begin); the application's checks passed.
    if len(graphs) != 1 or graphs[0]["nodes"] != 201:
        bad(f"graphs {[(g['file'], g['nodes']) for g in graphs]}, expected one of 201 nodes")
    if not index.get("let_go", "").startswith("GRAPHSCOPE_LET_GO_AFTER (1 s) without a new graph"):
        bad(f"let_go is {index.get('let_go')!r}")
    idle_app_ran()
    print(f"idle: {len(graphs)} graph, let_go {index.get('let_go')!r}")

elif case == "idle_static":
    # The static CUDA runtime, no --let-go-after: its graphs are made
    # through calls the preload library does not see, so graphscope stays
    # attached through both pauses, records every graph and says why.
    counts = [g["nodes"] for g in graphs]
    idle_app_ran(counts)
    stays = index.get("stays_attached", "")
    if not stays.startswith("graphscope stays attached") or "instantiated through a call" not in stays:
        bad(f"stays_attached is {stays!r}")
    if index.get("let_go_count") or "let_go" in index:
        bad(f"let go unasked: {index.get('let_go_count')} times, {index.get('let_go')!r}")
    if stays and stays not in text:
        bad("the summary does not say why graphscope stayed attached")
    print(f"idle_static: {len(graphs)} graphs ({counts}), stays_attached {stays!r}")

elif case == "idle_shared":
    # The same on the shared CUDA runtime: graphscope let go during the
    # pause and took CUPTI back when the second graph's capture began, let go
    # again in the second pause and took CUPTI back when four threads began
    # their captures at once. Every graph is dumped whole.
    counts = [g["nodes"] for g in graphs]
    idle_app_ran(counts)
    for g in graphs[2:]:
        kernels = [n for n in g["doc"]["nodes"] if n.get("node_type") == "kernel"] if "doc" in g else []
        if "doc" in g and len(kernels) != g["nodes"] - 1:
            bad(f"{g['file']}: {len(kernels)} kernels of {g['nodes']} nodes (a thread's graph mixed up)")
    if index.get("let_go_count") != 2 or index.get("taken_back_count") != 2:
        bad(f"let_go_count {index.get('let_go_count')}, taken_back_count {index.get('taken_back_count')}: expected 2, 2")
    if "let_go" in index:
        bad(f"let_go still says {index['let_go']!r} after CUPTI was taken back")
    if "took CUPTI back (cudaStreamBeginCapture)" not in text:
        bad("graphscope did not say it took CUPTI back at cudaStreamBeginCapture")
    print(f"idle_shared: {len(graphs)} graphs ({counts}), let go {index.get('let_go_count')} times, taken back "
          f"{index.get('taken_back_count')} times")

else:
    bad(f"unknown case {case}")

for p in problems:
    print("FAIL", p)
sys.exit(1 if problems else 0)
