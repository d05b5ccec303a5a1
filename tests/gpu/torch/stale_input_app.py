"""stale_input_app: the classic CUDA-graph bug in PyTorch, a graph whose
input tensor was freed and its memory handed to another tensor (issue 46,
"stale graph inputs"); it knows nothing of graphscope.

    python3 stale_input_app.py --mode bug|ok [--counts FILE]

A small model (nn.Sequential(Block()), Block's Linear(1024, 1024) called
`proj`, so that its kernels have a module path) runs on static_x, a
randn(64, 1024) tensor allocated in make_input(). It is warmed up on a side
stream as PyTorch's documentation shows, `static_y = model(static_x)` is
captured into a torch.cuda.CUDAGraph, and the graph is replayed 3 times,
each checked against the model run eagerly. Then:

  --mode bug   drop_input() drops the only reference to static_x (del, then
               gc.collect()); `other`, torch.full((64, 1024), 3.0), is
               allocated (the caching allocator hands back the freed block:
               printed, whether other.data_ptr() is static_x's old one); the
               graph replayed twice more, each printing whether static_y
               equals model(other): the replay read freed, reused memory
  --mode ok    static_x kept and refilled with copy_, replayed twice more,
               each checked

It prints one line per replay, then what it did as one JSON line prefixed
with "stale_input_app counts: " (mode, replays done, whether the bug showed,
the file and the lines of static_x's allocation and of its free, as
inspect gives them); --counts FILE writes the same JSON there. If a replay
raises RuntimeError (graphscope's --liveness=error makes cudaGraphLaunch
fail for a graph that reads freed memory), it prints `replay N failed:
<first line of the error>`, writes the counts and exits 4.
Exit codes: 0 done (in bug mode whatever the stale replays read), 1 wrong
result (a replay while static_x is live disagrees with eager), 4 a replay
refused.
"""
import argparse
import gc
import inspect
import json
import sys

import torch
from torch import nn

SHAPE = (64, 1024)
static_x = None  # the graph's input; this global is its only reference


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(1024, 1024)

    def forward(self, x):
        return torch.relu(self.proj(x))


def make_input():
    """Allocates static_x; returns the line of the allocation."""
    global static_x
    line = inspect.currentframe().f_lineno + 1  # the next line
    static_x = torch.randn(*SHAPE, device="cuda")
    return line


def drop_input():
    """Frees static_x (its last reference dropped); returns its old
    data_ptr and the line of the free."""
    global static_x
    ptr = static_x.data_ptr()
    line = inspect.currentframe().f_lineno + 1  # the next line
    del static_x
    gc.collect()
    return ptr, line


def close(a, b):
    return torch.allclose(a, b, rtol=1e-3, atol=1e-3)


class Refused(Exception):
    pass


def replay(g, counts):
    """One replay; raises Refused after printing when it failed."""
    n = counts["replays"] + 1
    try:
        g.replay()
        torch.cuda.synchronize()
    except RuntimeError as e:
        print("replay %d failed: %s" % (n, (str(e).splitlines() or [""])[0]), flush=True)
        counts["refused_replay"] = n
        raise Refused()
    counts["replays"] = n


def run(mode, counts):
    torch.manual_seed(0)
    model = nn.Sequential(Block()).cuda().eval()
    counts["alloc_line"] = make_input()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = model(static_x)
    for _ in range(3):
        replay(g, counts)
        ok = close(static_y, model(static_x))
        print("replay %d (static_x live): static_y == model(static_x): %s" % (counts["replays"], "ok" if ok else "WRONG"), flush=True)
        counts["wrong"] += not ok
    first = static_y.clone()
    if mode == "ok":
        static_x.copy_(torch.randn(*SHAPE, device="cuda"))
        for _ in range(2):
            replay(g, counts)
            ok = close(static_y, model(static_x))
            print("replay %d (static_x refilled): static_y == model(static_x): %s" % (counts["replays"], "ok" if ok else "WRONG"), flush=True)
            counts["wrong"] += not ok
    else:
        old_ptr, counts["free_line"] = drop_input()
        other = torch.full(SHAPE, 3.0, device="cuda")
        counts["same_block"] = other.data_ptr() == old_ptr
        print("other.data_ptr() == the freed static_x's: %s" % ("yes" if counts["same_block"] else "no"), flush=True)
        want_other = model(other)
        for _ in range(2):
            replay(g, counts)
            now = close(static_y, want_other)
            counts["bug_showed"] = counts["bug_showed"] or now
            print("replay %d (static_x freed): static_y == model(other): %s; == the first replays' result: %s" % (
                counts["replays"], "yes" if now else "no", "yes" if close(static_y, first) else "no"), flush=True)
    return 1 if counts["wrong"] else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["bug", "ok"], required=True)
    p.add_argument("--counts")
    a = p.parse_args()
    counts = {
        "mode": a.mode,
        "file": inspect.currentframe().f_code.co_filename,
        "replays": 0,
        "bug_showed": False,
        "same_block": None,
        "alloc_line": None,
        "free_line": None,
        "refused_replay": None,
        "wrong": 0,
    }
    with torch.no_grad():  # no autograd graph: nothing but the global holds static_x
        try:
            code = run(a.mode, counts)
        except Refused:
            code = 4
    line = json.dumps(counts, sort_keys=True)
    print("stale_input_app counts: " + line, flush=True)
    if a.counts:
        with open(a.counts, "w") as f:
            f.write(line + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
