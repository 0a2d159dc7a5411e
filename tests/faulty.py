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


def spin(pid_file, progress=None):
    """Write this process's pid to ``pid_file``, then burn a core forever (as a long
    measurement does)."""
    with open(pid_file + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(pid_file + ".tmp", pid_file)
    while True:
        pass


def _sleeper(marker: str) -> None:
    """Start ``sleep`` with ``marker`` in its command line (found again in /proc)."""
    import subprocess
    import sys

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", marker])


def spawn_and_return(marker, progress=None):
    """Leave a subprocess running and return."""
    _sleeper(marker)
    time.sleep(0.2)
    return "done"


def spawn_daemon_and_return(marker, progress=None):
    """Double-fork a daemon (new session) and return."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            import sys

            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)",
                                      marker])
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.2)
    return "done"


def spawn_and_crash(marker, progress=None):
    """Leave a subprocess and a daemon running, then crash."""
    _sleeper(marker)
    spawn_daemon_and_return(marker)
    time.sleep(1.5)  # seen by the parent's watch, then gone without cleaning up
    ctypes.string_at(0)


def spawn_and_hang(marker, progress=None):
    """Leave a subprocess running and never return."""
    _sleeper(marker)
    while True:
        time.sleep(1)


def steps(n: int, seconds: float, hang_at: int = 0, progress=None):
    """``n`` steps of ``seconds`` each, restarting the time-out clock at each
    (:func:`mlprof.measure.isolate.restart_timeout`); step ``hang_at`` (from 1) never ends."""
    from mlprof.measure.isolate import restart_timeout

    for i in range(1, n + 1):
        restart_timeout(f"step {i}")
        if i == hang_at:
            hang()
        time.sleep(seconds)
    return n


def allocate(mb: int, progress=None):
    """Touch ``mb`` MB, free them; return this process's pid and its peak resident memory
    (:func:`mlprof.sysinfo.peak_rss_mb`)."""
    from mlprof.sysinfo import peak_rss_mb

    block = bytearray(mb * 2**20)
    block[::4096] = b"\1" * len(block[::4096])
    del block
    return os.getpid(), peak_rss_mb()


#: what :func:`allocate_in_pieces` keeps between jobs (the top of the heap)
_PINNED: list[bytearray] = []


def allocate_in_pieces(mb: int, progress=None):
    """Touch ``mb`` MB in 64 kB pieces (below glibc's mmap threshold: from the heap), keep
    every 16th (between jobs too), free the others; return this process's pid and its peak
    resident memory. The holes stay resident in this process until ``malloc_trim`` gives
    them back."""
    from mlprof.sysinfo import peak_rss_mb

    pieces = []
    for _ in range(mb * 16):
        piece = bytearray(64 * 1024)
        piece[::4096] = b"\1" * len(piece[::4096])
        pieces.append(piece)
    _PINNED.extend(pieces[::16])
    del pieces
    return os.getpid(), peak_rss_mb()


def thread_and_return(progress=None):
    """Leave a thread running and return this process's pid."""
    import threading

    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    return os.getpid()


def others_alive(pids, progress=None):
    """Which of ``pids`` still exist (zombies too) as this process starts."""
    return [pid for pid in pids if os.path.exists(f"/proc/{pid}")]


def ok_then_import(value, progress=None):
    """:func:`ok`, whose process then imports ``wave`` while it waits for the next job."""
    return ok(value)


ok_then_import.imports_next = ("wave",)  # type: ignore[attr-defined]


def imported(name, progress=None):
    """Whether this process has imported ``name``, and its pid."""
    import sys

    return name in sys.modules, os.getpid()
