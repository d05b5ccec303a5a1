"""A PyTorch program that knows nothing of graphscope, for origins (GPU
machine only): transformers' Llama built from a config (random weights, no
download), captured into one CUDA graph and replayed.

    python3 origins_app.py llama [--layers 8] [--captures 1] [--timing FILE] [--emit-nvtx] [--pause-after K]
    python3 origins_app.py compile [--layers 8]

llama:    torch.cuda.graph around one decode-like forward; with --timing,
          writes the seconds that capture + instantiate took (the
          `with torch.cuda.graph(...)` block: PyTorch instantiates when it
          ends) of each of the --captures graphs (each a new CUDAGraph of
          the same forward, as a server captures one per batch size) as
          JSON; with --emit-nvtx, captures under
          torch.autograd.profiler.emit_nvtx (aten:: NVTX ranges); --pause-after K sleeps 1 s after capture K.
compile:  the same model under torch.compile(mode="reduce-overhead"), run
          until its CUDA graphs are recorded and replayed.
"""
import argparse
import json
import time

import torch


def build(layers):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=layers, num_attention_heads=4,
                      num_key_value_heads=4, vocab_size=2000, max_position_embeddings=256)
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).cuda().eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["llama", "compile"])
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--timing")
    ap.add_argument("--captures", type=int, default=1)
    ap.add_argument("--emit-nvtx", action="store_true"); ap.add_argument("--pause-after", type=int, default=0)  # noqa: E702
    a = ap.parse_args()
    model = build(a.layers)
    ids = torch.randint(0, 2000, (1, 32), device="cuda")
    if a.mode == "compile":
        fn = torch.compile(model, mode="reduce-overhead")
        with torch.no_grad():
            for _ in range(5):
                out = fn(ids, use_cache=False).logits
        torch.cuda.synchronize()
        print("compile ok", tuple(out.shape))
        return
    with torch.no_grad():
        # Warm up on a side stream, as PyTorch's documentation asks.
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(ids, use_cache=False)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        graphs, seconds, phases = [], [], []
        for i in range(a.captures):
            g = torch.cuda.CUDAGraph()
            t0 = time.perf_counter()
            if a.emit_nvtx:
                with torch.autograd.profiler.emit_nvtx():
                    with torch.cuda.graph(g):
                        out = model(ids, use_cache=False).logits
            else:
                with torch.cuda.graph(g):
                    t1 = time.perf_counter(); out = model(ids, use_cache=False).logits  # noqa: E702
                    # (the call stays on line 71, where tests/data/origins recorded it)
                    t2 = time.perf_counter()
                t3 = time.perf_counter()
                phases.append((t1 - t0, t2 - t1, t3 - t2))
            torch.cuda.synchronize()
            seconds.append(time.perf_counter() - t0)
            graphs.append(g)
            if i + 1 == a.pause_after:
                # A second's pause (the paired-halves diagnostic, in git history: graphscope, at
                # --max-graphs, lets go of CUPTI on its writer thread meanwhile).
                time.sleep(1.0)
        for g in graphs:
            for _ in range(5):
                g.replay()
        torch.cuda.synchronize()
    if a.timing:
        with open(a.timing, "w") as f:
            json.dump({"capture_instantiate_s": seconds, "layers": a.layers,
                       # each capture: torch.cuda.graph's entry, the forward
                       # (the capture itself), the exit (end of capture and
                       # instantiation), in seconds
                       "phases_s": phases}, f)
    print("llama ok", tuple(out.shape), "capture+instantiate %s ms" % " ".join("%.1f" % (t * 1e3) for t in seconds))


if __name__ == "__main__":
    main()
