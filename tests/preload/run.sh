#!/usr/bin/env bash
# The preload library (lib/inject/preload.cc) forwards the calls that begin a
# graph to the real CUDA runtime, unchanged, and calls graphscope_take_back
# first while graphscope rests. No GPU needed: without a driver every call
# fails, and must fail with the same code through the preload library as
# without it, whether the runtime was loaded into the global scope or
# locally (RTLD_LOCAL, as Python loads PyTorch).
#   run.sh GS_PRELOAD_MAIN CALLER.so PRELOAD.so
set -uo pipefail
main=$1 caller=$2 preload=$3
status=0
bad() { echo "FAIL: $*"; status=1; }
for scope in local global; do
  plain=$("$main" "$caller" "$scope" rest) || bad "$scope: the program failed without the preload library"
  grep -q "^preload library absent" <<< "$plain" || bad "$scope: preload library found where it was not preloaded"
  codes=$(grep -v "^preload library" <<< "$plain")
  [ "$(wc -l <<< "$codes")" = 6 ] || bad "$scope: expected 6 results, got: $codes"
  for mode in norest rest each; do
    out=$(LD_PRELOAD=$preload "$main" "$caller" "$scope" "$mode") || bad "$scope $mode: the program failed"
    grep -q "^preload library loaded" <<< "$out" || bad "$scope $mode: preload library not loaded"
    got=$(grep -v "^preload library\|^take_back" <<< "$out")
    [ "$got" = "$codes" ] || bad "$scope $mode: results differ through the preload library: $got (without: $codes)"
    hooks=$(grep "^take_back" <<< "$out" | tr '\n' ' ')
    case $mode in
      norest) want="" ;;
      rest) want="take_back cudaStreamBeginCapture " ;;
      each) want="take_back cudaStreamBeginCapture take_back cudaGraphCreate take_back cudaGraphInstantiate take_back cudaGraphInstantiateWithFlags take_back cudaGraphInstantiateWithParams take_back cudaStreamBeginCaptureToGraph " ;;
    esac
    [ "$hooks" = "$want" ] || bad "$scope $mode: take_back calls '$hooks', expected '$want'"
  done
  echo "$scope: $(tr '\n' ' ' <<< "$codes")"
done
[ $status = 0 ] && echo "ok: the same results through the preload library, take_back where it rests"
exit $status
