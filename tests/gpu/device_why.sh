#!/usr/bin/env bash
# Issue 46 on the GPU machine: gpu.why (tests/gpu/why.sh: stale inputs in a
# native and a PyTorch program, refused and no-op exec graph updates), then
# correct programs under `capture --exec` (liveness report, the default),
# each checked for no finding (tests/gpu/why_check.py none): transformers'
# Llama captured with torch.cuda.graph, torch.compile reduce-overhead (one
# shape, and compile_shapes_app.py re-recording for four), the serving loop,
# CuPy, JAX with XLA's command buffers, a native program's updates
# (attach_stress update) and NVIDIA's cuda-samples graph programs (built on
# the CPU machine into .cs/, tests/gpu/build_cuda_samples.sh). Built files in
# .dev/ (tests/gpu/stage.sh) with their libraries in .devlibs/. Logs, each
# run's directory and its ledger (NAME.ledger.txt) under $OUT, in one
# archive (traces left out).
#   bash tests/gpu/device_why.sh [test] [correct | NAME...]   (NAME: one correct program, e.g. cupy)
set -uo pipefail
t_tail=${t_tail:-8}
source "$(dirname "$0")/device_common.sh"
export GRAPHSCOPE_INJECTION_LIBRARY=$root/.dev/libgraphscope_inject.so GRAPHSCOPE_LIVE_LIBRARY=$root/.dev/libgraphscope_live.so
gs=$root/.dev/graphscope
parts=("$@"); [ ${#parts[@]} -gt 0 ] || parts=(test correct)
rm -rf /tmp/why; mkdir -p /tmp/why
only=()
for p in "${parts[@]}"; do [ "$p" = test ] || [ "$p" = correct ] || only+=("$p"); done
[ ${#only[@]} -gt 0 ] && parts+=(correct)
correct() {  # NAME COMMAND...: under capture --exec, then checked for no finding
  local name=$1; shift
  [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $name "* ]] || return 0
  t "$name" bash -c "timeout -s KILL 300 '$gs' capture --exec --out-dir /tmp/why/$name -- $* ; echo rc \$?"
  t "$name.check" python3 tests/gpu/why_check.py none /tmp/why/$name
}
for part in "${parts[@]}"; do
  case $part in
    test) t gpu.why bash tests/gpu/why.sh "$gs" .dev/samples/apps /tmp/why/test ;;
    correct)
      correct llama "python3 tests/gpu/torch/origins_app.py llama --captures 2"
      correct compile "python3 tests/gpu/torch/origins_app.py compile"
      correct compile_shapes "python3 tests/gpu/torch/compile_shapes_app.py"
      correct serving "python3 tests/gpu/torch/serving_app.py --steps 300"
      correct cupy "python3 tests/gpu/cupy_graph_app.py"
      XLA_FLAGS="--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,WHILE,CONDITIONAL --xla_gpu_graph_min_graph_size=1" \
        correct jax "python3 tests/gpu/jax_app.py"
      correct native_update ".dev/samples/apps/attach_stress update"
      for x in .cs/bin/*; do [ -x "$x" ] && correct "cs.$(basename "$x")" "$x"; done ;;
  esac
done
for d in /tmp/why/*/ /tmp/why/test/*/; do
  n=$(basename "$d")
  [ -f "$d/ledger.json" ] && "$gs" ledger "$d" > "$out/$n.ledger.txt" 2>&1
done
find /tmp/why -name '*.trace.json' -delete
(cd /tmp/why && tar -czf "$out/why_recordings.tgz" .)
pack_results
