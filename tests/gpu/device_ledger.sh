#!/usr/bin/env bash
# The run ledger's test programs (issue 45) on the GPU machine, recorded:
# each runs plain (its own counts), under `capture --exec` (every graph,
# with origins, its costs, launches counted), under `capture --exec --eager`
# (the run's GPU work too) and under `profile --exec` (a trace of the
# replays, and the GPU work from every record); then a native program
# (samples/apps/attach_stress on the shared runtime) and JAX with XLA's
# command buffers under `capture --exec --eager`. Built files in .dev/
# (tests/gpu/stage.sh) with their libraries in .devlibs/. Logs and the run
# directories (traces left out: they weigh tens of MB) under $OUT, in one
# archive.
#   bash tests/gpu/device_ledger.sh [APP...]   (serving compile_shapes eager native jax)
set -uo pipefail
t_tail=${t_tail:-6}
source "$(dirname "$0")/device_common.sh"
export GRAPHSCOPE_INJECTION_LIBRARY=$root/.dev/libgraphscope_inject.so GRAPHSCOPE_LIVE_LIBRARY=$root/.dev/libgraphscope_live.so
gs=$root/.dev/graphscope
apps=("$@"); [ ${#apps[@]} -gt 0 ] || apps=(serving compile_shapes eager native jax)
run() {  # NAME MODE... -- COMMAND...: the command plain (MODE plain) or under graphscope
  local name=$1 mode=$2; shift 2
  [ "$1" = -- ] && shift
  case $mode in
    plain) t "$name" bash -c "timeout -s KILL 300 $* ; echo rc \$?" ;;
    *) t "$name" bash -c "timeout -s KILL 300 '$gs' $mode --out-dir /tmp/rec/$name -- $* ; echo rc \$?" ;;
  esac
}
mkdir -p /tmp/rec
for app in "${apps[@]}"; do
  case $app in
    serving|compile_shapes)
      py="python3 tests/gpu/torch/${app}_app.py"
      run $app.plain plain -- "$py --counts /tmp/rec/$app.plain.counts.json"
      run $app.capture "capture --exec" -- "$py --counts /tmp/rec/$app.capture.counts.json"
      run $app.eager "capture --exec --eager" -- "$py --counts /tmp/rec/$app.eager.counts.json"
      run $app.profile "profile --exec" -- "$py --counts /tmp/rec/$app.profile.counts.json"
      for m in capture eager profile; do mv /tmp/rec/$app.$m.counts.json /tmp/rec/$app.$m/ 2>/dev/null; done ;;
    eager)
      run eager.eager "capture --exec --eager" -- "python3 tests/gpu/torch/eager_app.py --steps 200" ;;
    native)  # one graph, 1,002 launches: 501 before a pause, 501 after (graphscope rests in it on the shared runtime)
      run native.capture "capture --exec" -- ".dev/samples/apps/attach_stress_shared idle 4"
      run native_static.capture "capture --exec" -- ".dev/samples/apps/attach_stress idle 4"
      run native.eager "capture --exec --eager" -- ".dev/samples/apps/attach_stress_shared idle 1" ;;
    jax)
      export XLA_FLAGS="--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,WHILE,CONDITIONAL --xla_gpu_graph_min_graph_size=1"
      run jax.eager "capture --exec --eager" -- "python3 tests/gpu/jax_app.py"
      unset XLA_FLAGS ;;
  esac
done
for d in /tmp/rec/*/; do
  n=$(basename "$d")
  [ -f "$d/ledger.json" ] && "$gs" ledger "$d" > "$out/$n.ledger.txt" 2>&1
  cp "$out/$n.log" "$d/../$n.out" 2>/dev/null
done
# The serving profile's traces apart (kept compressed, for a look at its records), the others dropped.
[ -d /tmp/rec/serving.profile ] && (cd /tmp/rec && tar -czf "$out/serving_profile_traces.tgz" $(cd /tmp/rec && find serving.profile -name '*.trace.json'))
find /tmp/rec -name '*.trace.json' -delete
(cd /tmp/rec && tar -czf "$out/ledger_recordings.tgz" .)
pack_results
