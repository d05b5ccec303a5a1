"""Compares two graphscope.graph/1 documents of the same CUDA graph: one
from `graphscope capture` (the walker), one from `graphscope dump` of the
cudaGraphDebugDotPrint file written for the same graph (--nvidia-dot).

    python3 compare_graphs.py CAPTURED.json FROM_DOT.json [--ignore-graph-ids]

--ignore-graph-ids: the two come from two runs of one program (graph ids are
process counters; local node ids and everything else must still agree).

Checks, recursively through child graphs and conditional bodies: graph ids,
local node ids, node types, kernel names, launch geometry where both have it,
memcpy/memset sizes, and the edge sets. One line per difference; exit 1 on any.
"""
import json
import sys


def by_id(nodes):
    return {n["node_id"]: n for n in nodes}


compare_ids = True


def compare(a, b, where, errors, a_gid=None, b_gid=None):
    if compare_ids and a_gid is not None and b_gid is not None and a_gid != b_gid:
        errors.append(f"{where}: graph id {a_gid} != {b_gid}")
    A, B = by_id(a), by_id(b)
    if set(A) != set(B):
        errors.append(f"{where}: node ids {sorted(A)} != {sorted(B)}")
        return
    ai = {n["index"]: n["node_id"] for n in a}
    bi = {n["index"]: n["node_id"] for n in b}
    for nid in sorted(A):
        x, y = A[nid], B[nid]
        if x["node_type"] != y["node_type"]:
            errors.append(f"{where} node {nid}: type {x['node_type']} != {y['node_type']}")
            continue
        if x["kernel_name"] != y["kernel_name"]:
            errors.append(f"{where} node {nid}: kernel {x['kernel_name']} != {y['kernel_name']}")
        kx, ky = x.get("kernel", {}), y.get("kernel", {})
        for k in ("grid", "block", "shared_mem_bytes"):
            if k in kx and k in ky and kx[k] != ky[k]:
                errors.append(f"{where} node {nid}: {k} {kx[k]} != {ky[k]}")
        for part, keys in (("memcpy", ("kind", "bytes")), ("memset", ("value", "bytes"))):
            if part in x and part in y:
                for k in keys:
                    if x[part].get(k) != y[part].get(k):
                        errors.append(f"{where} node {nid}: {part}.{k} {x[part].get(k)} != {y[part].get(k)}")
        xb, yb = x.get("bodies", []), y.get("bodies", [])
        if len(xb) != len(yb):
            errors.append(f"{where} node {nid}: {len(xb)} bodies != {len(yb)}")
        for i, (p, q) in enumerate(zip(xb, yb)):
            compare(p["nodes"], q["nodes"], f"{where}/n{nid}.body{i}", errors, p.get("graph_id"), q.get("graph_id"))
    ea = {(ai[d], ai[n["index"]]) for n in a for d in n["dependencies"]}
    eb = {(bi[d], bi[n["index"]]) for n in b for d in n["dependencies"]}
    if ea != eb:
        errors.append(f"{where}: edges differ: only captured {sorted(ea - eb)}, only in DOT {sorted(eb - ea)}")


def main():
    a = json.load(open(sys.argv[1]))
    b = json.load(open(sys.argv[2]))
    errors = []
    if "--ignore-graph-ids" in sys.argv[3:]:
        global compare_ids
        compare_ids = False
    compare(a["nodes"], b["nodes"], "root", errors, a.get("template_graph_id"), b.get("template_graph_id"))
    for e in errors:
        print("MISMATCH", sys.argv[1], e)
    if not errors:
        n = len(a["nodes"])
        print(f"ok {sys.argv[1]}: {n} root nodes agree with cudaGraphDebugDotPrint")
    sys.exit(1 if errors else 0)


main()
