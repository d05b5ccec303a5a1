"""Checks one run directory of issue 46's programs (tests/gpu/why.sh,
tests/gpu/device_why.sh) against what the program knows it did, from the
run's ledger.json (graphscope.ledger/1). Prints one line, "ok KIND: ..." or
"FAIL KIND: ...", and exits 1 on a failure.

    why_check.py stale_native DIR [refused]   samples/apps/stale_input free: the input freed in
                                              drop_input and handed out again in reuse_memory, found at
                                              replay 4 (refused: --liveness=error refused it)
    why_check.py stale_torch DIR COUNTS [refused]
                                              stale_input_app.py --mode bug: static_x freed at its free
                                              line, allocated at its alloc line, found at replay 4
    why_check.py none DIR                     a correct program: liveness checked, no finding
    why_check.py update_fail DIR              exec_update fail: two refused updates, topology and node type
    why_check.py update_ok DIR                exec_update ok: versions whose kernel arguments changed, no-op
                                              updates counted, no refused update
"""
import json
import sys


def processes(d):
    with open(d + "/ledger.json") as f:
        return json.load(f)["processes"]


def findings(ps):
    out = []
    for p in ps:
        out += (p.get("liveness") or {}).get("findings", [])
    return out


def liveness_checked(ps):
    return any(p.get("liveness") for p in ps)


def main():
    kind, d = sys.argv[1], sys.argv[2]
    ps = processes(d)
    fs = findings(ps)
    problems = []
    said = ""
    if kind in ("stale_native", "stale_torch"):
        refused = sys.argv[-1] == "refused"
        if not fs:
            problems.append("no liveness finding")
        else:
            f = fs[0]
            said = "replay %d of exec graph %d %s memory freed at %s (%s, argument %d; allocated at %s; reused at %s)" % (
                f["first_replay"], f["exec_graph_id"], f["uses"], f["freed_at"], f["node_text"], f["arg"],
                f["allocated_at"], f["reused_at"])
            if f["first_replay"] != 4:
                problems.append("first replay %d, not 4 (the first after the free)" % f["first_replay"])
            if kind == "stale_native":
                if f["source"] != "driver":
                    problems.append("source %s, not driver" % f["source"])
                if "drop_input" not in f["freed_at"]:
                    problems.append("freed at %r, not drop_input" % f["freed_at"])
                if "make_input" not in f["allocated_at"]:
                    problems.append("allocated at %r, not make_input" % f["allocated_at"])
                if f["arg"] != 0 or "scale" not in f["node_text"]:
                    problems.append("node %r argument %d, not scale's argument 0" % (f["node_text"], f["arg"]))
            else:
                with open(sys.argv[3]) as c:
                    counts = json.load(c)
                base = counts["file"].rsplit("/", 1)[-1]
                want_free = "%s:%d" % (base, counts["free_line"])
                want_alloc = "%s:%d" % (base, counts["alloc_line"])
                if f["source"] != "torch":
                    problems.append("source %s, not torch" % f["source"])
                if want_free not in f["freed_at"]:
                    problems.append("freed at %r, not %s" % (f["freed_at"], want_free))
                if want_alloc not in f["allocated_at"]:
                    problems.append("allocated at %r, not %s" % (f["allocated_at"], want_alloc))
            if refused and not f["refused"]:
                problems.append("no launch refused under --liveness=error")
            if not refused and f["refused"]:
                problems.append("%d launches refused under report" % f["refused"])
    elif kind == "none":
        if not liveness_checked(ps):
            problems.append("liveness not checked")
        if fs:
            problems.append("%d findings on a correct program: first %r" % (len(fs), fs[0]))
        watched = sum((p.get("liveness") or {}).get("watched", 0) for p in ps)
        said = "%d addresses watched, no finding" % watched
    elif kind == "update_fail":
        us = [u for p in ps for u in p.get("update_failures", [])]
        results = sorted({u["result"] for u in us})
        said = "; ".join("%s %s %s at %r, offered %r" % (u["call"], u["error"], u["result"], u["from_node_text"],
                                                       u["node_text"]) for u in us)
        for want in ("CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED", "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED"):
            if want not in results:
                problems.append("no refused update with %s (have %s)" % (want, results))
    elif kind == "update_ok":
        ups = [u for p in ps for u in p.get("updates", [])]
        unchanged = sum(x["calls"] for p in ps for x in p.get("unchanged_updates", []))
        refused = [u for p in ps for u in p.get("update_failures", [])]
        arg_changes = [c for u in ups for c in u["changes"] if c["field"].startswith("argument")]
        grid = [c for u in ups for c in u["changes"] if c["field"] == "grid"]
        said = "%d versions, %d argument changes, %d grid changes, %d no-op update calls" % (
            len(ups), len(arg_changes), len(grid), unchanged)
        if not arg_changes:
            problems.append("no version with a changed kernel argument")
        if not grid:
            problems.append("no version with a changed grid")
        if unchanged < 10:
            problems.append("%d no-op update calls counted, fewer than the program's 10 setters" % unchanged)
        if refused:
            problems.append("%d refused updates" % len(refused))
    else:
        print("why_check: unknown kind %s" % kind)
        return 2
    if problems:
        print("FAIL %s %s: %s%s" % (kind, d, "; ".join(problems), (" (" + said + ")") if said else ""))
        return 1
    print("ok %s: %s" % (kind, said))
    return 0


if __name__ == "__main__":
    sys.exit(main())
