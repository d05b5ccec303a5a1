# Sourced by the GPU benchmarks that compare processes (origins_overhead.sh,
# serving_startup.sh). Two ways to run RUNS processes of each configuration,
# a configuration being a function run_NAME K CPUS (K the process's number,
# CPUS a taskset list or empty):
#
#   in_turn RUNS NAME...   one process at a time, configurations interleaved,
#                          every one on the CPUs of bench/pin.sh.
#   together RUNS NAME...  RUNS rounds; each starts one process of every
#                          configuration at the same moment, each on a pair of
#                          CPUs of its own (2-3, 4-5, ...), and waits for all.
#                          The pairs turn by one each round, so in as many
#                          rounds as there are configurations each one runs
#                          once on every pair.
#
# Why `together` was tried: the GPU hosts change speed for seconds at a
# time, by up to 1.6x, with or without graphscope (BENCHMARKS.md,
# 2026-11-26 and 27), so processes run in turn compare the host's moments
# as much as the code; processes run at the same moment were to share the
# moment. On the H100 host of 2026-11-27 10:41 UTC they did not: within one
# round, processes ran steadily at about 7.5 or about 12.5 ms a capture,
# whatever their code, and which pair of CPUs ran fast changed from round to
# round. Two processes without graphscope side by side differed by
# 0.63-1.82x (origins_overhead.sh, five rounds). So the benchmarks run in
# turn by default; this stays for checking that on another host.
#
# pinned CPUS CMD...: CMD under taskset on CPUS, or CMD alone without them.
pinned() {
  local c=$1; shift
  if [ -n "$c" ] && command -v taskset > /dev/null; then taskset -c "$c" "$@"; else "$@"; fi
}

in_turn() {
  local runs=$1 k c; shift
  for ((k = 1; k <= runs; ++k)); do
    for c in "$@"; do "run_$c" "$k" "${cpus:-}" || return 1; done
  done
}

together() {
  local runs=$1 k c i p pid; shift
  local n=$# have
  have=$(nproc)
  if ((2 * n + 2 > have)); then
    echo "together: $n configurations at once need $((2 * n + 2)) CPUs, this machine has $have" >&2
    return 1
  fi
  for ((k = 1; k <= runs; ++k)); do
    local pids=() failed=0
    i=0
    for c in "$@"; do
      p=$(((i + k) % n))
      "run_$c" "$k" "$((2 + 2 * p)),$((3 + 2 * p))" &
      pids+=($!)
      i=$((i + 1))
    done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    ((failed == 0)) || return 1
  done
}
