#!/usr/bin/env bash
# Every picture graphscope draws of the recordings must be accepted by
# Graphviz's own `dot` (our DOT is meant to be rendered elsewhere too).
set -euo pipefail
gs=$1 root=$2
command -v dot >/dev/null || { echo "dot (graphviz) is not installed"; exit 1; }
for f in "$root"/tests/data/nvidia/*.dot "$root"/tests/data/torch/*.dot "$root"/tests/data/derived/*.json; do
  "$gs" dump "$f" --dot | dot -Tsvg > /dev/null || { echo "dot refused the picture of $f"; exit 1; }
done
echo "dot accepted the pictures of every recording"
