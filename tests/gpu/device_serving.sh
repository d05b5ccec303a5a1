#!/usr/bin/env bash
# The serving-scale issue's (17) GPU run, in one call on the device machine:
# graphscope attached to a native program that updates, forks, resets and
# kills (gpu.attach_native), the PyTorch attach tests, the samples, and the
# serving-like start-up benchmark. Built files travel in .dev/ (graphscope,
# its injection library and live module, attach_stress,
# libbare_cupti_inject.so, samples/) with their libraries in .devlibs/.
# Writes logs under $OUT, in one archive.
#   bash tests/gpu/device_serving.sh [safety|origins|bench|all] [RUNS]
set -uo pipefail
t_tail=12
source "$(dirname "$0")/device_common.sh"
export GRAPHSCOPE_INJECTION_LIBRARY=$root/.dev/libgraphscope_inject.so GRAPHSCOPE_LIVE_LIBRARY=$root/.dev/libgraphscope_live.so
part=${1:-all} runs=${2:-3}
if [ "$part" = safety ] || [ "$part" = all ]; then
  t attach_native bash tests/gpu/attach_native.sh .dev/graphscope .dev/attach_stress /tmp/native
  cp /tmp/native/*.out /tmp/native/*.txt "$out/" 2>/dev/null
  t capture_samples bash tests/gpu/capture_samples.sh .dev/graphscope .dev/samples /tmp/cap
  t profile_samples bash tests/gpu/profile_run.sh .dev/graphscope .dev/samples
  t attach_torch bash tests/gpu/attach_torch.sh .dev/graphscope /tmp/attach
fi
if [ "$part" = origins ] || [ "$part" = all ]; then
  t attach_native bash tests/gpu/attach_native.sh .dev/graphscope .dev/attach_stress /tmp/native
  t origins bash tests/gpu/origins.sh .dev/graphscope .dev/samples /tmp/origins
  # The origin cache must give every node the origin it had when recorded.
  t same_origins python3 tests/gpu/same_origins.py tests/data/origins/llama8.graph.json /tmp/origins/llama8.graph.json
fi
if [ "$part" = bench ] || [ "$part" = all ]; then
  t serving_startup bash bench/serving_startup.sh .dev/graphscope "$root/.dev/libbare_cupti_inject.so" "$runs"
fi
pack_results
