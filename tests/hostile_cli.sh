#!/usr/bin/env bash
# cli.hostile: graphscope's promises with hostile paths, special files and
# option values, one case each, on recorded inputs. No GPU is needed; run as
# root (CI does), it also writes to a character device of its own.
#   hostile_cli.sh GRAPHSCOPE DATA_DIR WORK_DIR
# Each case checks the exit code, that stderr is one "graphscope: " line when
# the command fails, and what is left on disk.
set -uo pipefail
gs=$1 data=$2 work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
status=0
fail() { echo "FAIL $*"; status=1; }
# expect CODE NAME ARGS...: runs graphscope (at most 60 s), checks the exit
# code and, on failure, the one line on stderr.
expect() {
  local want=$1 name=$2; shift 2
  timeout 60 "$gs" "$@" > "$name.out" 2> "$name.err"
  local rc=$?
  [ "$rc" -eq "$want" ] || { fail "$name: exit $rc, expected $want: $(head -c 400 "$name.err")"; return; }
  if [ "$want" -ge 2 ]; then
    [ "$(wc -l < "$name.err")" -eq 1 ] && grep -q '^graphscope: ' "$name.err" ||
      fail "$name: stderr is not one 'graphscope: ' line: $(head -c 400 "$name.err")"
    [ "$(wc -c < "$name.err")" -le 200 ] || fail "$name: a message of $(wc -c < "$name.err") bytes"
  fi
}
# says NAME PATTERN: the stderr of case NAME matches the extended regex.
says() { grep -Eq -- "$2" "$1.err" || fail "$1: stderr does not say /$2/: $(head -c 400 "$1.err")"; }
absent() { for f in "$@"; do [ ! -e "$f" ] || fail "$f was left behind"; done; }
type_is() { [ "$(stat -c %F "$1")" = "$2" ] || fail "$1 is a $(stat -c %F "$1"), expected a $2"; }
temporaries() { ls -a | grep -q '\.tmp\.' && fail "a temporary file was left: $(ls -a | grep '\.tmp\.')"; }

g=$data/captures/forkjoin.json
pg=$data/profiles/forkjoin.c1.graph.json pt=$data/profiles/forkjoin.c1.trace.json

# --- Outputs that exist and are not regular files are written through.
mkfifo fifo
( timeout 20 cat fifo > fifo.read ) & reader=$!
expect 0 fifo dump "$g" --json -o fifo
wait $reader
type_is fifo fifo
cmp -s fifo.read <("$gs" dump "$g" --json) || fail "fifo: the reader did not get the JSON"
if [ "$(id -u)" -eq 0 ]; then
  mknod null c 1 3 && chmod 666 null
  expect 0 device dump "$g" --json -o null
  type_is null "character special file"
fi
expect 0 dev_null dump "$g" --json -o /dev/null
type_is /dev/null "character special file"
"$gs" dump "$g" -o /dev/stdout > via_stdout.txt 2> via_stdout.err || fail "dev_stdout: exit $?"
[ -s via_stdout.txt ] || fail "dev_stdout: nothing reached standard output"
[ -L /dev/stdout ] || fail "/dev/stdout is no longer a symbolic link"
ln -s /proc/self/fd/1 out_link
"$gs" dump "$g" -o out_link > via_link.txt 2> via_link.err || fail "fd_link: exit $?"
cmp -s via_link.txt via_stdout.txt || fail "fd_link: standard output differs from /dev/stdout's"
[ -L out_link ] || fail "out_link is no longer a symbolic link"
# A link to a regular file stays a link; the file it names is replaced.
echo old > real.json; ln -s real.json link.json
expect 0 link dump "$g" --json -o link.json
[ -L link.json ] || fail "link.json is no longer a symbolic link"
cmp -s real.json <("$gs" dump "$g" --json) || fail "link: real.json does not hold the JSON"
# A directory is refused.
mkdir adir
expect 3 directory dump "$g" --json -o adir
says directory "adir \(is a directory\)"

# --- An output that resolves to an input of the same command: usage error,
# the input untouched.
cp "$data/captures/chain.json" B.json; cp B.json B.orig
expect 2 report_b report "$g" B.json -o B.json
says report_b "B.json \(is an input of this command"
cmp -s B.json B.orig || fail "report_b: B.json was changed"
cp "$pt" T.json; cp T.json T.orig
expect 2 trace_out profile --graph "$pg" --trace T.json --trace-out T.json -o p.txt
cmp -s T.json T.orig || fail "trace_out: T.json was changed"
absent p.txt
ln -s B.json B.link
expect 2 through_link dump B.json --json -o B.link
cmp -s B.json B.orig || fail "through_link: B.json was changed"
expect 2 same_output profile --graph "$pg" --trace "$pt" -o twice.txt --trace-out ./twice.txt
says same_output "names the same file as another output"
absent twice.txt
temporaries

# --- A command's outputs are all or nothing.
expect 3 partial_profile profile --graph "$pg" --trace "$pt" -o X.txt --html /nonexistent-gs-dir/h.html
absent X.txt
expect 3 partial_check check "$g" --max-nodes 100 --junit J.xml -o /nonexistent-gs-dir/o.txt
absent J.xml
expect 3 partial_full check "$g" --max-nodes 100 --junit J.xml -o /dev/full
says partial_full "No space left on device"
absent J.xml
temporaries

# --- An output replacing a file keeps its mode.
echo x > private.json; chmod 600 private.json
expect 0 mode dump "$g" --json -o private.json
[ "$(stat -c %a private.json)" = 600 ] || fail "mode: private.json is now $(stat -c %a private.json)"

# --- Inputs that are not regular files.
start=$(date +%s%N)
expect 3 dev_zero dump /dev/zero
says dev_zero "/dev/zero \(not a graph document"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 10000 ] || fail "dev_zero took $ms ms"
expect 3 dev_zero_trace profile --graph "$pg" --trace /dev/zero
says dev_zero_trace "/dev/zero \(not JSON: it starts with byte 0x00\)"
expect 3 zero_rules check "$g" --rules /dev/zero
expect 0 stdin_graph dump - < "$g"

# --- A dense DAG: 200 nodes, 19,900 edges. The picture is left out with a
# note; the rest is written, in well under the 60 s the case allows.
python3 - <<'PY'
import json
n = 200
nodes = [{"index": i, "node_type": "kernel", "tools_id": (1 << 32) | i, "graph_id": 1, "node_id": i,
          "kernel_name": "k%d" % i, "event_ptr": 0, "dependencies": list(range(i)),
          "dependents": list(range(i + 1, n))} for i in range(n)]
json.dump({"nodes": nodes}, open("dense.json", "w"))
PY
expect 2 dense_svg dump dense.json --svg -o dense.svg
says dense_svg "edge segments"
absent dense.svg
expect 0 dense_report report dense.json -o dense.html
grep -q "edge segments" dense.html || fail "dense_report: the page does not say why the picture was left out"
expect 0 dense_summary dump dense.json

# --- Option values: validated for their meaning, one short line.
expect 2 nan profile --graph "$data/profiles/wide.c1.graph.json" --trace "$data/profiles/wide.c1.trace.json" --threshold-us nan
says nan "--threshold-us: nan is not a number"
expect 2 inf report "$g" --tolerance-us inf -o r.html
expect 2 wrap report "$g" --exec-graph-id 99999999999 -o r.html
says wrap "99999999999 is not a whole number from 0 to 4294967295"
expect 2 negative dump "$g" --svg --svg-max-nodes -1
expect 2 max_lines diff "$g" "$data/captures/chain.json" --max-lines 0
expect 2 launch report "$g" --launch 1,-2 -o r.html
expect 2 timeout profile "$data/captures/forkjoin.json" --timeout nan
absent r.html

# --- Graphviz without its plugins: the picture says how to get them.
GVBINDIR=$work/no-plugins expect 2 no_plugins dump "$g" --svg -o np.svg
says no_plugins "apt install libgvc6.*dot -c"
absent np.svg
GVBINDIR=$work/no-plugins expect 0 no_plugins_report report "$g" -o np.html
grep -q "apt install libgvc6" np.html || fail "no_plugins_report: the page does not say how to get the plugins"

# --- dump --svg FILE and --dot FILE mean what they mean in capture and profile.
expect 0 svg_file dump "$g" --svg pic.svg --dot pic.dot
grep -q "^graph " svg_file.out || grep -q "nodes" svg_file.out || fail "svg_file: no summary on standard output"
grep -q "<svg" pic.svg || fail "svg_file: pic.svg is not an SVG"
grep -q "digraph" pic.dot || fail "svg_file: pic.dot is not DOT"
expect 0 svg_switch dump "$g" --svg -o switch.svg
cmp -s pic.svg switch.svg || fail "svg_switch: --svg -o and --svg FILE drew different pictures"
expect 2 two_switches dump "$g" --svg --dot
says two_switches "give one"

exit $status
