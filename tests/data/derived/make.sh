#!/usr/bin/env bash
# Regenerates the derived fixtures from the recordings (see README.md).
#   tests/data/derived/make.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
gs=${1:-$root/build}/apps/graphscope
"$gs" dump "$root/tests/data/nvidia/child.verbose.dot" --json -o "$here/child.json"
"$gs" dump "$root/tests/data/torch/torch_two_stream.debug_dump.dot" --json -o /tmp/two_stream.json
python3 "$here/pytorch_subset.py" /tmp/two_stream.json "$here/torch_two_stream.pytorch.json"
