"""Functions that misuse memory on purpose, run in measurement child processes by the tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def hog(step_mb: int = 32, total_mb: int = 4096, pid_file: str | None = None,
        then_sleep: float = 0.0, progress=None) -> int:
    """Allocate ``step_mb`` at a time (every page written) up to ``total_mb``, hold it for
    ``then_sleep`` seconds; return the MB held.

    Writes the child's pid to ``pid_file`` first, so a test can check it is gone afterwards.
    """
    if pid_file:
        with open(pid_file, "w") as f:
            f.write(str(os.getpid()))
    kept = []
    while len(kept) * step_mb < total_mb:
        kept.append(bytearray(b"\1") * (step_mb * 2**20))
        time.sleep(0.01)
    time.sleep(then_sleep)
    return len(kept) * step_mb


def spike(mb: int = 600, then_sleep: float = 1.0, progress=None) -> str:
    """Allocate ``mb`` at once, free it at once, then idle: a peak between two looks."""
    block = bytearray(b"\1") * (mb * 2**20)
    del block
    time.sleep(then_sleep)
    return "survived"


def sigkill_self(progress=None) -> None:
    """Die from SIGKILL, as the kernel's out-of-memory killer would kill it."""
    os.kill(os.getpid(), signal.SIGKILL)


def memory_error(progress=None) -> None:
    """Ask for more memory than any machine has: MemoryError."""
    bytearray(1 << 50)


def hog_in_subprocess(pid_file: str, total_mb: int = 2048, progress=None) -> int:
    """Start a subprocess that runs :func:`hog` (its pid in ``pid_file``, then holding the
    memory for a minute) and wait for it."""
    code = (f"import sys; sys.path[:0] = {sys.path!r}; from tests.faulty_models import hogs; "
            f"hogs.hog(total_mb={total_mb}, pid_file={pid_file!r}, then_sleep=60)")
    return subprocess.run([sys.executable, "-c", code], check=False).returncode
