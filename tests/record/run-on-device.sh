#!/usr/bin/env bash
# Records the DOT/truth/PyTorch fixtures on the GPU machine. Run from the repo
# root there; results land in $OUT (tarred, to stay within the file limits).
#   bash tests/record/run-on-device.sh
set -euo pipefail
out=${OUT:-/tmp/out}
rec=/tmp/rec; rm -rf "$rec"; mkdir -p "$rec"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$rec/nvidia-smi.txt"
nvcc -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -o /tmp/record_graphs \
  tests/record/record_graphs.cu -lcupti -lcuda
/tmp/record_graphs "$rec" --big 100000 | tee "$rec/record_graphs.log"
PYTHONUNBUFFERED=1 python3 tests/record/record_torch.py "$rec" 2>&1 | tee "$rec/record_torch.log"
ls -la "$rec"
( cd "$rec" && gzip -9 big100000.verbose.dot big100000.dot && ls -la big* )
mv "$rec"/big100000.* "$out"/
tar -C "$rec" -czf "$out/recordings.tgz" .
ls -la "$out"
