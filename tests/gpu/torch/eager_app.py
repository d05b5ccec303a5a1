"""eager_app: a program that is mostly eager GPU work, for the cost of the
run ledger's eager record (issue 45); it knows nothing of graphscope.

    python3 eager_app.py [--steps N] [--graph-every K] [--timing FILE]

A small MLP trained eagerly (forward, backward, SGD step: about 40 kernel
launches a step), and one CUDA graph of its forward captured once and
replayed every K-th step (--graph-every, default 10; 0: never): a program
whose GPU time is almost all outside graphs. At the end it prints one JSON
line prefixed with "eager_app counts: " (the steps, the replays, the loss)
and, with --timing FILE, writes the seconds the training loop took.
"""
import argparse
import json
import sys
import time

import torch

HIDDEN = 512


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--graph-every", type=int, default=10)
    p.add_argument("--timing")
    a = p.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                                torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(64, HIDDEN, device="cuda")
    target = torch.randint(0, 10, (64,), device="cuda")
    replays = 0
    g = None
    if a.graph_every:
        static_in = torch.zeros(64, HIDDEN, device="cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.no_grad(), torch.cuda.stream(side):
            model(static_in)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(g):
            static_out = model(static_in)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    loss = None
    for i in range(a.steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        if g is not None and i % a.graph_every == 0:
            static_in.copy_(x)
            g.replay()
            replays += 1
    final = loss.item()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    counts = {"steps": a.steps, "replays": replays, "loss": final}
    print("eager_app counts: " + json.dumps(counts, sort_keys=True), flush=True)
    if a.timing:
        with open(a.timing, "w") as f:
            json.dump({"loop_s": t1 - t0, "steps": a.steps}, f)
    return 0 if final == final else 1  # NaN: wrong


if __name__ == "__main__":
    sys.exit(main())
