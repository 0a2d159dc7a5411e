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

import atexit
import contextlib
import math
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from mlprof.errors import MeasurementFailed, MLProfError, is_out_of_memory, out_of_memory_text
from mlprof.ingest import ascii_float
from mlprof.measure.forkserver import (
    _context,
    _forget_server,
    check_main_guard,
    import_ahead,
    main_file_not_a_file_hidden,
    waiting_for_start,
)
from mlprof.measure.proctree import (
    PR_SET_PDEATHSIG,
    MemoryWatch,
    contain_descendants,
    descendants,
    end_descendants,
    peak_rss_of,
    prctl,
    wait_gone,
)
from mlprof.progress import speaks_for_itself

DEFAULT_TIMEOUT = 600.0
#: default memory limit: this fraction of the machine's (or the cgroup's) memory
DEFAULT_MEMORY_FRACTION = 0.8
#: seconds between two looks at the child's resident memory
WATCH_INTERVAL = 0.1

#: True in a measurement worker (a disposable process: the model sandbox may cut it off from
#: the network for good, see mlprof.model.sandbox.enter_network_namespace)
IN_WORKER = False

#: the process that started this measurement (the forkserver), set in the supervisor before it
#: forks the worker: the worker's own parent is the supervisor, one per measurement
SERVER_PID: int | None = None

#: the jobs this worker has run before the current one (:func:`earlier_in_process`)
_EARLIER = 0

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
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the server was gone before the signal was armed
        os._exit(1)


def _child_main(conn: Any, func: Callable[..., Any], kwargs: dict[str, Any],
                jobs: Any = None) -> None:
    """The measurement process: a supervisor that outlives the measurement.

    This process (the child the parent watches) makes itself a subreaper in a process group of
    its own (:func:`contain_descendants`), forks the *worker* that runs ``func`` and waits for
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
    contain_descendants()
    supervisor = os.getpid()
    worker = os.fork()
    if worker == 0:
        _worker_main(conn, func, kwargs, supervisor, jobs)  # never returns
    conn.close()  # only the worker writes to the parent
    if jobs is not None:
        jobs.close()  # only the worker reads the next jobs
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
        kids = descendants(os.getpid())
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
                 supervisor: int, jobs: Any = None) -> None:
    """Run ``func`` in the worker forked by :func:`_child_main`, send its result, exit; with
    ``jobs`` (:func:`run_isolated`'s ``reuse``), then wait there for the next ``(func,
    kwargs)`` while each ends cleanly (:func:`_stays`), until the parent closes it."""
    import threading

    send_lock = threading.Lock()

    def send(message: tuple[str, Any]) -> None:
        with send_lock:
            conn.send(message)

    global IN_WORKER, _SEND
    IN_WORKER = True
    _SEND = send
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with its supervisor (a time-out kill)
    if os.getppid() != supervisor:  # it was gone before the signal was armed
        os._exit(1)
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # a gated server ignores it (measure.gate)
    from mlprof.measure.quiet import StderrFilter, verbose

    # TensorFlow's oneDNN notice reaches fd 2 past TF_CPP_MIN_LOG_LEVEL (mlprof.measure.quiet)
    stderr_filter = None if verbose() else StderrFilter()
    try:
        conn.send(("worker", os.getpid()))  # whose peak memory the parent watches
        while _run_one(conn, func, kwargs, jobs is not None):
            job = _next_job(jobs, getattr(func, "imports_next", ()))
            if job is None:
                break
            func, kwargs = job
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


def earlier_in_process() -> int:
    """How many calls this measurement process ran before the current one (0 outside a
    worker and in a new one; see :func:`run_isolated`'s ``reuse``)."""
    return _EARLIER


def _run_one(conn: Any, func: Callable[..., Any], kwargs: dict[str, Any], reusable: bool
             ) -> bool:
    """One job of a worker: call ``func``, send its result or error; True when the worker
    stays for another (``reusable``, the job ended well and left nothing running)."""
    global _EARLIER
    try:
        result = func(**kwargs, progress=_progress_to_parent)
        # the worker's own peak, for the parent's verdict: a peak between two looks counts too
        conn.send(("peak", peak_rss_of(os.getpid())))
        stays = reusable and _stays()
        conn.send(("stays", stays))
        conn.send(("ok", result))
        _EARLIER += 1
        return stays
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
    return False


def _progress_to_parent(fraction: float, message: str) -> None:
    """A job's progress, to the parent (:func:`run_isolated`'s ``progress``)."""
    if _SEND is not None:
        _SEND(("progress", (fraction, message)))


def _stays() -> bool:
    """Whether this worker can take another job: nothing of the last one runs on (no thread
    but the stderr filter's, no process below it), as in a worker that just started."""
    import threading

    from mlprof.measure.quiet import STDERR_THREAD

    if any(t.is_alive() and t is not threading.main_thread() and t.name != STDERR_THREAD
           for t in threading.enumerate()):
        return False
    return not descendants(os.getpid())


def _trim_heap() -> None:
    """Give the memory the last job freed back to the system (glibc's ``malloc_trim``; nothing
    where the C library has none), so that the next job's peak starts where a new process's
    would.

    Why: freed heap memory stays resident. ONNX Runtime's later points of a sweep on a 47 MB
    model (resnet18) peaked 25-45 MB higher in the kept process than in new ones (317-345
    against 290-313 MB); with it, 3 interleaved sweeps each, the two differ by at most 11 MB
    either way (297-327 against 288-319 MB)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _next_job(jobs: Any, imports: Sequence[str] = ()
              ) -> tuple[Callable[..., Any], dict[str, Any]] | None:
    """Between two jobs of a reused worker: import ``imports`` (what the last job's function
    names as its ``imports_next``: the next job's modules, while the parent prepares it), drop
    the last job's garbage (and give its memory back: :func:`_trim_heap`), restart the peak
    memory count (``VmHWM``, :func:`mlprof.sysinfo.peak_rss_mb`) and wait for the next job;
    None when the parent closed the pipe (or sent something else)."""
    import gc

    import_ahead(imports)
    gc.collect()
    _trim_heap()
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # Linux: the peak resident set starts again from the current one
    try:
        job = jobs.recv()
    except (EOFError, OSError):
        return None
    if not (isinstance(job, tuple) and len(job) == 2 and callable(job[0])
            and isinstance(job[1], dict)):
        return None
    return job


@dataclass
class _Kept:
    """A worker that stays for the next job with the same key (:func:`run_isolated`'s
    ``reuse``): its supervisor process, the pipes both ways and what its watch has seen."""

    owner: int  # the process that started it (a luigi worker forked from it has none)
    key: Hashable
    proc: Any
    results: Any  # the worker's messages
    jobs: Any  # the next jobs, to the worker
    watch: MemoryWatch


#: at most one worker kept, in the process that started it
_KEPT: _Kept | None = None


def _take_kept(key: Hashable | None) -> _Kept | None:
    """The kept worker for ``key`` (taken out: the caller keeps it again or ends it); any
    other one is ended first, so that a kept worker never waits beside another job."""
    global _KEPT
    kept, _KEPT = _KEPT, None
    if kept is None or kept.owner != os.getpid():
        return None  # (another process's, inherited through a fork: not ours to end)
    if key is not None and kept.key == key and kept.proc.is_alive():
        return kept
    retire_kept(kept)
    return None


def kept_for(key: Hashable) -> bool:
    """Whether the next call of this process with ``reuse=key`` runs in a kept worker."""
    k = _KEPT
    return k is not None and k.owner == os.getpid() and k.key == key and k.proc.is_alive()


def retire_kept(kept: _Kept | None = None) -> None:
    """End the kept worker (default: this process's, if any): the closed pipe ends it, its
    supervisor ends what it left, as after a job that was not kept. Runs at exit too."""
    global _KEPT
    if kept is None:
        kept, _KEPT = _KEPT, None
        if kept is None or kept.owner != os.getpid():
            return
    kept.jobs.close()
    _end(kept.proc, kept.watch, kept.results, ended=True)


_exit_hook: list[int] = []  # the processes that registered _end_all at exit


def _end_all() -> None:
    """At exit: end the kept worker and the processes whose end was put off."""
    retire_kept()
    settle()


def _keep(kept: _Kept) -> None:
    """Keep ``kept`` for the next call; it ends at this process's exit at the latest."""
    global _KEPT
    _KEPT = kept
    if os.getpid() not in _exit_hook:  # once per process (_end_all ends only its own)
        _exit_hook.append(os.getpid())
        atexit.register(_end_all)


#: calls returned with ``end_later``: ``(owner pid, supervisor, its watch, its messages)``
_ENDING: list[tuple[int, Any, MemoryWatch, Any]] = []


def _put_off(proc: Any, watch: MemoryWatch, results: Any) -> None:
    """Leave the end of ``proc`` (a call that returned) to :func:`settle`."""
    if os.getpid() not in _exit_hook:  # once per process (_end_all ends only its own)
        _exit_hook.append(os.getpid())
        atexit.register(_end_all)
    _ENDING.append((os.getpid(), proc, watch, results))


def settle() -> None:
    """End the processes whose calls returned with ``end_later`` (:func:`run_isolated`), and
    what they left: before another measurement process starts, and at exit (only this
    process's: those inherited through a fork, by a luigi worker, are not ours to end)."""
    global _ENDING
    ending, _ENDING = _ENDING, []
    for owner, proc, watch, results in ending:
        if owner == os.getpid():
            _end(proc, watch, results, ended=True)


def _end(proc: Any, watch: MemoryWatch, results: Any, ended: bool) -> None:
    """End a measurement process and everything below it (see :func:`run_isolated`)."""
    if ended:  # the supervisor kills what the worker left behind and exits (see
        proc.join(5)  # _child_main); a kill now could orphan a process being forked
    # its subprocesses first (once it is gone they can no longer be found below it): the
    # ones below it now, those seen earlier, and its process group, which outlives it
    victims = end_descendants(watch.pid, watch.known)
    if watch.worker is not None:
        victims.add(watch.worker)
    if proc.is_alive():
        proc.kill()
    proc.join(10)
    wait_gone(victims)
    results.close()


def _begin(func: Callable[..., Any], kwargs: dict[str, Any], label: str, torch: bool,
           reuse: Hashable | None, progress: Callable[[float, str], None] | None,
           warm: Sequence[str] = (), keep: bool = True
           ) -> tuple[Any, Any, MemoryWatch, _Kept | None]:
    """Start ``func(**kwargs)`` in the kept worker for ``reuse`` or in a new process:
    ``(supervisor process, its messages, the watch of this call, the worker to keep)``
    (the last None when nothing is to be kept)."""
    settle()
    kept = _take_kept(reuse)
    if kept is not None:
        try:
            kept.jobs.send((func, kwargs))
        except (OSError, ValueError):  # it ended meanwhile: a new one
            retire_kept(kept)
            kept = None
    if kept is None:
        ctx = _context(torch)
        recv_conn, send_conn = ctx.Pipe(duplex=False)
        jobs_recv, jobs_send = ctx.Pipe(duplex=False) if reuse is not None and keep \
            else (None, None)
        proc = ctx.Process(target=_child_main, args=(send_conn, func, kwargs, jobs_recv),
                           name=f"mlprof-measure-{label}", daemon=True)
        # the server's first child says what it waits for; a main read from stdin is not run
        with waiting_for_start(progress, warm), main_file_not_a_file_hidden():
            proc.start()  # returns once the server has forked the child (after its preloads)
        send_conn.close()
        if jobs_recv is not None:
            jobs_recv.close()
        assert proc.pid is not None  # set by start()
        watch = MemoryWatch(proc.pid)
        kept = None if jobs_send is None else _Kept(os.getpid(), reuse, proc, recv_conn,
                                                    jobs_send, watch)
    else:
        proc, recv_conn = kept.proc, kept.results
        watch = MemoryWatch(proc.pid)  # this job's peak; the processes seen before stay known
        watch.worker, watch.known = kept.watch.worker, kept.watch.known
        kept.watch = watch
    return proc, recv_conn, watch, kept


@speaks_for_itself  # the child reports (progress): the run's own watcher is quiet meanwhile
def run_isolated(func: Callable[..., Any], kwargs: dict[str, Any], *,
                 timeout: float | None = None,
                 progress: Callable[[float, str], None] | None = None,
                 label: str = "measurement", torch: bool = False,
                 memory_limit: float | None = None, reuse: Hashable | None = None,
                 keep: bool = True, end_later: bool = False, warm: Sequence[str] = ()) -> Any:
    """Call ``func(**kwargs, progress=...)`` in a child process and return its result.

    Raises :class:`MeasurementFailed` with ``status`` ``"timeout"`` when the child runs past
    ``timeout`` seconds (default ``$MLP_TIMEOUT``) since it started or since it last called
    :func:`restart_timeout` (a load search, once per point), ``"oom"`` when its resident
    memory exceeds ``memory_limit`` MB (default ``$MLP_MEMORY_LIMIT``), it is killed with
    SIGKILL by someone else (the kernel's OOM killer) or raises ``MemoryError``, and
    ``"failed"`` when it crashes (signal) or exits without a result; re-raises the
    :class:`MLProfError` the child raised.
    The child is killed in every case. Ctrl-C kills the child and propagates.

    ``reuse`` (a key, e.g. the model and the runtime's settings): the worker that ran the
    call stays, idle, and the next call of this process with the same key runs in it instead
    of a new one, if the call ended well and left no thread or process running
    (:func:`_stays`). A call with another key (or none) ends it first, and so does the exit
    of this process: at most one is kept, and nothing outlives the process. Between two calls
    the worker collects its garbage and restarts its peak memory count. Why: a new
    measurement process costs ~25 ms outside the timed calls (two forks, the first touches of
    the server's pages, two exits; 33 ms in a new process vs ~8 ms reused, batch size 1 of
    the 10x128 example, idle machine), about a quarter of the tool's own time per point of a
    sweep (benchmarks/overhead.py).

    Without ``progress``, what the child reports (see :mod:`mlprof.progress`) is logged
    as ``<label>: <message>`` to the ``mlprof`` logger, at most every 3.5 s and only once the
    child has run that long (:func:`~mlprof.progress.progress_logger`). While the child's
    start waits for a measurement server that is still importing, ``progress`` also gets the
    parent's ``starting the measurement server (...)`` (:func:`waiting_for_start`).

    ``end_later`` (a call that times nothing: a script's discovery, an export): once the
    result is in, this process goes on without waiting for the child's exit (the worker's,
    then its supervisor's, 12-14 ms each with PyTorch mapped); :func:`settle` waits for it
    before this process starts another measurement process, and at exit. ``keep=False``: a
    kept worker for ``reuse`` runs the call but is not kept after it. ``warm``: modules to
    import while the server starts (:func:`~mlprof.measure.forkserver.waiting_for_start`).
    """
    check_main_guard()
    if progress is None:
        from mlprof.progress import progress_logger

        progress = progress_logger(label)
    timeout = default_timeout() if timeout is None else float(timeout)
    limit = default_memory_limit() if memory_limit is None else float(memory_limit)
    proc, recv_conn, watch, kept = _begin(func, kwargs, label, torch, reuse, progress, warm,
                                          keep)
    talk = _Talk(label, timeout, limit, watch, progress)
    returned = False
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
                if kept is not None and talk.stays and keep:
                    _keep(kept)
                    kept = None  # not ended below
                returned = True
                return talk.result
        raise talk.failure(proc)
    finally:
        _after_call(proc, watch, recv_conn, kept, talk.ended, later=end_later and returned)


def _after_call(proc: Any, watch: MemoryWatch, results: Any, kept: _Kept | None, ended: bool,
                later: bool) -> None:
    """After a call of :func:`run_isolated`: its worker is kept, its end put off, or it ends."""
    if kept is not None:
        kept.jobs.close()
    if _KEPT is not None and _KEPT.proc is proc:
        return
    if later:
        _put_off(proc, watch, results)
    else:
        _end(proc, watch, results, ended)


class _Talk:
    """What :func:`run_isolated` heard from its worker: the time-out clock (restarted by
    :func:`restart_timeout`), the result or error, whether the worker said how it ended."""

    def __init__(self, label: str, timeout: float, limit: float | None, watch: MemoryWatch,
                 progress: Callable[[float, str], None] | None) -> None:
        self.label, self.timeout, self.limit, self.watch = label, timeout, limit, watch
        self.progress = progress
        self.start = time.monotonic()
        self.restarts, self.step = 0, ""  # restart_timeout: how often, and the step now running
        self.error: BaseException | None = None
        self.ended = False  # the worker reported how it ended: its supervisor cleans up
        self.stays = False  # the worker said it waits for another job (run_isolated's reuse)
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
        elif kind == "stays":
            self.stays = payload is True
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
