#!/usr/bin/env bash
# Every test of the ctest label gpu, in one call on the GPU machine, on the
# files tests/gpu/stage.sh put in .dev/ and .devlibs/ (the device has no
# CLI11, JSON or Graphviz headers to build the tree). Same scripts, same
# arguments as tests/CMakeLists.txt gives them; logs under $OUT, one archive.
#   bash tests/gpu/device_suite.sh [TEST...]   (default: all ten; wheel, the
#   wheel in .whl/ through tests/gpu/device_wheel.sh, only when named)
set -uo pipefail
t_tail=${t_tail:-6}
source "$(dirname "$0")/device_common.sh"
export GRAPHSCOPE_INJECTION_LIBRARY=$root/.dev/libgraphscope_inject.so GRAPHSCOPE_LIVE_LIBRARY=$root/.dev/libgraphscope_live.so
gs=$root/.dev/graphscope s=$root/.dev/samples w=/tmp/gpu_suite
mkdir -p "$w"
all="capture_samples profile_samples origins attach_torch attach_native ledger ranks_torch record_and_read python_graph_data python_watch"
for name in ${@:-$all}; do
  case $name in
    capture_samples) t gpu.$name bash tests/gpu/capture_samples.sh "$gs" "$s" "$w/capture" ;;
    profile_samples) t gpu.$name bash tests/gpu/profile_run.sh "$gs" "$s" ;;
    origins) t gpu.$name bash tests/gpu/origins.sh "$gs" "$s" "$w/origins" ;;
    attach_torch) t gpu.$name bash tests/gpu/attach_torch.sh "$gs" "$w/attach" ;;
    attach_native) t gpu.$name bash tests/gpu/attach_native.sh "$gs" "$s/apps/attach_stress" "$w/attach_native" ;;
    ledger) t gpu.$name bash tests/gpu/ledger.sh "$gs" "$s/apps/attach_stress" "$w/ledger" ;;
    ranks_torch) t gpu.$name bash tests/gpu/ranks_torch.sh "$gs" "$w/ranks" ;;
    record_and_read) t gpu.$name bash tests/record/gpu_record_test.sh "$root/.dev/record_graphs" "$gs" "$w/record" ;;
    python_graph_data) t gpu.$name env GRAPHSCOPE_LIBRARY="$root/.dev/libgraphscope.so.0" PYTHONPATH="$root/python" \
      python3 tests/gpu/torch/graph_data_check.py "$w/graph_data" ;;
    python_watch) t gpu.$name env GRAPHSCOPE_LIBRARY="$root/.dev/libgraphscope.so.0" PYTHONPATH="$root/python" \
      python3 tests/gpu/torch/watch_app.py "$w/watch" ;;
    wheel) t gpu.$name bash tests/gpu/device_wheel.sh "$(ls "$root"/.whl/cudagraphscope-*.whl | head -1)" "$w/wheel" ;;
    *) echo "device_suite: no test $name"; exit 2 ;;
  esac
done
pack_results
