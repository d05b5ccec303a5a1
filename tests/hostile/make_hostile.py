"""Writes the hostile inputs in this folder (run once; the files are kept).

Each must make `graphscope dump FILE --json -o OUT` exit 3 with one line and
no output file. Derived from the recordings in tests/data where a real file
is the starting point (truncated, mutated), or built to break one rule.
"""
import json
import os
import random

here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(here, "..", "data")


def put(name, content):
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(os.path.join(here, name), mode) as f:
        f.write(content)


def node(i, deps, dependents, **kw):
    n = {"index": i, "node_type": "kernel", "tools_id": (7 << 32) | i, "graph_id": 7, "node_id": i,
         "kernel_name": "_Z1kv", "event_ptr": 0, "dependencies": deps, "dependents": dependents}
    n.update(kw)
    return n


def doc(nodes, **kw):
    d = {"schema": "graphscope.graph/1", "exec_graph_id": 7, "nodes": nodes}
    d.update(kw)
    return json.dumps(d)


rng = random.Random(20261122)
dot = open(os.path.join(data, "nvidia", "forkjoin.verbose.dot")).read()
put("empty.json", "")
put("whitespace.dot", "  \n\t\n")
put("random.bin", bytes(rng.randrange(256) for _ in range(4096)))
put("random_after_brace.json", "{" + "".join(chr(rng.randrange(32, 127)) for _ in range(2000)))
put("png_named_json.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
put("nul_in_dot.dot", dot[:400] + "\0" + dot[400:])
put("truncated.dot", dot[: len(dot) // 2])
put("truncated.json", doc([node(0, [], [1]), node(1, [0], [])])[:150])
put("cycle.json", doc([node(0, [2], [1]), node(1, [0], [2]), node(2, [1], [0])]))
put("dangling.json", doc([node(0, [], []), node(1, [5], [])]))
put("disagree.json", doc([node(0, [], []), node(1, [0], [])]))
put("huge_number.json", doc([node(0, [], [], node_id=1 << 70)]))
put("huge_exponent.json", '{"nodes": [], "exec_graph_id": 1e999}')
put("wrong_type.json", doc([node(0, [], [], dependencies="none")]))
put("bad_index.json", doc([node(3, [], [])]))
put("bad_schema.json", doc([], schema="graphscope.graph/9"))
put("trace_array.json", '[{"ph": "X", "name": "k"}]')
put("deep_arrays.json", "[" * 100000)
deep = '{"nodes": ['
for _ in range(200):
    deep += '{"index": 0, "node_type": "child_graph", "node_id": 0, "dependencies": [], "bodies": [{"nodes": ['
put("deep_bodies.json", deep + "]}]}" * 200 + "]}")
put("giant_string.json", doc([node(0, [], [], kernel_name="k" * ((1 << 20) + 1))]))
put("dot_edge_to_nowhere.dot",
    'digraph dot {\nsubgraph cluster_1 {\nlabel="graph_1";\n"graph_1_node_0"[label="0\nEMPTY\n"];\n'
    '"graph_1_node_0" -> "graph_2_node_9";\n}\n}\n')
put("dot_self_reference.dot",
    'digraph dot {\nsubgraph cluster_1 {\nlabel="graph_1";\n"graph_1_node_0"[label="0\ngraph_1\n"];\n}\n}\n')
put("dot_garbage.dot", "digraph { this is not [ dot at all ;;; }")
put("dot_cycle.dot",
    'digraph dot {\nsubgraph cluster_1 {\nlabel="graph_1";\n"graph_1_node_0"[label="0\nEMPTY\n"];\n'
    '"graph_1_node_1"[label="1\nEMPTY\n"];\n"graph_1_node_0" -> "graph_1_node_1";\n'
    '"graph_1_node_1" -> "graph_1_node_0";\n}\n}\n')
put("dot_huge_grid.dot", dot.replace("256,256,0", "99999999999999999999,256,0", 1))
# A good graph, then a quoted string that never ends: cgraph reads no second
# graph and reports nothing (found by fuzz/fuzz_nvidia_dot).
put("dot_open_string_after_graph.dot",
    'digraph dot {\nsubgraph cluster_1 {\nlabel="graph_1";\n"graph_1_node_0"[label="0\nEMPTY\n"];\n}\n}\n"open')
