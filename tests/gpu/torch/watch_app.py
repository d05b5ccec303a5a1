"""watch_app: cudagraphscope.watch() around a real PyTorch program's
captures, on the GPU machine (written for PyTorch 2.11; label gpu).

    python3 watch_app.py OUT_DIR

Inside one `with cudagraphscope.watch(OUT_DIR)`, the program captures three
graphs the ways PyTorch programs do: an MLP into torch.cuda.CUDAGraph()
(keep_graph=False, the default), the same MLP into
torch.cuda.CUDAGraph(keep_graph=True), and a function through
torch.cuda.make_graphed_callables (its forward and backward graphs), then
replays each. What must come out depends on what this PyTorch has:
  - a capture-end hook (torch.cuda.graphs.register_graph_capture_end_hook or
    CUDAGraph.register_capture_end_hook; 2.11 has neither): every graph
    dumped, OUT_DIR/graph-N.json, N = 1.. in capture order, and watch()
    raises nothing;
  - none (2.8 to 2.11): the keep_graph=True graph dumped, and watch() raises
    UsageError (code 2) when the block ends, naming the graphs it could not
    see and the PyTorch that would.
Either way, every dump must load (cudagraphscope.load), hold kernels, and
agree with graph_data() of the keep_graph=True graph (diff: same), and the
program's results must be what it computes without watch().

Prints one line per dumped graph, then "watch_app: ok N graphs (how)";
exit 1 on any mismatch, 77 (skipped) without PyTorch or a GPU.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
if os.environ.get("GRAPHSCOPE_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(ROOT, "python"))

import cudagraphscope as gs  # noqa: E402


def fail(message):
    print("watch_app: FAIL: " + message)
    sys.exit(1)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    try:
        import torch
    except ImportError:
        print("watch_app: no PyTorch here (skipped)")
        return 77
    if not torch.cuda.is_available():
        print("watch_app: no CUDA device here (skipped)")
        return 77
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.startswith("graph-") and name.endswith(".json"):
            os.unlink(os.path.join(out, name))
    has_hook = hasattr(torch.cuda.graphs, "register_graph_capture_end_hook") or \
        hasattr(torch.cuda.CUDAGraph, "register_capture_end_hook")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)).cuda()
    x = torch.randn(16, 64, device="cuda")
    expected = model(x).detach().clone()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside capture, as PyTorch asks
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(side)

    plain = torch.cuda.CUDAGraph()
    kept = torch.cuda.CUDAGraph(keep_graph=True)
    error = None
    walked = None
    try:
        with gs.watch(out) as w:
            with torch.no_grad():
                with torch.cuda.graph(plain):
                    y_plain = model(x)
                with torch.cuda.graph(kept):
                    y_kept = model(x)
            walked = gs.graph_data(kept)  # the template, before instantiation: the dump's ids
            layer = torch.nn.Linear(64, 64).cuda()
            graphed = torch.cuda.make_graphed_callables(layer, (torch.randn(8, 64, device="cuda", requires_grad=True),))
            loss = graphed(torch.randn(8, 64, device="cuda", requires_grad=True)).sum()
            loss.backward()
            plain.replay()
            kept.replay()
            torch.cuda.synchronize()
    except gs.UsageError as e:
        error = e
    if not torch.allclose(y_plain, expected, atol=1e-5) or not torch.allclose(y_kept, expected, atol=1e-5):
        fail("the graphs under watch() computed something else")

    if has_hook:
        if error is not None:
            fail("watch() raised with a capture-end hook in this PyTorch: %s" % error)
        if len(w.paths) < 4:  # plain, kept, the graphed forward and backward
            fail("%d graphs dumped, expected 4 or more: %s" % (len(w.paths), w.paths))
    else:
        if error is None:
            fail("PyTorch %s has no capture-end hook, but watch() did not say it missed graphs" % torch.__version__)
        if "capture-end hook" not in error.message or error.code != 2:
            fail("watch()'s error does not name the PyTorch needed: %s" % error.message)
        if len(w.paths) < 1:
            fail("the keep_graph=True graph was not dumped")
        print("watch_app: as expected without a hook: %s" % error.message)

    kept_dump = None
    for path in w.paths:
        doc = gs.load(path)
        kernels = [n for n in doc["nodes"] if n["node_type"] == "kernel"]
        if not kernels:
            fail("%s holds no kernel" % path)
        print("%s: %d nodes, %d kernels" % (os.path.basename(path), len(doc["nodes"]), len(kernels)))
        if len(doc["nodes"]) == len(walked["nodes"]) and gs.diff(doc, walked)["same"]:
            kept_dump = path
    if kept_dump is None:
        fail("no dump agrees with graph_data() of the keep_graph=True graph")
    print("watch_app: ok %d graphs (%s)" % (len(w.paths), w.how))
    return 0


if __name__ == "__main__":
    sys.exit(main())
