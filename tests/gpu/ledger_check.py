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
model after the captures, and the fallback's call sites are the program's
two eager calls of the model (launch sites). native: the launches of every graph add up to
LAUNCHES. Prints "ok ..." and exits 0, or the differences and exits 1.
"""
import json
import os
import sys


def fail(msgs):
    for m in msgs:
        print("FAIL " + m)
    sys.exit(1)


def program_line(marker):
    """The line of serving_app.py that holds marker (its eager model calls)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "torch", "serving_app.py")) as f:
        for n, text in enumerate(f, 1):
            if marker in text:
                return n
    raise SystemExit("FAIL serving_app.py has no line with %r" % marker)


def check_sites(p, fb, counts):
    """With launch sites: the fallback names the program's two eager calls of
    the model (run_eager's, and main's check against eager), each with at
    least one launch a model run after the captures, and no more than 64."""
    bad = []
    work = p.get("work") or {}
    if "sites" not in work:
        return ["no launch sites read (work.sites absent)"]
    calls = {x["call"]: x for x in fb.get("from", [])}
    want = {"serving_app.py:%d in run_eager" % program_line("return model(x)"): counts["eager_steps_total"],
            "serving_app.py:%d in main" % program_line("(y - model(x))"): counts["checks"]}
    for call, runs in want.items():
        x = calls.get(call)
        if not x:
            bad.append("fallback from %s missing (has %s)" % (call, sorted(calls)))
        elif not runs <= x["launches_after_captures"] <= 64 * runs:
            bad.append("fallback from %s: %d launches after the captures for %d model runs"
                       % (call, x["launches_after_captures"], runs))
    fam_sites = [x for x in work["sites"] if x.get("family") == 0]
    if not fam_sites:
        bad.append("no eager site tied to the family")
    return bad


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
        bad += check_sites(p, fb, counts)
    if bad:
        fail(bad)
    print("ok serving: %d buckets, launches as replayed (%s), bucket %d never replayed%s"
          % (len(graphs), ", ".join(str(g.get("launches")) for g in ordered), counts["bucket_never_used"],
             ", fallback runs %d as the program counted" % counts["eager_model_runs_after_capture"] if eager else ""))


if __name__ == "__main__":
    main()
