#!/usr/bin/env bash
# fuzz/run.sh [SECONDS_PER_TARGET]: builds the libFuzzer targets with clang
# (build directory build-fuzz), replays every input kept under
# fuzz/regressions/<target>/ (plain runs, no fuzzing), then fuzzes each target
# for SECONDS_PER_TARGET seconds (default 60) on a seed corpus made from
# tests/data, two targets at a time (CI has 2 cores), and prints per target
# the number of inputs run (libFuzzer's "Done N runs" line).
#
# Exits 1 when a regression input or a fuzzed input crashes a target (an
# exception other than graphscope::Error, a sanitizer report, a broken
# round trip, a timeout of 10 s, more than 2 GiB), naming the input. To keep
# a crash: fix the reader, then copy the input into fuzz/regressions/<target>/.
#
# Environment: GS_FUZZ_BUILD (build directory), GS_FUZZ_WORK (corpora, logs
# and crash inputs; default $GS_FUZZ_BUILD/work), GS_FUZZ_JOBS (targets at a
# time, default 2), GS_FUZZ_TARGETS (which targets, default all).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${1:-60}
case $secs in '' | *[!0-9]*) echo "usage: fuzz/run.sh [SECONDS_PER_TARGET]" >&2; exit 2 ;; esac
build=${GS_FUZZ_BUILD:-build-fuzz}
work=${GS_FUZZ_WORK:-$build/work}
jobs=${GS_FUZZ_JOBS:-2}
start=$SECONDS

# Build: everything instrumented for coverage, ASan and UBSan; no NDEBUG.
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DGRAPHSCOPE_FUZZ=ON \
    -DGRAPHSCOPE_CUDA=OFF -DGRAPHSCOPE_TESTS=OFF -DGRAPHSCOPE_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g" >/dev/null
else
  cmake "$build" >/dev/null  # picks up new targets (fuzz/CMakeLists.txt)
fi
cmake --build "$build" --target fuzz_targets -j"$(nproc)"
read -r -a targets <<<"${GS_FUZZ_TARGETS:-$(tr ';' ' ' <"$build/fuzz/targets.txt")}"
built=$((SECONDS - start))

# Sanitizers: stop at the first report; leaks inside Graphviz are its own
# (tests/lsan.supp), everything graphscope allocates is checked.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}
fuzz_opts=(-rss_limit_mb=2048 -timeout=10 -max_len=1048576 -print_final_stats=1)

rm -rf "$work/seeds" "$work/logs" "$work/artifacts"
mkdir -p "$work/seeds" "$work/logs"

# Seeds from tests/data: files up to 128 KiB (a few big traces would slow every
# mutation); the PyTorch target gets our documents without their "schema"
# line, which is what a get_graph_data() dict saved as JSON looks like.
seed() {  # seed TARGET FILE...
  local dir=$work/seeds/$1 f
  shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] || continue
    [ "$(stat -c %s "$f")" -le 131072 ] || continue
    cp "$f" "$dir/$(basename "$(dirname "$f")")_$(basename "$f")"
  done
}
d=tests/data
seed fuzz_graph_json $d/captures/*.json $d/profiles/*.graph.json $d/derived/child.json tests/hostile/*.json
seed fuzz_pytorch_json $d/derived/*.pytorch.json
mkdir -p "$work/seeds/fuzz_pytorch_json"
for f in $d/captures/*.json $d/derived/child.json; do
  sed '/^ *"schema": /d' "$f" >"$work/seeds/fuzz_pytorch_json/noschema_$(basename "$f")"
done
seed fuzz_nvidia_dot $d/nvidia/*.dot $d/captures/*.dot $d/torch/*.dot tests/hostile/*.dot
seed fuzz_trace_json $d/profiles/*.trace.json $d/torch/*.kineto.json tests/hostile/trace_array.json
seed fuzz_profile_report $d/profiles/*.profile.json
seed fuzz_rules tests/data/rules/*.json tests/golden/*.rules.json
# The documents only graphscope writes: the --exec indexes as recorded, rules,
# and the diff and check results kept in the golden cases' expected output.
seed fuzz_documents $d/attach/*/index.json $d/attach/*/pid-*/index.json tests/data/rules/*.json
for c in tests/golden/diff_*_json.case tests/golden/check_*_json.case; do
  awk '/^--- stdout/ { on = 1; next } /^--- / { on = 0 } on' "$c" >"$work/seeds/fuzz_documents/$(basename "$c" .case).json"
done
mkdir -p "$work/seeds/fuzz_rules"
printf '{"schema": "graphscope.rules/1", "max_nodes": 500, "max_kernels": 100, "forbid_types": ["host", "memcpy"], "max_depth": 40}\n' \
  >"$work/seeds/fuzz_rules/shape.json"
printf '{"schema": "graphscope.rules/1", "baseline": "base.json", "node_count_tolerance_pct": 5.5}\n' \
  >"$work/seeds/fuzz_rules/baseline.json"
printf '{"schema": "graphscope.rules/1", "max_blocking_fake_us": 20, "min_critical_path_efficiency": 0.8}\n' \
  >"$work/seeds/fuzz_rules/profile.json"

dict_of() {
  case $1 in
    fuzz_graph_json | fuzz_pytorch_json) echo fuzz/graph_json.dict ;;
    *) echo "fuzz/${1#fuzz_}.dict" ;;
  esac
}

# 1. Regressions: every kept input, run once.
failed=()
declare -A regressions
for t in "${targets[@]}"; do
  dir=fuzz/regressions/$t
  inputs=()
  [ -d "$dir" ] && while IFS= read -r f; do inputs+=("$f"); done < <(find "$dir" -type f ! -name '*.md' | sort)
  regressions[$t]=${#inputs[@]}
  [ ${#inputs[@]} -eq 0 ] && continue
  if ! "$build/fuzz/$t" "${fuzz_opts[@]}" "${inputs[@]}" >"$work/logs/$t.regressions.log" 2>&1; then
    echo "fuzz: $t crashes on a regression input (log: $work/logs/$t.regressions.log):" >&2
    grep -E "^Running: |ERROR|FUZZ FINDING|runtime error" "$work/logs/$t.regressions.log" | tail -n 8 >&2
    failed+=("$t (regression)")
  fi
done
echo "fuzz: regressions replayed"

# 2. Fuzzing: each target for $secs seconds, $jobs at a time.
fuzz_one() {
  local t=$1 corpus=$work/corpus/$1
  mkdir -p "$corpus" "$work/artifacts/$t"
  local rc=0
  "$build/fuzz/$t" "${fuzz_opts[@]}" -max_total_time="$secs" -dict="$(dict_of "$t")" \
    -artifact_prefix="$work/artifacts/$t/" "$corpus" "$work/seeds/$t" >"$work/logs/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$work/logs/$t.rc"
}
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
declare -A status
for t in "${targets[@]}"; do
  if [ "$(cat "$work/logs/$t.rc" 2>/dev/null)" = 0 ]; then status[$t]=ok; else status[$t]=CRASH; fi
done

# 3. Summary.
echo
printf '%-22s %11s %12s %8s %9s %7s %7s  %s\n' target regressions runs seconds exec/s cov corpus result
for t in "${targets[@]}"; do
  log=$work/logs/$t.log
  runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
  took=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$log" | tail -n 1)
  if [ -z "$runs" ]; then  # stopped early (a crash): the last status line
    runs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    took=-
  fi
  cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
  corpus=$(find "$work/corpus/$t" -type f | wc -l)
  rate=-
  [ "$took" != - ] && [ "${took:-0}" -gt 0 ] && rate=$((${runs:-0} / took))
  printf '%-22s %11s %12s %8s %9s %7s %7s  %s\n' "$t" "${regressions[$t]}" "${runs:-0}" "$took" "$rate" \
    "${cov:-?}" "$corpus" "${status[$t]}"
  if [ "${status[$t]}" != ok ]; then
    failed+=("$t")
    echo "  log: $log" >&2
    grep -E "FUZZ FINDING|ERROR: |runtime error|SUMMARY" "$log" | head -n 5 | sed 's/^/  /' >&2
    sed -n 's/.*Test unit written to \(.*\)$/  crash input: \1/p' "$log" >&2
  fi
done
echo "fuzz: build ${built}s, total $((SECONDS - start))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
