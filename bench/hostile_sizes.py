#!/usr/bin/env python3
"""Inputs under 10 MB shaped to make graphscope work hard, and how long each
command takes on them (issue: no input under 10 MB may make any command take
more than 10 s on the 2-core development machine).

    python3 bench/hostile_sizes.py GRAPHSCOPE WORK_DIR [--limit SECONDS]

Writes the inputs into WORK_DIR (made once, kept), runs every command on
each with a timeout of 2 x limit, and prints one line per run: input, its
size, the command, the exit code and the wall time. Exits 1 when any run
took longer than the limit (default 10 s).
"""
import json
import os
import random
import subprocess
import sys
import time


def graph(n, edges, name="kernel_%d"):
    """A graphscope-readable PyTorch-style dict of n kernel nodes."""
    deps = [[] for _ in range(n)]
    dts = [[] for _ in range(n)]
    for a, b in edges:
        deps[b].append(a)
        dts[a].append(b)
    return {"nodes": [{"index": i, "node_type": "kernel", "tools_id": (1 << 32) | i, "graph_id": 1, "node_id": i,
                       "kernel_name": name % (i % 13), "event_ptr": 0, "dependencies": deps[i],
                       "dependents": dts[i]} for i in range(n)]}


def make_inputs(work):
    rnd = random.Random(1)
    shapes = {
        # Every pair of nodes ordered: the layout's worst case.
        "dense200": (200, [(i, j) for i in range(200) for j in range(i + 1, 200)]),
        # As many edges as 10 MB holds: 1,000 nodes, every pair.
        "dense1000": (1000, [(i, j) for i in range(1000) for j in range(i + 1, 1000)]),
        "chain50k": (50000, [(i, i + 1) for i in range(49999)]),
        "fan50k": (50000, [(0, i) for i in range(1, 49999)] + [(i, 49999) for i in range(1, 49999)]),
        "random20k": (20000, sorted({tuple(sorted(rnd.sample(range(20000), 2))) for _ in range(100000)})),
        # Ten chains of identical layers: folding's favourite work.
        "layers": (40000, [(i, i + 1) for i in range(40000 - 1) if (i + 1) % 4000]),
    }
    paths = {}
    for name, (n, edges) in shapes.items():
        path = os.path.join(work, name + ".json")
        if not os.path.exists(path):
            with open(path, "w") as f:
                json.dump(graph(n, edges), f, separators=(",", ":"))
        paths[name] = path
    # Traces for chain50k's graph with every node's record, ids included:
    # one replay (one launch's correlation id), and the same records each
    # with a correlation id of its own (50,000 one-record "replays").
    for name, corr in (("chain50k.trace", lambda i: 1), ("scattered.trace", lambda i: i + 1)):
        trace = os.path.join(work, name + ".json")
        if not os.path.exists(trace):
            events = [{"ph": "X", "cat": "kernel", "name": "kernel_%d" % (i % 13), "pid": 0, "tid": 7,
                       "ts": 1000.0 + 2 * i, "dur": 1.5,
                       "args": {"device": 0, "stream": 7, "correlation": corr(i), "graph id": 1,
                                "graph node id": i}} for i in range(50000)]
            with open(trace, "w") as f:
                json.dump({"traceEvents": events}, f, separators=(",", ":"))
        paths["trace:" + name.split(".")[0]] = trace
    for p in paths.values():
        assert os.path.getsize(p) < 10 * 1000 * 1000, p
    return paths


def main():
    gs, work = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else 10.0
    os.makedirs(work, exist_ok=True)
    p = make_inputs(work)
    out = os.path.join(work, "out")
    runs = []
    for name in ("dense200", "dense1000", "chain50k", "fan50k", "random20k", "layers"):
        g = p[name]
        runs += [(name, ["dump", g]), (name, ["dump", g, "--json", "-o", out + ".json"]),
                 (name, ["dump", g, "--dot", "-o", out + ".dot"]), (name, ["dump", g, "--svg", "-o", out + ".svg"]),
                 (name, ["dump", g, "--svg", "--no-fold", "-o", out + ".svg"]),
                 (name, ["report", g, "-o", out + ".html"]), (name, ["check", g, "--max-depth", "1000000"]),
                 (name, ["diff", g, g])]
    for trace in ("chain50k", "scattered"):
        runs += [("chain50k+" + trace, ["profile", "--graph", p["chain50k"], "--trace", p["trace:" + trace], "-o", out + ".txt"]),
                 ("chain50k+" + trace, ["report", p["chain50k"], "--trace", p["trace:" + trace], "-o", out + ".html"])]
    slow = 0
    for name, args in runs:
        start = time.monotonic()
        try:
            rc = subprocess.run([gs] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                timeout=2 * limit).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        took = time.monotonic() - start
        size = os.path.getsize(p[name.split("+")[0]])
        slow += took > limit
        print("%-16s %6.2f MB  %-40s exit %-7s %6.2f s%s" % (name, size / 1e6, " ".join(
            a if not a.startswith(work) else os.path.basename(a) for a in args[:1] + args[2:]), rc, took,
            "  OVER" if took > limit else ""), flush=True)
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
