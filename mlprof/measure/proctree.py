"""The process tree below a measurement: its memory, its descendants, and ending them all.

Read from ``/proc`` (a few microseconds a look), so that the parent of a measurement
(:func:`mlprof.measure.isolate.run_isolated`) can watch it without taking a core from it, and
find and kill whatever it started, however it started it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

#: descendants of the child (e.g. compile workers) are looked for every this many seconds
DESCENDANTS_INTERVAL = 1.0

def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie), from any process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 4096 / 2**20


def anon_mb(pid: int) -> float:
    """The resident anonymous (and private) memory of ``pid`` in MB; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * PAGE_MB
    except (OSError, ValueError, IndexError):
        return 0.0


def peak_rss_of(pid: int) -> float:
    """The peak resident memory (``VmHWM``) of ``pid`` in MB; 0 once it is gone.

    The peak rather than the current value: an allocation made and freed between two looks
    still counts. Linux resets it at fork, so the forkserver's own memory does not count.
    """
    from mlprof.sysinfo import status_mb

    return status_mb("VmHWM", pid) or 0.0


def descendants(pid: int) -> list[int]:
    """All processes below ``pid`` (empty where ``/proc/*/task/*/children`` is missing)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


class MemoryWatch:
    """The resident memory of a child process and its descendants, read from ``/proc``.

    The worker counts with its peak resident set (``VmHWM``, as ``peak_rss_mb`` in the
    provenance), its supervisor (the child) and other descendants with their current anonymous
    memory only, since pages they share with the worker (or with each other after a fork) would
    otherwise count twice.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_mb = 0.0
        self._kids: list[int] = []
        self._kids_at = 0.0
        #: every descendant seen, with its start time (ended with the child, even if it
        #: re-parented meanwhile; the start time tells a reused pid apart)
        self.known: dict[int, int | None] = {}
        #: the worker that runs the measurement below the supervisor (see _child_main)
        self.worker: int | None = None

    def refresh(self) -> None:
        """Look for the child's descendants again (at most every DESCENDANTS_INTERVAL)."""
        now = time.monotonic()
        if now - self._kids_at >= DESCENDANTS_INTERVAL:
            self._kids_at = now
            self._kids = descendants(self.pid)
            for k in self._kids:
                self.known.setdefault(k, start_time(k))

    def current_mb(self) -> float:
        """Resident memory (MB): the child's peak plus its descendants' now; updates
        :attr:`peak_mb`."""
        self.refresh()
        if self.worker is not None:  # the measurement's own peak; the supervisor's pages are
            # shared with the worker but its own few (counted once, as anonymous memory)
            total = anon_mb(self.pid) + peak_rss_of(self.worker) + sum(
                anon_mb(k) for k in self._kids if k != self.worker)
        else:
            total = peak_rss_of(self.pid) + sum(anon_mb(k) for k in self._kids)
        self.peak_mb = max(self.peak_mb, total)
        return total


PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1


def prctl(option: int, arg: int) -> None:
    """Linux's ``prctl(option, arg)``; nothing where there is no such call (not Linux, or no
    libc)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)


def contain_descendants() -> None:
    """Make this process the one its descendants fall back to: a process group of its own
    (``killpg`` reaches every descendant that does not leave the group, even after this
    process died) and, on Linux, a child subreaper (a double-forked daemon is re-parented to
    this process instead of init, so :func:`end_descendants` still finds it)."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)  # (not Linux: the group still works)


def start_time(pid: int) -> int | None:
    """A process's start time (clock ticks since boot, /proc/<pid>/stat field 22)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def end_descendants(pid: int, known: dict[int, int | None] | None = None) -> set[int]:
    """SIGKILL every process below ``pid`` (and ``known`` ones seen earlier, if still the same
    process), and its process group; reap what was ours. Nothing a measurement or discovery
    started outlives it. Returns the processes killed (see :func:`wait_gone`)."""
    victims = set(descendants(pid))
    victims |= {k for k, t in (known or {}).items() if t is not None and start_time(k) == t}
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    for kid in victims:
        with contextlib.suppress(OSError):
            os.kill(kid, signal.SIGKILL)
    if pid == os.getpid():
        with contextlib.suppress(ChildProcessError, OSError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
    return victims


def wait_gone(pids: set[int], seconds: float = 5.0) -> None:
    """Wait (up to ``seconds``) until the killed ``pids`` are dead: a killed process that held
    gigabytes takes a moment to release them, and the next measurement must not start beside
    it (nor a caller see it still alive)."""
    deadline = time.monotonic() + seconds
    for p in pids:
        while alive(p) and time.monotonic() < deadline:
            time.sleep(0.01)
