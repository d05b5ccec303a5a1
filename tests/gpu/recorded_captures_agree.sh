#!/usr/bin/env bash
# CPU check of the recorded captures in tests/data/captures: each graph
# document graphscope wrote on the H100 must agree with the
# cudaGraphDebugDotPrint file written for the same graph in the same run,
# as read now by graphscope's DOT reader.
set -uo pipefail
gs=$1 root=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
data=$root/tests/data/captures
status=0; n=0
for j in "$data"/*.json; do
  name=$(basename "$j" .json)
  case $name in *.san.*) continue;; esac
  if [[ $name == *.* ]]; then dot=$data/${name%%.*}.nvidia.${name#*.}.dot; else dot=$data/$name.nvidia.dot; fi
  "$gs" dump "$dot" --json -o "$work/$name.dot.json" || { status=1; continue; }
  "$gs" dump "$j" --json -o "$work/$name.json" || { status=1; continue; }
  python3 "$root/tests/gpu/compare_graphs.py" "$work/$name.json" "$work/$name.dot.json" || status=1
  n=$((n + 1))
done
[ $n -ge 11 ] || { echo "only $n recorded captures found"; status=1; }
exit $status
