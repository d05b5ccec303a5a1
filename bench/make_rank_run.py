#!/usr/bin/env python3
"""Builds the run directory of a many-rank job out of the recorded two-GPU
runs of tests/data/ranks: each rank's directory is a copy of a recorded
rank's (rank R takes the recording's rank R % 2), its index.json given rank R,
a pid of its own and a GPU of its node (R % 8); the launcher's directory is
the recording's. Then the run index, as the `--exec` parent writes it
(apps/graphscope/attach.cc: ranked processes by rank, then the others by pid;
each entry the process index under its "dir", without graphscope_version).
Nothing in a graph, profile or trace is written here: they are the recorded
files, copied (or hard-linked with --link, which saves the disk and reads the
same).

  bench/make_rank_run.py OUT [--ranks N] [--from r_equal|r_prof] [--odd R]... [--link]

--odd R: rank R is a copy of r_extra's rank 1 instead (it captured one
all-reduce more: the odd one out). The report of such a directory is what
BENCHMARKS.md times (bench/rank_run_report.py) and what the ctest
report.rank_run_page checks for size.
"""
import argparse
import json
import os
import shutil
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
data = os.path.join(root, "tests", "data", "ranks")


def load(path):
    with open(path) as f:
        return json.load(f)


def ranked(run_dir):
    """The recording's ranked processes, by rank, and its launcher(s)."""
    run = load(os.path.join(run_dir, "index.json"))
    ranks = sorted((p for p in run["processes"] if "rank" in p), key=lambda p: p["rank"]["rank"])
    others = [p for p in run["processes"] if "rank" not in p]
    return run, ranks, others


def copy_dir(src, dst, link):
    if link:
        shutil.copytree(src, dst, copy_function=os.link)
    else:
        shutil.copytree(src, dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=3000)
    ap.add_argument("--from", dest="source", default="r_equal", choices=["r_equal", "r_prof", "r_extra"])
    ap.add_argument("--odd", type=int, action="append", default=[])
    ap.add_argument("--link", action="store_true", help="hard-link the recorded files instead of copying them")
    a = ap.parse_args()
    if a.ranks < 2:
        sys.exit("make_rank_run: --ranks must be 2 or more")
    if os.path.exists(a.out):
        sys.exit("make_rank_run: %s exists; give a new directory" % a.out)
    src_dir = os.path.join(data, a.source)
    run, ranks, others = ranked(src_dir)
    _, extra_ranks, _ = ranked(os.path.join(data, "r_extra"))
    odd = set(a.odd)
    os.makedirs(a.out)
    base_pid = 100000
    procs = []
    for r in range(a.ranks):
        d = "rank-%d" % r
        if r in odd:
            src, from_dir = extra_ranks[1], os.path.join(data, "r_extra")
        else:
            src, from_dir = ranks[r % len(ranks)], src_dir
        copy_dir(os.path.join(from_dir, src["dir"]), os.path.join(a.out, d), a.link)
        index_path = os.path.join(a.out, d, "index.json")
        index = load(index_path)
        index["pid"] = base_pid + r
        index["rank"] = {"rank": r, "local_rank": r % 8, "world_size": a.ranks, "source": index["rank"]["source"]}
        if "device" in index:
            index["device"]["ordinal"] = r % 8
        # A hard link shares the recorded index: write a new file in its place.
        if a.link:
            os.unlink(index_path)
        with open(index_path, "w") as f:
            json.dump(index, f, indent=2)
        entry = {"dir": d}
        entry.update({k: v for k, v in index.items() if k != "graphscope_version"})
        procs.append(entry)
    for p in others:  # the launcher: as recorded
        copy_dir(os.path.join(src_dir, p["dir"]), os.path.join(a.out, p["dir"]), a.link)
        procs.append(p)
    # The launcher's command, told how many processes it started.
    command = list(run["command"])
    if "--nproc-per-node" in command:
        command[command.index("--nproc-per-node") + 1] = str(a.ranks)
    out = {"schema": run["schema"], "graphscope_version": run["graphscope_version"], "command": command,
           "exit_code": run["exit_code"], "profile": run["profile"], "processes": procs}
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump(out, f, indent=1)
    print("%s: %d ranks from %s%s" % (a.out, a.ranks, a.source,
                                       (", odd ranks %s from r_extra" % sorted(odd)) if odd else ""))


if __name__ == "__main__":
    main()
