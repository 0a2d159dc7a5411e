"""MeasurementWorkflow: what every measuring workflow shares (MeasureRuntime, ProfileRuntime,
MeasureLoad, MeasureGeneration): one branch per measurement point, run in order and never two at
once, the model's artifacts required by the workflow, the refusal of an unknown ``--workflow``,
and why law's workflow parameters do not change a result.

The concrete task says only what differs: its points (:meth:`measurement_points`), its files
(``output``), where a branch's failure is recorded (:meth:`point_failure_file`) and whether the
measurement server it starts while scheduling imports torch (:meth:`prestart_torch`).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import law

from mlprof.errors import MLProfError

logger = logging.getLogger("mlprof")

#: the luigi resource a measurement holds (law.cfg's [luigi_resources] gives it 1 unit)
MEASURE_RESOURCE = "mlprof_measure"

#: the file types of the plots this process found missing while scheduling (see
#: :func:`note_pending_plot`); the plot modules are imported while the measurement server starts
_PENDING_PLOT_TYPES: set[str] = set()


def note_pending_plot(file_types: Sequence[str]) -> None:
    """Say that this process will draw a plot of ``file_types`` after the measurements (a plot
    task found incomplete). A local workflow that starts the measurement server then imports the
    plot modules meanwhile (:func:`mlprof.plotting.backend.preload`): the server's start is a
    wait for this process, and those imports are most of the plot's time."""
    _PENDING_PLOT_TYPES.update(file_types)


def _whole(target: Any, damage: Callable[[str], str | None]) -> bool:
    """Whether a branch's output ``target`` is there: a record (``.json``) only with the CSV
    beside it and ``damage`` None for it; any other file when it exists."""
    if not target.exists():
        return False
    path = str(target.path)
    if not path.endswith(".json"):
        return True
    return os.path.exists(path[:-5] + ".csv") and damage(path) is None


def refused(read: Callable[..., object], *paths: str) -> str | None:
    """What ``read(*paths)``, a record's reader, refuses in its one line (None: it reads):
    a kind's :meth:`MeasurementWorkflow.record_damage`."""
    try:
        read(*paths)
    except MLProfError as e:
        return str(e)
    return None


@functools.cache
def checked_outputs(damage: Callable[[str], str | None]) -> type:
    """The workflow's collection of its branches' outputs in which a branch whose record is
    damaged (``damage(json_path)`` not None) is missing: the workflow's completeness,
    ``--print-status`` and the remote workflows' choice of jobs to submit then all measure it
    again, as the branch itself does (:meth:`MeasurementWorkflow.complete`)."""

    class CheckedOutputs(law.TargetCollection):
        def _iter_state(self, *args, **kwargs):
            if len(args) < 5 and kwargs.get("exists_func") is None:
                kwargs["exists_func"] = functools.partial(_whole, damage=damage)
            return super()._iter_state(*args, **kwargs)

    return CheckedOutputs


class MeasurementWorkflow(law.LocalWorkflow):
    """A workflow whose branches measure, one point each. A mixin beside the task's
    :class:`~mlprof.tasks.framework.base.BaseTask` mixins, not a subclass of BaseTask: law's
    LocalWorkflow then stays first in the method order, before the remote workflows a task
    offers after it (local is the default ``--workflow``)."""

    exclude_index = True

    # the workflow requires its branches statically: law's dynamic branch yielding starts a
    # multiprocessing manager process (~0.3 s per run); priorities keep the points' order
    local_workflow_require_branches = True

    #: whether scheduling a local run starts the measurement server early (its imports then
    #: overlap with scheduling, and a plot's imports with them, instead of delaying the first
    #: branch): every measurement kind measures in the server (PlotLoad of two stream points:
    #: 4.9 s started in the first branch, 4.0 s started here; benchmarks/README.md)
    prestarts_server: ClassVar[bool] = True

    param_reasons: ClassVar[dict[str, str]] = {
        "workflow": "where the branches run (local, slurm, htcondor): the same measurement "
                    "into the same files",
        "effective_workflow": "law's resolved --workflow (see workflow)",
        "branches": "which branches run; each branch writes its own point's files",
        **dict.fromkeys(("acceptance", "tolerance", "pilot"), "law's rules for when the "
                        "workflow counts as complete; each branch writes the same files"),
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # law falls back to the first workflow for an unknown name: a typo (--workflow slurmm)
        # would measure locally without a word
        known = list(dict.fromkeys(
            c.workflow_proxy_cls.workflow_type for c in type(self).__mro__
            if c.__dict__.get("workflow_proxy_cls") is not None
            and c.workflow_proxy_cls.workflow_type))
        if self.workflow not in ("", law.NO_STR, *known):
            raise MLProfError(f"unknown workflow {self.workflow!r}; one of {', '.join(known)}",
                              field="--workflow")

    def measurement_points(self) -> Sequence[Any]:
        """The points, in the order they are measured: one branch each."""
        raise NotImplementedError

    def create_branch_map(self) -> dict[int, Any]:
        return dict(enumerate(self.measurement_points()))

    @property
    def priority(self) -> int:
        """Branches run in the points' order (luigi runs higher priorities first)."""
        return max(1, 10_000 - self.branch) if self.is_branch() else 0

    @property
    def resources(self) -> dict[str, int]:
        # never two measurements at once, whatever --workers says
        return {MEASURE_RESOURCE: 1} if self.is_branch() else {}

    def model_requirements(self) -> dict:
        """What the measured model needs made first (none here; see MeasurementTask)."""
        return {}

    def requires(self):
        return self.model_requirements()

    def prestart_torch(self) -> bool:
        """Whether the early measurement server imports torch too: as the branches' own
        children would ask for it (a child that needs torch from a server without it imports
        torch itself, 1.2 s here, in every branch). False here; the task kinds say."""
        return False

    def workflow_requires(self):
        reqs = super().workflow_requires()
        reqs.update(self.model_requirements())
        if self.prestarts_server:
            from mlprof.measure.forkserver import prestart
            from mlprof.tasks.framework.preflight import inspecting

            # remote branches measure on the workers; --print-status and friends measure nothing
            if self.effective_workflow == "local" and not inspecting():
                prestart(torch=self.prestart_torch())
                from mlprof.plotting import drawer

                # here, while scheduling, before the branches measure; not when a drawing
                # process imports them beside law's start-up (mlprof.plotting.drawer)
                if _PENDING_PLOT_TYPES and not drawer.running():
                    from mlprof.plotting.backend import preload

                    preload(sorted(_PENDING_PLOT_TYPES))
        return reqs

    @staticmethod
    def record_damage(json_path: str) -> str | None:
        """Why the branch record at ``json_path`` (its CSV beside it) does not read as a whole
        result of this kind, in one line naming the file and field; None when it does. Each
        kind answers with its own reader; this default reads nothing."""
        return None

    @property
    def output_collection_cls(self) -> type:
        """law's collection of the branches' outputs: a damaged branch is missing
        (:func:`checked_outputs` with :meth:`record_damage`)."""
        return checked_outputs(type(self).record_damage)

    def complete(self) -> bool:
        """A branch is complete when its files exist and its record reads
        (:meth:`record_damage`): a damaged one is measured again (:meth:`replace_damaged`);
        the workflow's check goes through :meth:`output_collection_cls`."""
        if not self.is_branch():
            return super().complete()
        return all(_whole(t, type(self).record_damage)
                   for t in law.util.flatten(self.output()))

    def replace_damaged(self) -> None:
        """Before measuring a branch: a damaged earlier result is logged and removed, so that a
        failed measurement leaves its failure record, not the damage."""
        for t in law.util.flatten(self.output()):
            path = str(t.path)
            problem = (type(self).record_damage(path) if path.endswith(".json")
                       and os.path.exists(path) else None)
            if problem is not None:
                logger.warning("re-measuring %s", problem)
                for target in law.util.flatten(self.output()):
                    target.remove(silent=True)
                return

    def point_failure_file(self) -> str | None:
        """The file name of this branch's failure record (the branches share a directory);
        None: the task's one record."""
        return None

    def failure_path(self) -> str:
        name = self.point_failure_file() if self.is_branch() else None
        return self.local_path(name) if name else super().failure_path()

    def progress_reporter(self, point: str) -> Callable[[float, str], None]:
        """The progress callback of this branch's measurement child (:func:`progress_reporter`)."""
        return progress_reporter(self, point)


def progress_reporter(task: Any, point: str) -> Callable[[float, str], None]:
    """The progress callback of a measurement child for ``point``: ``task``'s luigi percentage
    (published when it changes) and a log line at most every LOG_EVERY s, the first one
    LOG_EVERY s after the child's first report (a short point logs nothing; see
    :func:`~mlprof.progress.progress_logger`). The children report at least every
    1.5 s (a noise calibration every round, about 0.05 s)."""
    from mlprof.progress import progress_logger

    log_progress = progress_logger(point)
    percent = [0]

    def progress(fraction: float, message: str) -> None:
        if int(100 * fraction) != percent[0]:
            percent[0] = int(100 * fraction)
            task.publish_progress(percent[0])
        log_progress(fraction, message)

    return progress
