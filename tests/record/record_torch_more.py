"""Record PyTorch profiler exports (which carry no graph ids in PyTorch 2.11)
of graph replays of real programs, with the graph's debug_dump (GPU machine
only). Adds to record_torch.py's small MLP:
  torch_four_branch   four identical branches on four streams
  torch_llama         transformers' Llama built from a config (random
                      weights, no download), one decode-like forward
  torch_compile       torch.compile(mode="reduce-overhead"): the export only
                      (its CUDA graphs live inside cudagraph trees, where no
                      debug_dump reaches them)
and torch_more_env.json with the versions. Nothing is edited afterwards.

    python3 record_torch_more.py OUTDIR
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_torch import capture, versions  # noqa: E402


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    env = versions("record_torch_more.py")
    keep = []
    out = {}

    # (b) Four identical branches on four streams, joined.
    w = [torch.randn(1024, 1024, device="cuda") for _ in range(4)]
    xs = [torch.randn(1024, 1024, device="cuda") for _ in range(4)]
    streams = [torch.cuda.Stream() for _ in range(4)]

    def four_branch():
        main_stream = torch.cuda.current_stream()
        parts = []
        for k in range(4):
            streams[k].wait_stream(main_stream)
            with torch.cuda.stream(streams[k]):
                parts.append(torch.relu(xs[k] @ w[k]) @ w[k])
        for k in range(4):
            main_stream.wait_stream(streams[k])
        out["four"] = parts[0] + parts[1] + parts[2] + parts[3]

    keep.append(capture("four_branch", four_branch, outdir, env))

    # (c) transformers' Llama from a config.
    try:
        import transformers
        from transformers import LlamaConfig, LlamaForCausalLM

        env["transformers"] = transformers.__version__
        cfg = LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=4,
                          num_key_value_heads=4, vocab_size=2000, max_position_embeddings=256)
        model = LlamaForCausalLM(cfg).cuda().eval()
        ids = torch.randint(0, 2000, (1, 32), device="cuda")

        def llama():
            with torch.no_grad():
                out["logits"] = model(ids, use_cache=False).logits

        keep.append(capture("llama", llama, outdir, env))
    except Exception as e:  # recorded, not hidden
        env["llama_error"] = repr(e)

    # (d) torch.compile(mode="reduce-overhead"): PyTorch's own CUDA graphs,
    # made inside cudagraph trees; a CUDAGraph class that turns debug mode on
    # lets their debug_dump be written.
    try:
        made = []
        replays_only = os.environ.get("RECORD_REPLAYS_ONLY")
        if not replays_only:
            class DebugGraph(torch.cuda.CUDAGraph):
                def __init__(self, *a, **k):
                    k["keep_graph"] = True  # else the template is freed once instantiated
                    super().__init__(*a, **k)
                    self.enable_debug_mode()
                    made.append(self)

            torch.cuda.CUDAGraph = DebugGraph
        net = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512)).cuda()
        fn = torch.compile(net, mode="reduce-overhead")
        xin = torch.randn(32, 512, device="cuda")
        for _ in range(5):
            fn(xin)
        torch.cuda.synchronize()
        if replays_only:
            for _ in range(int(replays_only)):
                fn(xin)
            torch.cuda.synchronize()
            raise StopIteration("replayed compile")
        for k, g in enumerate(made):
            try:
                g.debug_dump(os.path.join(outdir, "torch_compile.%d.debug_dump.dot" % k))
            except Exception as e:
                env.setdefault("compile_dump_errors", []).append(repr(e))
        env["compile_graphs"] = len(made)
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(3):
                fn(xin)
            torch.cuda.synchronize()
        prof.export_chrome_trace(os.path.join(outdir, "torch_compile.kineto.json"))
        print("recorded compile")
    except StopIteration as e:
        print(e)
    except Exception as e:
        env["compile_error"] = repr(e)

    if os.environ.get("RECORD_REPLAYS_ONLY"):
        return
    with open(os.path.join(outdir, "torch_more_env.json"), "w") as f:
        json.dump(env, f, indent=1)
    print(json.dumps(env))


if __name__ == "__main__":
    main()
