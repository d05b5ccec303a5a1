"""Checks the origins of graphs graphscope recorded (tests/gpu/origins.sh).

    check_origins.py nvtx GRAPH.json           the nvtx_layers sample
    check_origins.py modules GRAPH.json MIN%   PyTorch module names
    check_origins.py python GRAPH.json...      some node has a Python frame
    check_origins.py op GRAPH.json             some node has an aten:: op
    check_origins.py any GRAPH.json...         every graph: some node has an origin
    check_origins.py none GRAPH.json           no node has an origin
    check_origins.py nogil GRAPH.json...       tests/gpu/torch/nogil_app.py's graphs, in order
Prints one line per check; exits 1 on a failed one.
"""
import json
import sys


def nodes(path):
    with open(path) as f:
        return json.load(f)["nodes"]


def main():
    what, paths = sys.argv[1], sys.argv[2:]
    if what == "nvtx":
        ns = [n for n in nodes(paths[0]) if n["node_type"] == "kernel"]
        bad = []
        for n in ns:
            o = n.get("origin", {})
            stack = [(r.get("domain", ""), r.get("message", ""), r.get("kind", "push")) for r in o.get("nvtx", [])]
            name = n["kernel_name"]
            want_forward = ("", "forward", "start") in stack
            layer = [m for d, m, k in stack if d == "nvtx_layers" and m.startswith("layer ")]
            inner = [m for d, m, k in stack if d == "" and m in ("attention", "mlp")]
            native = o.get("native", {}).get("function", "")
            ok = want_forward and "enqueue" in native and stack and stack[0] == ("", "forward", "start")
            if any(k in name for k in ("norm", "attn", "mlp")):
                ok = ok and len(layer) == 1 and len(inner) == 1
                if "attn" in name:
                    ok = ok and inner == ["attention"]
                if "mlp" in name:
                    ok = ok and inner == ["mlp"]
            if not ok:
                bad.append((n["index"], name, stack, native))
        print("%s: %d kernel nodes, %d with the NVTX stack and native frame expected" % (paths[0], len(ns), len(ns) - len(bad)))
        for b in bad[:5]:
            print("  wrong:", b)
        return 1 if bad or not ns else 0
    if what == "modules":
        ns = [n for n in nodes(paths[0]) if n["node_type"] == "kernel"]
        named = [n for n in ns if n.get("origin", {}).get("module")]
        pct = 100.0 * len(named) / max(1, len(ns))
        print("%s: %d of %d kernel nodes carry a module name (%.1f%%)" % (paths[0], len(named), len(ns), pct))
        for n in ns:
            if not n.get("origin", {}).get("module"):
                print("  without: node %d %s %s" % (n["index"], n["kernel_name"][:60], json.dumps(n.get("origin"))[:200]))
        return 0 if pct >= float(paths[1]) else 1
    if what in ("python", "any"):
        status = 0
        for p in paths:
            ns = nodes(p)
            key = "python" if what == "python" else None
            have = [n for n in ns if n.get("origin") and (key is None or n["origin"].get(key))]
            print("%s: %d of %d nodes with %s" % (p, len(have), len(ns), "a Python frame" if key else "an origin"))
            if not ns:
                continue  # an empty graph has nothing to carry
            if have:
                print("  e.g. node %d: %s" % (have[0]["index"], json.dumps(have[0]["origin"])[:300]))
            status |= 0 if have else 1
        return status
    if what == "op":
        ns = nodes(paths[0])
        have = [n for n in ns if n.get("origin", {}).get("op")]
        print("%s: %d of %d nodes with an op, e.g. %s" % (paths[0], len(have), len(ns), have[0]["origin"]["op"] if have else "-"))
        return 0 if have else 1
    if what == "none":
        ns = nodes(paths[0])
        have = [n for n in ns if "origin" in n]
        print("%s: %d of %d nodes with an origin (want none)" % (paths[0], len(have), len(ns)))
        return 1 if have else 0
    if what == "nogil":
        # The chain sample's kernels, launched through ctypes with the GIL let
        # go, from nogil_app.py line 46, and PyTorch's own launches (lines 45
        # and 47, PyTorch too lets the GIL go around its ops): every one
        # carries its line, in every graph (the recorder's proxy reads what
        # its caches cannot answer).
        def lines(n):
            return [f["line"] for f in n.get("origin", {}).get("python", []) if f["file"].endswith("nogil_app.py")]
        status = 0
        for p in paths:
            ks = [n for n in nodes(p) if n["node_type"] == "kernel"]
            chain = [n for n in ks if n["kernel_name"].startswith(("chain_even", "chain_odd", "_Z10chain_even", "_Z9chain_odd"))]
            torch_ks = [n for n in ks if n not in chain]
            at46 = [n for n in chain if 46 in lines(n)]
            torch_ok = [n for n in torch_ks if set(lines(n)) & {45, 47}]
            ok = len(chain) == 4 and len(at46) == 4 and len(torch_ks) == 2 and len(torch_ok) == 2
            print("%s: %d chain kernels, %d from line 46; %d of %d PyTorch kernels from lines 45/47%s" % (
                p, len(chain), len(at46), len(torch_ok), len(torch_ks), "" if ok else "  WRONG"))
            if not ok:
                for n in ks:
                    print("  node %d %s %s" % (n["index"], n["kernel_name"][:40], json.dumps(n.get("origin"))[:240]))
                status = 1
        return status if paths else 1
    print("unknown check " + what)
    return 2


if __name__ == "__main__":
    sys.exit(main())
