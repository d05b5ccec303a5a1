#!/usr/bin/env bash
# gpu.ledger: the run ledger (issue 45) against what programs know they did,
# on this machine's GPU (tests/gpu/ledger_check.py says what is checked):
#  - the serving loop (tests/gpu/torch/serving_app.py) under capture --exec:
#    each bucket's launches, capture and instantiate times, the bucket never
#    replayed; under capture --exec --eager and profile --exec also the
#    fallback runs;
#  - a native program (samples/apps/attach_stress idle, shared and static
#    CUDA runtime) that replays one graph 1,002 times around a pause in which
#    graphscope lets go of CUPTI (shared runtime: the preload library counts
#    the launches after it) or stays attached (static): every launch counted.
# Exits 77 (ctest: skipped) without a GPU; the PyTorch part is skipped
# without PyTorch.
#   ledger.sh GRAPHSCOPE ATTACH_STRESS WORK_DIR
set -uo pipefail
gs=$1 app=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine: skipped"; exit 77
fi
rm -rf "$work"; mkdir -p "$work"
status=0
check() { python3 "$here/ledger_check.py" "$@" || status=1; }
# The native program: the graph of run_idle launched 2 x (1 + 500) times,
# beside the graphs of its other set-up (attach_stress.cu).
for rt in shared static; do
  exe=$app; [ $rt = shared ] && exe=${app}_shared
  [ -x "$exe" ] || { echo "no $exe: skipped"; continue; }
  "$gs" capture --exec --out-dir "$work/native.$rt" -- "$exe" idle 4 > "$work/native.$rt.log" 2>&1 ||
    { echo "FAIL native $rt: exit $?"; status=1; continue; }
  # The program's launches, from its code: the idle graph 2 x (1 + 500)
  # times; every other graph it makes (one_graph, and run_threads(1): four
  # threads, a graph each) once.
  want=$(python3 -c 'import json, sys; x = json.load(open(sys.argv[1])); print(1002 + sum(len(p["graphs"]) for p in x["processes"]) - 1)' "$work/native.$rt/index.json")
  check native "$work/native.$rt/ledger.json" "$want"
done
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  py="python3 $here/torch/serving_app.py"
  for mode in "capture --exec" "capture --exec --eager" "profile --exec"; do
    d=$work/serving.${mode// /_}
    "$gs" $mode --out-dir "$d" -- $py --counts "$work/counts.json" > "$d.log" 2>&1 ||
      { echo "FAIL serving under $mode: exit $?"; tail -5 "$d.log"; status=1; continue; }
    extra=; [ "$mode" = "capture --exec" ] || extra=--eager
    check serving "$d/ledger.json" "$work/counts.json" $extra
  done
else
  echo "no PyTorch with CUDA: the serving part skipped"
fi
exit $status
