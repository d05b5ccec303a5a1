#!/usr/bin/env python3
"""The harness of the benchmarks that compare processes: run each named
configuration's command once per round, round-robin, for ROUNDS rounds, with
an A/A control, and print per configuration the median, min, max, spread and
ratio to the anchor, with the A/A's ratio beside it.

    bench/compare.py [options] NAME=COMMAND [NAME=COMMAND ...]

COMMAND is a bash command line. The anchor is the first configuration (or
--anchor). It always runs twice a round, as two arms: NAME and NAME2, the
second started last in the round. Both are the same code, so what NAME2 reads
against NAME is how far an estimate moves between two processes with nothing
changed. On the GPU hosts that noise was as large as the effects measured
(BENCHMARKS.md): a ratio means little without its A/A beside it.

Each run gets a directory of its own, OUT/ARM.K (--out, else a temporary one),
which holds its stdout and stderr; the command finds it in $GS_RUN_DIR, with
$GS_ARM (plain2 for the A/A arm), $GS_CONFIG (plain for both) and $GS_ROUND.
Processes are pinned as bench/pin.sh pins them: to --cpus, else to
$GS_BENCH_CPUS, else to CPUs 2 and 3 where the machine has at least 4 (an
empty list: no pinning).

Metrics (--metric LABEL[*FACTOR]=SOURCE, repeatable; default wall_s=wall):
  wall              the run's wall-clock seconds (bash's start included,
                    the same for every arm)
  re:REGEX          the first group of REGEX's first match in the stdout
  json:FILE:KEY     KEY of the JSON document FILE in $GS_RUN_DIR; KEY is a
                    dotted path and may end in a slice ([1:]); a list is
                    reduced to its median
FACTOR multiplies the value (capture_ms*1000=json:timing.json:capture_s).

For each metric the table gives, per arm: its median over the rounds, min,
max, spread (max/min), ratio (its median over its anchor's median) and, by
round, the median of its ratio to the anchor's run of the same round, with
the least and the most. The A/A columns repeat the A/A arm's figures for
the same estimates beside every row. --vs NAME=OTHER compares NAME with
another configuration (profile=cupti: profile --exec against bare CUPTI);
the A/A beside it is still the anchor's, the only control.

A failed run stops the harness (exit 1) with the end of its stderr.
--dry-run prints what would run, in order, and runs nothing.
--json FILE writes every run's values and the table (schema
graphscope.bench-compare/1) for a script's own analysis.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SCHEMA = "graphscope.bench-compare/1"


def parse_cpus(text):
    """A taskset list ("2,3", "4-7") as a set of CPUs; empty: None."""
    cpus = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus or None


def default_cpus():
    """bench/pin.sh's rule: GS_BENCH_CPUS, else 2,3 with at least 4 CPUs."""
    if "GS_BENCH_CPUS" in os.environ:
        return os.environ["GS_BENCH_CPUS"]
    return "2,3" if (os.cpu_count() or 1) >= 4 else ""


class Metric:
    def __init__(self, spec):
        label, eq, source = spec.partition("=")
        if not eq or not label or not source:
            raise ValueError("--metric wants LABEL=SOURCE, not %r" % spec)
        self.label, _, factor = label.partition("*")
        self.factor = float(factor) if factor else 1.0
        self.source = source
        if source == "wall":
            self.kind = "wall"
        elif source.startswith("re:"):
            self.kind, self.regex = "re", re.compile(source[3:])
            if self.regex.groups < 1:
                raise ValueError("--metric %s: the regex needs a group" % spec)
        elif source.startswith("json:") and source.count(":") >= 2:
            self.kind = "json"
            self.file, self.key = source[5:].split(":", 1)
        else:
            raise ValueError("--metric %s: SOURCE is wall, re:REGEX or json:FILE:KEY" % spec)

    def value(self, run_dir, stdout, wall):
        if self.kind == "wall":
            v = wall
        elif self.kind == "re":
            m = self.regex.search(stdout)
            if not m:
                raise ValueError("%s: no match of %r in the output" % (self.label, self.regex.pattern))
            v = float(m.group(1))
        else:
            with open(os.path.join(run_dir, self.file)) as f:
                v = lookup(json.load(f), self.key)
        return v * self.factor


def lookup(doc, key):
    m = re.fullmatch(r"(.*?)(?:\[(-?\d*):(-?\d*)\])?", key)
    path, lo, hi = m.group(1), m.group(2), m.group(3)
    for part in filter(None, path.split(".")):
        doc = doc[part]
    if lo is not None or hi is not None:
        doc = doc[int(lo) if lo else None:int(hi) if hi else None]
    if isinstance(doc, list):
        return statistics.median(float(x) for x in doc)
    return float(doc)


def fmt(x):
    """Four significant digits, never an exponent."""
    if x == 0 or math.isnan(x) or math.isinf(x):
        return "%g" % x
    digits = math.floor(math.log10(abs(x))) + 1
    return "%.*f" % (max(0, 4 - digits), x)


def ratio_cols(vals, ref):
    """Ratio of medians, and by round: median (min-max) of the rounds' ratios."""
    whole = statistics.median(vals) / statistics.median(ref)
    by = [a / b for a, b in zip(vals, ref)]
    return whole, statistics.median(by), min(by), max(by)


def table(metric, arms, anchor_of, aa, anchor, values, markdown):
    head = ["arm", "against", "runs", "median", "min", "max", "spread", "ratio", "A/A", "by round (min-max)",
            "A/A by round"]
    aa_cols = ratio_cols(values[aa], values[anchor])
    rows = []
    for arm in arms:
        v = values[arm]
        row = [arm + (" (A/A)" if arm == aa else ""), anchor_of[arm] if arm != anchor_of[arm] else "-",
               str(len(v)), fmt(statistics.median(v)), fmt(min(v)), fmt(max(v)), "%.3fx" % (max(v) / min(v))]
        if arm == anchor_of[arm]:
            row += ["1.000x", "%.3fx" % aa_cols[0], "-", "%.3fx (%.3f-%.3f)" % aa_cols[1:]]
        else:
            r = ratio_cols(v, values[anchor_of[arm]])
            row += ["%.3fx" % r[0], "%.3fx" % aa_cols[0], "%.3fx (%.3f-%.3f)" % r[1:],
                    "%.3fx (%.3f-%.3f)" % aa_cols[1:]]
        rows.append(row)
    out = []
    if markdown:
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + " --- |" * len(head))
        out += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        w = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
        line = lambda r: "  ".join(c.ljust(w[i]) if i < 2 else c.rjust(w[i]) for i, c in enumerate(r)).rstrip()
        out += [line(head)] + [line(r) for r in rows]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[2:]))
    ap.add_argument("configs", nargs="+", metavar="NAME=COMMAND")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--anchor", help="the anchor configuration (default: the first)")
    ap.add_argument("--vs", action="append", default=[], metavar="NAME=OTHER",
                    help="compare NAME with OTHER instead of the anchor")
    ap.add_argument("--metric", action="append", default=[], metavar="LABEL[*FACTOR]=SOURCE")
    ap.add_argument("--cpus", help="a taskset list for every process; empty: none "
                                   "(default: $GS_BENCH_CPUS, else 2,3 with at least 4 CPUs)")
    ap.add_argument("--out", help="keep the runs' directories here (default: a temporary one, removed)")
    ap.add_argument("--json", help="write every run's values and the table here")
    ap.add_argument("--show", metavar="REGEX", help="echo the runs' stdout lines that match, as 'ARM K: line'")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("--dry-run", action="store_true", help="print what would run and run nothing")
    a = ap.parse_args(argv)

    def fail(msg):
        print("compare: " + msg, file=sys.stderr)
        return 2

    configs = []
    for spec in a.configs:
        name, eq, cmd = spec.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or not cmd.strip():
            return fail("a configuration is NAME=COMMAND (NAME of letters, digits, . _ -), not %r" % spec)
        if name in dict(configs):
            return fail("configuration %s given twice" % name)
        configs.append((name, cmd))
    names = [n for n, _ in configs]
    anchor = a.anchor or names[0]
    if anchor not in names:
        return fail("the anchor %s is not a configuration" % anchor)
    aa = anchor + "2"
    if aa in names:
        return fail("%s is the A/A arm's name (the anchor run again); leave it out" % aa)
    anchor_of = {n: anchor for n in names + [aa]}
    for spec in a.vs:
        n, _, other = spec.partition("=")
        if n not in names or other not in names:
            return fail("--vs %s: both must be configurations" % spec)
        anchor_of[n] = other
    anchor_of[anchor] = anchor
    try:
        metrics = [Metric(m) for m in a.metric or ["wall_s=wall"]]
    except ValueError as e:
        return fail(str(e))
    if a.rounds < 1:
        return fail("--rounds must be at least 1")
    cmds = dict(configs)
    cmds[aa] = cmds[anchor]
    arms = names + [aa]  # the A/A arm last in every round
    config_of = {n: n for n in names}
    config_of[aa] = anchor
    cpu_list = default_cpus() if a.cpus is None else a.cpus
    cpus = parse_cpus(cpu_list)
    if cpus and not a.dry_run and hasattr(os, "sched_getaffinity"):
        missing = cpus - os.sched_getaffinity(0)
        if missing:
            return fail("CPUs %s are not available here (GS_BENCH_CPUS or --cpus)" % sorted(missing))

    pin = "CPUs %s" % cpu_list if cpus else "no pinning"
    print("compare: %d rounds of %s, in turn; anchor %s, A/A %s; %s" % (a.rounds, " ".join(arms), anchor, aa, pin))
    if a.dry_run:
        for k in range(1, a.rounds + 1):
            for arm in arms:
                print("round %d %s: %s%s" % (k, arm, "taskset -c %s " % cpu_list if cpus else "", cmds[arm]))
        return 0

    out = a.out or tempfile.mkdtemp(prefix="compare.")
    os.makedirs(out, exist_ok=True)
    show = re.compile(a.show) if a.show else None
    values = {m.label: {arm: [] for arm in arms} for m in metrics}
    runs = {arm: [] for arm in arms}
    try:
        for k in range(1, a.rounds + 1):
            for arm in arms:
                run_dir = os.path.join(out, "%s.%d" % (arm, k))
                os.makedirs(run_dir, exist_ok=True)
                env = dict(os.environ, GS_RUN_DIR=run_dir, GS_ARM=arm, GS_CONFIG=config_of[arm], GS_ROUND=str(k))
                with open(os.path.join(run_dir, "stdout"), "w+") as so, open(os.path.join(run_dir, "stderr"), "w+") as se:
                    t0 = time.perf_counter()
                    rc = subprocess.call(["bash", "-c", cmds[arm]], stdout=so, stderr=se, env=env,
                                         preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
                    wall = time.perf_counter() - t0
                    so.seek(0)
                    stdout = so.read()
                    se.seek(0)
                    stderr = se.read()
                if rc != 0:
                    print("compare: round %d %s exited %d: %s" % (k, arm, rc, cmds[arm]), file=sys.stderr)
                    sys.stderr.write("".join(stderr.splitlines(True)[-5:]))
                    return 1
                got = {}
                for m in metrics:
                    try:
                        got[m.label] = m.value(run_dir, stdout, wall)
                    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
                        print("compare: round %d %s: %s" % (k, arm, e), file=sys.stderr)
                        return 1
                    values[m.label][arm].append(got[m.label])
                runs[arm].append({"round": k, "wall_s": wall, "values": got})
                if show:
                    for line in stdout.splitlines():
                        if show.search(line):
                            print("%s %d: %s" % (arm, k, line))
                print("round %d %s: %s" % (k, arm, ", ".join("%s %s" % (l, fmt(v)) for l, v in got.items())),
                      flush=True)
        summary = {}
        for m in metrics:
            print("\n%s, %d rounds; ratios against %s unless said; A/A: %s against %s" %
                  (m.label, a.rounds, anchor, aa, anchor))
            print(table(m.label, arms, anchor_of, aa, anchor, values[m.label], a.markdown))
            v = values[m.label]
            summary[m.label] = {
                arm: {"median": statistics.median(v[arm]), "min": min(v[arm]), "max": max(v[arm]),
                      "against": anchor_of[arm],
                      "ratio": statistics.median(v[arm]) / statistics.median(v[anchor_of[arm]]),
                      "by_round": [x / y for x, y in zip(v[arm], v[anchor_of[arm]])]} for arm in arms}
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"schema": SCHEMA, "rounds": a.rounds, "anchor": anchor, "aa": aa, "arms": arms,
                           "against": anchor_of, "cpus": cpu_list, "commands": cmds, "runs": runs,
                           "summary": summary}, f, indent=1)
        return 0
    finally:
        if not a.out:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
