#!/usr/bin/env bash
# Where a serving start-up's capture time goes, with and without graphscope:
# perf samples the application's captures alone (serving_startup.py opens
# perf's window around each `with torch.cuda.graph` block and closes it
# after the synchronize), and each process's samples are told by shared
# object and by function. GPU machine only.
#
#   bench/startup_profile.sh GRAPHSCOPE OUTDIR [ROUNDS] [-- serving_startup.py's options]
#
# Configurations in turn, ROUNDS times (default 2): plain (no graphscope)
# and capture (`capture --exec`); GS_PROFILE_CONFIGS picks others among
# plain, capture, noorig (`capture --exec --no-origins`), base (`capture
# --exec` with GS_BENCH_BASELINE_INJECT's injection library). PERF names the
# perf binary (default perf), GS_PROFILE_HZ its rate (default 5000 samples
# a second of CPU time: at 20000 the captures took twice as long). Writes
# OUTDIR/CONFIG.K.{dso,sym}.txt and prints, for each process, the capture
# time it measured (perf slows it), then each configuration's median
# samples by shared object, and each process's share of samples in
# graphscope's library and CUPTI (a ratio inside one process, which the
# host's speed does not move).
set -euo pipefail
gs=$1; out=$2; runs=${3:-2}
shift 3 || shift $#
[ "${1:-}" = "--" ] && shift
perf=${PERF:-perf} hz=${GS_PROFILE_HZ:-5000}
app=$(cd "$(dirname "$0")" && pwd)/serving_startup.py
source "$(dirname "$0")/pin.sh"
mkdir -p "$out"
read -r -a configs <<< "${GS_PROFILE_CONFIGS:-plain capture}"
one() {  # CONFIG K
  local c=$1 k=$2 cmd
  cmd=(python3 "$app" "${app_args[@]}" --timing "$out/$c.$k.json")
  case $c in
    plain) ;;
    capture) cmd=("$gs" capture --exec --out-dir "$out/$c.$k.dump" -- "${cmd[@]}") ;;
    noorig) cmd=("$gs" capture --exec --no-origins --out-dir "$out/$c.$k.dump" -- "${cmd[@]}") ;;
    base) cmd=(env GRAPHSCOPE_INJECTION_LIBRARY="$GS_BENCH_BASELINE_INJECT" "$gs" capture --exec
               --out-dir "$out/$c.$k.dump" -- "${cmd[@]}") ;;
    *) echo "startup_profile: unknown configuration $c" >&2; return 2 ;;
  esac
  rm -f "$out/ctl" "$out/ack"
  mkfifo "$out/ctl" "$out/ack"
  GS_PERF_CTL=$out/ctl GS_PERF_ACK=$out/ack "${pin[@]}" "$perf" record -q -e cpu-clock -F "$hz" --delay=-1 \
    --control "fifo:$out/ctl,$out/ack" -o "$out/$c.$k.data" -- "${cmd[@]}" > "$out/$c.$k.log" 2>&1 ||
    { tail -5 "$out/$c.$k.log"; return 1; }
  "$perf" report -i "$out/$c.$k.data" --stdio -n --sort dso 2> /dev/null | grep -v '^#' | grep . > "$out/$c.$k.dso.txt"
  "$perf" report -i "$out/$c.$k.data" --stdio -n --sort dso,sym 2> /dev/null | grep -v '^#' | grep . |
    awk -v n="${GS_PROFILE_SYMS:-400}" 'NR <= n' > "$out/$c.$k.sym.txt"
  echo "$c $k: $(grep '^serving' "$out/$c.$k.log" | head -1)"
}
app_args=("$@")
for k in $(seq 1 "$runs"); do
  for c in "${configs[@]}"; do one "$c" "$k"; done
done
rm -f "$out/ctl" "$out/ack"
python3 - "$out" "$runs" "$hz" "${configs[@]}" <<'PY'
import statistics, sys
out, runs, hz, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
def read(path):  # shared object -> samples
    d = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 3 and f[0].endswith("%") and f[1].isdigit():
            d[" ".join(f[2:])] = d.get(" ".join(f[2:]), 0) + int(f[1])
    return d
per = {c: [read("%s/%s.%d.dso.txt" % (out, c, k)) for k in range(1, runs + 1)] for c in configs}
dsos = sorted({d for v in per.values() for r in v for d in r}, key=lambda d: -max(r.get(d, 0) for v in per.values() for r in v))
med = {c: {d: statistics.median(r.get(d, 0) for r in v) for d in dsos} for c, v in per.items()}
tot = {c: statistics.median(sum(r.values()) for r in v) for c, v in per.items()}
print("samples (%s a second of CPU time), median of %d processes: %s" % (hz, runs, "  ".join("%s %d" % (c, tot[c]) for c in configs)))
print("%-40s %s" % ("shared object", " ".join("%10s" % c for c in configs)))
for d in dsos[:25]:
    print("%-40s %s" % (d[-40:], " ".join("%10d" % med[c][d] for c in configs)))
# Within each process, immune to the host's speed: the share of the
# captures' samples in graphscope's library and CUPTI.
ours = lambda r: sum(v for d, v in r.items() if "graphscope" in d or "cupti" in d)
print("graphscope and CUPTI, share of each process's samples: %s" % "; ".join(
    "%s %s" % (c, " ".join("%.1f%%" % (100.0 * ours(r) / max(1, sum(r.values()))) for r in v)) for c, v in per.items()))
PY
