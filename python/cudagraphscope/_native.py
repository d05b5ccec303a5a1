"""Where graphscope's native parts are: the CLI and libgraphscope.so.0.

Three layouts, tried in this order after the environment variables:
 - the wheel (pip install): a prefix inside the package,
   cudagraphscope/_native/{bin,lib/<multiarch>,share};
 - an installed tree (cmake --install, the Debian package): the package in
   <prefix>/lib/python3/dist-packages/cudagraphscope/, beside
   <prefix>/bin/graphscope and <prefix>/lib[/<multiarch>]/libgraphscope.so.0;
 - the dynamic loader's search for the library, and the PATH for the CLI.
"""
from __future__ import annotations

import os
import shutil
import sysconfig
from typing import List, Optional

SONAME = "libgraphscope.so.0"
_HERE = os.path.dirname(os.path.abspath(__file__))
# The wheel's prefix.
NATIVE = os.path.join(_HERE, "_native")
# An installed tree's prefix: <prefix>/lib/python3/dist-packages/cudagraphscope.
_PREFIX = os.path.normpath(os.path.join(_HERE, os.pardir, os.pardir, os.pardir, os.pardir))


def _libdirs(prefix: str) -> List[str]:
    arches: List[str] = []
    for arch in (sysconfig.get_config_var("MULTIARCH"), "x86_64-linux-gnu", "aarch64-linux-gnu"):
        if arch and arch not in arches:
            arches.append(arch)
    return [os.path.join(prefix, "lib", a) for a in arches] + [os.path.join(prefix, "lib")]


def library_candidates() -> List[str]:
    """Paths to try for libgraphscope.so.0, in order (the last one a bare
    soname, for the dynamic loader). GRAPHSCOPE_LIBRARY alone when it is set."""
    env = os.environ.get("GRAPHSCOPE_LIBRARY")
    if env:
        return [env]
    found = [os.path.join(d, SONAME) for prefix in (NATIVE, _PREFIX) for d in _libdirs(prefix)]
    return [p for p in found if os.path.exists(p)] + [SONAME]


def bundled_binary() -> Optional[str]:
    """The CLI this package carries (the wheel) or sits beside (an installed
    tree), or GRAPHSCOPE_BINARY; never one found on the PATH (in a venv, that
    is the console script that runs this one)."""
    env = os.environ.get("GRAPHSCOPE_BINARY")
    if env:
        return env
    for prefix in (NATIVE, _PREFIX):
        path = os.path.join(prefix, "bin", "graphscope")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def binary() -> str:
    """The CLI to run for report() and ranks(): bundled_binary(), else
    graphscope on the PATH. OSError when there is none."""
    path = bundled_binary() or shutil.which("graphscope")
    if not path:
        raise OSError("graphscope: the graphscope command is not found (not in this package, not beside it, not on "
                      "the PATH; set GRAPHSCOPE_BINARY to its path, or pip install cudagraphscope)")
    return path


def data_file(*parts: str) -> Optional[str]:
    """A file of share/ (the manual, the JSON Schemas) in the wheel or the
    installed tree, or None."""
    for prefix in (NATIVE, _PREFIX):
        path = os.path.join(prefix, "share", *parts)
        if os.path.exists(path):
            return path
    return None
