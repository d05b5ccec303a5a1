# Sourced by the GPU benchmarks: sets `cpus` and the array `pin` (a taskset
# prefix, or nothing) so that every process of a benchmark runs on the same
# two CPUs: GS_BENCH_CPUS (a taskset list; empty: no pinning), else CPUs 2
# and 3 where there are at least 4. Spread over all of a GPU host's CPUs,
# processes fell into a fast and a slow group by where they ran (the H200
# host of 2026-11-26 20:05, 16 CPUs, no graphscope: 2 of 6 processes on all
# CPUs slow, 8.9 and 12.5 against 6.9-7.6 ms a capture; on CPU 15, 2 of 2
# slow; to CPU 1, 1 of 2; to CPUs 2 and 3, 0 of 3, 6.5-6.9 ms).
cpus=${GS_BENCH_CPUS-$( [ "$(nproc)" -ge 4 ] && echo 2,3 || true )}
pin=()
if [ -n "$cpus" ] && command -v taskset > /dev/null; then pin=(taskset -c "$cpus"); fi
