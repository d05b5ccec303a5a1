#!/usr/bin/env bash
# The multi-rank issue's (18) GPU run on a machine with two GPUs, and the
# what-if model's live runs (issue 14), in one call: built files in .dev/
# (graphscope, its injection library and live module, samples/) with their
# libraries in .devlibs/. Writes logs and the recorded outputs under $OUT, in
# one archive.
#   bash tests/gpu/device_ranks.sh [ranks|act|cg|whatif|all]
# act: rank 0 uses ReLU, rank 1 GELU (issue 43's names). cg: NVIDIA's
# conjugateGradientCudaGraphs sample, built on the CPU machine into .dev/cg/
# (not in the tree: its source is NVIDIA's), under `profile --exec` (nodes
# without activity records: memory alloc and free).
set -uo pipefail
t_tail=25
source "$(dirname "$0")/device_common.sh"
export GRAPHSCOPE_INJECTION_LIBRARY=$root/.dev/libgraphscope_inject.so GRAPHSCOPE_LIVE_LIBRARY=$root/.dev/libgraphscope_live.so
# NVLink multicast stays off (KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
gs=$root/.dev/graphscope
part=${1:-all}
nvidia-smi -L >> "$out/device.txt"
app=tests/gpu/torch/ranks_app.py
if [ "$part" = ranks ] || [ "$part" = all ]; then
  t plain timeout -s KILL 120 python3 -m torch.distributed.run --standalone --nproc-per-node 2 $app
  t capture_equal timeout -s KILL 150 "$gs" capture --exec --out-dir /tmp/r_equal -- python3 -m torch.distributed.run --standalone --nproc-per-node 2 $app
  t ranks_equal bash -c "'$gs' ranks /tmp/r_equal; echo rc \$?; '$gs' ranks /tmp/r_equal --json -o /tmp/r_equal/ranks.json; echo rc \$?"
  t capture_extra timeout -s KILL 150 "$gs" capture --exec --out-dir /tmp/r_extra -- python3 -m torch.distributed.run --standalone --nproc-per-node 2 $app --extra-on 1
  t ranks_extra bash -c "'$gs' ranks /tmp/r_extra; echo rc \$?"
  t profile_equal timeout -s KILL 150 "$gs" profile --exec --out-dir /tmp/r_prof -- python3 -m torch.distributed.run --standalone --nproc-per-node 2 $app --replays 20
  t ranks_prof bash -c "'$gs' ranks /tmp/r_prof --trace /tmp/r_prof/ranks.trace.json; echo rc \$?; ls -la /tmp/r_prof/ranks.trace.json"
  for d in r_equal r_extra r_prof; do (cd /tmp && tar -czf "$out/$d.tgz" "$d"); done
fi
if [ "$part" = act ] || [ "$part" = all ]; then
  t capture_act timeout -s KILL 150 "$gs" capture --exec --out-dir /tmp/r_act -- python3 -m torch.distributed.run --standalone --nproc-per-node 2 $app --relu-on 0
  t ranks_act bash -c "'$gs' ranks /tmp/r_act; echo rc \$?; '$gs' ranks /tmp/r_act --json -o /tmp/r_act/ranks.json; echo rc \$?"
  (cd /tmp && tar -czf "$out/r_act.tgz" r_act)
fi
if [ "$part" = cg ] || [ "$part" = all ]; then
  if [ -x .dev/cg/conjugateGradientCudaGraphs ]; then
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
    t cg_plain timeout -s KILL 120 .dev/cg/conjugateGradientCudaGraphs
    t cg_profile timeout -s KILL 180 "$gs" profile --exec --out-dir /tmp/cg_prof -- .dev/cg/conjugateGradientCudaGraphs
    t cg_profile_again timeout -s KILL 180 "$gs" profile --exec --out-dir /tmp/cg_prof2 -- .dev/cg/conjugateGradientCudaGraphs
    (cd /tmp && tar -czf "$out/cg_prof.tgz" cg_prof cg_prof2)
  fi
fi
if [ "$part" = whatif ] || [ "$part" = all ]; then
  # Each profile keeps its graph and trace (JSON report and Chrome trace), so
  # the model can be re-evaluated offline.
  w=$out/whatif; mkdir -p "$w"
  prof() {  # prof NAME C ARGS...
    local name=$1 c=$2; shift 2
    "$gs" profile "$@" --connections $c --replays 20 -o "$w/$name.c$c.txt" --trace-out "$w/$name.c$c.trace.json" > /dev/null 2>&1 || echo "profile $name c$c: $?"
  }
  for c in 8 1; do
    for s in chain copies cublas_gemm forkjoin memalloc mixed pdl wide; do prof $s $c .dev/samples/$s.so; done
    for n in forward backward; do prof two_graphs.$n $c .dev/samples/two_graphs.so --name $n; done
    for k in 2 3; do prof mixed.run$k $c .dev/samples/mixed.so; done
    CUDA_DEVICE_MAX_CONNECTIONS=$c RECORD_REPLAYS_ONLY=20 "$gs" profile --exec --out-dir /tmp/torch_c$c -o "$w/torch_more.c$c.txt" -- python3 tests/record/record_torch_more.py /tmp/torch_more_out > "$w/torch_more.c$c.log" 2>&1
    CUDA_DEVICE_MAX_CONNECTIONS=$c "$gs" profile --exec --out-dir /tmp/llama_c$c -o "$w/llama.c$c.txt" -- python3 tests/gpu/torch/origins_app.py llama --layers 8 > "$w/llama.c$c.log" 2>&1
  done
  (cd /tmp && tar -czf "$out/torch_exec.tgz" torch_c8 torch_c1 llama_c8 llama_c1)
  grep -c "" "$w"/*.txt | head -3
fi
pack_results
