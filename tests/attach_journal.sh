#!/usr/bin/env bash
# cli.attach_journal: a process killed with documents still queued for its
# writer thread leaves an index that does not list them; `graphscope
# capture --exec` reads the journal the injection library keeps and says
# which were written after the last index and which were lost. The
# "application" here is a shell that leaves behind what such a process
# leaves (a recorded index marked incomplete, its journal, one more graph
# written and one lost) and is then killed; no GPU is needed.
#   attach_journal.sh GRAPHSCOPE DATA_DIR WORK_DIR
set -uo pipefail
gs=$1 data=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
rec=$data/attach/mlp.nokeep/pid-483
out=$work/out
# The child gets GRAPHSCOPE_OUT from graphscope; it writes pid-483 there.
app="d=\$GRAPHSCOPE_OUT/pid-483; mkdir -p \$d
sed 's/\"complete\": *true/\"complete\": false/' '$rec/index.json' > \$d/index.json
cp '$rec/graph-2.json' \$d/graph-2.json; cp '$rec/graph-2.json' \$d/graph-7.json
printf 'queued graph-2.json\nqueued graph-7.json\nqueued graph-9.json\nqueued graph-1' > \$d/journal.txt
kill -9 \$\$"
"$gs" capture --exec --out-dir "$out" -- sh -c "$app" > "$work/summary.txt" 2> "$work/stderr.txt"
rc=$?
status=0
fail() { echo "FAIL $*"; status=1; }
[ "$rc" -eq 137 ] || fail "exit $rc, expected 137 (the application was killed)"
grep -q "not in its index: graph-7.json (written after the last index" "$work/summary.txt" || fail "graph-7.json not said written"
grep -q "not in its index: graph-9.json (lost: still queued" "$work/summary.txt" || fail "graph-9.json not said lost"
grep -q "graph-1\b" "$work/summary.txt" && fail "a line cut short (no newline) was read"
grep -c "not in its index" "$work/summary.txt" | grep -qx 2 || fail "graph-2.json, which the index lists, said unindexed"
python3 - "$out/index.json" <<'PY' || fail "the run index does not carry unindexed"
import json, sys
run = json.load(open(sys.argv[1]))
u = [x for p in run["processes"] for x in p.get("unindexed", [])]
assert len(u) == 2 and u[0].startswith("graph-7.json (written") and u[1].startswith("graph-9.json (lost"), u
PY
[ $status -eq 0 ] && echo "ok: $(grep -c 'not in its index' "$work/summary.txt") documents said not in the index"
cat "$work/summary.txt"
exit $status
