#!/usr/bin/env python3
"""Whether two graph documents of the same program give every node the same
origin (modules, Python frames, op): the recorded fixture against a fresh
capture, to catch an origin cache that hands one node another's origin.

    same_origins.py A.json B.json"""
import json
import sys

a, b = (json.load(open(p))["nodes"] for p in sys.argv[1:3])
if len(a) != len(b):
    print(f"FAIL {len(a)} nodes against {len(b)}")
    sys.exit(1)


def key(n):
    o = n.get("origin") or {}
    return ([m.get("name") for m in o.get("modules", [])], [(f.get("file", "").rsplit("/", 1)[-1], f.get("line"))
                                                            for f in o.get("python", [])], o.get("op"))


diff = [i for i in range(len(a)) if key(a[i]) != key(b[i])]
for i in diff[:5]:
    print(f"node {i}: {key(a[i])} against {key(b[i])}")
print(f"{len(a) - len(diff)} of {len(a)} nodes have the same origin")
sys.exit(1 if diff else 0)
