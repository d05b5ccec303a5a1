"""Checks a run's ledger (graphscope.ledger/1, OUT/ledger.json) against what
the program says it did (gpu.ledger, tests/gpu/ledger.sh):

    ledger_check.py serving LEDGER.json COUNTS.json [--eager]
    ledger_check.py native LEDGER.json LAUNCHES

serving (tests/gpu/torch/serving_app.py): one family of six buckets at one
capture line; each bucket's launches are the program's replays of it (by
batch size: the buckets were captured largest first, so in exec-graph-id
order 32, 16, 8, 4, 2, 1); bucket 8 never replayed, with its capture time;
every graph with capture and instantiate times; with --eager (GPU work
recorded), the fallback estimate equals the program's eager runs of the
model after the captures. native: the launches of every graph add up to
LAUNCHES. Prints "ok ..." and exits 0, or the differences and exits 1.
"""
import json
import sys


def fail(msgs):
    for m in msgs:
        print("FAIL " + m)
    sys.exit(1)


def main():
    kind, ledger = sys.argv[1], json.load(open(sys.argv[2]))
    procs = [p for p in ledger["processes"] if p["graphs"]]
    bad = []
    if len(procs) != 1:
        fail(["%d processes with graphs, expected 1" % len(procs)])
    p = procs[0]
    if not p.get("launches_counted"):
        bad.append("launches not counted")
    graphs = p["graphs"]
    if kind == "native":
        want = int(sys.argv[3])
        got = sum(g.get("launches", 0) for g in graphs)
        if got != want:
            bad.append("launches %d, the program made %d" % (got, want))
        if bad:
            fail(bad)
        print("ok native: %d launches over %d graphs" % (got, len(graphs)))
        return
    counts = json.load(open(sys.argv[3]))
    eager = "--eager" in sys.argv[4:]
    buckets = sorted((int(b) for b in counts["buckets_captured"]), reverse=True)
    if len(graphs) != len(buckets):
        bad.append("%d graphs, the program captured %d buckets" % (len(graphs), len(buckets)))
    fams = p["families"]
    if len(fams) != 1 or len(fams[0]["graphs"]) != len(buckets):
        bad.append("families %s, expected one of %d" % ([len(f["graphs"]) for f in fams], len(buckets)))
    ordered = sorted(graphs, key=lambda g: g["exec_graph_id"])
    for b, g in zip(buckets, ordered):
        want = counts["replays"][str(b)]
        if g.get("launches") != want:
            bad.append("bucket %d (exec graph %d): %s launches, the program replayed it %d times"
                       % (b, g["exec_graph_id"], g.get("launches"), want))
        if not g.get("capture_ms") or not g.get("instantiate_ms"):
            bad.append("exec graph %d has no capture or instantiate time" % g["exec_graph_id"])
        if (g.get("launches") == 0) == g.get("replayed", True):
            bad.append("exec graph %d: replayed %s with %s launches" % (g["exec_graph_id"], g.get("replayed"), g.get("launches")))
    never = [ordered[i]["exec_graph_id"] for i in fams[0].get("never_replayed", [])] if fams else []
    want_never = [ordered[buckets.index(counts["bucket_never_used"])]["exec_graph_id"]]
    if never != want_never:
        bad.append("never replayed %s, expected %s (bucket %d)" % (never, want_never, counts["bucket_never_used"]))
    if eager:
        fb = (fams[0].get("fallback") or {}) if fams else {}
        want = counts["eager_model_runs_after_capture"]
        if fb.get("runs") != want:
            bad.append("fallback runs %s, the program ran the model eagerly %d times after the captures"
                       % (fb.get("runs"), want))
        if not p.get("work") or p["work"].get("graph_us", 0) <= 0:
            bad.append("no GPU time in graphs recorded")
    if bad:
        fail(bad)
    print("ok serving: %d buckets, launches as replayed (%s), bucket %d never replayed%s"
          % (len(graphs), ", ".join(str(g.get("launches")) for g in ordered), counts["bucket_never_used"],
             ", fallback runs %d as the program counted" % counts["eager_model_runs_after_capture"] if eager else ""))


if __name__ == "__main__":
    main()
