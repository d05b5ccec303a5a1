"""compile_shapes_app: torch.compile(mode="reduce-overhead") whose inputs
change shape, for the run ledger (issue 45); it knows nothing of graphscope.

    python3 compile_shapes_app.py [--counts FILE]

Two compiled functions:
  - `step`, a small MLP block, called with batch sizes in the order SHAPES:
    cudagraph trees record a graph for each distinct size (dynamic shapes:
    a new recording per size) and replay it for the later calls of that size;
  - `bump`, which adds into its input in place: cudagraph trees skip it
    (mutated inputs) and it runs without a graph every call.
At the end it compares `step`'s results with eager and prints what it did,
one JSON line prefixed with "compile_shapes_app counts: ": the calls per
batch size, the calls of bump, and PyTorch's own inductor counters for
cudagraphs (recorded graphs and skips, where this PyTorch keeps them);
--counts FILE writes the same JSON there. Exit 0; 1 on a wrong result.
"""
import argparse
import json
import sys

import torch

SHAPES = [4] * 6 + [8] * 6 + [4] * 4 + [16] * 6 + [3] * 3 + [8] * 4 + [16] * 2
BUMPS = 5
HIDDEN = 256


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(HIDDEN, 2 * HIDDEN)
        self.down = torch.nn.Linear(2 * HIDDEN, HIDDEN)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(torch.nn.functional.layer_norm(x, (HIDDEN,)))))


def bump(x, y):
    x.add_(y)  # mutates an input: cudagraph trees skip this function
    return x * 2


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--counts")
    a = p.parse_args()
    torch.manual_seed(0)
    model = Block().cuda().eval()
    step = torch.compile(model, mode="reduce-overhead", dynamic=True)
    bumped = torch.compile(bump, mode="reduce-overhead")
    calls = {}
    worst = 0.0
    with torch.no_grad():
        for n in SHAPES:
            x = torch.randn(n, HIDDEN, device="cuda")
            y = step(x).clone()  # a cudagraph tree's output is overwritten by its next replay
            worst = max(worst, (y - model(x)).abs().max().item())
            calls[n] = calls.get(n, 0) + 1
        x = torch.zeros(16, HIDDEN, device="cuda")
        for _ in range(BUMPS):
            bumped(x, torch.ones(16, HIDDEN, device="cuda"))
        torch.cuda.synchronize()
    bump_ok = bool((x == BUMPS).all().item())
    inductor = {}
    try:
        from torch._dynamo.utils import counters
        inductor = {k: v for k, v in counters["inductor"].items() if "cudagraph" in k}
    except Exception as e:  # a PyTorch without them: say so
        inductor = {"unavailable": str(e)}
    counts = {
        "shapes_in_order": SHAPES,
        "calls_by_batch": {str(n): calls[n] for n in sorted(calls)},
        "distinct_batches": len(calls),
        "bump_calls": BUMPS,
        "bump_result_ok": bump_ok,
        "inductor_cudagraph_counters": inductor,
        "torch": torch.__version__,
        "max_abs_diff_vs_eager": worst,
    }
    line = json.dumps(counts, sort_keys=True)
    print("compile_shapes_app counts: " + line, flush=True)
    if a.counts:
        with open(a.counts, "w") as f:
            f.write(line + "\n")
    if worst > 1e-3 or not bump_ok:
        print("compile_shapes_app: FAIL: max diff %g, bump %s" % (worst, bump_ok))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
