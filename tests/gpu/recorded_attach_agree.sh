#!/usr/bin/env bash
# attach.recorded_agree (no GPU needed): the recordings of gpu.attach_torch in
# tests/data/attach, read again by this build:
#  - each graph graphscope dumped from a PyTorch program equals PyTorch's own
#    debug_dump of the same graph (keep_graph=True: the same process;
#    keep_graph=False: the graph of a second run of the same program);
#  - the recorded profile --exec report is what the offline analysis of the
#    recorded graph and trace says (verdict counts).
#   recorded_attach_agree.sh GRAPHSCOPE SOURCE_DIR WORK_DIR
set -uo pipefail
gs=$1 root=$2 work=$3
data=$root/tests/data/attach
rm -rf "$work"; mkdir -p "$work"
status=0
check() {  # graph.json dot [--ignore-graph-ids]
  local doc=$1 dot=$2; shift 2
  local name; name=$(echo "$doc" | tr '/' '_')
  "$gs" dump "$dot" --json -o "$work/$name.dot.json" || { status=1; return; }
  python3 "$root/tests/gpu/compare_graphs.py" "$doc" "$work/$name.dot.json" "$@" || status=1
}
for mode in mlp two_stream; do
  check "$(ls "$data/$mode.keep"/pid-*/graph-*.json)" "$data/$mode.keep/torch/$mode.dot"
  check "$(ls "$data/$mode.nokeep"/pid-*/graph-*.json)" "$data/$mode.keep/torch/$mode.dot" --ignore-graph-ids
done
p=$(ls -d "$data"/profile/pid-*)
"$gs" profile --graph "$p"/graph-*.json --trace "$p"/trace-*.json --json -o "$work/profile.json" || status=1
python3 - "$p"/profile-*.json "$work/profile.json" <<'PY' || status=1
import json, sys
rec, now = (json.load(open(f))["summary"] for f in sys.argv[1:3])
keys = ("real", "fake", "blocking", "none")
if any(rec[k] != now[k] for k in keys):
    sys.exit("MISMATCH recorded %s, offline %s" % ({k: rec[k] for k in keys}, {k: now[k] for k in keys}))
print("ok profile --exec report agrees with the offline analysis:", {k: now[k] for k in keys})
PY
exit $status
