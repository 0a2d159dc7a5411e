"""Progress of long work in a child process (a measurement, an export), for the terminal.

The child (:func:`mlprof.measure.harness.measure`, :func:`mlprof.model.export.export_onnx`)
reports through a :class:`Progress`: the phase it is in (``creating the session``, ``compiling
with torch.export + AOTInductor``, ``1234 calls``, ...) and, where it can tell, the seconds
left. Each report goes to the parent as ``("progress", (fraction, message))`` (see
:func:`mlprof.measure.isolate.run_isolated`), with ``message`` such as
``1234 calls, 12.3 s elapsed, ~3.2 s left``.

When reports are sent:

- at once when a phase begins (:meth:`Progress.phase`), except a phase that is said only if
  it lasts (``now=False``: the timed first call, which a report just before would slow);
- from the working thread between two pieces of work (:meth:`Progress.update`: between two
  blocks of timed calls, never inside one) when :data:`EVERY` seconds have passed since the last;
- from a watcher thread when the work has been silent for :data:`STALL` seconds: a single call
  (or a compilation, an export) that takes longer. The watcher sleeps otherwise; it wakes about
  once a second, which costs a few microseconds.

The parent logs a line when the process has said nothing for :data:`LOG_EVERY` seconds
(:func:`progress_logger`, :func:`said`), so a line appears at least every ``LOG_EVERY + STALL``
= 5 s of wall time while a child works, whatever the call takes and whichever step spoke last.

``law run`` itself is watched the same way (:func:`watch_run`, started by ``bin/law``): its
start and the law process's own work between the steps say their phase after 3.5 s of silence,
except while a step reports for itself (:func:`own_voice`).

Tests make a phase slow on purpose, deterministically, with ``$MLP_TEST_SLOW_PHASE`` =
``<text>=<seconds>``: a phase whose head contains ``<text>`` sleeps that long in the working
thread after it is reported (a silent phase, as a quantizer's calibration on a loaded machine
was: 350-470 s without a line, issue 38), so a test can check that the step still speaks at
least every 5 s without depending on the machine's load.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

ProgressFn = Callable[[float, str], None]

#: seconds between two reports sent from the working thread (between blocks of calls)
EVERY = 1.0
#: the watcher thread reports when nothing was sent for this many seconds (a long call)
STALL = 1.5
#: the parent logs a line at most this often; with :data:`STALL`: at least every 5 s
LOG_EVERY = 5.0 - STALL


class Progress:
    """Phase, count and time left of one piece of work, reported to ``send`` (see the module
    docstring); a no-op when ``send`` is None.

    Use as a context manager (the watcher thread runs inside it)::

        with Progress(send) as rep:
            rep.phase("creating the session")
            ...
            rep.update("1234 calls", left_s=3.2, fraction=0.8)
    """

    def __init__(self, send: ProgressFn | None, *, every: float = EVERY,
                 stall: float = STALL) -> None:
        self.send = send
        self.every, self.stall = every, stall
        self.start = time.monotonic()
        self._head = ""
        self._left: float | None = None
        self._left_at = self.start
        self._fraction = 0.0
        self._last = self.start
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if self.send is not None:
            self._thread = threading.Thread(target=self._watch, name="mlprof-progress",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def phase(self, head: str, fraction: float | None = None, *, now: bool = True) -> None:
        """A new phase begins (``head`` says what it does): report it now, or with
        ``now=False`` only if it lasts (the watcher's report after :data:`STALL` s of silence).

        Why ``now=False``: a report is a pickle and a pipe write that wakes the parent
        process, and the call timed right after it pays in cold caches. The first timed call
        of linear.py's AOTInductor package (torch-compile, 8 runs each, alternated, one
        session here) was 4.3-7.4x its warm call after a report (median 5.0x, 0.0124 ms
        against 0.0024 ms) and 3.0-4.4x without (median 3.4x); measured in-process with no
        progress at all, 0.0065-0.0098 ms: the rest is the call's own cold start."""
        if self.send is not None:
            with self._lock:
                self._set(head, None, fraction, time.monotonic())
                if now:
                    self._send()
        slow_phase(head)

    def update(self, head: str, left_s: float | None = None,
               fraction: float | None = None) -> None:
        """The state now (``head``: ``1234 calls``; ``left_s``: estimated seconds left); sent if
        :data:`EVERY` seconds passed since the last report. Call it between pieces of work."""
        if self.send is None:
            return
        now = time.monotonic()
        with self._lock:
            self._set(head, left_s, fraction, now)
            if now - self._last >= self.every:
                self._send()

    def message(self, now: float | None = None) -> str:
        """``<head>, 12.3 s elapsed[, ~3.2 s left]`` as of ``now``."""
        now = time.monotonic() if now is None else now
        text = f"{self._head}, {now - self.start:.1f} s elapsed"
        if self._left is not None:
            text += f", ~{max(self._left - (now - self._left_at), 0.0):.1f} s left"
        return text

    def _set(self, head: str, left_s: float | None, fraction: float | None, now: float) -> None:
        self._head, self._left, self._left_at = head, left_s, now
        if fraction is not None:
            self._fraction = min(max(fraction, 0.0), 1.0)

    def _send(self) -> None:
        """Send the current state (the caller holds the lock)."""
        now = time.monotonic()
        self._last = now
        assert self.send is not None
        self.send(self._fraction, self.message(now))

    def _watch(self) -> None:
        """The watcher thread: report when the work has been silent for :attr:`stall` s."""
        while True:
            with self._lock:
                wait = self._last + self.stall - time.monotonic()
                if wait <= 0:
                    try:
                        self._send()
                    except Exception:  # the parent is gone: nobody to tell
                        return
                    wait = self.stall
            if self._stop.wait(wait):
                return


def slow_phase(head: str) -> None:
    """Sleep in the working thread when ``$MLP_TEST_SLOW_PHASE`` (``<text>=<seconds>``) names
    this phase: the tests' deterministic long phase (see the module docstring); nothing
    otherwise (one environment lookup per phase)."""
    raw = os.environ.get("MLP_TEST_SLOW_PHASE")
    if not raw:
        return
    text, _, seconds = raw.rpartition("=")
    if text and text in head:
        time.sleep(float(seconds))


#: when this process last put a line on the terminal (:func:`said`), time.monotonic()
_last_said = time.monotonic()


def said() -> None:
    """Note that this process just put a line on the terminal: a progress line is due when the
    *process* has been silent :data:`LOG_EVERY` s (:func:`progress_logger`). Called for every
    record of the ``mlprof`` logger (a filter on it, :class:`_Said`) and by the tasks'
    announcements (``publish_message``)."""
    global _last_said
    _last_said = time.monotonic()


class _Said(logging.Filter):
    """On the ``mlprof`` logger: every record it passes on is a line said (:func:`said`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        said()
        return True


def counts_as_said(logger: logging.Logger) -> None:
    """Every record ``logger`` passes on is a line said (:func:`said`): mlprof's, and under
    ``law run`` luigi's and law's, reach the terminal."""
    if not any(isinstance(f, _Said) for f in logger.filters):
        logger.addFilter(_Said())


_MLPROF_LOGGER = logging.getLogger("mlprof")
counts_as_said(_MLPROF_LOGGER)

#: set on the log record of a progress line (:func:`progress_logger`, the run's watcher)
PROGRESS_RECORD = "mlprof_progress"


class _WarningsAndProgress(logging.Filter):
    """Passes warnings and errors, and the progress lines (:data:`PROGRESS_RECORD`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or bool(getattr(record, PROGRESS_RECORD, False))


def warnings_and_progress_only() -> None:
    """The ``mlprof`` logger shows only warnings, errors and progress lines from now on: a
    command that prints a line per item of its own (``mlprof corpus``) drops the rest of the
    chatter, but a step longer than 5 s still says what it is doing. Before, the corpus
    command set the logger to WARNING, and a 9 s phase of a script's measurement was 9 s
    without a line."""
    if not any(isinstance(f, _WarningsAndProgress) for f in _MLPROF_LOGGER.filters):
        # first, before _Said's: a record dropped here is no line said
        _MLPROF_LOGGER.filters.insert(0, _WarningsAndProgress())


def progress_logger(label: str, logger: logging.Logger | None = None,
                    every: float = LOG_EVERY, *, quiet: Callable[[], bool] | None = None,
                    write: Callable[[str], None] | None = None) -> ProgressFn:
    """A progress callback for the parent: logs ``<label>: <message>`` when the process has
    said nothing for ``every`` seconds (:func:`said`; short work after a line logs nothing), to
    ``logger`` (default: ``mlprof``).

    Why the process's clock, not the step's: each step kept its own 5 s, but the silences of
    consecutive steps added up (a load search logged nothing for 3.5 s after its child's first
    report, then the plot followed: 5.7 s without a line in a 6.3 s run). Now a line comes
    at most ``every`` s plus one report interval (1.5 s, :data:`STALL`) after the last one,
    whichever step said it.

    A step's first report only starts its own clock: a measurement server that took longer
    than ``every`` to start (importing torch on a busy machine) made it a line of its own,
    ``running the script, 0.0 s elapsed``.

    ``quiet``: no line while it returns True (the run's watcher, :func:`own_voice`); ``write``:
    puts the line ``<label>: <message>`` out instead of ``logger``."""
    log = logger or _MLPROF_LOGGER
    started = [False]

    def progress(fraction: float, message: str) -> None:
        if not started[0]:
            started[0] = True
        elif time.monotonic() - _last_said >= every and not (quiet and quiet()):
            if write is None:
                log.info("%s: %s", label, message, extra={PROGRESS_RECORD: True})
            else:
                write(f"{label}: {message}")
            said()

    return progress


@contextlib.contextmanager
def speaking(label: str) -> Iterator[Progress]:
    """Work of this process itself that can take more than 5 s (a dashboard over many nights:
    reading 13,000 records took 10 s here, deriving the history 10 s, writing the pages 16 s,
    52 s in all without a line): a :class:`Progress` whose reports go to
    :func:`progress_logger` (``<label>: <phase>, 12.3 s elapsed``). Its watcher thread
    reports the phase after 1.5 s of silence, so the step speaks at least every 5 s while
    the work holds the interpreter (the watcher gets it at the switch interval, 5 ms)."""
    with own_voice(), Progress(progress_logger(label)) as rep:
        yield rep


#: the ``law run`` of this process, watched between its steps (:func:`watch_run`)
_run: Progress | None = None
#: the process that watches it (a luigi worker forked from it has no watcher thread)
_run_pid: int | None = None
#: the watch goes on after a luigi build (the ``mlprof`` command runs several, :func:`end_build`)
_run_builds = False
#: steps that speak for themselves now (:func:`own_voice`): the run's watcher is quiet meanwhile
_voices = 0
_voices_lock = threading.Lock()


@contextlib.contextmanager
def own_voice() -> Iterator[None]:
    """A step that reports for itself (a child's progress, :func:`speaking`, a lock wait) runs
    in the block: the run's watcher (:func:`watch_run`) says nothing meanwhile, so that the
    step's own line (``1234 calls, ...``) is the one printed, not ``running MeasureRuntime``."""
    global _voices
    with _voices_lock:
        _voices += 1
    try:
        yield
    finally:
        with _voices_lock:
            _voices -= 1


def speaks_for_itself(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` runs as a step that reports for itself (:func:`own_voice`)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with own_voice():
            return func(*args, **kwargs)

    return wrapper


def _write_run_line(line: str) -> None:
    """A line of the run's watcher: to the ``mlprof`` logger, or, before law is imported (it
    sets up that logger), to stderr as law would format it."""
    if _MLPROF_LOGGER.hasHandlers():
        _MLPROF_LOGGER.info("%s", line, extra={PROGRESS_RECORD: True})
    else:
        import sys

        sys.stderr.write(f"INFO: mlprof - {line}\n")
        sys.stderr.flush()


def _run_line(label: str) -> ProgressFn:
    """The run watcher's reports (:func:`progress_logger`): quiet while a step speaks for
    itself (:func:`own_voice`), written by :func:`_write_run_line`."""
    return progress_logger(label, quiet=lambda: _voices > 0, write=_write_run_line)


def watch_run(label: str, head: str, *, builds: bool = False) -> None:
    """Watch this process's ``law run`` as a step of its own, in phase ``head``
    (:func:`run_phase` moves it on, :func:`end_run` ends it): its start (the imports, the
    parameter checks, the scheduling) and, between the steps that speak for themselves
    (:func:`own_voice`), the work of the law process itself (a merge, a plot).

    Why: on an idle machine the start takes 0.3-0.6 s, but on a busy one it took 24-88 s
    (issue 38: a no-op rerun 88 s, a bad parameter 24-65 s) without a line. A line comes after
    3.5 s of silence, as every step's (:func:`progress_logger`); work that is quick prints
    nothing. ``builds``: the run is the ``mlprof`` command's, several luigi builds and its own
    work between them (:func:`end_build`); it ends with :func:`end_run`."""
    global _run, _run_pid, _run_builds
    end_run()
    said()  # the process starts now (a fork of a process that started long ago, too)
    _run, _run_pid, _run_builds = Progress(_run_line(label)), os.getpid(), builds
    _run.__enter__()
    _run.phase(head)


def run_phase(head: str, fraction: float | None = None, *, now: bool = True) -> None:
    """The watched run (:func:`watch_run`) moves to phase ``head``; ``now=False``: a count
    within the phase, reported with the next report. Nothing when the run is not watched in
    this process."""
    rep = _run
    if rep is not None and _run_pid == os.getpid():
        if now:
            rep.phase(head, fraction)
        else:
            rep.update(head, fraction=fraction)


def end_build() -> None:
    """A luigi build of the watched run is over: the watch of ``law run`` ends (law prints its
    summary from here on), the ``mlprof`` command's goes on with its own work (its next build,
    its tables)."""
    if _run_builds:
        run_phase("its own work between the task runs")
    else:
        end_run()


def end_run() -> None:
    """Stop watching the run (it is over, or law prints from here on)."""
    global _run
    rep, _run = _run, None
    if rep is not None and _run_pid == os.getpid():
        rep.__exit__(None, None, None)
