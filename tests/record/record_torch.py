"""Record what PyTorch itself says about small CUDA graphs (GPU machine only).

For each graph, writes into OUTDIR:
  torch_NAME.debug_dump.dot   CUDAGraph.debug_dump (cudaGraphDebugDotPrint)
  torch_NAME.graph_data.json  CUDAGraph.get_graph_data(), where this PyTorch has it
  torch_NAME.kineto.json      a PyTorch profiler (Kineto) trace of three replays
and torch_env.json with the versions. Nothing here is edited by hand afterwards.

    python3 record_torch.py OUTDIR
"""
import datetime
import json
import os
import sys

import torch


def capture(name, fn, outdir, env):
    # Warm up on a side stream, as the PyTorch documentation asks.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    try:
        g = torch.cuda.CUDAGraph(keep_graph=True)
        env.setdefault("keep_graph", True)
    except TypeError:
        g = torch.cuda.CUDAGraph()
        env.setdefault("keep_graph", False)
    replays_only = os.environ.get("RECORD_REPLAYS_ONLY")
    if not replays_only:
        g.enable_debug_mode()
    with torch.cuda.graph(g):
        fn()
    if replays_only:
        # For `graphscope profile --exec`: the same graph, replayed, no
        # profiler of PyTorch's own (one CUPTI client at a time).
        for _ in range(int(replays_only)):
            g.replay()
        torch.cuda.synchronize()
        print("replayed", name)
        return g
    base = os.path.join(outdir, "torch_" + name)
    g.debug_dump(base + ".debug_dump.dot")
    if hasattr(g, "instantiate"):
        try:
            g.instantiate()
        except Exception as e:  # already instantiated
            env.setdefault("instantiate_note", str(e))
    g.replay()
    torch.cuda.synchronize()
    if hasattr(g, "get_graph_data"):
        with open(base + ".graph_data.json", "w") as f:
            json.dump(g.get_graph_data(), f, indent=1)
        env["get_graph_data"] = True
    else:
        env["get_graph_data"] = False
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
    prof.export_chrome_trace(base + ".kineto.json")
    print("recorded", name)
    return g


def versions(script):
    """What made a recording: the script, PyTorch, CUDA, the device, the date."""
    return {
        "recorded_by": "tests/record/" + script,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_properties(0).name,
        "date": datetime.date.today().isoformat(),
    }


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    env = versions("record_torch.py")
    keep = []
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512),
        torch.nn.GELU(),
        torch.nn.LayerNorm(512),
        torch.nn.Linear(512, 256),
    ).cuda()
    x = torch.randn(64, 256, device="cuda")
    out = {}

    def mlp():
        out["y"] = model(x)

    keep.append(capture("mlp", mlp, outdir, env))

    # Two branches on two streams inside one capture: a fork-join graph.
    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda")
    s2 = torch.cuda.Stream()

    def two_stream():
        s2.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s2):
            out["p"] = torch.relu(a @ a)
        out["q"] = torch.sigmoid(b @ b)
        torch.cuda.current_stream().wait_stream(s2)
        out["r"] = out["p"] + out["q"]

    keep.append(capture("two_stream", two_stream, outdir, env))
    with open(os.path.join(outdir, "torch_env.json"), "w") as f:
        json.dump(env, f, indent=1)
    print(json.dumps(env))


if __name__ == "__main__":
    main()
