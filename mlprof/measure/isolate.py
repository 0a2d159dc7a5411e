"""Run a measurement in a child process with a timeout, so the caller stays clean.

The child is forked by the measurement server (:mod:`mlprof.measure.forkserver`, which has the
libraries imported once): a supervisor that forks the worker running the measurement and ends
whatever the worker left behind. The worker talks to the parent through a pipe (progress,
restarts of the time-out clock, its result or error).

The parent waits with ``poll`` (no busy loop, so it does not steal a core from the child),
waking every :data:`WATCH_INTERVAL` seconds to read the child's resident memory from ``/proc``
(a few microseconds): a child above the memory limit (``$MLP_MEMORY_LIMIT`` MB, default 80 % of
the machine's memory) is killed with status ``"oom"``. The limit is watched rather than set with
``RLIMIT_AS``/``RLIMIT_DATA``: those count *virtual* memory, and a child with PyTorch (CUDA
build) starts with ~3.3 GB of address space and ~0.8 GB of data mappings for ~0.4 GB resident,
so any useful limit would break imports or bear no relation to the memory really used. A child
killed by the kernel's OOM killer (SIGKILL that the parent did not send) or raising
``MemoryError`` also gets status ``"oom"``.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from mlprof.errors import MeasurementFailed, MLProfError, is_out_of_memory, out_of_memory_text
from mlprof.ingest import ascii_float
from mlprof.measure.forkserver import (
    _context,
    _forget_server,
    _server_alive,
    check_main_guard,
    waiting_for_start,
)
from mlprof.progress import speaks_for_itself

DEFAULT_TIMEOUT = 600.0
#: default memory limit: this fraction of the machine's (or the cgroup's) memory
DEFAULT_MEMORY_FRACTION = 0.8
#: seconds between two looks at the child's resident memory
WATCH_INTERVAL = 0.1
#: descendants of the child (e.g. compile workers) are looked for every this many seconds
DESCENDANTS_INTERVAL = 1.0

#: True in a measurement worker (a disposable process: the model sandbox may cut it off from
#: the network for good, see mlprof.model.sandbox.enter_network_namespace)
IN_WORKER = False

#: the process that started this measurement (the forkserver), set in the supervisor before it
#: forks the worker: the worker's own parent is the supervisor, one per measurement
SERVER_PID: int | None = None

#: in a worker: sends a message to the parent (:func:`run_isolated`), one at a time (the
#: progress watcher thread and the working thread share the pipe)
_SEND: Callable[[tuple[str, Any]], None] | None = None


def restart_timeout(step: str = "") -> None:
    """Restart the time-out clock of this measurement: from now on it is killed only if
    ``$MLP_TIMEOUT`` (its ``timeout``) passes before the next restart or its end. ``step`` (for
    example ``point 3: 12 requests/s``) is named if that one times out. Nothing outside a
    worker of :func:`run_isolated` (a function called in-process).

    Why: a load search runs up to 16 points in one child, and a point of a large model at a
    low rate takes ~100 s (ResNet-18, docs/load.md): one time-out for the whole search either
    kills a healthy search or lets a hung point run for the whole budget. With the clock
    restarted at each point, a hung point is killed after ``MLP_TIMEOUT`` and a healthy search
    runs as long as its points need."""
    if _SEND is not None:
        _SEND(("restart", step))


def starter_pid() -> int:
    """The pid of the process that started this measurement: the measurement server when run
    by :func:`run_isolated` (the worker's parent is its supervisor, not the server), else this
    process's parent."""
    return SERVER_PID if IN_WORKER and SERVER_PID is not None else os.getppid()


def _positive_env(name: str, unit: str) -> float | None:
    """The positive number in ``$name`` (None when unset); a clear error otherwise."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = ascii_float(raw, name)  # float() alone takes Arabic-Indic digits and 1_0
    except MLProfError:
        raise MLProfError(f"must be a number of {unit}, got {raw!r}", field=name) from None
    if not math.isfinite(value):
        raise MLProfError(f"must be a finite number of {unit}, got {raw!r}", field=name)
    if value <= 0:
        raise MLProfError(f"must be > 0 ({unit}), got {raw!r}", field=name)
    return value


def default_timeout() -> float:
    """``$MLP_TIMEOUT`` in seconds (default 600)."""
    value = _positive_env("MLP_TIMEOUT", "seconds")
    return DEFAULT_TIMEOUT if value is None else value


def total_memory_mb() -> float:
    """The memory available to this machine's processes in MB: MemTotal, or a lower cgroup limit.

    Returns 0 when it cannot be read (no ``/proc/meminfo``).
    """
    total = 0.0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    total = float(line.split()[1]) / 1024
                    break
    except OSError:
        return 0.0
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                raw = f.read().strip()
        except OSError:
            continue
        if raw.isdigit() and 0 < int(raw) / 2**20 < total:
            total = int(raw) / 2**20
    return total


def default_memory_limit() -> float | None:
    """``$MLP_MEMORY_LIMIT`` in MB (default: 80 % of :func:`total_memory_mb`; None if unknown)."""
    value = _positive_env("MLP_MEMORY_LIMIT", "MB")
    if value is None:
        total = total_memory_mb()
        return round(DEFAULT_MEMORY_FRACTION * total) if total > 0 else None
    return value


_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 4096 / 2**20


def _anon_mb(pid: int) -> float:
    """The resident anonymous (and private) memory of ``pid`` in MB; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * _PAGE_MB
    except (OSError, ValueError, IndexError):
        return 0.0


def _peak_rss_mb(pid: int) -> float:
    """The peak resident memory (``VmHWM``) of ``pid`` in MB; 0 once it is gone.

    The peak rather than the current value: an allocation made and freed between two looks
    still counts. Linux resets it at fork, so the forkserver's own memory does not count.
    """
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def _descendants(pid: int) -> list[int]:
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


class _MemoryWatch:
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
            self._kids = _descendants(self.pid)
            for k in self._kids:
                self.known.setdefault(k, _start_time(k))

    def current_mb(self) -> float:
        """Resident memory (MB): the child's peak plus its descendants' now; updates
        :attr:`peak_mb`."""
        self.refresh()
        if self.worker is not None:  # the measurement's own peak; the supervisor's pages are
            # shared with the worker but its own few (counted once, as anonymous memory)
            total = _anon_mb(self.pid) + _peak_rss_mb(self.worker) + sum(
                _anon_mb(k) for k in self._kids if k != self.worker)
        else:
            total = _peak_rss_mb(self.pid) + sum(_anon_mb(k) for k in self._kids)
        self.peak_mb = max(self.peak_mb, total)
        return total


_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1


def _prctl(option: int, arg: int) -> None:
    """Linux's ``prctl(option, arg)``; nothing where there is no such call (not Linux, or no
    libc)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)


def _die_with_parent() -> None:
    """SIGKILL this child when its parent, the measurement server, exits; the server exits
    when every process holding the write end of its ``alive`` pipe has ended: the process
    that started it (and luigi workers forked from it), and, as multiprocessing hands it to
    each child, this child. So the child closes its copy (it starts no measurement of its
    own) and the server ends with ``law run``. A ``law run`` stopped by SIGTERM or SIGKILL
    (``timeout``, ``scancel``, ``condor_rm``, the OOM killer), which runs no clean-up, then
    leaves no measurement behind burning a core: one was seen still running a ResNet-18
    profile at 100 % CPU minutes after its ``law run`` was terminated, and the server with
    it."""
    fs: Any = multiprocessing.forkserver._forkserver  # private state, not in typeshed
    if fs._forkserver_alive_fd is not None:
        with contextlib.suppress(OSError):
            os.close(fs._forkserver_alive_fd)
    _forget_server(fs)  # a measurement that used multiprocessing would start its own
    parent = os.getppid()
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the server was gone before the signal was armed
        os._exit(1)


def _contain_descendants() -> None:
    """Make this process the one its descendants fall back to: a process group of its own
    (``killpg`` reaches every descendant that does not leave the group, even after this
    process died) and, on Linux, a child subreaper (a double-forked daemon is re-parented to
    this process instead of init, so :func:`_end_descendants` still finds it)."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # (not Linux: the group still works)


def _start_time(pid: int) -> int | None:
    """A process's start time (clock ticks since boot, /proc/<pid>/stat field 22)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _end_descendants(pid: int, known: dict[int, int | None] | None = None) -> set[int]:
    """SIGKILL every process below ``pid`` (and ``known`` ones seen earlier, if still the same
    process), and its process group; reap what was ours. Nothing a measurement or discovery
    started outlives it. Returns the processes killed (see :func:`_wait_gone`)."""
    victims = set(_descendants(pid))
    victims |= {k for k, t in (known or {}).items() if t is not None and _start_time(k) == t}
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


def _wait_gone(pids: set[int], seconds: float = 5.0) -> None:
    """Wait (up to ``seconds``) until the killed ``pids`` are dead: a killed process that held
    gigabytes takes a moment to release them, and the next measurement must not start beside
    it (nor a caller see it still alive)."""
    deadline = time.monotonic() + seconds
    for p in pids:
        while _server_alive(p) and time.monotonic() < deadline:
            time.sleep(0.01)


def _child_main(conn: Any, func: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """The measurement process: a supervisor that outlives the measurement.

    This process (the child the parent watches) makes itself a subreaper in a process group of
    its own (:func:`_contain_descendants`), forks the *worker* that runs ``func`` and waits for
    it. Whatever the worker started, however it ended (returned, crashed, or exited at once
    with ``os._exit`` right after double-forking a daemon into a new session), every orphan
    below it is re-parented to this supervisor, which kills them all before it exits with the
    worker's status. Before (issue 22) the worker was the subreaper itself: a daemon forked by
    a worker that exited at once was re-parented to init and survived, since the parent's
    watch looks for descendants only every second and the daemon had left the process group.
    """
    global SERVER_PID
    SERVER_PID = os.getppid()  # inherited by the worker: its provenance names the server
    _die_with_parent()
    _contain_descendants()
    supervisor = os.getpid()
    worker = os.fork()
    if worker == 0:
        _worker_main(conn, func, kwargs, supervisor)  # never returns
    conn.close()  # only the worker writes to the parent
    status = 0
    while True:
        try:
            _, status = os.waitpid(worker, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    # the worker is gone: everything below this process now is a leftover of the measurement
    for _ in range(3):  # a process forking while it is killed is caught by the next pass
        kids = _descendants(os.getpid())
        if not kids:
            break
        for kid in kids:
            with contextlib.suppress(OSError):
                os.kill(kid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError, OSError):
            while os.waitpid(-1, 0)[0]:
                pass
    if os.WIFSIGNALED(status):  # the parent reads the worker's signal as this process's
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # (SIGKILL has no handler to reset)
            signal.signal(sig, signal.SIG_DFL)
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _worker_main(conn: Any, func: Callable[..., Any], kwargs: dict[str, Any],
                 supervisor: int) -> None:
    """Run ``func`` in the worker forked by :func:`_child_main`, send its result, exit."""
    import threading

    send_lock = threading.Lock()

    def send(message: tuple[str, Any]) -> None:
        with send_lock:
            conn.send(message)

    def progress(fraction: float, message: str) -> None:
        send(("progress", (fraction, message)))

    global IN_WORKER, _SEND
    IN_WORKER = True
    _SEND = send
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with its supervisor (a time-out kill)
    if os.getppid() != supervisor:  # it was gone before the signal was armed
        os._exit(1)
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # a gated server ignores it (measure.gate)
    from mlprof.measure.quiet import StderrFilter, verbose

    # TensorFlow's oneDNN notice reaches fd 2 past TF_CPP_MIN_LOG_LEVEL (mlprof.measure.quiet)
    stderr_filter = None if verbose() else StderrFilter()
    try:
        conn.send(("worker", os.getpid()))  # whose peak memory the parent watches
        result = func(**kwargs, progress=progress)
        # the worker's own peak, for the parent's verdict: a peak between two looks counts too
        conn.send(("peak", _peak_rss_mb(os.getpid())))
        conn.send(("ok", result))
    except MLProfError as e:
        conn.send(("error", e))
    except BaseException as e:  # report anything, including KeyboardInterrupt/SystemExit
        tb = traceback.format_exc(limit=-3)
        if is_out_of_memory(e):  # an allocation the system refused
            what = type(e).__name__ + (f": {out_of_memory_text(e)}" if str(e).strip() else "")
            conn.send(("error", MeasurementFailed(f"out of memory ({what})", status="oom")))
        else:
            conn.send(("error", MeasurementFailed(f"{type(e).__name__}: {e}", status="failed")))
        conn.send(("traceback", tb))
    finally:
        with contextlib.suppress(Exception):
            conn.close()
        # flush what the measurement printed; no atexit handlers of the forkserver's process
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        if stderr_filter is not None:
            with contextlib.suppress(Exception):
                stderr_filter.close()
        os._exit(0)


@speaks_for_itself  # the child reports (progress): the run's own watcher is quiet meanwhile
def run_isolated(func: Callable[..., Any], kwargs: dict[str, Any], *,
                 timeout: float | None = None,
                 progress: Callable[[float, str], None] | None = None,
                 label: str = "measurement", torch: bool = False,
                 memory_limit: float | None = None) -> Any:
    """Call ``func(**kwargs, progress=...)`` in a child process and return its result.

    Raises :class:`MeasurementFailed` with ``status`` ``"timeout"`` when the child runs past
    ``timeout`` seconds (default ``$MLP_TIMEOUT``) since it started or since it last called
    :func:`restart_timeout` (a load search, once per point), ``"oom"`` when its resident
    memory exceeds ``memory_limit`` MB (default ``$MLP_MEMORY_LIMIT``), it is killed with
    SIGKILL by someone else (the kernel's OOM killer) or raises ``MemoryError``, and
    ``"failed"`` when it crashes (signal) or exits without a result; re-raises the
    :class:`MLProfError` the child raised.
    The child is killed in every case. Ctrl-C kills the child and propagates.

    Without ``progress``, what the child reports (see :mod:`mlprof.progress`) is logged
    as ``<label>: <message>`` to the ``mlprof`` logger, at most every 3.5 s and only once the
    child has run that long (:func:`~mlprof.progress.progress_logger`). While the child's
    start waits for a measurement server that is still importing, ``progress`` also gets the
    parent's ``starting the measurement server (...)`` (:func:`waiting_for_start`).
    """
    check_main_guard()
    if progress is None:
        from mlprof.progress import progress_logger

        progress = progress_logger(label)
    timeout = default_timeout() if timeout is None else float(timeout)
    limit = default_memory_limit() if memory_limit is None else float(memory_limit)
    ctx = _context(torch)
    recv_conn, send_conn = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(send_conn, func, kwargs),
                       name=f"mlprof-measure-{label}", daemon=True)
    with waiting_for_start(progress):  # the server's first child: it says what it waits for
        proc.start()  # returns once the server has forked the child (after its preloads)
    send_conn.close()
    pid = proc.pid
    assert pid is not None  # set by start()
    watch = _MemoryWatch(pid)
    talk = _Talk(label, timeout, limit, watch, progress)
    try:
        while True:
            remaining = talk.remaining()
            if limit is not None and talk.error is None:
                _check_memory(watch.current_mb(), limit, label)
            else:
                watch.refresh()
            if not recv_conn.poll(min(remaining, WATCH_INTERVAL if limit is not None else 5.0)):
                if not proc.is_alive() and not recv_conn.poll(0):
                    break
                continue
            try:
                message = recv_conn.recv()
            except EOFError:
                break
            if talk.hear(*message):
                return talk.result
        raise talk.failure(proc)
    finally:
        if talk.ended:  # the supervisor kills what the worker left behind and exits (see
            proc.join(5)  # _child_main); a kill now could orphan a process being forked
        # its subprocesses first (once it is gone they can no longer be found below it): the
        # ones below it now, those seen earlier, and its process group, which outlives it
        victims = _end_descendants(pid, watch.known)
        if watch.worker is not None:
            victims.add(watch.worker)
        if proc.is_alive():
            proc.kill()
        proc.join(10)
        _wait_gone(victims)
        recv_conn.close()


class _Talk:
    """What :func:`run_isolated` heard from its worker: the time-out clock (restarted by
    :func:`restart_timeout`), the result or error, whether the worker said how it ended."""

    def __init__(self, label: str, timeout: float, limit: float | None, watch: _MemoryWatch,
                 progress: Callable[[float, str], None] | None) -> None:
        self.label, self.timeout, self.limit, self.watch = label, timeout, limit, watch
        self.progress = progress
        self.start = time.monotonic()
        self.restarts, self.step = 0, ""  # restart_timeout: how often, and the step now running
        self.error: BaseException | None = None
        self.ended = False  # the worker reported how it ended: its supervisor cleans up
        self.result: Any = None

    def remaining(self) -> float:
        """Seconds left before the time-out; raises it (``"timeout"``) when none are left."""
        remaining = self.timeout - (time.monotonic() - self.start)
        if remaining > 0:
            return remaining
        if self.restarts:
            raise MeasurementFailed(
                f"{self.label}: {self.step or 'a step'} timed out after {self.timeout:g} s "
                f"(MLP_TIMEOUT, per step: {self.restarts - 1} step(s) before it ended in "
                "time); the measurement process was killed", status="timeout")
        raise MeasurementFailed(f"{self.label}: timed out after {self.timeout:g} s "
                                "(MLP_TIMEOUT); the measurement process was killed",
                                status="timeout")

    def hear(self, kind: str, payload: Any) -> bool:
        """Take one message; True when it is the result (in :attr:`result`)."""
        if kind == "progress":
            if self.progress is not None:
                self.progress(*payload)
        elif kind == "restart":
            self.start, self.restarts, self.step = (time.monotonic(), self.restarts + 1,
                                                    str(payload))
        elif kind == "worker":
            self.watch.worker = payload
        elif kind == "peak":
            self.watch.peak_mb = max(self.watch.peak_mb, payload)
            if self.limit is not None:
                _check_memory(self.watch.peak_mb, self.limit, self.label)
        elif kind == "ok":
            self.ended, self.result = True, payload
            return True
        elif kind == "error":
            self.ended, self.error = True, payload
        elif kind == "traceback" and isinstance(self.error, MeasurementFailed):
            self.error.traceback = payload  # type: ignore[attr-defined]
        return False

    def failure(self, proc: Any) -> BaseException:
        """The error to raise once the child ended without a result: the one it sent (named
        after the measurement when unexpected), else how it ended."""
        error, label = self.error, self.label
        if isinstance(error, MeasurementFailed) and error.file is None \
                and not error.message.startswith(label):
            # the child's unexpected error or MemoryError: say which measurement it was
            tb = getattr(error, "traceback", None)
            error = MeasurementFailed(f"{label}: {error.message}", status=error.status)
            error.traceback = tb  # type: ignore[attr-defined]
        if error is not None:
            return error
        proc.join(10)
        if proc.exitcode == -signal.SIGKILL:
            # not our kill (we raise before killing): on Linux almost always the OOM killer
            return MeasurementFailed(
                f"{label}: the measurement process was killed with SIGKILL, most likely by the "
                f"kernel's out-of-memory killer ({self.watch.peak_mb:.0f} MB resident when "
                "last seen)", status="oom")
        return MeasurementFailed(f"{label}: {_describe_exit(proc.exitcode)}", status="failed")


def _check_memory(used_mb: float, limit: float, label: str) -> None:
    """Raise :class:`MeasurementFailed` (``"oom"``) if ``used_mb`` is above the limit (the
    caller kills the child)."""
    if used_mb > limit:
        raise MeasurementFailed(
            f"{label}: exceeded the memory limit of {limit:g} MB (MLP_MEMORY_LIMIT): "
            f"{used_mb:.0f} MB resident; the measurement process was killed", status="oom")


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "the measurement process did not exit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the measurement process crashed with {name}"
    return f"the measurement process exited with code {code} without a result"
