#!/usr/bin/env bash
# What attaching costs an application: a PyTorch program's capture +
# instantiate time and its time per replay, plain, under bare CUPTI activity
# tracing (an injection library that does nothing else: the anchor), with
# `graphscope capture --exec` and with `graphscope profile --exec`; each
# configuration RUNS times, interleaved, in one call on the GPU machine.
#   bench/attach_overhead.sh GRAPHSCOPE BARE_INJECT_SO [RUNS] [REPLAYS]
set -euo pipefail
gs=$1; bare=$2; runs=${3:-5}; replays=${4:-2000}
app=$(cd "$(dirname "$0")/.." && pwd)/tests/gpu/torch/attach_app.py
out=$(mktemp -d)
for ((k = 1; k <= runs; ++k)); do
  echo "plain $(python3 "$app" mlp --time --replays "$replays")"
  echo "bare_cupti $(CUDA_INJECTION64_PATH=$bare python3 "$app" mlp --time --replays "$replays")"
  echo "capture_exec $("$gs" capture --exec --out-dir "$out/c" -- python3 "$app" mlp --time --replays "$replays" | head -1)"
  echo "profile_exec $("$gs" profile --exec --out-dir "$out/p" -o "$out/report.txt" -- python3 "$app" mlp --time \
      --replays "$replays" 2>/dev/null | head -1)"
done
rm -rf "$out"
