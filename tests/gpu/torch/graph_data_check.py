"""graph_data_check: cudagraphscope.graph_data() of real PyTorch CUDA graphs,
checked against PyTorch's own cudaGraphDebugDotPrint of the same graphs
(CUDAGraph.debug_dump) and against the keys of CUDAGraph.get_graph_data().
GPU machine with PyTorch (written for 2.11); transformers optional.

    python3 graph_data_check.py OUT_DIR

Cases: mlp (a 4-layer MLP), two_stream (a fork onto a side stream and a
join), copy (a device-to-device copy_ between kernels: a memcpy node) and
llama (transformers' Llama from a config, random weights, 2 layers; skipped,
and said so, when transformers does not import). Each is captured into
torch.cuda.CUDAGraph(keep_graph=True) with debug mode on, then:
  - graph_data(g) before instantiate(), debug_dump(OUT_DIR/NAME.debug_dump.dot),
    instantiate() and a replay, graph_data(g) again: the two walks agree
    but for the ids (keep_graph=True keeps the template alive after
    instantiation), the template's before (exec_graph_id null) and the exec
    graph's after, tools_id = (exec_graph_id << 32) | node_id;
  - the walk against the DOT read back by cudagraphscope.load: the same
    node count, local node ids, node types, kernel names, launch geometry,
    memcpy/memset sizes, nested bodies, dependency edges and template graph
    id. Nodes are paired by node_id (the DOT's "ID" field, the walk's local
    id): the two list nodes in different orders, so positions are reported
    but not required to agree;
  - the walk's keys: exactly PyTorch's get_graph_data() keys at the top and
    on every node, each of PyTorch's type, plus graphscope's documented
    extensions and nothing else;
  - where this PyTorch has get_graph_data() (not 2.11), its dict against
    the walk: keys, node ids, types, kernel names and edges.
Then the errors graph_data() promises: a graph made without keep_graph and
a graph after reset() give GraphscopeError code 2.

OUT_DIR gets NAME.graph_data.json (the walk after instantiate(), with the
exec graph's ids) and NAME.debug_dump.dot per case, to become fixtures
(and NAME.get_graph_data.json where PyTorch has it). One line per case, then
"graph_data_check: ok N graphs"; exit 1 on any mismatch, 77 (skipped)
without PyTorch or a GPU.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "python"))
if not os.environ.get("GRAPHSCOPE_LIBRARY"):
    built = os.path.join(ROOT, "build", "lib", "api", "libgraphscope.so.0")
    if os.path.exists(built):
        os.environ["GRAPHSCOPE_LIBRARY"] = built

import cudagraphscope as gs  # noqa: E402

# CUDAGraph.get_graph_data()'s keys (PyTorch's docstring and code), with the
# type of each value.
PYTORCH_TOP = {"exec_graph_id": (int, type(None)), "nodes": (list,)}
PYTORCH_NODE = {
    "index": (int,), "node_type": (str,), "tools_id": (int,), "graph_id": (int,), "node_id": (int,),
    "kernel_name": (str, type(None)), "event_ptr": (int,), "dependencies": (list,), "dependents": (list,),
}
# graphscope's extensions (man graphscope(1), FILE FORMATS; lib/inspect/formats/graph_json.cc).
EXTENSION_TOP = {"schema", "graphscope_version", "template_graph_id", "name", "source_format", "device", "warnings",
                 "capture", "timings", "graph_memory", "kernel_names", "repeats"}
EXTENSION_NODE = {"dependency_types", "dependency_ports", "node_type_spelling", "template_tools_id", "handle",
                  "kernel", "memcpy", "memset", "host", "mem_alloc", "mem_free", "conditional", "origin", "bodies"}
NODE_TYPES = {"kernel", "memcpy", "memset", "host", "child_graph", "empty", "wait_event", "event_record",
              "ext_semas_signal", "ext_semas_wait", "mem_alloc", "mem_free", "conditional", "batch_mem_op"}


def check_keys(doc, errors):
    """The walk has PyTorch's keys, of PyTorch's types, and only documented extensions."""
    top = set(doc)
    for k, types in PYTORCH_TOP.items():
        if k not in doc:
            errors.append("top level: PyTorch's key %r missing" % k)
        elif not isinstance(doc[k], types):
            errors.append("top level: %r is %r" % (k, doc[k]))
    extra = top - set(PYTORCH_TOP) - EXTENSION_TOP
    if extra:
        errors.append("top level: undocumented keys %s" % sorted(extra))

    def nodes(ns, where, nested):
        for n in ns:
            w = "%s node %s" % (where, n.get("index"))
            for k, types in PYTORCH_NODE.items():
                if k not in n:
                    errors.append("%s: PyTorch's key %r missing" % (w, k))
                    continue
                ok_types = types + ((type(None),) if nested and k in ("tools_id", "graph_id") else ())
                if isinstance(n[k], bool) or not isinstance(n[k], ok_types):
                    errors.append("%s: %r is %r" % (w, k, n[k]))
            extra = set(n) - set(PYTORCH_NODE) - EXTENSION_NODE
            if extra:
                errors.append("%s: undocumented keys %s" % (w, sorted(extra)))
            if n.get("node_type") not in NODE_TYPES:
                errors.append("%s: node_type %r" % (w, n.get("node_type")))
            if (n.get("node_type") == "kernel") != isinstance(n.get("kernel_name"), str):
                errors.append("%s: kernel_name %r for a %s node" % (w, n.get("kernel_name"), n.get("node_type")))
            for b, body in enumerate(n.get("bodies", [])):
                nodes(body.get("nodes", []), "%s body %d" % (w, b), True)
        # dependencies and dependents: indices into this list, each edge both ways.
        count = len(ns)
        for i, n in enumerate(ns):
            if n.get("index") != i:
                errors.append("%s: node at position %d has index %r" % (where, i, n.get("index")))
            for d in n.get("dependencies", []):
                if not (isinstance(d, int) and 0 <= d < count) or i not in ns[d].get("dependents", []):
                    errors.append("%s node %d: dependency %r without its dependent" % (where, i, d))
            for d in n.get("dependents", []):
                if not (isinstance(d, int) and 0 <= d < count) or i not in ns[d].get("dependencies", []):
                    errors.append("%s node %d: dependent %r without its dependency" % (where, i, d))

    nodes(doc.get("nodes", []), "root", False)


def edges_by_node_id(nodes):
    ids = {n["index"]: n["node_id"] for n in nodes}
    return {(ids[d], n["node_id"]) for n in nodes for d in n["dependencies"]}


def compare_with_dot(walk, dot, where, errors):
    """tests/gpu/compare_graphs.py's comparison, for one walk and one DOT."""
    if len(walk) != len(dot):
        errors.append("%s: %d nodes walked, %d in the DOT" % (where, len(walk), len(dot)))
    A, B = {n["node_id"]: n for n in walk}, {n["node_id"]: n for n in dot}
    if set(A) != set(B):
        errors.append("%s: node ids walked %s, in the DOT %s" % (where, sorted(A), sorted(B)))
        return
    for nid in sorted(A):
        x, y = A[nid], B[nid]
        w = "%s node_id %d" % (where, nid)
        if x["node_type"] != y["node_type"]:
            errors.append("%s: type %s walked, %s in the DOT" % (w, x["node_type"], y["node_type"]))
            continue
        if x["kernel_name"] != y["kernel_name"]:
            errors.append("%s: kernel %s walked, %s in the DOT" % (w, x["kernel_name"], y["kernel_name"]))
        kx, ky = x.get("kernel", {}), y.get("kernel", {})
        for k in ("grid", "block", "shared_mem_bytes"):
            if k in kx and k in ky and kx[k] != ky[k]:
                errors.append("%s: %s %s walked, %s in the DOT" % (w, k, kx[k], ky[k]))
        for part, keys in (("memcpy", ("kind", "bytes")), ("memset", ("value", "bytes"))):
            if part in x and part in y:
                for k in keys:
                    if x[part].get(k) != y[part].get(k):
                        errors.append("%s: %s.%s %s walked, %s in the DOT" % (w, part, k, x[part].get(k),
                                                                               y[part].get(k)))
        xb, yb = x.get("bodies", []), y.get("bodies", [])
        if len(xb) != len(yb):
            errors.append("%s: %d bodies walked, %d in the DOT" % (w, len(xb), len(yb)))
        for i, (p, q) in enumerate(zip(xb, yb)):
            compare_with_dot(p["nodes"], q["nodes"], "%s body %d" % (w, i), errors)
    ea, eb = edges_by_node_id(walk), edges_by_node_id(dot)
    if ea != eb:
        errors.append("%s: edges (by node_id) only walked %s, only in the DOT %s"
                      % (where, sorted(ea - eb), sorted(eb - ea)))


def compare_with_get_graph_data(walk, pytorch, errors):
    """PyTorch's own dict (a PyTorch that has get_graph_data) against the walk."""
    for k in PYTORCH_TOP:
        if k not in pytorch:
            errors.append("get_graph_data has no %r: PyTorch's keys changed" % k)
    if set(pytorch) - set(PYTORCH_TOP):
        errors.append("get_graph_data has keys %s that graphscope does not know"
                      % sorted(set(pytorch) - set(PYTORCH_TOP)))
    for n in pytorch.get("nodes", []):
        if set(n) != set(PYTORCH_NODE):
            errors.append("get_graph_data node %s keys %s, expected %s" % (n.get("index"), sorted(n),
                                                                           sorted(PYTORCH_NODE)))
            return
    A, B = {n["node_id"]: n for n in walk["nodes"]}, {n["node_id"]: n for n in pytorch["nodes"]}
    if set(A) != set(B):
        errors.append("get_graph_data node ids %s, walked %s" % (sorted(B), sorted(A)))
        return
    if walk.get("exec_graph_id") != pytorch.get("exec_graph_id"):
        errors.append("get_graph_data exec_graph_id %r, walked %r" % (pytorch.get("exec_graph_id"),
                                                                      walk.get("exec_graph_id")))
    for nid in sorted(A):
        for k in ("node_type", "kernel_name", "tools_id", "graph_id", "event_ptr"):
            if A[nid][k] != B[nid][k]:
                errors.append("get_graph_data node_id %d: %s %r, walked %r" % (nid, k, B[nid][k], A[nid][k]))
    if edges_by_node_id(walk["nodes"]) != edges_by_node_id(pytorch["nodes"]):
        errors.append("get_graph_data edges differ from the walk's")


def without_ids(nodes):
    return [{k: v for k, v in n.items() if k not in ("tools_id", "graph_id")} for n in nodes]


def same_walk(a, b):
    """The walks of one template before and after instantiate(): the same
    nodes but for the ids (the template's, then the exec graph's)."""
    return without_ids(a["nodes"]) == without_ids(b["nodes"]) and a.get("template_graph_id") == b.get(
        "template_graph_id")


def check_ids(doc, instantiated, errors):
    """Before instantiate(): the template's ids and no exec graph id; after:
    the exec graph's, as get_graph_data() gives them."""
    exec_id, template_id = doc.get("exec_graph_id"), doc.get("template_graph_id")
    if not instantiated:
        if exec_id is not None:
            errors.append("before instantiate(): exec_graph_id %r, expected null" % exec_id)
        gid = template_id
    else:
        if not isinstance(exec_id, int):
            errors.append("after instantiate(): exec_graph_id %r, expected the exec graph's id" % exec_id)
            return
        gid = exec_id
    for n in doc["nodes"]:
        if n["graph_id"] != gid or n["tools_id"] != (gid << 32) | n["node_id"]:
            errors.append("%s instantiate(): node %d has graph_id %r, tools_id %r; expected graph %r"
                          % ("after" if instantiated else "before", n["index"], n["graph_id"], n["tools_id"], gid))
            return


class Case:
    def __init__(self, name, fn):
        self.name, self.fn = name, fn


def cases(torch):
    torch.manual_seed(0)
    out = {}
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.LayerNorm(512),
                              torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
    x = torch.randn(64, 256, device="cuda")

    def run_mlp():
        out["mlp"] = mlp(x)

    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda")
    side = torch.cuda.Stream()

    def two_stream():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            out["p"] = torch.relu(a @ a)
        out["q"] = torch.sigmoid(b @ b)
        torch.cuda.current_stream().wait_stream(side)
        out["r"] = out["p"] + out["q"]

    src = torch.randn(1 << 20, device="cuda")
    dst = torch.empty_like(src)

    def copy():
        dst.copy_(src * 2)  # a kernel, then cudaMemcpyAsync device to device
        out["copy"] = dst + 1

    yield Case("mlp", run_mlp)
    yield Case("two_stream", two_stream)
    yield Case("copy", copy)
    try:
        import transformers
        from transformers import LlamaConfig, LlamaForCausalLM
    except Exception as e:
        print("skip llama: transformers does not import (%s)" % (str(e).splitlines() or [type(e).__name__])[0])
        return
    cfg = LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=4, vocab_size=2000, max_position_embeddings=256)
    model = LlamaForCausalLM(cfg).cuda().eval()
    ids = torch.randint(0, 2000, (1, 32), device="cuda")

    def llama():
        with torch.no_grad():
            out["logits"] = model(ids, use_cache=False).logits

    print("llama: transformers %s" % transformers.__version__)
    yield Case("llama", llama)


def warm_up(torch, fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()


def capture(torch, fn, keep_graph=True):
    warm_up(torch, fn)
    # keep_graph is CUDAGraph's argument (torch.cuda.graph takes none): the
    # template outlives capture_end and instantiate() until reset().
    g = torch.cuda.CUDAGraph(keep_graph=keep_graph)
    if keep_graph:
        # 2.11: debug mode is a process-wide flag that debug_dump also
        # accepts; later PyTorch makes it keep_graph=True, so a graph meant
        # not to be kept must not have it.
        g.enable_debug_mode()
    with torch.cuda.graph(g):
        fn()
    return g


def run_case(torch, case, out_dir):
    errors, notes = [], []
    try:
        g = capture(torch, case.fn)
    except Exception as e:
        return ["capture failed: %r" % e], notes, 0
    before = gs.graph_data(g, name=case.name)
    dot_path = os.path.join(out_dir, case.name + ".debug_dump.dot")
    if os.path.exists(dot_path):
        os.unlink(dot_path)
    g.debug_dump(dot_path)  # the template is live: keep_graph=True, before instantiate()
    if not os.path.exists(dot_path) or os.path.getsize(dot_path) == 0:
        errors.append("debug_dump wrote nothing to %s" % dot_path)
    g.instantiate()
    g.replay()
    torch.cuda.synchronize()
    after = gs.graph_data(g, name=case.name)
    if not same_walk(before, after):
        errors.append("the walks before and after instantiate() differ")
    with open(os.path.join(out_dir, case.name + ".graph_data.json"), "w") as f:
        json.dump(after, f, indent=2)
        f.write("\n")
    check_keys(before, errors)
    check_keys(after, errors)
    check_ids(before, False, errors)
    check_ids(after, True, errors)
    if os.path.exists(dot_path) and os.path.getsize(dot_path) > 0:
        dot = gs.load(dot_path)
        compare_with_dot(before["nodes"], dot["nodes"], "root", errors)
        if before.get("template_graph_id") != dot.get("template_graph_id"):
            errors.append("template graph id %s walked, %s in the DOT" % (before.get("template_graph_id"),
                                                                         dot.get("template_graph_id")))
        order = [n["node_id"] for n in before["nodes"]] == [n["node_id"] for n in dot["nodes"]]
        notes.append("node order %s the DOT's" % ("matches" if order else "differs from"))
    for w in after.get("warnings", []):
        notes.append("warning: %s" % w)
    notes.append("template graph %s, exec graph %s" % (after.get("template_graph_id"), after.get("exec_graph_id")))
    if hasattr(g, "get_graph_data"):
        try:
            pytorch = g.get_graph_data()
        except Exception as e:  # needs cuda.bindings and a 13.1 driver
            notes.append("get_graph_data unavailable (%s)" % (str(e).splitlines() or [type(e).__name__])[0])
        else:
            had = len(errors)
            compare_with_get_graph_data(after, pytorch, errors)
            notes.append("get_graph_data agrees" if len(errors) == had else "get_graph_data differs")
            with open(os.path.join(out_dir, case.name + ".get_graph_data.json"), "w") as f:
                json.dump(pytorch, f, indent=1)
                f.write("\n")
    else:
        notes.append("this PyTorch has no get_graph_data")
    g.reset()
    return errors, notes, len(before["nodes"])


def expect_code_2(what, fn):
    try:
        fn()
    except gs.GraphscopeError as e:
        if e.code == 2 and e.message.startswith("graphscope: "):
            return [], e.message
        return ["%s: code %d (%s), expected 2" % (what, e.code, e.message)], None
    except Exception as e:
        return ["%s: %r, expected GraphscopeError code 2" % (what, e)], None
    return ["%s: walked, expected GraphscopeError code 2" % what], None


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[0])
        print("usage: python3 graph_data_check.py OUT_DIR")
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    try:
        import torch
    except ImportError as e:
        print("graph_data_check: skipped: no PyTorch (%s)" % e)
        return 77
    if not torch.cuda.is_available():
        print("graph_data_check: skipped: no GPU")
        return 77
    try:
        torch.cuda.CUDAGraph(keep_graph=True)
    except TypeError:
        print("graph_data_check: FAIL: torch %s: CUDAGraph has no keep_graph" % torch.__version__)
        return 1
    print("graph_data_check: torch %s, CUDA %s, %s, graphscope %s (%s)"
          % (torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), gs.version(), gs.library_path()))
    failed, graphs = 0, 0
    for case in cases(torch):
        try:
            errors, notes, count = run_case(torch, case, out_dir)
        except gs.GraphscopeError as e:
            errors, notes, count = ["GraphscopeError %d: %s" % (e.code, e.message)], [], 0
        except Exception as e:  # PyTorch's own calls (debug_dump, instantiate, ...)
            errors, notes, count = ["%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0])], [], 0
        if errors:
            failed += 1
            print("FAIL %s: %d nodes; %s" % (case.name, count, "; ".join(notes)))
            for e in errors[:40]:
                print("  MISMATCH %s: %s" % (case.name, e))
        else:
            graphs += 1
            print("ok %s: %d nodes agree with debug_dump; keys are get_graph_data's plus extensions; %s"
                  % (case.name, count, "; ".join(notes)))

    # The errors graph_data promises, on real graphs.
    def tiny():
        tiny.out = torch.ones(4, device="cuda") * 2

    not_kept = capture(torch, tiny, keep_graph=False)
    errors, message = expect_code_2("keep_graph=False", lambda: gs.graph_data(not_kept))
    kept = capture(torch, tiny)
    kept.reset()
    more, message_reset = expect_code_2("after reset()", lambda: gs.graph_data(kept))
    errors += more
    if errors:
        failed += 1
        for e in errors:
            print("FAIL errors: %s" % e)
    else:
        print("ok errors: keep_graph=False: %s" % message)
        print("ok errors: after reset(): %s" % message_reset)
    if failed:
        print("graph_data_check: FAIL %d of %d cases" % (failed, failed + graphs))
        return 1
    print("graph_data_check: ok %d graphs" % graphs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
