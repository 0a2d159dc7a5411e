"""Functions that misbehave on purpose, run in measurement child processes by the tests."""

from __future__ import annotations

import ctypes
import os
import time

from mlprof.errors import MLProfError


def segfault(progress=None):
    """Crash with SIGSEGV."""
    ctypes.string_at(0)


def abort(progress=None):
    """Crash with SIGABRT."""
    os.abort()


def hang(progress=None):
    """Never return."""
    while True:
        time.sleep(1)


def bad_input(progress=None):
    """Raise mlprof's own error."""
    raise MLProfError("broken on purpose", "/some/file.yaml", "model.inputs[0].shape")


def bug(progress=None):
    """Raise an unexpected error."""
    return {}["missing"]


def exit_silently(progress=None):
    """Exit without a result."""
    os._exit(3)


def ok(value, progress=None):
    """Report progress, then return ``value`` doubled and the child's pid."""
    if progress is not None:
        progress(0.5, "half way")
    return value * 2, os.getpid()
