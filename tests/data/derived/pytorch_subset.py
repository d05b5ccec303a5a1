"""Keeps only the keys of PyTorch's CUDAGraph.get_graph_data() dict.

    python3 pytorch_subset.py IN.json OUT.json

PyTorch 2.11 (the version on the GPU machine) has no get_graph_data, so no
PyTorch-written dict could be recorded: this derives one from graphscope's
JSON of a recorded debug_dump, with exactly the keys PyTorch documents.
"""
import json
import sys

KEYS = ["index", "node_type", "tools_id", "graph_id", "node_id", "kernel_name", "event_ptr",
        "dependencies", "dependents"]
doc = json.load(open(sys.argv[1]))
out = {"exec_graph_id": doc.get("exec_graph_id"),
       "nodes": [{k: n.get(k) for k in KEYS} for n in doc["nodes"]]}
with open(sys.argv[2], "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
