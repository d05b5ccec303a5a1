#!/usr/bin/env bash
# gpu.attach_torch: `graphscope capture --exec` and `profile --exec` on small
# PyTorch programs (tests/gpu/torch/attach_app.py) that know nothing of
# graphscope. Checks, on this machine's GPU:
#  - every graph graphscope dumped equals PyTorch's own debug_dump
#    (cudaGraphDebugDotPrint) of the same graph: nodes, types, kernel names,
#    geometry, edges (compare_graphs.py);
#  - keep_graph=False (PyTorch frees the template right after instantiating):
#    the dump equals debug_dump of the same program's graph from a second run;
#  - torch.compile(mode="reduce-overhead"): its graphs are dumped;
#  - the application's exit code passes through, and the output is complete
#    when it leaves with sys.exit right after its last replay;
#  - child processes each write their own directory;
#  - the PyTorch profiler in the application still works (graphscope stays
#    out of its way or says why), also with --stay-attached, where graphscope
#    has not let go when idle and steps aside when the profiler subscribes;
#  - profile --exec: a report per graph, with verdicts.
# Exits 77 (ctest: skipped) without a GPU or without PyTorch.
#   attach_torch.sh GRAPHSCOPE WORK_DIR
set -uo pipefail
gs=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
app=$here/torch/attach_app.py
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine: skipped"; exit 77
fi
python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || { echo "no PyTorch with CUDA: skipped"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
status=0
fail() { echo "FAIL $*"; status=1; }

# Compares the only graph a run dumped with a debug_dump DOT.
compare_with_dot() {  # run_dir dot [--ignore-graph-ids]
  local dir=$1 dot=$2; shift 2
  local docs=("$dir"/pid-*/graph-*.json)
  [ ${#docs[@]} -eq 1 ] && [ -f "${docs[0]}" ] || { fail "$dir: expected one graph, found ${#docs[@]}"; return; }
  "$gs" dump "$dot" --json -o "$dir/debug_dump.json" || { fail "$dot unreadable"; return; }
  python3 "$here/compare_graphs.py" "${docs[0]}" "$dir/debug_dump.json" "$@" || status=1
}

for mode in mlp two_stream; do
  d=$work/$mode.keep
  "$gs" capture --exec --out-dir "$d" -- python3 "$app" $mode --keep-graph --debug-dump "$d/torch" > "$d.out" 2>&1 ||
    { fail "$mode keep_graph=True: exit $?"; cat "$d.out"; continue; }
  compare_with_dot "$d" "$d/torch/$mode.dot"
  d=$work/$mode.nokeep
  "$gs" capture --exec --out-dir "$d" -- python3 "$app" $mode > "$d.out" 2>&1 ||
    { fail "$mode keep_graph=False: exit $?"; cat "$d.out"; continue; }
  compare_with_dot "$d" "$work/$mode.keep/torch/$mode.dot" --ignore-graph-ids
done

d=$work/compile
if "$gs" capture --exec --out-dir "$d" -- python3 "$app" compile > "$d.out" 2>&1; then
  n=$(ls "$d"/pid-*/graph-*.json 2>/dev/null | wc -l)
  [ "$n" -ge 1 ] && echo "ok torch.compile(mode=reduce-overhead): $n graphs dumped" || fail "compile: no graph dumped"
else
  echo "note: torch.compile did not run here (exit $?): $(tail -1 "$d.out")"
fi

d=$work/exit3
"$gs" capture --exec --out-dir "$d" -- python3 "$app" mlp --exit-code 3 > "$d.out" 2>&1
rc=$?
[ $rc -eq 3 ] && echo "ok exit code 3 passed through" || fail "exit code: $rc, expected 3"
grep -q '"complete": true' "$d"/pid-*/index.json && ls "$d"/pid-*/graph-*.json >/dev/null 2>&1 &&
  echo "ok output complete after sys.exit(3)" || fail "output incomplete after sys.exit(3)"

d=$work/children
"$gs" capture --exec --out-dir "$d" -- sh -c "python3 '$app' mlp & python3 '$app' two_stream; wait" > "$d.out" 2>&1 ||
  fail "children: exit $?"
n=$(ls -d "$d"/pid-* 2>/dev/null | wc -l)
[ "$n" -eq 2 ] && echo "ok two child processes, two directories" || fail "children: $n process directories, expected 2"

d=$work/profiler
"$gs" capture --exec --out-dir "$d" -- python3 "$app" mlp --profiler > "$d.out" 2>&1 || fail "app with the PyTorch profiler: exit $?"
grep -q "on the GPU: [1-9]" "$d.out" && echo "ok the application's PyTorch profiler ran: $(grep 'profiler events' "$d.out")" ||
  { fail "the PyTorch profiler recorded no GPU activity"; cat "$d.out"; }
grep -q "let go of CUPTI" "$d.out" && echo "ok graphscope said it let go: $(grep -m1 'let go' "$d.out")" ||
  fail "graphscope did not say it let go of CUPTI"
ls "$d"/pid-*/graph-*.json >/dev/null 2>&1 && echo "ok the graph captured before the profiler started was dumped" ||
  fail "no graph dumped before the profiler started"
# The same staying attached (--stay-attached): graphscope has not let go
# when idle before the profiler starts, so it steps aside when the
# application subscribes to CUPTI itself, and says so.
d=$work/profiler_stay
"$gs" capture --exec --stay-attached --out-dir "$d" -- python3 "$app" mlp --profiler > "$d.out" 2>&1 ||
  fail "app with the PyTorch profiler, --stay-attached: exit $?"
grep -q "on the GPU: [1-9]" "$d.out" && echo "ok --stay-attached: the application's PyTorch profiler ran" ||
  { fail "--stay-attached: the PyTorch profiler recorded no GPU activity"; cat "$d.out"; }
grep -q "subscribed to CUPTI itself" "$d.out" && echo "ok --stay-attached: $(grep -m1 'subscribed to CUPTI itself' "$d.out")" ||
  fail "--stay-attached: graphscope did not say the application subscribed to CUPTI itself"
grep -q "without a new graph or update" "$d.out" && fail "--stay-attached: graphscope let go when idle"
ls "$d"/pid-*/graph-*.json >/dev/null 2>&1 || fail "--stay-attached: no graph dumped before the profiler started"

d=$work/profile
"$gs" profile --exec --out-dir "$d" -o "$d.report.txt" --html "$d.report.html" -- python3 "$app" two_stream --replays 30 > "$d.out" 2>&1 ||
  fail "profile --exec: exit $?"
grep -q "^dependencies" "$d.report.txt" && echo "ok profile --exec: $(grep -m1 '^dependencies' "$d.report.txt")" ||
  { fail "profile --exec: no report"; cat "$d.out" "$d.report.txt"; }
ls "$d"/pid-*/profile-*.json "$d"/pid-*/trace-*.json >/dev/null 2>&1 || fail "profile --exec: no profile or trace file"
python3 "$(dirname "$0")/check_report_html.py" "$d.report.html" --run || fail "profile --exec --html: the page is wrong"
exit $status
