"""Nightly: run every active experiment file, confirm suspicious results, write the dashboard.

::

    law run Nightly --version $(date +%F)              # experiments from $MLP_BASE/experiments
    law run Nightly --version $(date +%F) --experiments ~/my-experiments

One experiment never stops another: each runs in :class:`RunExperiment`, which records what
happened (``status.json``: ok, partial, failed, with the messages) instead of failing. A result
that would alert (a regression or an improvement beyond the thresholds) is measured once more
under ``<version>.confirm``; only a confirmed change is listed as an alert.
"""

from __future__ import annotations

import logging
import os
import sys
import time

import law
import luigi

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.experiments import load_experiment, load_experiments, plan, unexpected_error
from mlprof.ingest import MAX_YAML_BYTES, read_bytes
from mlprof.report import collect, to_frame
from mlprof.report.history import candidates
from mlprof.report.nightly import (
    CONFIRM_SUFFIX,
    EXIT_NIGHT_FAILED,
    check_version_room,
    confirm_version,
    experiment_status,
    failing_line,
    finish_status,
    inactive_status,
    nightly_summary,
    rerun_params,
    status_line,
    summary_line,
    terminal_text,
    utf8_safe,
)
from mlprof.results import layout
from mlprof.tasks.dashboard import Dashboard
from mlprof.tasks.framework.base import BaseTask, Requirements, failure_reason
from mlprof.tasks.framework.parameters import PathParameter, expand_path
from mlprof.tasks.noise import CalibrateNoise
from mlprof.tasks.plotting import PlotMultiRuntimes, PlotSpeedup
from mlprof.tasks.runtime import MeasureRuntime
from mlprof.util import short_hash, write_json_atomic

law.contrib.load("slack", "telegram")
logger = logging.getLogger("mlprof")

__all__ = ["CONFIRM_SUFFIX", "ConfirmResults", "Nightly", "RunExperiment"]


def build_isolated(tasks: list) -> None:
    """Run ``tasks`` with their own local scheduler, inside the current task.

    A failure below them stays there (recorded in its failure file) instead of failing the
    caller: the caller checks completeness afterwards.
    """
    if tasks:
        luigi.build(tasks, local_scheduler=True, workers=1, detailed_summary=False)


class RunExperiment(BaseTask):
    """Run one experiment file; never fails: ``status.json`` says what happened.

    Each model file is measured with every runtime of the experiment (one
    :class:`~mlprof.tasks.plotting.PlotMultiRuntimes` per model file, so a script's models
    are expanded and a per-model comparison plot is made). A rotating experiment
    (``rotate: {slices: N}``) measures only the slice of the night whose date is in
    ``--version``; ``status.json`` records which (``slice``, and in ``results``).

    An experiment with a ``generation:`` section measures each model file (a decoder) with
    one :class:`~mlprof.tasks.generation.PlotGeneration` of the section's options instead
    (its points, runtimes interleaved, tokens checked; a PNG plot and the table).
    """

    experiment_file = PathParameter(description="the experiment YAML file")

    def _content_hash(self) -> str:
        """The hash of the file's content, read through the one way in (a FIFO or a link to
        /dev/zero hung or exhausted the scheduler here); a file that cannot be read gets the
        hash of why, so its failed status has its own path and a repaired file runs again."""
        try:
            return short_hash(read_bytes(self.experiment_file, MAX_YAML_BYTES,
                                         what="a file of experiment files"))
        except MLProfError as e:
            return short_hash("unreadable", e.message)

    def store_parts(self):
        return {"model": layout.experiment_segment(self.experiment_file, self._content_hash())}

    @property
    def priority(self) -> int:
        """The experiment's priority (luigi runs higher priorities first)."""

        try:
            return load_experiment(self.experiment_file).priority
        except Exception:  # noqa: BLE001 -- run() records why; the scheduler must go on
            return 0

    @property
    def resources(self) -> dict[str, int]:
        # it measures (in its own scheduler): never next to another measurement
        return {"mlprof_measure": 1}

    def output(self):
        return self.declared_outputs()["status"]

    def measurement_tasks(self, exp) -> tuple[list, list[str], list[str]]:
        """One PlotMultiRuntimes per model file with the runtimes that measure it, the errors of
        those that cannot be made and one line per (model file, runtime) pair skipped."""

        if exp.generation is not None:
            return self.generation_tasks(exp)
        todo = plan(exp)
        tasks, errors = [], list(todo.errors)
        for f, runtimes in todo.pairs:
            try:
                tasks.append(PlotMultiRuntimes(
                    version=self.version, model_files=(f,), runtimes=runtimes,
                    batch_sizes=exp.batch_sizes, device=exp.device,
                    script_args=exp.script_args, file_types=("png",), **exp.settings))
            except MLProfError as e:
                errors.append(str(e))
            except Exception as e:  # noqa: BLE001 -- costs this model file alone
                errors.append(str(unexpected_error(e, f)))
        return tasks, errors, list(todo.skipped)

    def generation_tasks(self, exp) -> tuple[list, list[str], list[str]]:
        """One PlotGeneration per model file of a generation experiment (the section's
        options, checked when the file was read) and the errors of those that cannot be made
        (a model file that is not a decoder: one line, that file alone)."""
        from mlprof.tasks.generation import PlotGeneration

        tasks, errors = [], []
        for f in exp.model_files:
            try:
                tasks.append(PlotGeneration(version=self.version, model_file=f,
                                            file_types=("png",), **exp.generation))
            except MLProfError as e:
                errors.append(str(e))
            except Exception as e:  # noqa: BLE001 -- costs this model file alone
                errors.append(str(unexpected_error(e, f)))
        return tasks, errors, []

    def speedup_tasks(self, exp, tasks: list) -> list:
        """A speed-up plot vs the experiment's ``reference_runtime`` per measurement task (the
        same measurements; nothing is measured twice), when it compares runtimes."""

        if exp.generation is not None or not exp.reference_runtime or len(exp.runtimes) < 2:
            return []
        out = []
        for t in tasks:
            if len(t.runtimes) < 2 or exp.reference_runtime not in t.runtimes:
                continue  # a model file only one runtime measures: nothing to compare
            try:
                out.append(PlotSpeedup.req(t, reference_runtime=exp.reference_runtime))
            except MLProfError:  # e.g. only one runtime measures it: its plot task says why
                pass
        return out

    def run(self):
        t0 = time.time()
        try:
            status = self._run_experiment(t0)
        except Exception as e:  # noqa: BLE001 -- the per-experiment boundary (below)
            # any failure of this experiment (a bad file, or a bug its content triggers) costs
            # this experiment alone: a failed status, never a failed night; its status line
            # (below) is the one line that says why
            error = e if isinstance(e, MLProfError) else unexpected_error(
                e, self.experiment_file)
            if not isinstance(e, MLProfError):  # the traceback only for --log-level DEBUG
                logger.debug("experiment %s", self.experiment_file, exc_info=True)
            status = experiment_status(self.experiment_file, self.version, error=str(error))
            status.update(finished=status["started"], duration_s=round(time.time() - t0, 2))
        write_json_atomic(self.output().path, utf8_safe(status))
        self.publish_message(status_line(status))

    def _run_experiment(self, t0: float) -> dict:
        """Load, plan, measure and plot the experiment; its status (raises on failure)."""
        # a rotating experiment measures the slice of this night (its date in --version)
        exp, part = load_experiment(self.experiment_file).for_night(self.version)
        status = experiment_status(self.experiment_file, self.version, exp)
        if part is not None:
            status["slice"] = part.as_dict()
        self.publish_message(f"experiment {terminal_text(exp.title)!r}: "
                             + (f"{part.label}, " if part is not None else "")
                             + f"{len(exp.model_files)} model file(s) x "
                             + (f"{len(exp.runtimes)} runtime(s)" if exp.generation is None
                                else "generating on " + ",".join(exp.generation.get(
                                    "runtimes") or ("the default runtimes",))))
        tasks, errors, skipped = self.measurement_tasks(exp)
        for line in skipped:
            self.publish_message(terminal_text(line))
        speedups = self.speedup_tasks(exp, tasks)
        build_isolated(tasks + speedups)
        outcomes = [(os.path.basename(_model_file_of(t)), t.complete(),
                     "" if t.complete() else failure_reason(t)) for t in tasks]
        plots = [p.path for t in tasks + speedups if t.complete()
                 for p in t.output().values()]
        finish_status(status, len(exp.model_files), outcomes, errors, plots, t0,
                      time.time(), skipped)
        if part is not None:  # the dashboard's "results" column shows it
            status["results"] = f"{status['results']}; {part.label}"
        return status


def _model_file_of(task) -> str:
    """The model file an experiment's task measures (PlotMultiRuntimes: its one
    ``model_files``; PlotGeneration: its ``model_file``)."""
    files = getattr(task, "model_files", None)
    return str(files[0]) if files else str(task.model_file)


def _configured(*options: str) -> bool:
    """Whether law.cfg's ``[notifications]`` section sets all ``options``."""
    return all(law.config.get_expanded("notifications", o, None) for o in options)


class _ExperimentsMixin(BaseTask):
    """``--experiments``: the directory of experiment files, and its store segment."""

    exclude_index = True

    experiments = luigi.Parameter(default="$MLP_BASE/experiments", description="directory of "
                                  "experiment YAML files; default: $MLP_BASE/experiments")

    reqs = Requirements(RunExperiment=RunExperiment)

    #: whether this task measures again under ``<version>.confirm`` (its room is checked)
    uses_confirm_version = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.uses_confirm_version:  # up front, not after a night of measuring
            check_version_room(self.version)

    @property
    def experiments_dir(self) -> str:
        """--experiments as an absolute path."""
        return expand_path(self.experiments)

    def store_parts(self):
        return {"model": layout.experiments_dir_segment(self.experiments_dir)}

    def experiment_list(self):
        """``(file, experiment or None, error or None)`` in run order."""

        return load_experiments(self.experiments_dir)

    def experiment_tasks(self) -> dict[str, RunExperiment]:
        """Active experiments and broken files (their error is worth a line on the dashboard)."""
        return {os.path.basename(path): self.reqs.RunExperiment.req(self, experiment_file=path)
                for path, exp, _ in self.experiment_list() if exp is None or exp.active}


class ConfirmResults(_ExperimentsMixin):
    """Measure once more what would alert, after all experiments of the version ran.

    Output ``confirm.json``: the candidates (series, change, z) and whether the re-measurement
    completed. Re-measurements go under ``<version>.confirm``; they never fail this task.
    """

    @property
    def resources(self) -> dict[str, int]:
        return {"mlprof_measure": 1}

    def requires(self):
        return self.experiment_tasks()

    def output(self):
        return self.declared_outputs()["confirm"]

    def run(self):
        from mlprof.progress import speaking

        with speaking(f"nightly {self.version}: results to confirm") as rep:
            report = to_frame(collect([layout.store_base()], rep))
            # the series and alerts of a corpus's nights: 5.7 s after 7.9 s of reading here
            rep.phase(f"series and alerts of {len(report):,} rows")
            beyond = candidates(report, self.version)
        found, tasks = [], []
        for c in beyond:
            params = rerun_params(c, confirm_version(self.version))
            if params is None:
                continue  # measured before the parameters were recorded
            logger.info("%s on %s at batch size %s: %+.1f%% (z %.1f), measuring again to "
                        "confirm", c["model"], c["runtime"], c["batch_size"],
                        100 * c["change"], c["z"])
            tasks.append(MeasureRuntime.from_str_params(params))
            found.append({k: c[k] for k in ("model", "runtime", "runtime_version",
                                            "batch_size", "kind", "change", "z")})
        build_isolated(tasks)
        for c, t in zip(found, tasks, strict=True):
            c["remeasured"] = t.complete()
            c["error"] = "" if c["remeasured"] else failure_reason(t)
        write_json_atomic(self.output().path, {"version": self.version,
                                               "confirm_version": confirm_version(self.version),
                                               "candidates": found})
        self.publish_message(f"{len(found)} result(s) measured again to confirm")


class Nightly(_ExperimentsMixin):
    """All active experiments of ``--experiments``, then the report and the dashboard.

    Output: ``nightly.json`` (experiment statuses, alerts, the dashboard's path). The summary
    line is sent via Slack, Telegram or mail when law.cfg's ``[notifications]`` configures them
    (or with ``--notify-slack`` etc.; ``--notify-slack False`` turns one off).

    ``--fail-on-regression`` (for cron and CI): ``law run`` exits with
    :data:`~mlprof.report.nightly.EXIT_NIGHT_FAILED` when the night has a new confirmed
    regression or a failed or partial experiment, after one line saying which; also when the
    night was done already (the exit code is the night's verdict, not the run's).
    """

    confirm = luigi.BoolParameter(default=True, parsing=luigi.BoolParameter.EXPLICIT_PARSING,
                                  description="measure suspicious results once more before "
                                  "alerting (--confirm False: alert on two runs in a row only)")
    # on by default where law.cfg configures them ([notifications]): "when configured"
    notify_slack = law.slack.NotifySlackParameter(
        significant=False, default=_configured("slack_token", "slack_channel"))
    notify_telegram = law.telegram.NotifyTelegramParameter(
        significant=False, default=_configured("telegram_token", "telegram_chat"))
    notify_mail = law.NotifyMailParameter(significant=False,
                                          default=_configured("mail_recipient"))

    fail_on_regression = luigi.BoolParameter(
        default=False, significant=False, description="exit with code 50 when the night has a "
        "new confirmed regression or a failed or partial experiment (for cron and CI); "
        "default: False")
    calibrate_noise = luigi.BoolParameter(
        default=True, significant=False, parsing=luigi.BoolParameter.EXPLICIT_PARSING,
        description="measure this host's noise floor first (CalibrateNoise) when its "
        "fingerprint has none; --calibrate-noise False: judge the night without one; "
        "default: True")

    exclude_params_req = {"notify_slack", "notify_telegram", "notify_mail", "fail_on_regression",
                          "calibrate_noise"}
    param_reasons = {
        **{n: "only sends the summary line somewhere; the results are the same"
           for n in ("notify_slack", "notify_telegram", "notify_mail")},
        "fail_on_regression": "only sets law run's exit code from the night's summary; the "
        "night measures and writes the same",
        "calibrate_noise": "only whether a missing noise floor is measured first (into "
        "CalibrateNoise's own path, one per host fingerprint); the night's measurements are "
        "the same, and nightly.json names the floor it found, whichever way it got there"}
    reqs = Requirements(_ExperimentsMixin.reqs, ConfirmResults=ConfirmResults,
                        Dashboard=Dashboard, CalibrateNoise=CalibrateNoise)

    @property
    def uses_confirm_version(self) -> bool:  # type: ignore[override]
        """Only a confirming night measures under ``<version>.confirm``."""
        return bool(self.confirm)

    def requires(self):
        reqs = {"experiments": self.experiment_tasks()}
        if self.confirm:
            reqs["confirm"] = self.reqs.ConfirmResults.req(self)
        if self.calibrate_noise:
            # complete when this host's fingerprint has its floor (the fingerprint is in its
            # path); run first (its priority) so that the whole night is judged by it
            reqs["noise"] = self.reqs.CalibrateNoise.req(self)
        return reqs

    def output(self):
        # without confirmation the alerts differ: another file
        return self.declared_outputs(confirm=self.confirm)["nightly"]

    def run_summary(self) -> str | None:
        """The nightly summary line, on every run (also when the night was done already).

        Under ``--fail-on-regression``, a night with a new regression or a failed experiment
        ends ``law run`` here, after the summary and one line saying why, with
        :data:`~mlprof.report.nightly.EXIT_NIGHT_FAILED` (``law run`` is the only caller: the
        Python API's ``luigi.build`` never exits).
        """

        if not self.complete():
            return f"{self.task_family}: not complete: {failure_reason(self)}"
        summary = _load(self.output().path)
        line = summary_line(summary)
        why = failing_line(summary) if self.fail_on_regression else None
        if why is None:
            return line
        print(line, flush=True)
        print(why, file=sys.stderr, flush=True)
        raise SystemExit(EXIT_NIGHT_FAILED)

    @law.decorator.notify
    def run(self):
        # a generator (the dashboard is a dynamic dependency): luigi runs it again from the
        # top once the dashboard exists, so everything before the yield only reads files
        import pandas as pd

        inputs = self.input()
        statuses = [_load(inp.path) for inp in inputs["experiments"].values()]
        statuses += [utf8_safe(inactive_status(path, exp)) for path, exp, _ in
                     self.experiment_list() if exp is not None and not exp.active]
        confirmed = _load(inputs["confirm"].path)["candidates"] if self.confirm else []
        exp_file = self.local_path("experiments.json")
        write_json_atomic(exp_file, statuses)
        dashboard = self.reqs.Dashboard.req(
            self, current=(self.version, confirm_version(self.version)),
            experiments_file=exp_file, publish=True)
        yield dashboard

        site = dashboard.output().path
        summary = nightly_summary(self.version, statuses, confirmed,
                                  pd.read_csv(os.path.join(site, "alerts.csv")),
                                  os.path.join(site, "index.html"))
        summary["noise_floor"] = night_floor()
        write_json_atomic(self.output().path, summary)
        # to the scheduler only (law's notifications show it as the last message); the console
        # gets it once, from run_summary at the end of the run
        self.publish_message(summary_line(summary), stdout=None)


def night_floor(store: str | None = None) -> dict:
    """What ``nightly.json`` records of the floor the night was judged by: this machine's
    fingerprint id and, when ``store`` has its :class:`~mlprof.results.records.NoiseRecord`,
    the record's file and each class's floor, interval and minimum detectable change; else
    ``calibrated: false`` and why."""
    from mlprof.measure.noise import NOT_CALIBRATED, find_floor, floor_summary, noise_paths
    from mlprof.sysinfo import fingerprint_id

    fid = fingerprint_id()
    record = find_floor(store or layout.store_base(), fid)
    if record is None:
        return {"fingerprint_id": fid, "calibrated": False, "note": NOT_CALIBRATED}
    paths = noise_paths(store or layout.store_base(), fid)
    return {"fingerprint_id": fid, "calibrated": True, "file": paths[0] if paths else None,
            "timestamp": record.header.timestamp,
            "classes": floor_summary(record)}


def _load(path: str) -> dict:
    return ingest.load_json(path)
