"""A serving engine's start-up, in small (GPU machine only; knows nothing of
graphscope): transformers' Llama built from a config (random weights, no
download), one CUDA graph of a decode step per batch size from 50 down to 1
sharing one memory pool, as vLLM and SGLang capture them, plus one graph of
a deeper model of at least 3,000 nodes. Then each graph is replayed, and the
application's own time per replay measured.

    python3 serving_startup.py [--timing FILE] [--batches 50] [--layers 8]
                               [--big-layers 80] [--replays 30]
                               [--pause SECONDS [--later N]]

Writes (with --timing) JSON: capture_instantiate_s (the sum over every graph
of its `with torch.cuda.graph(...)` block, which instantiates when it ends,
each followed by a synchronize), per_graph_s, big_graph_s, and replay_us
{bs1, bs50, big}: the median over --replays of one replay each (launch and
synchronize). Prints one line.

Beside each capture, two yardsticks of the process's own speed, which no
graphscope callback touches: yardstick_s, a fixed run of small PyTorch ops
on the CPU (the interpreter and PyTorch's dispatcher, the CPU work a capture
is made of, with no CUDA call), timed just before each capture; and warm_s,
the eager warm-up forwards before it (CUDA launches, which a CUPTI
subscriber may slow). The GPU hosts run a process fast or up to 1.6x slower
for its whole life (BENCHMARKS.md, 2026-11-27); capture time over the
yardstick's, in the same process, leaves that out.

And the CPU time the captures took: on the capturing thread
(capture_thread_cpu_s; the rest of its wall-clock time it waited: for a
lock, another thread, a CPU) and in the whole process
(capture_process_cpu_s: every thread's, graphscope's own among them).

With --pause, the server then idles SECONDS (as between requests), replays
the same graphs again (replay_after_pause_us), and captures N more graphs
(--later, default 2: batch sizes it had not captured, as a server does when
a new size appears); a second line says so.
"""
import argparse
import json
import os
import statistics
import time

import torch


def build(layers):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=layers, num_attention_heads=4,
                      num_key_value_heads=4, vocab_size=2000, max_position_embeddings=256)
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).cuda().eval()


def yardstick():
    """A fixed run of small CPU ops (the interpreter and PyTorch's
    dispatcher, no CUDA): the process's speed at this moment."""
    x = torch.zeros(16)
    t0 = time.perf_counter()
    for i in range(300):
        x = torch.add(x, i).mul_(0.5)
    return time.perf_counter() - t0


def warm(model, ids):
    t0 = time.perf_counter()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            model(ids, use_cache=False)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    return time.perf_counter() - t0


class Sampled:
    """With GS_PERF_CTL and GS_PERF_ACK, the fifos of `perf record --delay=-1
    --control fifo:CTL,ACK` (bench/startup_profile.sh): perf samples inside
    this block only, so its profile is of the captures alone."""

    def __init__(self):
        ctl, ack = os.environ.get("GS_PERF_CTL"), os.environ.get("GS_PERF_ACK")
        self.ctl = open(ctl, "w") if ctl else None
        self.ack = open(ack) if ack else None

    def say(self, what):
        if self.ctl:
            self.ctl.write(what + "\n")
            self.ctl.flush()
            self.ack.readline()

    def __enter__(self):
        self.say("enable")

    def __exit__(self, *exc):
        self.say("disable")


SAMPLED = None


CPU = {"thread": 0.0, "process": 0.0}


def capture(model, ids, pool):
    g = torch.cuda.CUDAGraph()
    with SAMPLED:
        t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        with torch.cuda.graph(g, pool=pool):
            out = model(ids, use_cache=False).logits
        torch.cuda.synchronize()
        s = time.perf_counter() - t0
        CPU["thread"] += time.thread_time() - c0
        CPU["process"] += time.process_time() - p0
    return g, out, s


def replay_us(g, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        g.replay()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timing")
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--big-layers", type=int, default=80)
    ap.add_argument("--replays", type=int, default=30)
    ap.add_argument("--pause", type=float, default=0)
    ap.add_argument("--later", type=int, default=2)
    a = ap.parse_args()
    global SAMPLED
    SAMPLED = Sampled()
    model, big = build(a.layers), build(a.big_layers)
    graphs, per_graph, yard, warms = {}, [], [], []
    with torch.no_grad():
        pool = None
        yardstick()  # its first run pays for loading what it uses
        for bs in range(a.batches, 0, -1):  # largest first, as servers do
            ids = torch.randint(0, 2000, (bs, 1), device="cuda")
            warms.append(warm(model, ids))
            yard.append(yardstick())
            g, out, s = capture(model, ids, pool)
            pool = g.pool()
            graphs[bs] = (g, out)
            per_graph.append(s)
        ids = torch.randint(0, 2000, (1, 1), device="cuda")
        warms.append(warm(big, ids))
        yard.append(yardstick())
        gbig, _, big_s = capture(big, ids, pool)
        for g, _ in graphs.values():
            g.replay()
        torch.cuda.synchronize()
        r = {"bs1": replay_us(graphs[1][0], a.replays), "bs%d" % a.batches: replay_us(graphs[a.batches][0], a.replays),
             "big": replay_us(gbig, a.replays)}
        later = []
        if a.pause > 0:
            time.sleep(a.pause)
            r_after = {"bs1": replay_us(graphs[1][0], a.replays),
                       "bs%d" % a.batches: replay_us(graphs[a.batches][0], a.replays),
                       "big": replay_us(gbig, a.replays)}
            for bs in range(a.batches + 1, a.batches + 1 + a.later):
                ids = torch.randint(0, 2000, (bs, 1), device="cuda")
                warm(model, ids)
                g, out, s = capture(model, ids, pool)
                g.replay()
                torch.cuda.synchronize()
                later.append(s)
    total = sum(per_graph) + big_s
    res = {"capture_instantiate_s": total, "per_graph_s": per_graph, "big_graph_s": big_s, "replay_us": r,
           "graphs": len(per_graph) + 1, "yardstick_s": yard, "warm_s": warms,
           "capture_thread_cpu_s": CPU["thread"], "capture_process_cpu_s": CPU["process"]}
    if a.pause > 0:
        res.update({"replay_after_pause_us": r_after, "later_graphs_s": later})
    if a.timing:
        with open(a.timing, "w") as f:
            json.dump(res, f)
    print("serving start-up: %d graphs, capture + instantiate %.1f ms (big graph %.1f ms); yardstick %.1f ms, "
          "warm-ups %.1f ms; replay us %s" % (res["graphs"], total * 1e3, big_s * 1e3, sum(yard) * 1e3,
                                             sum(warms) * 1e3, " ".join("%s %.1f" % kv for kv in r.items())))
    if a.pause > 0:
        print("after a %g s pause: replay us %s; %d later graphs, capture + instantiate %.1f ms" %
              (a.pause, " ".join("%s %.1f" % kv for kv in r_after.items()), len(later), sum(later) * 1e3))


if __name__ == "__main__":
    main()
