#!/usr/bin/env python3
"""The tree's rules, checked (ARCHITECTURE.md states them):

1. lib/inspect is in folders by concern; each folder's README.md ends with
   "May include: A, B": every #include of a lib/inspect header from a file of
   that folder names one of those folders. lib/inspect includes no CUDA,
   CUPTI or NVTX header and nothing of lib/capture, lib/inject, lib/api or
   apps.
2. No source folder (lib, apps, python) holds more than 40 files.
3. No source file (lib, apps, python, the report's script) is over 900
   lines.
4. No unit test's name holds a ";": ctest's discovery splits the name
   there, and the test it registers then runs no test case (and passes).

    tree_rules.py REPO_ROOT     exit 0 when all hold, 1 naming each breach
"""
import os
import re
import sys

MAX_FILES, MAX_LINES = 40, 900
SOURCES = ('.cc', '.h', '.cu', '.py', '.js', '.css', '.in')


def main(root):
    bad = []
    inspect = os.path.join(root, 'lib', 'inspect')
    folders = sorted(d for d in os.listdir(inspect) if os.path.isdir(os.path.join(inspect, d)))
    allowed = {}
    for d in folders:
        readme = os.path.join(inspect, d, 'README.md')
        if not os.path.exists(readme):
            bad.append('lib/inspect/%s: no README.md saying what lives there and what it may include' % d)
            continue
        m = re.search(r'^May include: (.+)$', open(readme).read(), re.M)
        if not m:
            bad.append('lib/inspect/%s/README.md: no "May include:" line' % d)
            continue
        allowed[d] = {x.strip() for x in m.group(1).split(',')}
    loose = [f for f in os.listdir(inspect) if f.endswith(('.cc', '.h'))]
    if loose:
        bad.append('lib/inspect: files outside the folders: %s' % ', '.join(sorted(loose)))
    inc = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)
    for d in folders:
        for dirpath, _, names in os.walk(os.path.join(inspect, d)):
            for n in names:
                if not n.endswith(('.cc', '.h', '.in')):
                    continue
                path = os.path.join(dirpath, n)
                rel = os.path.relpath(path, root)
                for kind, target in inc.findall(open(path, errors='replace').read()):
                    base = os.path.basename(target)
                    if re.match(r'(cuda|cupti|nvtx|cudaProfiler|generated_)', base) or target.startswith('nv/'):
                        bad.append('%s: includes %s (lib/inspect never includes a CUDA header)' % (rel, target))
                    if kind != '"':
                        continue
                    if re.match(r'(capture|inject|api|apps)/', target):
                        bad.append('%s: includes %s (lib/inspect depends on nothing above it)' % (rel, target))
                        continue
                    full = os.path.normpath(os.path.join(dirpath, target))
                    if not full.startswith(inspect + os.sep) or not os.path.exists(full):
                        continue  # a generated file or a system header
                    folder = os.path.relpath(full, inspect).split(os.sep)[0]
                    if d in allowed and folder not in allowed[d]:
                        bad.append('%s: includes %s, of %s/ (%s/ may include %s)' %
                                   (rel, target, folder, d, ', '.join(sorted(allowed[d]))))
    for top in ('lib', 'apps', 'python'):
        for dirpath, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x != '__pycache__']
            src = [n for n in names if n.endswith(SOURCES)]
            if len(src) > MAX_FILES:
                bad.append('%s: %d source files (at most %d: group them by concern)' %
                           (os.path.relpath(dirpath, root), len(src), MAX_FILES))
            for n in src:
                path = os.path.join(dirpath, n)
                lines = sum(1 for _ in open(path, errors='replace'))
                if lines > MAX_LINES:
                    bad.append('%s: %d lines (at most %d: split it by job)' %
                               (os.path.relpath(path, root), lines, MAX_LINES))
    case = re.compile(r'TEST_CASE\("((?:[^"\\]|\\.)*)"')
    for dirpath, _, names in os.walk(os.path.join(root, 'tests')):
        for n in names:
            if n.endswith(('.cc', '.cu')):
                path = os.path.join(dirpath, n)
                for name in case.findall(open(path, errors='replace').read()):
                    if ';' in name:
                        bad.append('%s: test case "%s" has a ";" (ctest would run none of it)' %
                                   (os.path.relpath(path, root), name))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    if len(sys.argv) != 2:
        print('usage: tree_rules.py REPO_ROOT', file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
