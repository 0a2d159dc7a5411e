"""The ``law`` command of an mlprof checkout: law's own command line, with one answer before it.

``law run <Task>`` looks the task up in law's index (``law/cli/run.py``) and, for a name that is
not there, prints ``task family 'PlotRuntime' not found in index`` and exits 1, before any
mlprof code runs (law has no hook there: the first mlprof code of a ``law run`` is the import of
the task's module, found in that same index). So ``setup.sh`` puts ``bin/law`` (this module's
:func:`main`) first on ``PATH``: for ``law run <name>`` with a name that is neither in the index
nor a ``module.Class`` path it answers in one line with the closest task names, as every other
unknown choice is answered (:func:`mlprof.util.did_you_mean`), exit 40 (``[luigi_retcode]
unhandled_exception``, as every error before anything ran)::

    ERROR: luigi-interface - mlprof error: PlotRuntime is not a task; did you mean PlotRuntimes?

A ``law run`` that names a model script (:func:`mlprof.util.law_run_measures_script`) starts the
measurement server here, before law's imports: its first work, the script's discovery, waits for
the server's imports (torch's 1.2 s above all), and law's own start-up (0.3 s) is time the
server's light part can use. It stops at a gate before any runtime until the parameters are
checked and the run has found something to do (:func:`mlprof.measure.forkserver
.start_early`). A ``law run`` of a sweep's plot (:data:`DRAWN`) starts its drawing process
here (:mod:`mlprof.plotting.drawer`): matplotlib's imports were the longest part of that run's
start-up. Never both: four processes starting on two cores made a rerun with nothing to do
0.5-0.6 s instead of 0.26 s.

Every ``law run`` is watched as a step of its own (:func:`mlprof.progress.watch_run`): its
start (the imports, the parameter checks, the scheduling: 0.3-0.6 s on an idle machine, 24-88 s
on a busy one) and the law process's own work between the steps that speak for themselves say
their phase after 3.5 s of silence.

Everything else goes to law unchanged (``law.cli.cli.run``). The check reads the index file
(~40 lines) after law's import, which law's own start-up does anyway: it adds no measurable
time to a ``law run`` (the index is read once more, well under 1 ms).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from mlprof.errors import MLProfError
from mlprof.util import checkout_dir, did_you_mean, law_run_measures_script, looking


def index_families(index_file: str) -> list[str]:
    """The task families of law's index file (lines ``module:Family:params``), in its order."""
    with open(index_file) as f:
        return [line.split(":", 2)[1] for line in map(str.strip, f) if line.count(":") >= 2]


def unknown_task(family: str, index_file: str) -> MLProfError | None:
    """The error for ``law run family`` when ``family`` is not in the index (``None`` when it is,
    or when law decides itself: a ``module.Class`` path, no index file yet)."""
    if "." in family or family.startswith("-") or not os.path.isfile(index_file):
        return None
    families = index_families(index_file)
    if family in families:
        return None
    hint = did_you_mean(family, families)
    listing = "" if hint else " (law index --verbose lists the tasks)"
    return MLProfError(f"{family} is not a task{hint}{listing}")


#: the tasks whose plot is drawn by a drawing process that ``law run`` starts before law's
#: imports (:mod:`mlprof.plotting.drawer`): their plot modules import beside law's start-up
DRAWN = ("PlotRuntimes", "PlotMultiRuntimes", "PlotThroughput", "PlotSpeedup")


def file_types_of(options: Sequence[str]) -> list[str]:
    """The plot file types ``--file-types`` asks for (default ``pdf``): the writers the drawing
    process imports ahead (an unknown one is the task's parameter check's to refuse)."""
    for i, a in enumerate(options):
        name, eq, value = a.partition("=")
        if name == "--file-types":
            value = value if eq else (options[i + 1] if i + 1 < len(options) else "")
            return [t.strip().lower() for t in value.split(",") if t.strip()]
    return ["pdf"]


#: modules that law's start-up imports but a ``law run`` with luigi's local scheduler never uses:
#: ``requests`` (with urllib3 and charset_normalizer, 35-40 ms here) is imported by
#: ``luigi.rpc`` for the central scheduler's client, which luigi imports unconditionally
DEFERRED = ("requests",)


class _DeferredFinder:
    """A meta path finder that gives :data:`DEFERRED` modules a lazy loader
    (:class:`importlib.util.LazyLoader`): the module object exists, its code runs at the first
    attribute access (e.g. when a central scheduler is configured and luigi's client uses it).

    Why a finder and not a lazy module put in ``sys.modules`` up front: Python 3.11's import
    statement reads ``__spec__`` of a module it finds there, which loads a lazy one at once."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        """A lazily loading spec for a deferred module, else None (the next finder's turn)."""
        if name not in DEFERRED:
            return None
        import importlib.machinery
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def _retcode() -> int:
    import luigi.retcodes

    try:
        return int(luigi.retcodes.retcode().unhandled_exception)
    except Exception:  # noqa: BLE001  (a broken config must not hide the user's error)
        return 40


def skip_final_collection() -> None:
    """Before ``law`` exits: move every object into the collector's permanent generation
    (``gc.freeze()``), so that the interpreter's last garbage collections at exit skip them.

    Why: those collections walk every object that law, luigi, the task modules and numpy made,
    and took 50-60 ms of the exit of a ``law run`` here (70 ms against 13 ms frozen, for a
    process with law, luigi, numpy and the task modules imported), paid by every run, a rerun
    with nothing to do too. Objects that are garbage only as a reference cycle then skip their
    finalizers at exit, as the process's memory goes anyway; none of law's, luigi's or
    mlprof's relies on one (outputs are written atomically and closed by the tasks; remote
    workflows keep their job files, law's default).
    """
    import gc

    gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``law`` with ``argv`` (default ``sys.argv[1:]``); an unknown task of ``law run`` is
    one line and exit code 40."""
    args = list(sys.argv[1:] if argv is None else argv)
    running = len(args) >= 2 and args[0] == "run"
    if running:
        from mlprof.progress import watch_run

        watch_run(f"law run {args[1]}", "importing law, luigi and the task modules")
    script = running and law_run_measures_script(args[2:])
    # not with a model script: its early server makes it four processes starting on two cores
    # (a rerun with nothing to do 0.9-1.5 s against 0.6-1.0 s), and its first work waits for
    # torch's import anyway, beside which the plot's imports run in law run as before
    drawn = running and not script and args[1] in DRAWN and not looking(args[2:]) \
        and not any(a.startswith("--interleave") for a in args[2:])  # (drawn by the task)
    if drawn:
        from mlprof.plotting import drawer

        drawer.start(file_types_of(args[2:]))
    if script:
        os.environ.setdefault("MLP_BASE", checkout_dir())  # as mlprof.tasks does: for the server
        from mlprof.measure.forkserver import start_early

        try:
            start_early()
        except Exception as e:  # noqa: BLE001  (only a head start: the run starts it later)
            logging.getLogger("mlprof").debug("no early measurement server: %s", e)
    if not any(isinstance(f, _DeferredFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _DeferredFinder())
    from law.cli.cli import run
    from law.config import Config

    if running:
        err = unknown_task(args[1], Config.instance().get_expanded("core", "index_file"))
        if err is not None:
            logger = logging.getLogger("luigi-interface")
            logger.error("mlprof error: %s", err)
            for handler in logger.handlers:
                handler.flush()
            return _retcode()
    code = run(args)
    return code if isinstance(code, int) else 0
