#!/usr/bin/env bash
# The run ledger's test programs (issue 45) on the GPU machine, recorded:
# each runs plain (its own counts, with the time it took), under
# `capture --exec` (every graph, with origins) and under `profile --exec`
# (each graph's launches and a trace of its replays). Built files in .dev/
# (tests/gpu/stage.sh) with their libraries in .devlibs/. Logs and the run
# directories under $OUT, in one archive.
#   bash tests/gpu/device_ledger.sh
set -uo pipefail
t_tail=${t_tail:-6}
source "$(dirname "$0")/device_common.sh"
export GRAPHSCOPE_INJECTION_LIBRARY=$root/.dev/libgraphscope_inject.so GRAPHSCOPE_LIVE_LIBRARY=$root/.dev/libgraphscope_live.so
gs=$root/.dev/graphscope
for app in serving compile_shapes; do
  py=tests/gpu/torch/${app}_app.py
  t ${app}_plain bash -c "timeout -s KILL 300 python3 $py --counts /tmp/$app.plain.counts.json; echo rc \$?"
  t ${app}_capture bash -c "timeout -s KILL 300 '$gs' capture --exec --out-dir /tmp/$app.capture -- python3 $py --counts /tmp/$app.capture.counts.json; echo rc \$?"
  t ${app}_profile bash -c "timeout -s KILL 300 '$gs' profile --exec --out-dir /tmp/$app.profile -- python3 $py --counts /tmp/$app.profile.counts.json; echo rc \$?"
  for m in capture profile; do cp /tmp/$app.$m.counts.json /tmp/$app.$m/ 2>/dev/null; done
  (cd /tmp && tar -czf "$out/$app.tgz" $app.capture $app.profile $app.plain.counts.json)
done
pack_results
