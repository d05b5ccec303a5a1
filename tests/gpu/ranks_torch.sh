#!/usr/bin/env bash
# gpu.ranks_torch: a two-process torchrun job with an NCCL all-reduce inside
# each rank's CUDA graph (tests/gpu/torch/ranks_app.py, which knows nothing
# of graphscope), run under `capture --exec` and `profile --exec`. Checks:
#  - the ranks' directories are rank-0 and rank-1, their indexes carry the
#    rank and the GPU;
#  - `graphscope ranks` finds them equal (exit 0), one all-reduce each;
#  - when rank 1 captures one all-reduce more, `ranks` exits 1 naming rank 1
#    and the NCCL node;
#  - profiled: the ranks side by side with their waits at the all-reduce,
#    and the merged trace's all-reduces end together on both ranks (one
#    clock);
#  - the application's output is unchanged (its replays match eager).
# Exits 77 (ctest: skipped) without two GPUs or without PyTorch and NCCL.
#   ranks_torch.sh GRAPHSCOPE WORK_DIR
set -uo pipefail
gs=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
app=$here/torch/ranks_app.py
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "${gpus:-0}" -ge 2 ] || { echo "fewer than two GPUs on this machine: skipped"; exit 77; }
python3 -c "import torch, torch.distributed as d; assert torch.cuda.device_count() >= 2 and d.is_nccl_available()" 2>/dev/null ||
  { echo "no PyTorch with CUDA and NCCL: skipped"; exit 77; }
# NVLink multicast stays off (it can take a shared host's GPUs down).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
rm -rf "$work"; mkdir -p "$work"
status=0
fail() { echo "FAIL $*"; status=1; }
run() {  # run NAME MODE ARGS...: graphscope MODE --exec on the torchrun job
  local name=$1 mode=$2; shift 2
  timeout -s KILL 240 "$gs" "$mode" --exec --out-dir "$work/$name" -- \
    python3 -m torch.distributed.run --standalone --nproc-per-node 2 "$app" "$@" > "$work/$name.out" 2>&1
  echo "$name: exit $?"
}

run equal capture
grep -c "result matches eager" "$work/equal.out" | grep -qx 2 || fail "equal: the replays did not match eager: $(tail -5 "$work/equal.out")"
python3 - "$work/equal" <<'PY' || fail "equal: the rank directories and indexes"
import json, os, sys
run = json.load(open(os.path.join(sys.argv[1], "index.json")))
ranked = [p for p in run["processes"] if p.get("rank")]
assert [p["dir"] for p in ranked] == ["rank-0", "rank-1"], [p["dir"] for p in run["processes"]]
for k, p in enumerate(ranked):
    r = p["rank"]
    assert (r["rank"], r["local_rank"], r["world_size"], r["source"]) == (k, k, 2, "RANK"), r
    assert p["device"]["ordinal"] == k and p["device"]["pci_bus_id"], p["device"]
    own = json.load(open(os.path.join(sys.argv[1], p["dir"], "index.json")))
    assert own["rank"] == r, own["rank"]
PY
"$gs" ranks "$work/equal" > "$work/equal.ranks" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "equal: ranks exit $rc: $(cat "$work/equal.ranks")"
grep -q "^graph #0: all 2 ranks agree (.* nodes, 1 collective)$" "$work/equal.ranks" || fail "equal: $(cat "$work/equal.ranks")"

run extra capture --extra-on 1
"$gs" ranks "$work/extra" > "$work/extra.ranks" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "extra: ranks exit $rc, expected 1: $(cat "$work/extra.ranks")"
grep -q "rank 1 differs from rank 0: .*+1 node [0-9]* ncclDevKernel_AllReduce.*(collectives 2 vs 1)" "$work/extra.ranks" ||
  fail "extra: rank 1's extra all-reduce not named: $(cat "$work/extra.ranks")"

run prof profile --replays 20
"$gs" ranks "$work/prof" --trace "$work/prof.trace.json" > "$work/prof.ranks" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "prof: ranks exit $rc: $(cat "$work/prof.ranks")"
grep -q "^  waited at collectives " "$work/prof.ranks" || fail "prof: no waits at collectives: $(cat "$work/prof.ranks")"
python3 - "$work/prof.trace.json" <<'PY' || fail "prof: the merged trace"
import json, sys
t = json.load(open(sys.argv[1]))
per = {}
for e in t["traceEvents"]:
    if e.get("ph") == "X" and e["args"].get("collective") == "nccl":
        per.setdefault(e["pid"], []).append(e["ts"] + e["dur"])
assert sorted(per) == [0, 1] and len(per[0]) == len(per[1]) >= 10, {k: len(v) for k, v in per.items()}
worst = max(abs(a - b) for a, b in zip(sorted(per[0]), sorted(per[1])))
print("all-reduces: %d per rank, their ends within %.2f us across ranks" % (len(per[0]), worst))
assert worst < 2.0, worst
PY
cat "$work/extra.ranks" "$work/prof.ranks"
[ $status -eq 0 ] && echo "ok: two ranks agree, a rank with an extra all-reduce is caught, profiles side by side"
exit $status
