#!/usr/bin/env bash
# Issue 45's cost of the run ledger: what recording a run costs a program
# that is mostly graphs (tests/gpu/torch/serving_app.py: a decode loop of
# batch-bucket graphs, a few eager steps) and one that is mostly eager
# (tests/gpu/torch/eager_app.py: an MLP trained eagerly, one graph replayed
# every tenth step), each these ways, RUNS rounds in turn through
# bench/compare.py (every process pinned as bench/pin.sh says):
#   plain    no graphscope                                  (the anchor)
#   capture  graphscope capture --exec: graphs, their costs, launches
#            counted (the default ledger; lets go of CUPTI when idle)
#   eager    graphscope capture --exec --eager: also every eager kernel and
#            copy and a record per replay (stays attached)
#   profile  graphscope profile --exec: every record, replays analysed
#   noliveness  capture --exec --liveness=off: what input liveness costs
#            (issue 46), capture against it
#   plain2   no graphscope again: the harness's A/A control
# Metric: the program's own time of its loop (loop_s in its timing file),
# and the whole process's wall time.
#   bench/ledger_cost.sh GRAPHSCOPE [RUNS]
# GS_LEDGER_APPS="eager" (or "serving"): one program only; GS_BENCH_CONFIGS
# ("plain eager"): those arms only (plain2 always runs).
# GS_BENCH_DRY_RUN=1: print what would run, run nothing.
set -euo pipefail
gs=$1; runs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
apps=$(cd "$here/../tests/gpu/torch" && pwd)
source "$here/pin.sh"
q() { local s; s=$(printf '%q ' "$@"); printf '%s' "${s% }"; }
for app in "serving_app.py --steps 3000" "eager_app.py --steps 2000"; do
  name=${app%%.py*}
  case " ${GS_LEDGER_APPS:-serving eager} " in *" ${name%_app} "*) ;; *) continue ;; esac
  py="$(q python3 "$apps/${app%% *}") ${app#* } --timing \"\$GS_RUN_DIR/timing.json\""
  att() { printf '%s --out-dir "$GS_RUN_DIR/dump" -- %s' "$(q "$gs" "$@")" "$py"; }
  configs=("plain=$py" "capture=$(att capture --exec)" "eager=$(att capture --exec --eager)"
           "profile=$(att profile --exec -o /dev/null)" "noliveness=$(att capture --exec --liveness=off)")
  if [ -n "${GS_BENCH_CONFIGS:-}" ]; then
    kept=()
    for c in "${configs[@]}"; do
      case " $GS_BENCH_CONFIGS " in *" ${c%%=*} "*) kept+=("$c") ;; esac
    done
    configs=("${kept[@]}")
  fi
  harness=(python3 "$here/compare.py" --rounds "$runs" --cpus "${cpus:-}" --show "^${name} counts"
           --metric "loop_s=json:timing.json:loop_s" --metric "wall_s=wall")
  echo "== $name"
  if [ "${GS_BENCH_DRY_RUN:-0}" = 1 ]; then "${harness[@]}" --dry-run "${configs[@]}"; continue; fi
  "${harness[@]}" "${configs[@]}"
done
