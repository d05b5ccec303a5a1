"""Finding, loading and calling libgraphscope.so.0 (graphscope's C API,
lib/api/include/graphscope/graphscope.h) with ctypes.

ctypes rather than a compiled extension: the C API is a handful of functions
that take and return text, so one pure-Python package serves every Python
version. ctypes releases the GIL around each call; the library is
thread-safe.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Iterable, Optional, Tuple

from ._errors import GraphscopeError, error_for
from ._native import SONAME, library_candidates
# The oldest API version this package speaks (graphscope.h's GS_API_VERSION).
API_VERSION = 1

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_path: Optional[str] = None

__all__ = ["GraphscopeError", "library", "library_path", "call", "encode"]


def _declare(lib: ctypes.CDLL) -> None:
    c_int, c_char_p, c_void_p, c_size_t = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t
    out = ctypes.POINTER(c_void_p)  # char**: kept as an address so that gs_free gets it back
    lib.gs_version.argtypes, lib.gs_version.restype = [], c_char_p
    lib.gs_api_version.argtypes, lib.gs_api_version.restype = [], c_int
    lib.gs_free.argtypes, lib.gs_free.restype = [c_void_p], None
    for name in ("gs_dump", "gs_diff", "gs_check", "gs_profile"):
        f = getattr(lib, name)
        f.argtypes, f.restype = [c_char_p, c_char_p, c_char_p, out, out], c_int
    # uintptr_t is size_t's width on every platform graphscope builds for.
    lib.gs_walk_cuda_graph.argtypes = [c_size_t, c_char_p, out, out]
    lib.gs_walk_cuda_graph.restype = c_int


def library() -> ctypes.CDLL:
    """The loaded library (ctypes.CDLL), loaded on first use: importing the
    package needs no library, so tools can import it anywhere."""
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in library_candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s: %s" % (path, e))
                continue
            _declare(lib)
            have = lib.gs_api_version()
            if have < API_VERSION:
                raise OSError("graphscope: %s implements API version %d, cudagraphscope needs %d or later"
                              % (path, have, API_VERSION))
            _lib, _path = lib, path
            return lib
        how = ("GRAPHSCOPE_LIBRARY names it" if os.environ.get("GRAPHSCOPE_LIBRARY") else
               "set GRAPHSCOPE_LIBRARY to its path, or install graphscope")
        raise OSError("graphscope: cannot load %s (%s; %s)" % (SONAME, "; ".join(tried), how))


def library_path() -> str:
    """The path (or soname) the library was loaded from."""
    library()
    assert _path is not None
    return _path


def _text(address: Optional[int]) -> Optional[str]:
    if not address:
        return None
    return ctypes.string_at(address).decode("utf-8", errors="replace")


def call(name: str, *args: Any, inputs: Iterable[object] = ()) -> Tuple[int, str]:
    """Calls one of gs_dump, gs_diff, gs_check, gs_profile, gs_walk_cuda_graph
    with its leading arguments; returns (exit code, text) for 0 and 1 and
    raises GraphscopeError (the subclass for the code, _errors.error_for) for
    any other code. inputs: the paths the call reads, to name a missing one."""
    lib = library()
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    code = getattr(lib, name)(*args, ctypes.byref(out), ctypes.byref(err))
    try:
        text, message = _text(out.value), _text(err.value)
    finally:
        lib.gs_free(out)
        lib.gs_free(err)
    if code in (0, 1):
        if text is None:
            raise GraphscopeError(code, "graphscope: %s returned %d without a document" % (name, code))
        return code, text
    raise error_for(code, message or "graphscope: %s failed with exit code %d" % (name, code), inputs)


def encode(text: Optional[str], what: str = "text") -> Optional[bytes]:
    """text as the C string the C API takes (UTF-8); ValueError when it holds a
    NUL byte, where the C string would end."""
    if text is None:
        return None
    if "\0" in text:
        raise ValueError("%s %r contains a NUL byte" % (what, text if len(text) <= 200 else text[:200] + "..."))
    return text.encode("utf-8")
