"""The `graphscope` console script of the wheel, and `python -m cudagraphscope`:
replaces this process with the CLI the package carries, so that its exit
code, signals, standard streams and `--exec` (which finds the injection
library beside the CLI) are the CLI's own."""
from __future__ import annotations

import os
import sys
from typing import List, NoReturn, Optional

from ._native import bundled_binary


def main(argv: Optional[List[str]] = None) -> NoReturn:
    args = sys.argv[1:] if argv is None else argv
    path = bundled_binary()
    if path is None:
        # Never the PATH's graphscope: in a venv that is this script.
        sys.stderr.write("graphscope: the graphscope binary is not in this cudagraphscope package "
                         "(cudagraphscope/_native/bin; installed from a wheel built without it?)\n")
        sys.exit(4)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(path, ["graphscope"] + list(args))
    except OSError as e:
        sys.stderr.write("graphscope: cannot run %s (%s)\n" % (path, e.strerror or e))
        sys.exit(4)
