"""The drawing process of a ``law run`` that ends in a sweep's plot: matplotlib imported on the
second core while law starts, the plot drawn there.

Why: a sweep's plot needs matplotlib, mlprof's plot modules and the PDF writer, 0.39-0.55 s of
imports here. Imported in ``law run`` itself (while the measurement server started, the way
before this module), they were the longest part of its start-up: law's own imports (0.3 s),
then these, then the first measurement, all on one core (start-up until the first task
0.86-1.0 s, ``benchmarks/overhead.py``). In a process of their own, started before law is
imported (:mod:`mlprof.lawcli`), they run beside law's start-up on the other core: start-up
0.28-0.32 s against 0.80-0.88 s, the plot's own time unchanged, 0.121-0.156 s per point of the
default sweep against 0.134-0.148 s (4 interleaved runs each, ``docs/harness.md``).

How:

- :func:`start` runs ``python -c`` with this module's :func:`serve`: it imports what drawing
  needs (:func:`mlprof.plotting.backend.preload`), closes its *ready* pipe, and then draws the
  jobs it is sent, one at a time, until its job pipe ends (this process exited, however: it
  never outlives ``law run`` by more than its imports). It has a session of its own, so the
  terminal's Ctrl-C is ``law run``'s alone.
- Nothing of it runs beside a timed call: :func:`mlprof.measure.lock.measurement_lock` first
  waits until it is ready (:func:`settle`, registered with
  :func:`mlprof.measure.lock.before_measuring`). The wait says so if it lasts, and a process
  that has not finished its imports after :data:`SETTLE_S` seconds is stopped (the plot is then
  drawn here, as without it).
- :func:`render` draws ``figure(*args)`` into ``paths``: in the drawing process when this
  process or the ``law run`` that forked it (a luigi worker of ``--workers N``: one job and its
  answer at a time, ordered by a lock file) started it, else here. The drawing
  process answers with the exception the figure function raised (a one-line
  :class:`~mlprof.errors.MLProfError` stays one); if it is gone, the plot is drawn here.

The plot is the same file either way: the same functions draw it from the same data (a test
compares the bytes).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from mlprof.errors import MLProfError

logger = logging.getLogger("mlprof")

#: the longest a measurement waits for the drawing process's imports before stopping it
SETTLE_S = 60.0
#: how often a measurement that waits for them says so
SAY_EVERY_S = 5.0
#: the niceness of the thread that imports (see :func:`serve`)
NICE = 10
#: the phase of its imports (``$MLP_TEST_SLOW_PHASE`` makes it longer in tests)
IMPORTS = "drawing process imports"


class _Drawer:
    """The parent's handle of a drawing process: its process, job and result pipes, the read
    end of its *ready* pipe (readable, at end of file, once it has imported), and a lock file
    that makes one job and its answer one process's at a time (the parent's or a luigi worker
    forked from it)."""

    def __init__(self, file_types: Sequence[str]) -> None:
        ready_r, ready_w = os.pipe()
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        code = (f"import sys; sys.path.insert(0, {root!r}); "
                f"from mlprof.plotting.drawer import serve; "
                f"serve({job_r}, {res_w}, {ready_w}, {list(file_types)!r})")
        env = dict(os.environ, PYTHONSAFEPATH="1")  # no stray module from the current directory
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                         pass_fds=(job_r, res_w, ready_w), env=env,
                                         start_new_session=True)
        finally:
            for fd in (job_r, res_w, ready_w):
                os.close(fd)
        self.owner = os.getpid()
        self.ready_fd = ready_r
        self.jobs: BinaryIO = os.fdopen(job_w, "wb")
        self.results: BinaryIO = os.fdopen(res_r, "rb")
        self.lock = threading.Lock()
        self.sent = 0
        #: a POSIX record lock is a process's own, so it orders a forked worker's jobs against
        #: the parent's and the other workers' (a flock on the inherited file would not: it is
        #: the open file's, shared through the fork); no memfd_create (not Linux): the workers
        #: draw themselves
        self.lock_fd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self.lock_fd = os.memfd_create("mlprof-drawer", os.MFD_CLOEXEC)

    def usable(self) -> bool:
        """Whether this process may send it jobs: the one that started it, or one forked from
        it when the lock file orders their jobs."""
        return self.owner == os.getpid() or self.lock_fd is not None

    def is_ready(self, timeout: float = 0.0) -> bool:
        """Whether it has finished importing (or is gone), waiting up to ``timeout`` s."""
        readable, _, _ = select.select([self.ready_fd], [], [], timeout)
        return bool(readable)

    def draw(self, figure: str, paths: list[str], args: tuple, kwargs: dict) -> None:
        """Send one job and wait for its answer; re-raise what the figure raised.
        :class:`_Gone` when the process cannot draw it (then it is drawn here).

        Each job carries a tag that its answer repeats: the answer of a job whose sender died
        waiting (a luigi worker stopped) is skipped by the next sender, not taken for its own.
        """
        self.sent += 1
        tag = (os.getpid(), self.sent)
        try:
            job = pickle.dumps((tag, figure, paths, args, kwargs), pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # noqa: BLE001  (not sendable: drawn here)
            raise _Gone(f"the plot's data cannot be sent ({e})") from e
        with self.lock, self._ordered():
            try:
                self.jobs.write(job)
                self.jobs.flush()
                while True:
                    answered, status, value = pickle.load(self.results)
                    if answered == tag:
                        break
            except (OSError, EOFError, ValueError, pickle.UnpicklingError) as e:
                raise _Gone(f"the drawing process is gone ({type(e).__name__})") from e
        if status == "error":
            raise value

    @contextlib.contextmanager
    def _ordered(self) -> Iterator[None]:
        """Hold the lock file (if any) around one job and its answer."""
        if self.lock_fd is None:
            yield
            return
        import fcntl

        fcntl.lockf(self.lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.lockf(self.lock_fd, fcntl.LOCK_UN)

    def stop(self) -> None:
        """End it (a process still importing is killed) and close the pipes."""
        for f in (self.jobs, self.results):
            with contextlib.suppress(OSError):
                f.close()
        for fd in (self.ready_fd, self.lock_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)


class _Gone(Exception):
    """The drawing process cannot draw this plot: it is drawn in this process instead."""


_drawer: _Drawer | None = None


def start(file_types: Sequence[str] = ("pdf",)) -> bool:
    """Start this process's drawing process (once); True when it runs. Registers :func:`settle`
    with the measurement lock and :func:`stop` at exit."""
    global _drawer
    if _drawer is not None:
        return True
    try:
        _drawer = _Drawer(file_types)
    except OSError as e:  # no process to be had: the plot is drawn here, as before
        logger.debug("no drawing process: %s", e)
        return False
    import atexit

    from mlprof.measure.lock import before_measuring

    before_measuring(settle)
    atexit.register(stop)
    return True


def running() -> bool:
    """Whether a drawing process was started for this process's plots (by it or its parent)."""
    return _drawer is not None


def stop() -> None:
    """End the drawing process (if this process started it): at exit, and in tests."""
    global _drawer
    drawer, _drawer = _drawer, None
    if drawer is not None and drawer.owner == os.getpid():
        drawer.stop()


def settle() -> None:
    """Before a measurement: wait until the drawing process has finished its imports, saying so
    every :data:`SAY_EVERY_S` s; after :data:`SETTLE_S` s it is stopped (a machine too busy for
    it: the plot is then drawn by ``law run`` itself). Nothing when there is none."""
    global _drawer
    drawer = _drawer
    if drawer is None or drawer.is_ready():
        return
    t0 = time.monotonic()
    while not drawer.is_ready(SAY_EVERY_S):
        waited = time.monotonic() - t0
        if waited >= SETTLE_S:
            logger.warning("the drawing process has not finished importing matplotlib after "
                           "%.0f s: stopped, the plot is drawn at the end instead", waited)
            if drawer.owner == os.getpid():
                drawer.stop()
            else:  # a forked worker: its parent, whose process it is, then draws itself
                with contextlib.suppress(OSError):
                    os.kill(drawer.proc.pid, signal.SIGKILL)
            _drawer = None
            return
        logger.info("waiting for the drawing process to finish importing matplotlib before "
                    "measuring (%.0f s)", waited)


def render(figure: str, paths: Sequence[str], *args: Any, **kwargs: Any) -> None:
    """Draw ``figure(*args, **kwargs)`` (``"module:function"``, a function that returns a
    matplotlib figure) and save it to ``paths`` (:func:`mlprof.plotting.save_figure`): in the
    drawing process when this process or the ``law run`` that forked it (a luigi worker of
    ``--workers N``) started one, else here."""
    paths = [os.fspath(p) for p in paths]
    drawer = _drawer
    if drawer is not None and drawer.usable():
        try:
            drawer.draw(figure, paths, args, kwargs)
            return
        except _Gone as e:
            logger.debug("drawing here: %s", e)
            stop()
    _draw_here(figure, paths, args, kwargs)


def _draw_here(figure: str, paths: list[str], args: tuple, kwargs: dict) -> None:
    """Draw and save one plot in this process."""
    from mlprof.plotting import save_figure

    module, _, name = figure.partition(":")
    save_figure(getattr(importlib.import_module(module), name)(*args, **kwargs), paths)


def serve(job_fd: int, result_fd: int, ready_fd: int, file_types: list[str]) -> None:
    """The drawing process: import, say ready (close ``ready_fd``), then draw each job read
    from ``job_fd`` and answer on ``result_fd`` with ``("ok", None)`` or ``("error", exc)``,
    until ``job_fd`` ends."""
    from mlprof.plotting.backend import preload
    from mlprof.progress import slow_phase

    failed: list[BaseException] = []

    def imports() -> None:
        # a thread's own niceness (Linux): a rerun with nothing to do, which kills this process
        # at its end, keeps the CPU it needs; the plots are drawn by the main thread, not nice
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        try:
            preload(file_types)
            slow_phase(IMPORTS)  # the tests' slow machine (mlprof.progress)
        except BaseException as e:  # noqa: BLE001  (said by law run's own drawing)
            failed.append(e)

    try:
        loading = threading.Thread(target=imports, name="imports")
        loading.start()
        loading.join()
    finally:
        os.close(ready_fd)
    if failed:  # law run draws the plot itself and meets the error there, with its traceback
        return
    jobs = os.fdopen(job_fd, "rb")
    results = os.fdopen(result_fd, "wb")
    while True:
        try:
            tag, figure, paths, args, kwargs = pickle.load(jobs)
        except Exception:  # noqa: BLE001
            # at its end, or a job cut short (its sender died writing it): the next sender
            # finds this process gone and draws itself
            return
        try:
            _draw_here(figure, paths, args, kwargs)
            answer: tuple[Any, str, BaseException | None] = (tag, "ok", None)
        except Exception as e:  # noqa: BLE001  (the task's process raises it)
            where = f"in the drawing process:\n{traceback.format_exc()}"
            add_note = getattr(e, "add_note", None)  # Python 3.11
            if add_note is not None and not isinstance(e, MLProfError):
                add_note(where)  # a defect: its traceback goes along
            answer = (tag, "error", e)
        try:
            data = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
            pickle.loads(data)
        except Exception:  # noqa: BLE001  (an exception that does not travel: its text does)
            data = pickle.dumps((tag, "error", RuntimeError(where)))
        results.write(data)
        results.flush()
