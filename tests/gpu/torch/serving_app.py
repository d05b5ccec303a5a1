"""serving_app: a decode loop the way serving engines (vLLM, SGLang) run
one, for the run ledger (issue 45); it knows nothing of graphscope.

    python3 serving_app.py [--steps N] [--seed S] [--check-every K]
                           [--counts FILE] [--timing FILE]

A small decoder step (embedding-free: a residual MLP block with a norm, run
twice, and a head) is captured into one torch.cuda.CUDAGraph per batch-size
bucket, 1, 2, 4, 8, 16 and 32, each from the same line (capture_bucket), each
with its static input and output. Then N requests of random sizes: a
request of n sequences is padded up to the smallest bucket that holds it and
that bucket's graph is replayed; above the largest bucket it runs eager
(run_eager), and so does a size the engine forgot (FORGOTTEN: its padding
rule skips it, as an engine's table might). Sizes are drawn so that one
bucket is never used (BUCKET_NEVER_USED: no size pads to it): its capture
time and memory were spent for nothing.

Every K-th step (--check-every, default 10) it checks the step's result
against the model run eagerly: an eager run of the decode step too, which
the ledger sees as such. At the end it prints what it did, one JSON line
prefixed with "serving_app counts: ": per bucket the replays, per size the
eager steps, the steps in all, the buckets captured and the one never used,
the checks, and the eager runs of the model after the captures (fallback
steps plus checks; the warm-ups before each capture are not among them);
--counts FILE writes the same JSON there. --timing FILE writes the seconds
the captures and the request loop took. Exit 0; 1 if a replay disagrees
with eager.
"""
import argparse
import json
import random
import sys
import time

import torch

BUCKETS = [1, 2, 4, 8, 16, 32]
FORGOTTEN = 3          # runs eager: the padding rule below skips it
BUCKET_NEVER_USED = 8  # no request size pads to it
HIDDEN = 256


class Step(torch.nn.Module):
    """One decode step: two residual MLP blocks with RMS-style norms, a head."""

    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(HIDDEN, 4 * HIDDEN), torch.nn.GELU(), torch.nn.Linear(4 * HIDDEN, HIDDEN))
            for _ in range(2))
        self.head = torch.nn.Linear(HIDDEN, 128)

    def forward(self, x):
        for b in self.blocks:
            x = x + b(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))
        return self.head(x)


def request_sizes(steps, rng):
    """Sizes 1..16 and 17..32 except those that pad to BUCKET_NEVER_USED
    (5..8), and now and then one above the largest bucket (40)."""
    allowed = [n for n in range(1, 33) if not (4 < n <= BUCKET_NEVER_USED)]
    sizes = []
    for i in range(steps):
        sizes.append(40 if i % 17 == 16 else rng.choice(allowed))
    return sizes


def bucket_for(n):
    """The smallest bucket that holds n; None: run eager (above the largest,
    or the size the engine's table forgot)."""
    if n == FORGOTTEN:
        return None
    for b in BUCKETS:
        if n <= b:
            return b
    return None


def capture_bucket(model, b, pool):
    """One bucket's graph, its static input and output (the same line for
    every bucket: the ledger's family)."""
    static_in = torch.zeros(b, HIDDEN, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            model(static_in)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, pool=pool):
        static_out = model(static_in)
    return g, static_in, static_out


def run_eager(model, x):
    return model(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check-every", type=int, default=10)
    p.add_argument("--counts")
    p.add_argument("--timing")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    model = Step().cuda().eval()
    graphs = {}
    with torch.no_grad():
        t0 = time.perf_counter()
        pool = torch.cuda.graph_pool_handle()
        for b in reversed(BUCKETS):  # largest first, as engines do, so the pool fits all
            graphs[b] = capture_bucket(model, b, pool)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        replays = {b: 0 for b in BUCKETS}
        eager = {}
        checks = 0
        worst = 0.0
        for i, n in enumerate(request_sizes(a.steps, rng)):
            x = torch.randn(n, HIDDEN, device="cuda")
            b = bucket_for(n)
            if b is None:
                y = run_eager(model, x)
                eager[n] = eager.get(n, 0) + 1
            else:
                g, static_in, static_out = graphs[b]
                static_in.zero_()
                static_in[:n].copy_(x)
                g.replay()
                y = static_out[:n]
                replays[b] += 1
            if a.check_every and i % a.check_every == 0:
                worst = max(worst, (y - model(x)).abs().max().item())
                checks += 1
            else:
                y.sum().item()  # the step's result read, as a server returns it
        torch.cuda.synchronize()
        t2 = time.perf_counter()
    counts = {
        "steps": a.steps,
        "buckets_captured": BUCKETS,
        "bucket_never_used": BUCKET_NEVER_USED,
        "forgotten_size": FORGOTTEN,
        "replays": {str(b): replays[b] for b in BUCKETS},
        "eager_steps": {str(n): eager[n] for n in sorted(eager)},
        "graph_steps": sum(replays.values()),
        "eager_steps_total": sum(eager.values()),
        "max_abs_diff_vs_eager": worst,
        "checks": checks,
        "eager_model_runs_after_capture": sum(eager.values()) + checks,
        "warmup_model_runs": 2 * len(BUCKETS),
    }
    line = json.dumps(counts, sort_keys=True)
    print("serving_app counts: " + line, flush=True)
    if a.counts:
        with open(a.counts, "w") as f:
            f.write(line + "\n")
    if a.timing:
        with open(a.timing, "w") as f:
            json.dump({"capture_s": t1 - t0, "loop_s": t2 - t1, "steps": a.steps}, f)
    if replays[BUCKET_NEVER_USED] or worst > 1e-3:
        print("serving_app: FAIL: bucket %d replayed %d times, max diff %g" % (BUCKET_NEVER_USED, replays[BUCKET_NEVER_USED], worst))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
