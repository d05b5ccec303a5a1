"""Compares graphscope's JSON of a DOT file with the graph API's truth.json.

    python3 compare_truth.py GRAPH.json TRUTH.json

Checks, recursively through child graphs and conditional bodies: local node
ids, node types, kernel names, launch geometry (where the JSON has it), and
the edge set. Prints one line per graph and exits 1 on any difference.
"""
import json
import sys


def compare(ours, truth, where, errors):
    want = {n["local_id"]: n for n in truth["nodes"]}
    got = {n["node_id"]: n for n in ours}
    if set(want) != set(got):
        errors.append(f"{where}: node ids {sorted(got)} != {sorted(want)}")
        return
    by_index = {n["index"]: n for n in ours}
    for nid, t in want.items():
        n = got[nid]
        if n["node_type"] != t["type"]:
            errors.append(f"{where} node {nid}: type {n['node_type']} != {t['type']}")
        if t["type"] == "kernel":
            if n["kernel_name"] != t["kernel_name"]:
                errors.append(f"{where} node {nid}: kernel {n['kernel_name']} != {t['kernel_name']}")
            k = n.get("kernel", {})
            for key, tkey in (("grid", "grid"), ("block", "block"), ("shared_mem_bytes", "shared")):
                if key in k and k[key] != t[tkey]:
                    errors.append(f"{where} node {nid}: {key} {k[key]} != {t[tkey]}")
        tb = [t["child"]] if "child" in t else [b["graph"] for b in t.get("bodies", [])]
        ob = n.get("bodies", [])
        if len(tb) != len(ob):
            errors.append(f"{where} node {nid}: {len(ob)} bodies != {len(tb)}")
        for i, (o, tt) in enumerate(zip(ob, tb)):
            compare(o["nodes"], tt, f"{where}/node{nid}.body{i}", errors)
    edges = {(by_index[d]["node_id"], n["node_id"]) for n in ours for d in n["dependencies"]}
    tedges = {(e["from"], e["to"]) for e in truth["edges"]}
    if edges != tedges:
        errors.append(f"{where}: edges {sorted(edges)} != {sorted(tedges)}")


def main():
    ours = json.load(open(sys.argv[1]))
    truth = json.load(open(sys.argv[2]))
    errors = []
    compare(ours["nodes"], truth["root"], truth["graph"], errors)
    for e in errors:
        print("MISMATCH", sys.argv[1], e)
    if not errors:
        print(f"ok {sys.argv[1]}: agrees with {sys.argv[2]}")
    sys.exit(1 if errors else 0)


main()
