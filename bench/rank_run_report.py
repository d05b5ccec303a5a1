#!/usr/bin/env python3
"""The page of a 3,000-rank run directory: `graphscope report RUN_DIR -o PAGE`
by two binaries (before and after a change), RUNS calls each, in turn, on
the directories bench/make_rank_run.py builds from tests/data/ranks:

  capture  r_equal's ranks copied 3,000 times, ranks 1234 and 2999 copies of
           r_extra's rank 1 (one all-reduce more): the directory of issue 43
  profile  r_prof's ranks copied 3,000 times (profiles and traces; they agree)

Prints per binary and directory the wall-clock seconds (median, min..max),
the CPU seconds (user + system, median) and the page's size. On a shared
machine the wall clock includes waiting for a core: the CPU time says what
the command itself cost.

  bench/rank_run_report.py BEFORE_GRAPHSCOPE AFTER_GRAPHSCOPE [--work DIR] [--runs N] [--ranks N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit("rank_run_report: %s: exit %d: %s" % (" ".join(cmd), code, err.strip()))
    return wall, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--work", default="/tmp/graphscope_rank_runs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=3000)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    dirs = {}
    for name, source, odd in (("capture", "r_equal", [1234, 2999]), ("profile", "r_prof", [])):
        d = os.path.join(a.work, "%s%d" % (name, a.ranks))
        if not os.path.exists(os.path.join(d, "index.json")):
            subprocess.run([sys.executable, os.path.join(root, "bench", "make_rank_run.py"), d, "--ranks", str(a.ranks),
                            "--from", source] + [x for r in odd for x in ("--odd", str(r))], check=True)
        dirs[name] = d
    bins = {"before": a.before, "after": a.after}
    res = {}
    for i in range(a.runs):
        for name, d in dirs.items():
            for label, gs in bins.items():
                page = os.path.join(a.work, "%s.%s.html" % (name, label))
                wall, cpu = timed([gs, "report", d, "-o", page])
                r = res.setdefault((name, label), {"wall": [], "cpu": [], "bytes": 0})
                r["wall"].append(wall)
                r["cpu"].append(cpu)
                r["bytes"] = os.path.getsize(page)
                print("run %d  %-8s %-7s wall %6.2f s  cpu %6.2f s  %8.2f MB" % (i + 1, name, label, wall, cpu, r["bytes"] / 1e6),
                      flush=True)
    print("\n== %d ranks, %d calls each, %d cores, load average %.1f at the end" %
          (a.ranks, a.runs, os.cpu_count(), os.getloadavg()[0]))
    print("| run directory | graphscope | wall s, median (min..max) | CPU s (user+sys), median | page MB |")
    print("| --- | --- | --- | --- | --- |")
    for (name, label), r in res.items():
        w = r["wall"]
        print("| %s | %s | %.2f (%.2f..%.2f) | %.2f | %.2f |" %
              (name, label, statistics.median(w), min(w), max(w), statistics.median(r["cpu"]), r["bytes"] / 1e6))


if __name__ == "__main__":
    main()
