#!/usr/bin/env bash
# Everything the capture issue needs from the GPU machine, in one call:
# the gpu tests, compute-sanitizer, the capture benchmark, and the sample
# captures recorded as fixtures (tarred into $OUT). Built binaries travel in
# .dev/ (graphscope, samples, record_graphs, bench_capture) with their
# libraries in .devlibs/.
#   bash tests/gpu/device_run.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u +%Y-%m-%d >> "$out/device.txt"
echo "== gpu.capture_samples (with compute-sanitizer)"
SANITIZE=1 bash tests/gpu/capture_samples.sh .dev/graphscope .dev/samples /tmp/cap 2>&1 | tee "$out/capture_samples.log"
echo "exit ${PIPESTATUS[0]}"
echo "== gpu.record_and_read"
bash tests/record/gpu_record_test.sh .dev/record_graphs .dev/graphscope /tmp/gpurec > "$out/record_and_read.log" 2>&1
echo "exit $?"; tail -3 "$out/record_and_read.log"
echo "== instantiate modes"
for m in now later never; do
  .dev/graphscope capture .dev/samples/forkjoin.so --instantiate $m -o /tmp/fj.$m.json && \
    python3 -c "import json,sys; d=json.load(open('/tmp/fj.$m.json')); print('$m', d['exec_graph_id'], d['nodes'][0]['tools_id'], d['timings'])"
done
echo "== bench_capture"
.dev/bench_capture 100000 5 /tmp | tee "$out/bench_capture.log"
mkdir -p /tmp/fixtures
for f in /tmp/cap/*.json; do case $f in *.dot.json|*.san.json) ;; *) cp "$f" /tmp/fixtures/ ;; esac; done
cp /tmp/cap/*.nvidia*.dot /tmp/fixtures/ 2>/dev/null
tar -C /tmp/fixtures -czf "$out/captures.tgz" .
ls -la "$out"
