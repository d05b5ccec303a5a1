#!/usr/bin/env bash
# gpu.profile_samples: live profiles of the samples on this machine's GPU,
# with 1 and 8 hardware connections (CUDA_DEVICE_MAX_CONNECTIONS): each must
# join every record to a node (no unmatched records) and report; graph,
# trace and report of each are tarred into $OUT as fixtures for the offline
# tests. Exits 77 (ctest: skipped) without a GPU.
#   bash tests/gpu/profile_run.sh GRAPHSCOPE SAMPLES_DIR
set -uo pipefail
gs=$1 samples=$2
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine: skipped"; exit 77
fi
out=${OUT:-/tmp/out}; mkdir -p "$out"
work=/tmp/prof; rm -rf "$work"; mkdir -p "$work"
status=0
for s in forkjoin wide chain mixed pdl memalloc two_graphs cublas_gemm; do
  if ! "$gs" profile "$samples/$s.so" --connections 1 8 --replays 20 --json -o "$work/$s.profile.json" \
       --trace-out "$work/$s.trace.json" --graph-out "$work/$s.graph.json" 2> "$work/$s.err"; then
    echo "FAIL $s: $(cat "$work/$s.err")"; status=1; continue
  fi
  for f in "$work/$s".*profile*.json; do
    python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["summary"]
print(f"ok {sys.argv[1].split('/')[-1]}: {d['replays']} replays, real {s['real']}, fake {s['fake']}, "
      f"blocking {s['blocking']}, time lost {s['time_lost_us']:.1f} us, makespan {s['makespan_us']:.1f} us, "
      f"critical path {s['critical_path_us']:.1f} us, unmatched {s['unmatched_records']}, lanes "
      + ", ".join(l['lane'] for l in d['lanes']))
sys.exit(1 if s["unmatched_records"] or d["replays"] != 20 else 0)
PY
    [ $? -eq 0 ] || status=1
  done
done
echo "== the HTML page of a live profile (profile --html): mixed"
if "$gs" profile "$samples/mixed.so" --replays 20 --html "$work/mixed.report.html" -o "$work/mixed.report.txt" 2> "$work/html.err"; then
  python3 "$(dirname "$0")/check_report_html.py" "$work/mixed.report.html" || status=1
else
  echo "FAIL profile --html: $(cat "$work/html.err")"; status=1
fi
echo "== text report: wide, 1 connection"
"$gs" profile "$samples/wide.so" --connections 1 --replays 20 | head -40
tar -C "$work" -czf "$out/profiles.tgz" .
exit $status
