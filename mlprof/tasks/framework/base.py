"""BaseTask: ``--version``, the output directory (built by :mod:`mlprof.results.layout`), failure
records, declared upstream tasks (:class:`Requirements`) and one-line errors for bad input."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any, ClassVar

import law
import luigi

from mlprof.errors import INTERRUPTED, MeasurementFailed, MLProfError
from mlprof.progress import said
from mlprof.results import families, layout
from mlprof.tasks.framework import cmdline
from mlprof.util import write_json_atomic

logger = logging.getLogger("mlprof")


def contended_causes(curves: list[tuple[str, Any]]) -> list[str]:
    """Under the medians table, which cause disturbed which batch sizes of each curve
    (``(label, MergeRuntimes)``), read from its merged provenance
    (:func:`mlprof.measure.trust.cause_line`: ``contended: cpu-wait at batch size(s) 8,
    32``), the label first when there are several curves; nothing for a curve without a
    contended point or whose provenance cannot be read (the table says what it can)."""
    from mlprof.measure.contention import causes_of, is_contended
    from mlprof.measure.results import read_merged_provenance
    from mlprof.measure.trust import cause_line

    lines = []
    for label, merge in curves:
        try:
            prov = read_merged_provenance(merge.output()["provenance"].path)
        except (MLProfError, OSError):
            continue
        rows = [{"batch_size": (m.get("settings") or {}).get("batch_size", "?"),
                 "contended": is_contended(m), "causes": causes_of(m)}
                for m in prov["measurements"]]
        line = cause_line(rows)
        if line:
            lines.append(f"{label}: {line}" if len(curves) > 1 else line)
    return lines


class Requirements(dict):
    """The upstream task classes of a task, declared in one place (columnflow's idea).

    ``reqs = Requirements(MergeRuntimes=MergeRuntimes)``; ``self.reqs.MergeRuntimes.req(self)``
    in ``requires()``. ``Requirements(Base.reqs, Other=Other)`` extends another declaration.
    """

    def __init__(self, *bases: dict, **classes: type) -> None:
        super().__init__()
        for b in bases:
            self.update(b)
        self.update(classes)

    def __getattr__(self, name: str) -> Any:  # a task class: ``.req(...)`` is law's
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class VersionParameter(luigi.Parameter):
    """``--version``: a version directory name, normalized (NFC, stripped) so that versions
    that look alike are one directory, and refused in one line when it holds control or bidi
    characters or a name reserved for luigi's and the store's temporary files
    (:func:`mlprof.results.layout.check_version`). The ``.confirm`` suffix is refused for the
    versions a user gives (:mod:`mlprof.tasks.framework.cmdline`, the API): mlprof's own tasks
    use it."""

    #: how :mod:`mlprof.tasks.framework.cmdline` (which this module imports) knows a version
    #: parameter
    is_version = True

    def normalize(self, x):
        return layout.check_version(x) if isinstance(x, str) else x


#: law's own parameters that never change an output, and why (see BaseTask.param_reasons)
LAW_PARAM_REASONS = {
    "log_file": "where law writes its log, not what a task computes",
    "print_deps": "an interactive query (law run --print-deps): nothing runs",
    "print_status": "an interactive query (law run --print-status): nothing runs",
    "print_output": "an interactive query (law run --print-output): nothing runs",
    "remove_output": "an interactive command (law run --remove-output): nothing runs",
    "fetch_output": "an interactive command (law run --fetch-output): nothing runs",
}


class BaseTask(law.Task):
    """Base of all mlprof tasks.

    Outputs live in ``layout.result_dir(<Task>, --version, store_parts())``; each task builds
    its segments with :mod:`mlprof.results.layout` from its parameter mixins' values.

    Every parameter either reaches the output path or is named in ``param_reasons`` (merged
    over the class hierarchy) with the reason it does not change the output; a test enumerates
    every parameter of every task family and checks this.
    """

    version = VersionParameter(description="version of outputs to produce; a new version "
                                           "never reuses the outputs of another")

    task_namespace = None
    exclude_index = True
    exclude_params_req: ClassVar[set[str]] = set()
    reqs = Requirements()

    #: parameter name -> why it does not change this task's output
    param_reasons: ClassVar[dict[str, str]] = LAW_PARAM_REASONS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        layout.check_version(self.version)

    def publish_message(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        """law's message (to stdout and luigi's scheduler), noted as a line said: a progress
        line is due only after the process has been silent 3.5 s
        (:func:`mlprof.progress.said`)."""
        super().publish_message(msg, *args, **kwargs)
        said()

    def watch_phase(self) -> str:
        """What ``law run``'s own watcher says while this task runs in the law process and is
        silent (:func:`mlprof.progress.watch_run`)."""
        return f"running {self.task_family}"

    def _print_output(self, args):
        """``law run ... --print-output N``: law's list of output paths, without its header
        (``print task output with max_depth 0, showing schemes`` and a blank line: the command
        line said so already) unless ``MLP_VERBOSE``."""
        import contextlib
        import io

        from mlprof.measure.quiet import verbose

        if verbose():
            return super()._print_output(args)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            result = super()._print_output(args)
        lines = buf.getvalue().splitlines()
        if lines[:1] and lines[0].startswith("print task output "):
            lines = lines[2:] if lines[1:2] == [""] else lines[1:]
        for line in lines:
            print(line)
        return result

    @classmethod
    def param_reason(cls, name: str) -> str | None:
        """Why parameter ``name`` does not change the output (None: it does)."""
        for klass in cls.__mro__:
            reason = klass.__dict__.get("param_reasons", {}).get(name)
            if reason:
                return reason
        return None

    def run_summary(self) -> str | None:
        """What ``law run`` prints at the end for this task (None: nothing)."""
        return None

    def summary_of(self, curves: Sequence[tuple[str, Any]], outputs: Sequence[str]) -> str:
        """A medians table of ``(label, MergeRuntimes)`` pairs and the output paths, or why
        this task is not complete."""
        from mlprof.measure.stats import medians_table

        if not self.complete():
            return f"{self.task_family}: not complete: {failure_reason(self)}"
        table = medians_table([(label, merge.output()["stats"].path)
                               for label, merge in curves])
        causes = "".join(f"\n{line}" for line in contended_causes(list(curves)))
        return table + causes + "\noutputs:\n" + "\n".join(f"  {p}" for p in outputs)

    def store_parts(self) -> dict[str, str]:
        """This task's path segments (see :data:`mlprof.results.layout.LAYOUTS`)."""
        return {}

    def version_dir(self) -> str:
        """The version directory of this task's outputs: ``--version`` (MeasurePeak, whose
        result belongs to the machine rather than to one version, has a fixed one)."""
        return str(self.version)

    #: whether this task's output directory depends on nothing but its parameters, its model
    #: file's content and the store (as MeasureRuntime's): then it is built once per store, not
    #: on every ``output()``: 0.1-0.4 ms and ~250 attribute lookups through law's proxy per
    #: call, twice per branch while a sweep is scheduled (benchmarks/scheduling.py)
    fixed_result_dir: ClassVar[bool] = False
    _result_dir: tuple[str, str] | None = None

    def local_path(self, *path: str) -> str:
        """Absolute path of ``path`` in this task's output directory."""
        if not self.fixed_result_dir:
            return os.path.join(layout.result_dir(self.task_family, self.version_dir(),
                                                  self.store_parts()), *map(str, path))
        store = layout.store_base()
        cached = self._result_dir
        if cached is None or cached[0] != store:
            cached = (store, layout.result_dir(self.task_family, self.version_dir(),
                                               self.store_parts(), store))
            self._result_dir = cached
        return os.path.join(cached[1], *map(str, path))

    def local_target(self, *path: str, **kwargs) -> law.LocalFileTarget:
        """A file target in this task's output directory."""
        return law.LocalFileTarget(self.local_path(*path), **kwargs)

    def declared_outputs(self, **names: object) -> dict:
        """This task's outputs as its family declares them
        (:mod:`mlprof.results.families`): one target per declared file, a directory target for
        an output directory. ``names`` are the family's naming values (batch size, tags)."""
        fam = families.FAMILIES[self.task_family]
        return {key: (law.LocalDirectoryTarget if key in fam.dir_keys else law.LocalFileTarget)(
                    self.local_path(name)) for key, name in fam.files(**names).items()}

    def failure_path(self) -> str:
        """Where this task records its failure (never an output itself)."""
        return self.local_path(layout.FAILURE_FILE)

    def failure(self) -> dict | None:
        """The recorded failure of this task (None if it did not fail, or succeeded since)."""
        from mlprof import ingest

        try:  # a FIFO or a device there (a hostile store) is no record, never a hang
            record = ingest.load_json(self.failure_path())
        except MLProfError:
            return None
        return record if isinstance(record, dict) else None

    def on_failure(self, exception: BaseException) -> str:
        """Record the failure next to the outputs; one line for mlprof's own errors."""
        import datetime
        import traceback

        status = getattr(exception, "status", "failed")
        message = str(exception) if isinstance(exception, MLProfError) else \
            f"{type(exception).__name__}: {exception}"
        try:
            write_json_atomic(self.failure_path(), {
                "task": self.task_family, "task_id": self.task_id, "status": status,
                "message": message, "error": type(exception).__name__,
                # the script or model file: which corpus a failure belongs to (Report)
                "model_file": str(getattr(self, "model_file", "") or "") or None,
                "traceback": None if isinstance(exception, MLProfError) else
                "".join(traceback.format_exception(exception))[-4000:],
                "time": datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
            })
        except OSError:
            pass
        if isinstance(exception, MLProfError):
            return str(exception)
        return super().on_failure(exception)

    def on_success(self):
        """Drop a failure record left by an earlier run."""
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(self.failure_path())
        return super().on_success()


def table_summary(task) -> str:
    """The end-of-run summary of a task whose outputs hold its answer as a text table
    (``output()["text"]``): the table and the output paths, or why it is not complete."""
    if not task.complete():
        return f"{task.task_family}: not complete: {failure_reason(task)}"
    from mlprof import ingest

    table = ingest.read_text(task.output()["text"].path, ingest.MAX_RECORD_BYTES, what="a table")
    return table + "outputs:\n" + "\n".join(f"  {t.path}" for t in task.output().values())


def failure_reason(task) -> str:
    """The recorded failure of ``task`` or of the first failed task below it."""
    failure = first_failure(task)
    if failure:
        return str(failure.get("message", "failed"))
    return "did not complete (see the log above)"


def failure_error(task, file: str | None = None) -> MLProfError:
    """The error to raise for an incomplete ``task``: :func:`failure_reason`, as a
    :class:`~mlprof.errors.MeasurementFailed` with the recorded status when there is one."""

    failure = first_failure(task) or {}
    status = failure.get("status")
    reason = failure_reason(task)
    if file is not None and reason.startswith(f"{file}: "):
        file = None  # the record names it already
    if isinstance(status, str) and status != "failed":
        return MeasurementFailed(reason, file, status=status)
    return MLProfError(reason, file)


#: the stage a failed task stands for, in failure summaries
FAILURE_STAGES = {"DiscoverModels": "discovery", "ExportOnnx": "export",
                  "MeasureRuntime": "measure", "MergeRuntimes": "measure"}


def failure_cause_of(task) -> tuple:
    """``(Cause, message)`` of the first recorded failure at or below ``task``
    (:func:`mlprof.report.causes.failure_cause`)."""
    from mlprof.report.causes import failure_cause

    rec = first_failure(task)
    if rec is None:
        return failure_cause("not-run"), "not run (another task's failure stopped the run)"
    message = str(rec.get("message") or "did not complete")
    return failure_cause(str(rec.get("status", "failed")), message,
                         FAILURE_STAGES.get(str(rec.get("task", "")), "")), message


def first_failure(task) -> dict | None:
    """The failure record of ``task`` or of the first failed task below it (None: none)."""
    from luigi.task import flatten

    seen = set()
    stack = [task]
    while stack:
        t = stack.pop()
        if t.task_id in seen:
            continue
        seen.add(t.task_id)
        failure = t.failure() if hasattr(t, "failure") else None
        if failure is None and hasattr(t, "is_workflow") and t.is_workflow():
            for b in t.get_branch_tasks().values():
                failure = b.failure() or failure
        if failure:
            return failure
        stack.extend(flatten(t.requires()))
    return None


class OneLineErrors(logging.Filter):
    """Log mlprof's bad-input errors as one line instead of a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, MLProfError):
            msg = record.getMessage()
            if msg.startswith("Uncaught exception"):
                record.msg = f"mlprof error: {exc}"
            else:
                record.msg = f"{msg}\nmlprof error: {exc}"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


def install_error_handling() -> None:
    """One-line errors in luigi's log, for ``law run``'s command line and for errors raised
    while parsing parameters.

    Called by :func:`mlprof.tasks.framework.hooks.install_run_hooks` (``law run`` and ``mlprof``).
    luigi's command-line parser: no abbreviations, one line for an unknown option (with the
    closest names), a bad value or a missing parameter, exit code 40 (:mod:`.cmdline`).
    """
    import sys

    cmdline.install()

    lg = logging.getLogger("luigi-interface")
    if not any(isinstance(f, OneLineErrors) for f in lg.filters):
        lg.addFilter(OneLineErrors())

    previous = sys.excepthook
    if getattr(previous, "_mlprof", False):
        return

    def hook(etype, value, tb):
        if isinstance(value, MLProfError):
            print(f"mlprof error: {value}", file=sys.stderr)
            return
        if isinstance(value, KeyboardInterrupt) and sys.argv and sys.argv[0].endswith(" run"):
            # under `law run` (law appends " run" to argv[0]; not in an interactive session
            # that imported the tasks): one line, not luigi's 40-line traceback; the exit
            # status stays "killed by SIGINT" (Python re-raises the signal after an unhandled
            # KeyboardInterrupt)
            print(INTERRUPTED, file=sys.stderr)
            return
        previous(etype, value, tb)

    hook._mlprof = True  # type: ignore[attr-defined]
    sys.excepthook = hook
