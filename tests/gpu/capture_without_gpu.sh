#!/usr/bin/env bash
# cli.capture_without_gpu: on a machine with no GPU (or no driver), capture
# must say so in one line and exit 4, leaving no output file; a bad workload
# path or a shared object that is not a workload must still be exit 3 there.
# Skipped (77) where a GPU is present: gpu.capture_samples covers that case.
set -uo pipefail
gs=$1 samples=$2 work=$3
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "a GPU is present: skipped"; exit 77
fi
rm -rf "$work"; mkdir -p "$work"
status=0
check() {  # expected-exit, pattern, args...
  local want=$1 pattern=$2; shift 2
  "$gs" "$@" > "$work/stdout" 2> "$work/stderr"
  local rc=$?
  if [ $rc -ne "$want" ] || [ "$(wc -l < "$work/stderr")" -ne 1 ] || ! grep -qE "$pattern" "$work/stderr" \
     || [ -s "$work/stdout" ] || [ -e "$work/out.json" ]; then
    echo "FAIL: graphscope $* -> exit $rc: $(cat "$work/stderr")"; status=1
  else
    echo "ok (exit $rc): $(cat "$work/stderr")"
  fi
}
check 4 '^graphscope: (no usable NVIDIA driver|no CUDA device)' capture "$samples/chain.so" -o "$work/out.json"
check 4 '^graphscope: (no usable NVIDIA driver|no CUDA device)' capture "$samples/two_graphs.so" -o "$work/out.json" -- --n 64
check 3 '^graphscope: .*no-such\.so \(No such file' capture "$work/no-such.so" -o "$work/out.json"
check 3 'not a graphscope workload' capture "$(ldconfig -p | awk '/libm\.so\.6 /{print $NF; exit}')" -o "$work/out.json"
check 2 '^graphscope: ' capture "$samples/chain.so" --capture-mode sideways
# A graph is chosen by --name (as in profile); --graph stays an alias for one release.
check 2 '^graphscope: --name nosuch \(the workload has no such graph \(it has: forward, backward\)\)$' \
  capture "$samples/two_graphs.so" --name nosuch -o "$work/out.json"
check 2 '^graphscope: --name nosuch \(the workload has no such graph' capture "$samples/two_graphs.so" --graph nosuch \
  -o "$work/out.json"
exit $status
