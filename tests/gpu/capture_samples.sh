#!/usr/bin/env bash
# gpu.capture_samples: captures every sample on this machine's GPU and checks
#  - graphscope's walk against cudaGraphDebugDotPrint of the same graph (read
#    by graphscope's DOT reader): nodes, types, kernel names, geometry, edges;
#  - the failure samples: exit 5, one line on stderr, no output file;
#  - with SANITIZE=1, compute-sanitizer (memcheck) finds nothing in a capture.
# Exits 77 (ctest: skipped) without a GPU.
#   capture_samples.sh GRAPHSCOPE SAMPLES_DIR WORK_DIR
set -uo pipefail
gs=$1 samples=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine: skipped"; exit 77
fi
rm -rf "$work"; mkdir -p "$work"
status=0
for so in "$samples"/*.so; do
  name=$(basename "$so" .so)
  case $name in fail_*) continue;; esac
  out=$work/$name
  if ! "$gs" capture "$so" -o "$out.json" --nvidia-dot "$out.nvidia.dot" 2> "$out.err"; then
    echo "FAIL $name: capture failed: $(cat "$out.err")"; status=1; continue
  fi
  # Several graphs: one file per graph, named FILE.GRAPH.json.
  for j in "$work/$name".json "$work/$name".*.json; do
    [ -f "$j" ] || continue
    case $j in *.dot.json) continue;; esac
    base=${j%.json}; dot=${base%.*}.nvidia.dot
    [ "$j" = "$out.json" ] && dot=$out.nvidia.dot || dot=$out.nvidia.${base##*.}.dot
    "$gs" dump "$dot" --json -o "$base.dot.json" || { status=1; continue; }
    python3 "$here/compare_graphs.py" "$j" "$base.dot.json" || status=1
  done
done
expect_fail() {  # name, extra args...
  local name=$1; shift
  local so=$samples/$name.so out=$work/$name
  [ -f "$so" ] || { echo "FAIL $name: sample missing"; status=1; return; }
  "$gs" capture "$so" -o "$out.json" "$@" > "$out.stdout" 2> "$out.err"
  local rc=$?
  local lines; lines=$(wc -l < "$out.err")
  if [ $rc -ne 5 ] || [ "$lines" -ne 1 ] || ! grep -q '^graphscope: ' "$out.err" || [ -e "$out.json" ] || [ -s "$out.stdout" ]; then
    echo "FAIL $name: exit $rc, stderr: $(cat "$out.err")"; status=1
  else
    echo "ok $name: exit 5: $(cat "$out.err")"
  fi
}
expect_fail fail_capture_illegal
expect_fail fail_error
expect_fail fail_segfault
expect_fail fail_hang --timeout 5
if [ "${SANITIZE:-0}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  for so in "$samples"/*.so; do
    name=$(basename "$so" .so)
    case $name in fail_*) continue;; esac
    log=$work/$name.sanitizer.log
    compute-sanitizer --tool memcheck --target-processes all --error-exitcode 9 \
      "$gs" capture "$so" -o "$work/$name.san.json" --replays 2 > "$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q "ERROR SUMMARY: 0 errors" "$log"; then
      echo "FAIL $name: compute-sanitizer exit $rc: $(grep -m3 -E 'ERROR|Error' "$log")"; status=1
    else
      echo "ok $name: compute-sanitizer memcheck: $(grep -m1 'ERROR SUMMARY' "$log")"
    fi
  done
fi
exit $status
