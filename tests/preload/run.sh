#!/usr/bin/env bash
# The preload library (lib/inject/preload.cc) forwards the calls that begin a
# graph, change an exec graph, destroy a graph and launch one to the real
# CUDA runtime, unchanged, calls graphscope_take_back first while graphscope
# rests (graphscope_preload_seen saying it is inside such a call), and, with walks
# at destroy on, asks graphscope_graph_launch and graphscope_graph_destroy
# first (a destroy it takes returns success without the real call; a launch
# it refuses, --liveness=error, returns cudaErrorIllegalState). No GPU needed: without a driver every call
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
  [ "$(wc -l <<< "$codes")" = 13 ] || bad "$scope: expected 13 results, got: $codes"
  grep -q "^cudaGraphDestroy taken 0$" <<< "$codes" && bad "$scope: the destroy succeeded without a GPU"
  for mode in norest rest each defer; do
    out=$(LD_PRELOAD=$preload "$main" "$caller" "$scope" "$mode") || bad "$scope $mode: the program failed"
    grep -q "^preload library loaded" <<< "$out" || bad "$scope $mode: preload library not loaded"
    grep -q "not seen as inside\|says inside after" <<< "$out" && bad "$scope $mode: graphscope_preload_seen wrong: $out"
    got=$(grep -v "^preload library\|^take_back\|_hook" <<< "$out")
    want_codes=$codes
    [ $mode = defer ] && want_codes=$(sed 's/^cudaGraphDestroy taken .*/cudaGraphDestroy taken 0/' <<< "$codes")
    [ "$got" = "$want_codes" ] || bad "$scope $mode: results differ through the preload library: $got (expected: $want_codes)"
    hooks=$(grep "^take_back\|_hook" <<< "$out" | tr '\n' ' ')
    # Every launch goes to the injection library's launch hook (it counts
    # launches for the ledger, resting or not), before the real call.
    case $mode in
      norest) want="launch_hook 0x2000 " ;;
      rest) want="take_back cudaStreamBeginCapture launch_hook 0x2000 " ;;
      each) want="take_back cudaStreamBeginCapture take_back cudaGraphCreate take_back cudaGraphInstantiate take_back cudaGraphInstantiateWithFlags take_back cudaGraphInstantiateWithParams take_back cudaStreamBeginCaptureToGraph "
        want+="take_back cudaGraphExecUpdate take_back cudaGraphExecKernelNodeSetParams "
        want+="take_back cudaGraphExecMemcpyNodeSetParams1D take_back cudaGraphNodeSetEnabled launch_hook 0x2000 " ;;
      defer) want="launch_hook 0x2000 destroy_hook 0x1000 destroy_hook 0x3000 " ;;
    esac
    [ "$hooks" = "$want" ] || bad "$scope $mode: take_back calls '$hooks', expected '$want'"
  done
  # A launch the hook refuses returns cudaErrorIllegalState (401) without the real call.
  out=$(LD_PRELOAD=$preload "$main" "$caller" "$scope" refuse) || bad "$scope refuse: the program failed"
  grep -q "^cudaGraphLaunch 401$" <<< "$out" || bad "$scope refuse: the refused launch did not return 401: $(grep cudaGraphLaunch <<< "$out")"
  echo "$scope: $(tr '\n' ' ' <<< "$codes")"
done
[ $status = 0 ] && echo "ok: the same results through the preload library, take_back where it rests, every launch to the launch hook, destroys taken over where walks wait"
exit $status
