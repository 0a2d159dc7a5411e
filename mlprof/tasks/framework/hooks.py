"""The task layer's process-wide hooks: installed when ``law run`` (or the ``mlprof`` command)
starts, never by an import.

What they are (all idempotent):

- one-line errors (:func:`mlprof.tasks.framework.base.install_error_handling`): luigi's
  command-line parser patched (:mod:`mlprof.tasks.framework.cmdline`), a filter on luigi's log,
  ``sys.excepthook`` (one line for an :class:`~mlprof.errors.MLProfError`, and for Ctrl-C under
  ``law run``);
- the summary ``law run`` prints at its end (:mod:`mlprof.tasks.framework.summary`, wraps
  ``luigi.interface._schedule_and_run``);
- law 0.1.21's scale patches (:mod:`mlprof.tasks.framework.scale`);
- a heap freeze at exit (``gc.freeze``: the interpreter's shutdown skips a full collection over
  pandas and matplotlib, 0.5-0.8 s per run, measured by ``benchmarks/overhead.py``);
- under ``law run`` with a model script, an early start of the measurement server (once the
  parameters are checked: right before luigi schedules the root task).

Where they are installed: law has no start-up hook of its own. ``law run Task`` (``law/cli/run.py``)
imports the module that defines ``Task`` (found in the index that ``law index`` writes from
``law.cfg``'s ``[modules]``), appends ``" run"`` to ``sys.argv[0]`` and hands the command line to
luigi (``luigi.cmdline.luigi_run``). So the import of :mod:`mlprof.tasks` is the first mlprof
code of a ``law run``, before luigi parses anything: it calls :func:`install_run_hooks` when
:func:`started_by_law_run` recognizes the process (``law ... run`` or luigi's ``luigi``
command), and only then. The ``mlprof`` command calls :func:`install_run_hooks` itself before it
runs tasks. Python code that imports the tasks (the API, a notebook, the tests) gets none of it;
the API schedules its tasks after :func:`install_build_hooks` (the scale patches: same results,
less time) and within :func:`one_line_errors` (luigi's log filter, removed again).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import logging
import os
import sys
from collections.abc import Iterator, Sequence

from mlprof.tasks.framework import scale as _scale
from mlprof.tasks.framework.base import OneLineErrors, install_error_handling
from mlprof.tasks.framework.summary import install_run_summary
from mlprof.util import law_run_measures_script

_installed = False


def started_by_law_run(argv: Sequence[str] | None = None) -> bool:
    """Whether this process is ``law run`` (or luigi's ``luigi`` command), from ``argv``
    (default ``sys.argv``): at import of the tasks ``argv[0]`` is law's script and ``run`` its
    first argument; later law has appended ``" run"`` to ``argv[0]``."""
    argv = sys.argv if argv is None else argv
    if not argv:
        return False
    prog = os.path.basename(argv[0])
    if argv[0].endswith(" run"):
        return True
    if prog.startswith("law"):
        return "run" in argv[1:3]
    return prog == "luigi"


def install_build_hooks() -> None:
    """What scheduling tasks needs in any process: law 0.1.21's scale patches (same results,
    linear time; :mod:`mlprof.tasks.framework.scale`). Called by :func:`install_run_hooks` and by
    the API before it schedules tasks."""
    _scale.apply()


@contextlib.contextmanager
def one_line_errors() -> Iterator[None]:
    """Within the block, luigi's log shows an :class:`~mlprof.errors.MLProfError` as one line
    (as under ``law run``), not as a traceback; the API schedules its tasks in here."""
    lg = logging.getLogger("luigi-interface")
    if any(isinstance(f, OneLineErrors) for f in lg.filters):
        yield
        return
    log_filter = OneLineErrors()
    lg.addFilter(log_filter)
    try:
        yield
    finally:
        lg.removeFilter(log_filter)


def end_shared_process() -> None:
    """After a luigi build (``law run``'s, the ``mlprof`` command's, the API's): the
    measurement process its points may have shared (:func:`mlprof.measure.isolate.run_isolated`'s
    ``reuse``) ends with it, not with the interpreter (an API caller's lives on)."""
    if "mlprof.measure.isolate" in sys.modules:  # (nothing measured: nothing to import)
        from mlprof.measure.isolate import retire_kept

        retire_kept()


def run_hooks_installed() -> bool:
    """Whether this process is a ``law run`` or an ``mlprof`` command running tasks (its hooks
    are installed): then tasks check what costs a child process to check (a generation task's
    decoder) when they are made, before anything is scheduled."""
    return _installed


def install_run_hooks() -> None:
    """Install the hooks of a ``law run`` or ``mlprof`` process (see the module docstring).

    Called once per process; later calls do nothing.
    """
    global _installed
    if _installed:
        return
    _installed = True
    install_build_hooks()
    install_error_handling()
    install_run_summary()
    atexit.register(gc.freeze)
    _prestart_after_checks()
    _watch_run()


def _watch_run() -> None:
    """The watch of ``law run`` (:func:`mlprof.progress.watch_run`, begun by ``bin/law``) goes
    on while luigi schedules, ``scheduling: 1,234 tasks checked`` (one per ``Worker._add``,
    each asks whether a task is complete: 1.5-3 ms here, more on a loaded machine), then names
    the task the law process runs (``running MergeRuntimes``): between the steps that speak
    for themselves, its own work (a merge, a plot) speaks after 3.5 s of silence too. With
    ``--workers N`` > 1 the tasks run in forked processes and speak there: the watch ends
    when they start. Every record of luigi's and law's loggers is a line said."""
    import luigi.worker

    from mlprof.progress import counts_as_said, end_run, run_phase

    add_orig = luigi.worker.Worker._add
    if getattr(add_orig, "_mlprof", False):
        return
    for name in ("luigi-interface", "law"):
        counts_as_said(logging.getLogger(name))
    checked = [0]

    @functools.wraps(add_orig)
    def _add(self, task, *args, **kwargs):
        if _PRESTART_PENDING[0] and (args[0] if args else kwargs.get("is_complete")) is False:
            _PRESTART_PENDING[0] = False  # the first task to run: see _prestart_after_checks
            _prestart_for_scripts()
        checked[0] += 1
        if checked[0] == 1:
            run_phase("scheduling: checking which tasks are complete")
        else:
            run_phase(f"scheduling: {checked[0]:,} tasks checked", now=False)
        return add_orig(self, task, *args, **kwargs)

    run_orig = luigi.worker.Worker.run

    @functools.wraps(run_orig)
    def run(self):
        if getattr(self, "worker_processes", 1) > 1:
            end_run()
        else:
            run_phase("running the tasks", now=False)
        return run_orig(self)

    task_run_orig = luigi.worker.TaskProcess.run

    @functools.wraps(task_run_orig)
    def task_run(self):
        text = f"running {self.task.task_family}"
        phase = getattr(self.task, "watch_phase", None)  # mlprof's tasks (BaseTask)
        with contextlib.suppress(Exception):  # what it says must never stop the task
            text = phase() if callable(phase) else text
        run_phase(text)
        try:
            return task_run_orig(self)
        finally:
            run_phase("running the tasks", now=False)
            if getattr(self, "use_multiprocessing", False):
                _settle_isolated()

    _add._mlprof = True  # type: ignore[attr-defined]
    luigi.worker.Worker._add = _add  # type: ignore[method-assign]
    luigi.worker.Worker.run = run  # type: ignore[method-assign]
    luigi.worker.TaskProcess.run = task_run  # type: ignore[method-assign]


def _settle_isolated() -> None:
    """At the end of a task in a luigi worker process (``--workers N``): the measurement
    processes whose end its task put off (``run_isolated``'s ``end_later``) end now. That
    process leaves with ``os._exit``, without the exit hook that would end them, and their
    supervisors, killed with it, would leave what the calls started behind."""
    isolate = sys.modules.get("mlprof.measure.isolate")
    if isolate is not None:
        isolate.settle()


#: while luigi schedules: the server for a model script is still to be started (or its gate
#: opened) at the first task found incomplete (:func:`_prestart_after_checks`)
_PRESTART_PENDING = [False]


def _prestart_after_checks() -> None:
    """Start the measurement server for a model script (:func:`_prestart_for_scripts`) once
    the root task exists, i.e. once luigi has parsed and every task ``__init__`` has checked
    the parameters, and scheduling has found a task to run (the first ``Worker._add`` of an
    incomplete task, :func:`_watch_run`): a bad parameter is one line and no server (it used
    to start at import, importing torch in the background for an error); a rerun with nothing
    to do opens no gate either; and the marks of the model files checked up front are written
    after a run that succeeded (a refused or failed command writes nothing:
    ``tests/test_bad_inputs.py``). luigi calls ``interface._schedule_and_run`` with the root
    tasks it built; the start at the first incomplete task keeps the overlap with the rest of
    the scheduling and the completeness checks.

    Why at the first incomplete task: opened before scheduling, the gate of the server
    ``bin/law`` started let a rerun of a script's sweep with nothing to do import torch for
    nothing (1.7 s of CPU), and the server held ``law run``'s output open until it was done:
    ``law run PlotSpeedup --model-files models/selftest/linear.py --batch-sizes 1`` with
    nothing to do took 2.8-3.0 s through a pipe (``| cat``, as ``| tee`` or a CI log)."""
    import luigi.interface as li

    original = li._schedule_and_run
    if getattr(original, "_mlprof_prestart", False):
        return

    def schedule_and_run(tasks, *args, **kwargs):
        from mlprof.progress import end_build

        _PRESTART_PENDING[0] = True
        try:
            result = original(tasks, *args, **kwargs)
        finally:
            _PRESTART_PENDING[0] = False
            end_build()
            end_shared_process()
        if "mlprof.model.onnx_graph" in sys.modules:  # it checked a model file up front
            from luigi.execution_summary import LuigiStatusCode

            from mlprof.model.onnx_graph import remember_checks

            if getattr(result, "status", None) in (LuigiStatusCode.SUCCESS,
                                                   LuigiStatusCode.SUCCESS_WITH_RETRY):
                remember_checks()  # only after a run that succeeded: a failed one writes no mark
        return result

    schedule_and_run._mlprof_prestart = True  # type: ignore[attr-defined]
    schedule_and_run._mlprof = getattr(original, "_mlprof", False)  # type: ignore[attr-defined]
    li._schedule_and_run = schedule_and_run


def _prestart_for_scripts() -> None:
    """Under ``law run`` with a model script argument, start the measurement server now (or
    open the gate of the one ``bin/law`` started before law's imports, :mod:`mlprof.lawcli`).

    It imports torch (~1.2-2.5 s); started before scheduling, that overlaps with the scheduling
    and the completeness checks instead of delaying the first discovery (measured at import:
    -0.3 to -0.5 s per run). When the script's discovery is not in the store yet, the task's
    construction already asked for the server (the discovery runs in it).
    """
    argv = sys.argv
    if not argv or not os.path.basename(argv[0]).startswith("law"):
        return
    if "run" not in argv[1:3] and not argv[0].endswith(" run"):
        return
    # --print-status and friends measure nothing (see mlprof.tasks.framework.preflight)
    if law_run_measures_script(argv[2:]):
        from mlprof.measure.forkserver import prestart

        prestart(torch=True)
