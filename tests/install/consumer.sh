#!/usr/bin/env bash
# Installs this build into a fresh prefix and uses it as a user would:
#   consumer.sh SOURCE_DIR BUILD_DIR WORK_DIR
# - the layout: public headers under include/graphscope/, internal ones not
#   installed, the libraries, CMake package, pkg-config files, schemas,
#   Python package and compressed manual;
# - every public header compiles on its own with -I PREFIX/include (and
#   CUDA's include directory for graphscope/capture/);
# - lib/inspect is linked once: the CLI and the C API need
#   libgraphscope_inspect.so.0 and define none of its functions;
# - examples/consumer builds with find_package(graphscope) and prints what
#   `graphscope dump` prints; a C program builds with pkg-config, and a
#   C++20 one too (no -std= in the .pc files);
# - the CLI and the libraries name no CUDA library, and the offline commands
#   (dump, diff, check, profile, report) load none;
# - a live command whose module cannot be loaded says so in one line, exit 4;
# - the installed Python package finds the installed library.
set -euo pipefail
src=$1 build=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
prefix=$work/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(cd "$prefix" && ls -d lib/x86_64-linux-gnu 2>/dev/null || echo lib)
[ -f "$prefix/$libdir/libgraphscope_inspect.so.0" ] || libdir=lib

for f in include/graphscope/graphscope.h include/graphscope/workload.h include/graphscope/inspect/model/graph.h \
         include/graphscope/inspect/formats/load.h "$libdir/libgraphscope_inspect.so.0" "$libdir/libgraphscope.so.0" \
         "$libdir/cmake/graphscope/graphscope-config.cmake" "$libdir/pkgconfig/graphscope.pc" \
         "$libdir/pkgconfig/graphscope-c.pc" share/man/man1/graphscope.1.gz share/doc/graphscope/copyright \
         lib/python3/dist-packages/cudagraphscope/__init__.py bin/graphscope; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
ls "$prefix"/share/graphscope/schemas/*.schema.json >/dev/null 2>&1 || fail "no JSON Schema installed"
for internal in json_tape.h json_read.h parallel.h order.h hash.h id_map.h diff_match.h trace_scan.h; do
  [ ! -e "$prefix/include/graphscope/inspect/$internal" ] || fail "internal header installed: $internal"
done
echo "layout ok ($libdir)"

# Each public header on its own (two at a time).
cuda_inc=/usr/local/cuda/include
find "$prefix/include/graphscope" -name '*.h' | sort > "$work/headers"
fails=$(xargs -P2 -I{} sh -c '
  h={}; rel=${h#'"$prefix"'/include/}
  case $rel in graphscope/graphscope.h) lang=c; std=-std=c11 ;; *) lang=c++; std=-std=c++17 ;; esac
  case $rel in graphscope/capture/*) [ -d '"$cuda_inc"' ] || exit 0 ;; esac
  echo "#include <$rel>" | cc -x $lang $std -fsyntax-only -Wall -Werror -I'"$prefix"'/include -I'"$cuda_inc"' - \
    2>/dev/null || echo "$rel"' < "$work/headers")
[ -z "$fails" ] || fail "headers that do not compile on their own: $fails"
echo "headers ok ($(wc -l < "$work/headers") compile on their own with -I PREFIX/include)"

# lib/inspect once: the CLI and the C API load the shared library and
# define none of its functions themselves.
inspect_fns=' [TtWw] graphscope::(load_graph|parse_graph|diff_graphs|write_html_report|read_chrome_trace)\('
[ "$(nm -C --defined-only "$prefix/$libdir/libgraphscope_inspect.so.0" | grep -cE "$inspect_fns")" -ge 5 ] ||
  fail "libgraphscope_inspect.so.0 lacks lib/inspect's functions (the check below would mean nothing)"
for f in bin/graphscope "$libdir/libgraphscope.so.0"; do
  readelf -d "$prefix/$f" | grep -q 'NEEDED.*\[libgraphscope_inspect\.so\.0\]' || fail "$f does not link libgraphscope_inspect.so.0"
  copies=$(nm -C --defined-only "$prefix/$f" 2>/dev/null | grep -cE "$inspect_fns" || true)
  [ "$copies" = 0 ] || fail "$f defines $copies functions of lib/inspect (a copy of it)"
done
echo "lib/inspect linked once: the CLI and the C API need libgraphscope_inspect.so.0 and define none of it"

# NEEDED of the CLI and the CUDA-free libraries: nothing of CUDA's.
for f in bin/graphscope "$libdir/libgraphscope_inspect.so.0" "$libdir/libgraphscope.so.0"; do
  if readelf -d "$prefix/$f" | grep NEEDED | grep -E 'libcu|libnv'; then fail "$f links a CUDA library"; fi
done
gs=$prefix/bin/graphscope
data=$src/tests/data
# The offline commands load no CUDA library (the dynamic loader's own log).
offline=(
  "dump $data/captures/forkjoin.json"
  "dump --json $data/torch/torch_mlp.debug_dump.dot"
  "diff $data/captures/forkjoin.json $data/captures/chain.json"
  "check --max-nodes 100 $data/captures/forkjoin.json"
  "profile --graph $data/profiles/mixed.c8.graph.json --trace $data/profiles/mixed.c8.trace.json"
  "report $data/captures/forkjoin.json -o $work/page.html"
)
for cmd in "${offline[@]}"; do
  # shellcheck disable=SC2086
  rc=0; LD_DEBUG=files "$gs" $cmd > "$work/out" 2> "$work/ld.log" || rc=$?
  [ "$rc" -le 1 ] || { tail -3 "$work/ld.log"; fail "graphscope $cmd: exit $rc"; }
  if grep -E 'file=(libcupti|libcudart|libcuda\.|libgraphscope_live)' "$work/ld.log"; then
    fail "graphscope $cmd loaded a CUDA library"
  fi
done
echo "offline commands ok: ${#offline[@]} ran, none loaded CUDA's libraries"
# And with CUDA's libraries really gone: /usr/local/cuda hidden under an empty
# tmpfs in a private mount namespace, where the system allows one.
if [ -d /usr/local/cuda ] && unshare -rm sh -c 'mount -t tmpfs none /usr/local/cuda' 2>/dev/null; then
  for cmd in "${offline[@]}"; do
    # shellcheck disable=SC2086
    rc=0; unshare -rm sh -c 'mount -t tmpfs none /usr/local/cuda && [ -z "$(ls /usr/local/cuda)" ] && exec "$@"' \
      sh "$gs" $cmd > "$work/out" 2> "$work/err" || rc=$?
    [ "$rc" -le 1 ] || fail "graphscope $cmd with /usr/local/cuda hidden: exit $rc: $(cat "$work/err")"
  done
  rc=0; unshare -rm sh -c 'mount -t tmpfs none /usr/local/cuda && exec "$@"' sh "$gs" capture "$work/none.so" \
    > "$work/out" 2> "$work/err" || rc=$?
  [ "$rc" = 4 ] && [ "$(wc -l < "$work/err")" = 1 ] || fail "capture with /usr/local/cuda hidden: exit $rc: $(cat "$work/err")"
  echo "with /usr/local/cuda hidden: the offline commands ran; capture said: $(cat "$work/err")"
else
  echo "no private mount namespace here: /usr/local/cuda not hidden (the loader's log above stands)"
fi

# No path to the toolkit is installed: where the dynamic loader does not know
# CUPTI (ld.so.cache hidden), the live module gets it by its path in
# /usr/local/cuda, and a live command gets as far as with the cache.
if [ -e "$prefix/$libdir/graphscope/libgraphscope_live.so" ] && [ -d /usr/local/cuda ] &&
   unshare -rm sh -c 'mount --bind /dev/null /etc/ld.so.cache' 2>/dev/null; then
  : > "$work/empty.so"
  rc=0; "$gs" capture "$work/empty.so" > /dev/null 2> "$work/with.txt" || rc=$?
  rc2=0; unshare -rm sh -c 'mount --bind /dev/null /etc/ld.so.cache && exec "$@"' sh "$gs" capture "$work/empty.so" \
    > /dev/null 2> "$work/without.txt" || rc2=$?
  [ "$rc" = "$rc2" ] && cmp -s "$work/with.txt" "$work/without.txt" ||
    fail "capture without ld.so.cache: exit $rc2, $(cat "$work/without.txt"); with it: exit $rc, $(cat "$work/with.txt")"
  echo "CUPTI by its path, ld.so.cache hidden: capture got as far as with it ($(cat "$work/with.txt"))"
fi

# A live command without a usable module: one line, exit 4.
touch "$work/libgraphscope_live.so"
rc=0; GRAPHSCOPE_LIVE_LIBRARY=$work/libgraphscope_live.so "$gs" capture "$work/none.so" > "$work/out" 2> "$work/err" || rc=$?
[ "$rc" = 4 ] || fail "capture with a broken module: exit $rc, expected 4"
[ "$(wc -l < "$work/err")" = 1 ] && grep -q '^graphscope: cannot load ' "$work/err" || fail "capture with a broken module said: $(cat "$work/err")"
echo "live without its module ok: $(cat "$work/err")"

# examples/consumer with find_package, against the prefix.
cmake -S "$src/examples/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$work/consumer.log" 2>&1 || { tail -20 "$work/consumer.log"; fail "examples/consumer does not configure"; }
cmake --build "$work/consumer" -j2 >> "$work/consumer.log" 2>&1 || { tail -30 "$work/consumer.log"; fail "examples/consumer does not build"; }
g=$data/captures/forkjoin.json
"$gs" dump "$g" > "$work/dump.txt"
"$work/consumer/graph_summary" "$g" > "$work/cxx.txt"
cmp -s "$work/dump.txt" "$work/cxx.txt" || fail "graph_summary (C++) differs from graphscope dump"
"$work/consumer/graph_summary_c" "$g" > "$work/c.txt"
cmp -s "$work/dump.txt" "$work/c.txt" || fail "graph_summary_c (C API) differs from graphscope dump"
rc=0; "$work/consumer/graph_summary" "$g" "$data/captures/chain.json" > /dev/null || rc=$?
[ "$rc" = 1 ] || fail "graph_summary of two different graphs: exit $rc, expected 1"
rc=0; "$work/consumer/graph_summary_c" "$work/missing.json" > /dev/null 2> "$work/err" || rc=$?
[ "$rc" = 3 ] && grep -q "^graphscope: .*missing.json" "$work/err" || fail "C API on a missing file: exit $rc, $(cat "$work/err")"
echo "find_package consumer ok: $(ls "$work/consumer" | grep -E '^(graph_summary|graph_summary_c|walk_own_graph)$' | tr '\n' ' ')"

# pkg-config, as a C and a C++ build would use it.
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
if grep -l '^Cflags:.*-std=' "$prefix/$libdir"/pkgconfig/*.pc; then fail "a .pc file sets -std="; fi
# shellcheck disable=SC2046
cc -o "$work/pc_c" "$src/examples/consumer/graph_summary_c.c" $(pkg-config --cflags --libs graphscope-c) \
  -Wl,-rpath,"$prefix/$libdir"
# shellcheck disable=SC2046
c++ -o "$work/pc_cxx" "$src/examples/consumer/graph_summary.cc" $(pkg-config --cflags --libs graphscope) \
  -Wl,-rpath,"$prefix/$libdir"
# shellcheck disable=SC2046
c++ -std=c++20 -o "$work/pc_cxx20" "$src/examples/consumer/graph_summary.cc" $(pkg-config --cflags --libs graphscope) \
  -Wl,-rpath,"$prefix/$libdir"
"$work/pc_c" "$g" | cmp -s - "$work/dump.txt" || fail "pkg-config C build differs"
"$work/pc_cxx" "$g" | cmp -s - "$work/dump.txt" || fail "pkg-config C++ build differs"
"$work/pc_cxx20" "$g" | cmp -s - "$work/dump.txt" || fail "pkg-config C++20 build differs"
if [ -f "$prefix/$libdir/pkgconfig/graphscope-capture.pc" ]; then
  pkg-config --cflags --libs graphscope-capture > /dev/null || fail "pkg-config graphscope-capture"
  # shellcheck disable=SC2046
  echo '#include <graphscope/capture/walk.h>
int main() { return 0; }' | c++ -x c++ -std=c++17 -o "$work/pc_capture" - $(pkg-config --cflags --libs graphscope-capture) \
    -Wl,-rpath,"$prefix/$libdir" || fail "a program with graphscope/capture/walk.h does not build with pkg-config"
  echo "pkg-config graphscope-capture ok"
fi
echo "pkg-config ok: graphscope $(pkg-config --modversion graphscope), graphscope-c $(pkg-config --modversion graphscope-c)"

# The installed Python package finds the installed library by itself.
v=$(env -u GRAPHSCOPE_LIBRARY PYTHONPATH="$prefix/lib/python3/dist-packages" python3 -c \
  'import cudagraphscope as g, sys; d = g.load(sys.argv[1]); print(g.version(), len(d["nodes"]))' "$g") ||
  fail "the installed Python package does not work"
echo "python package ok: $v"
echo "install ok"
