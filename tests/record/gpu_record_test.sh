#!/usr/bin/env bash
# gpu.record_and_read: records the fixture graphs on this machine's GPU and
# checks graphscope's reading of the DOT files against the graph API's truth.
# Exits 77 (ctest: skipped) when there is no usable GPU.
set -uo pipefail
rec=$1 gs=$2 dir=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine: skipped"; exit 77
fi
rm -rf "$dir"; mkdir -p "$dir"
if ! "$rec" "$dir" > "$dir/record.log" 2>&1; then
  if grep -qiE 'no CUDA-capable device|insufficient driver|CUDA driver version' "$dir/record.log"; then
    cat "$dir/record.log"; echo "no usable GPU: skipped"; exit 77
  fi
  cat "$dir/record.log"; exit 1
fi
command -v python3 >/dev/null || { echo "python3 is needed to compare"; exit 1; }
status=0
for truth in "$dir"/*.truth.json; do
  g=${truth%.truth.json}
  for dot in "$g.dot" "$g.verbose.dot"; do
    "$gs" dump "$dot" --json -o "$dot.json" || { status=1; continue; }
    python3 "$here/compare_truth.py" "$dot.json" "$truth" || status=1
  done
done
exit $status
