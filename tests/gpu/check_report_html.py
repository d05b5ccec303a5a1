#!/usr/bin/env python3
"""Checks an HTML page graphscope wrote live (profile --html): one
self-contained file whose data holds every graph with a profile whose
account adds up to its makespan; prints one line per graph.
  check_report_html.py PAGE [--run]   (--run: an --exec directory's page)"""
import json
import re
import sys

page = open(sys.argv[1], encoding="utf-8").read()
assert page.count("<script") == 2 and page.count("</script>") == 2, "scripts"
m = re.search(r'<script type="application/json" id="gs-data">(.*?)</script>', page, re.S)
d = json.loads(m.group(1))
if "--run" in sys.argv:
    assert d.get("run"), "no run index"
    print("run: %d processes, exit code %d" % (len(d["run"]["processes"]), d["run"]["exit_code"]))
bad = 0
for g in d["graphs"]:
    p = g["profile"]
    if p is None:
        print("%s: %d nodes, no profile (%s)" % (g["label"], g["nodes"], g["profile_note"]))
        continue
    parts = sum(x["ns"] for x in p["account"]["parts"])
    ok = parts == p["account"]["makespan_ns"] and len(p["start"]) == g["nodes"] and bool(g["svg"])
    bad += not ok
    if not g["svg"]:
        print("  " + g["svg_note"])
    print("%s %s: %d nodes, %d replays, makespan %.1f us, account %d ns = %d ns, %d fake, %d timeline records" % (
        "ok" if ok else "FAIL", g["label"], g["nodes"], p["replays"], p["makespan_us"], parts,
        p["account"]["makespan_ns"], p["fake"], len(p["timeline"].get("items", [])) // 4))
sys.exit(1 if bad or not d["graphs"] else 0)
