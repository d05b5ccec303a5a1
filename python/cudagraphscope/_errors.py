"""graphscope's errors as Python exceptions.

Each carries graphscope's exit code (man graphscope(1), EXIT STATUS) in
``code`` and the CLI's one line, "graphscope: <what> (<why>)", in
``message`` (also ``str(error)``), and subclasses the standard exception a
Python user would catch for it: a missing input file is a FileNotFoundError,
a bad document or a bad option a ValueError, a CUDA or device error a
RuntimeError. Exit code 1 (a check failed, graphs differ) is a result,
never an exception.
"""
from __future__ import annotations

import errno
import os
from typing import Iterable, Optional, Union

__all__ = ["GraphscopeError", "UsageError", "InputNotFoundError", "InputPermissionError", "DocumentError",
           "DeviceError", "WorkloadError", "error_for"]

PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


class GraphscopeError(Exception):
    """A graphscope call failed: the base of every error this package raises
    for a failure graphscope reports.

    code: graphscope's exit code: 2 bad arguments or options, 3 a bad input
    file (missing, unreadable, malformed, hostile), 4 a CUDA, CUPTI or device
    error, 5 a workload that failed.
    message: the one line "graphscope: <what> (<why>)"; also str(error).
    """

    code: int
    message: str

    def __init__(self, code: int, message: str, filename: Optional[str] = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        if filename is not None:
            self.filename = filename

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.code, self.message, getattr(self, "filename", None)))


class UsageError(GraphscopeError, ValueError):
    """Exit code 2: a bad argument or option value (an unknown format, a
    negative threshold, no rules at all, ...)."""


class InputNotFoundError(GraphscopeError, FileNotFoundError):
    """Exit code 3 for an input file that does not exist; ``filename`` names
    it and ``errno`` is ENOENT, as for the FileNotFoundError of open()."""

    def __init__(self, code: int, message: str, filename: Optional[str] = None) -> None:
        super().__init__(code, message, filename)
        self.errno = errno.ENOENT
        self.strerror = os.strerror(errno.ENOENT)


class InputPermissionError(GraphscopeError, PermissionError):
    """Exit code 3 for an input file this process may not read; ``filename``
    names it and ``errno`` is EACCES."""

    def __init__(self, code: int, message: str, filename: Optional[str] = None) -> None:
        super().__init__(code, message, filename)
        self.errno = errno.EACCES
        self.strerror = os.strerror(errno.EACCES)


class DocumentError(GraphscopeError, ValueError):
    """Exit code 3 for an input that is no document graphscope reads:
    malformed, inconsistent, of an unknown schema, hostile."""


class DeviceError(GraphscopeError, RuntimeError):
    """Exit code 4: CUDA, CUPTI or the device failed, or this graphscope was
    built without CUDA."""


class WorkloadError(GraphscopeError, RuntimeError):
    """Exit code 5: the workload (a program graphscope ran) failed."""


def _unusable(paths: Iterable[object]) -> "tuple[Optional[str], Optional[str]]":
    """The first input path that does not exist, and the first that cannot be read."""
    missing = unreadable = None
    for p in paths:
        if isinstance(p, (str, bytes)) and p not in ("-", b"-") and p:
            path = os.fsdecode(p)
            if not os.path.exists(path):
                missing = missing or path
            elif not os.path.isdir(path) and not os.access(path, os.R_OK):
                unreadable = unreadable or path
    return missing, unreadable


def error_for(code: int, message: str, inputs: Iterable[object] = ()) -> GraphscopeError:
    """The exception for a failure with graphscope's exit code and message;
    inputs: the paths the call read, to tell a missing file (code 3) from a
    bad document."""
    if code == 2:
        return UsageError(code, message)
    if code == 3:
        missing, unreadable = _unusable(inputs)
        if missing is not None:
            return InputNotFoundError(code, message, missing)
        if unreadable is not None:
            return InputPermissionError(code, message, unreadable)
        return DocumentError(code, message)
    if code == 4:
        return DeviceError(code, message)
    if code == 5:
        return WorkloadError(code, message)
    return GraphscopeError(code, message)
