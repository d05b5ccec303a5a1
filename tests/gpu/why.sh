#!/usr/bin/env bash
# gpu.why: why graphs broke (issue 46) against what programs know they did,
# on this machine's GPU (tests/gpu/why_check.py says what is checked):
#  - samples/apps/stale_input free (shared and static CUDA runtime): the
#    input freed in drop_input and handed out again in reuse_memory is found
#    at replay 4 under capture --exec; under --liveness=error (shared
#    runtime) that launch is refused, the program sees the error (exit 4);
#    stale_input_shared free_idle: the same free after graphscope let go of
#    CUPTI (idle 3 s), seen through its preload library;
#    stale_input ok: no finding;
#  - samples/apps/exec_update fail: the two updates CUDA refuses, with the
#    driver's results; exec_update ok: versions whose arguments changed and
#    the no-op updates counted;
#  - tests/gpu/torch/stale_input_app.py: static_x garbage-collected and its
#    block reused, found at its free line, refused under --liveness=error;
#    --mode ok: no finding (skipped without PyTorch).
# Exits 77 (ctest: skipped) without a GPU.
#   why.sh GRAPHSCOPE APPS_DIR WORK_DIR
set -uo pipefail
gs=$1 apps=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine: skipped"; exit 77
fi
rm -rf "$work"; mkdir -p "$work"
status=0
check() { python3 "$here/why_check.py" "$@" || status=1; }
# NAME WANT_RC MODE... -- COMMAND...: the command under graphscope MODE into $work/NAME.
run() {
  local name=$1 want=$2; shift 2
  local mode=()
  while [ "$1" != -- ]; do mode+=("$1"); shift; done
  shift
  mkdir -p "$work/$name"
  "$gs" "${mode[@]}" --out-dir "$work/$name" -- "$@" > "$work/$name.log" 2>&1
  local rc=$?
  [ "$rc" = "$want" ] || { echo "FAIL $name: exit $rc, not $want ($(tail -2 "$work/$name.log" | tr '\n' ' '))"; status=1; }
}
for exe in stale_input_shared stale_input; do
  [ -x "$apps/$exe" ] || { echo "no $apps/$exe: skipped"; continue; }
  run $exe.free 0 capture --exec -- "$apps/$exe" free && check stale_native "$work/$exe.free"
  run $exe.ok 0 capture --exec -- "$apps/$exe" ok && check none "$work/$exe.ok"
done
if [ -x "$apps/stale_input_shared" ]; then
  # The free while graphscope rests (idle 3 s: CUPTI let go), seen through the preload library.
  run stale_input_shared.free_idle 0 capture --exec -- "$apps/stale_input_shared" free_idle &&
    check stale_native "$work/stale_input_shared.free_idle"
  grep -qs '"let_go_count": [1-9]' "$work"/stale_input_shared.free_idle/pid-*/index.json ||
    { echo "FAIL stale_input_shared.free_idle: graphscope did not let go of CUPTI in the idle time"; status=1; }
  run stale_input_shared.error 4 capture --exec --liveness=error -- "$apps/stale_input_shared" free &&
    check stale_native "$work/stale_input_shared.error" refused
  grep -q "cudaGraphLaunch failed" "$work/stale_input_shared.error.log" ||
    { echo "FAIL stale_input_shared.error: the program did not see the refused launch"; status=1; }
fi
if [ -x "$apps/exec_update" ]; then
  run exec_update.fail 0 capture --exec -- "$apps/exec_update" fail && check update_fail "$work/exec_update.fail"
  run exec_update.ok 0 capture --exec -- "$apps/exec_update" ok && check update_ok "$work/exec_update.ok"
fi
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  py="python3 $here/torch/stale_input_app.py"
  run torch.bug 0 capture --exec -- $py --mode bug --counts "$work/torch.bug/counts.json" &&
    check stale_torch "$work/torch.bug" "$work/torch.bug/counts.json"
  run torch.error 4 capture --exec --liveness=error -- $py --mode bug --counts "$work/torch.error/counts.json" &&
    check stale_torch "$work/torch.error" "$work/torch.error/counts.json" refused
  run torch.ok 0 capture --exec -- $py --mode ok --counts "$work/torch.ok/counts.json" && check none "$work/torch.ok"
else
  echo "no PyTorch with CUDA: its part skipped"
fi
exit $status
