#!/usr/bin/env python3
"""Writes hostile_names.json and hostile_names.c8.graph.json: the recorded
fork-join capture (../captures/forkjoin.json) and the fork-join graph that
../profiles/forkjoin.c8.trace.json was traced from, with their names replaced
by hostile ones, so that tests can check every output escapes names for its
medium.

  tests/data/derived/hostile_names.py

Only names change (the document's, the device's, the kernels', and an origin
added to every node); the structure, ids, geometry and timings are the
recording's, so the trace still joins. The names carry what a terminal, an
XML parser or Graphviz would interpret: ESC and BEL (a window-title
sequence), a C1 CSI, NUL, line feed, tab, DEL, U+FFFE and U+FFFF, XML
character references and Graphviz's backslash escapes. (A JSON document
cannot carry invalid UTF-8 or a lone surrogate: the reader refuses both, so
unit tests cover those.)
"""
import json
import os

here = os.path.dirname(os.path.abspath(__file__))

KERNELS = {
    "_Z7fj_loadPfPKfl": "fj_load\x1b]0;title_set_by_a_kernel_name\x07",
    "_Z8fj_scalePflf": "fj_scale\ufffe\uffff",
    "_Z9fj_squarePfl": "fj_square\x00after_a_NUL",
    "_Z7fj_joinPfPKfli": "fj_join\nnot_a_report_line\tafter_a_tab\x7f\x85&#xFFFF;&lt;b&gt;\\N",
}


def hostile(src, out):
    with open(os.path.join(here, src)) as f:
        doc = json.load(f)
    doc["name"] = "forkjoin\x1b[2J\x1b]0;owned\x07"
    doc["device"]["name"] = "NVIDIA H100 80GB HBM3\u009b31m"
    doc["kernel_names"] = {KERNELS[m]: KERNELS[m] + "(float*, long)" for m in doc["kernel_names"]}
    for n in doc["nodes"]:
        n["kernel_name"] = KERNELS[n["kernel_name"]]
        branch = "branches.%d\x1b[31m" % (n["index"] % 2)
        n["origin"] = {
            "module": branch,
            "modules": [{"name": "", "type": "ForkJoin\x07"}, {"name": branch, "type": "Branch\nNewline"}],
            "python": [{"file": "/tmp/\x1b]0;x\x07.py\n", "line": 7, "function": "forward\ufffe"}],
        }
    with open(os.path.join(here, out), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=True)
        f.write("\n")


hostile("../captures/forkjoin.json", "hostile_names.json")
hostile("../profiles/forkjoin.c8.graph.json", "hostile_names.c8.graph.json")
