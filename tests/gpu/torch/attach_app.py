"""A small PyTorch program for the attach tests: unmodified in the sense that
it knows nothing of graphscope. It captures CUDA graphs the way PyTorch users
do, replays them, and (with --debug-dump DIR) writes PyTorch's own
CUDAGraph.debug_dump (cudaGraphDebugDotPrint) of each, to compare with what
graphscope dumped of the same graph.

    python3 attach_app.py MODE [--keep-graph] [--debug-dump DIR] [--replays N]
                          [--profiler] [--exit-code N] [--time]

MODE: mlp (one graph), two_stream (a fork onto a side stream and back),
compile (torch.compile mode="reduce-overhead"). --profiler runs the PyTorch
profiler around the replays (graphscope must stay out of its way).
--exit-code leaves with that code right after the last replay, without
synchronizing or freeing anything. --time prints instantiate and replay
times as JSON (for timing runs).
"""
import argparse
import json
import os
import sys
import time

import torch


def new_graph(keep):
    try:
        return torch.cuda.CUDAGraph(keep_graph=keep)
    except TypeError:  # a PyTorch without keep_graph
        return torch.cuda.CUDAGraph()


def warm_up(fn):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)


def capture(name, fn, args, graphs, timing):
    warm_up(fn)
    g = new_graph(args.keep_graph)
    if args.debug_dump:
        g.enable_debug_mode()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.cuda.graph(g):
        fn()
    if hasattr(g, "instantiate") and args.keep_graph:
        g.instantiate()  # keep_graph=True defers instantiation to the first replay otherwise
    torch.cuda.synchronize()
    timing[name + "_capture_instantiate_ms"] = (time.perf_counter() - t0) * 1e3
    if args.debug_dump:
        g.debug_dump(os.path.join(args.debug_dump, name + ".dot"))
    graphs.append((name, g))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["mlp", "two_stream", "compile"])
    p.add_argument("--keep-graph", action="store_true")
    p.add_argument("--debug-dump")
    p.add_argument("--replays", type=int, default=30)
    p.add_argument("--profiler", action="store_true")
    p.add_argument("--exit-code", type=int)
    p.add_argument("--time", action="store_true")
    args = p.parse_args()
    if args.debug_dump:
        os.makedirs(args.debug_dump, exist_ok=True)
    torch.manual_seed(0)
    graphs, timing = [], {}
    x = torch.randn(64, 256, device="cuda")

    if args.mode == "mlp":
        model = torch.nn.Sequential(
            torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.LayerNorm(512), torch.nn.Linear(512, 256)
        ).cuda()
        out = {}

        def fwd():
            out["y"] = model(x)

        with torch.no_grad():
            capture("mlp", fwd, args, graphs, timing)
    elif args.mode == "two_stream":
        a = torch.nn.Linear(256, 256).cuda()
        b = torch.nn.Linear(256, 256).cuda()
        out = {}

        def fwd():
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            ya = a(x)
            with torch.cuda.stream(side):
                yb = torch.relu(b(x))
            torch.cuda.current_stream().wait_stream(side)
            out["y"] = ya + yb

        with torch.no_grad():
            capture("two_stream", fwd, args, graphs, timing)
    else:
        model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)).cuda()
        f = torch.compile(model, mode="reduce-overhead")
        with torch.no_grad():
            for _ in range(3 + args.replays):  # cudagraph trees record, then replay
                f(x)
        torch.cuda.synchronize()

    def replay_all():
        for _ in range(args.replays):
            for _, g in graphs:
                g.replay()

    t0 = time.perf_counter()
    if args.profiler:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            replay_all()
            torch.cuda.synchronize()
        cuda = [e for e in prof.events() if str(e.device_type).endswith("CUDA")]
        print("profiler events:", len(prof.events()), "on the GPU:", len(cuda))
    else:
        replay_all()
    if args.exit_code is not None:
        sys.stdout.flush()
        sys.exit(args.exit_code)  # no synchronize, nothing freed
    torch.cuda.synchronize()
    timing["replay_us"] = (time.perf_counter() - t0) * 1e6 / max(1, args.replays)
    if args.time:
        print(json.dumps(timing))


if __name__ == "__main__":
    main()
