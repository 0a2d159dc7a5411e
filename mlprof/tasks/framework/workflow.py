"""MeasurementWorkflow: what every measuring workflow shares (MeasureRuntime, ProfileRuntime,
MeasureLoad, MeasureGeneration): one branch per measurement point, run in order and never two at
once, the model's artifacts required by the workflow, the refusal of an unknown ``--workflow``,
and why law's workflow parameters do not change a result.

The concrete task says only what differs: its points (:meth:`measurement_points`), its files
(``output``), where a branch's failure is recorded (:meth:`point_failure_file`) and whether the
measurement server it starts while scheduling imports torch (:meth:`prestart_torch`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import law

from mlprof.errors import MLProfError

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
                if _PENDING_PLOT_TYPES:  # here, while scheduling: before the branches measure
                    from mlprof.plotting.backend import preload

                    preload(sorted(_PENDING_PLOT_TYPES))
        return reqs

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
