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

import datetime
import json
import logging
import os
import time

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.tasks.base import (
    BaseTask,
    failure_reason,
    install_error_handling,
    path_safe,
    store_base,
)
from mlprof.tasks.parameters import PathParameter, expand_path
from mlprof.util import short_hash, write_json_atomic

law.contrib.load("slack", "telegram")
install_error_handling()
logger = logging.getLogger("mlprof")

#: suffix of the version under which suspicious results are measured again
CONFIRM_SUFFIX = ".confirm"


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
    are expanded and a per-model comparison plot is made).
    """

    experiment_file = PathParameter(description="the experiment YAML file")

    def _content_hash(self) -> str:
        try:
            with open(self.experiment_file, "rb") as f:
                return short_hash(f.read())
        except OSError:
            return "missing"

    def store_parts(self):
        parts = super().store_parts()
        stem = os.path.splitext(os.path.basename(self.experiment_file))[0]
        parts["model"] = f"{path_safe(stem, 48)}__{self._content_hash()}"
        return parts

    @property
    def priority(self) -> int:
        """The experiment's priority (luigi runs higher priorities first)."""
        from mlprof.experiments import load_experiment

        try:
            return load_experiment(self.experiment_file).priority
        except MLProfError:
            return 0

    @property
    def resources(self) -> dict[str, int]:
        # it measures (in its own scheduler): never next to another measurement
        return {"mlprof_measure": 1}

    def output(self):
        return self.local_target("status.json")

    def measurement_tasks(self, exp) -> tuple[list, list[str]]:
        """One PlotMultiRuntimes per model file, and the errors of those that cannot be made."""
        from mlprof.tasks.plotting import PlotMultiRuntimes

        tasks, errors = [], []
        for f in exp.model_files:
            try:
                tasks.append(PlotMultiRuntimes(
                    version=self.version, model_files=(f,), runtimes=exp.runtimes,
                    batch_sizes=exp.batch_sizes, device=exp.device,
                    script_args=exp.script_args, file_types=("png",), **exp.settings))
            except MLProfError as e:
                errors.append(str(e))
        return tasks, errors

    def run(self):
        from mlprof.experiments import load_experiment

        t0 = time.time()
        status: dict = {"file": self.experiment_file, "version": self.version,
                        "name": os.path.splitext(os.path.basename(self.experiment_file))[0],
                        "started": _now()}
        try:
            exp = load_experiment(self.experiment_file)
        except MLProfError as e:
            logger.error("experiment %s: %s", self.experiment_file, e)
            status.update(title=status["name"], status="failed", errors=[str(e)], results="")
        else:
            status.update(title=exp.title, description=exp.description, priority=exp.priority,
                          model_files=list(exp.model_files), runtimes=list(exp.runtimes),
                          batch_sizes=list(exp.batch_sizes), settings=exp.settings,
                          reference_runtime=exp.reference_runtime, notify=list(exp.notify))
            self.publish_message(f"experiment {exp.title!r}: {len(exp.model_files)} model "
                                 f"file(s) x {len(exp.runtimes)} runtime(s)")
            tasks, errors = self.measurement_tasks(exp)
            build_isolated(tasks)
            n_ok = 0
            for t in tasks:
                if t.complete():
                    n_ok += 1
                else:
                    name = os.path.basename(t.model_files[0])
                    errors.append(f"{name}: {failure_reason(t)}")
            n = len(exp.model_files)
            status.update(status="ok" if not errors else "partial" if n_ok else "failed",
                          errors=errors, results=f"{n_ok}/{n} model file(s) complete",
                          plots=[p.path for t in tasks if t.complete()
                                 for p in t.output().values()])
        status.update(finished=_now(), duration_s=round(time.time() - t0, 2))
        write_json_atomic(self.output().path, status)
        self.publish_message(f"{status['title']}: {status['status']}"
                             + (f" ({'; '.join(status['errors'])})" if status["errors"] else ""))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _configured(*options: str) -> bool:
    """Whether law.cfg's ``[notifications]`` section sets all ``options``."""
    return all(law.config.get_expanded("notifications", o, None) for o in options)


class _ExperimentsMixin(BaseTask):
    """``--experiments``: the directory of experiment files, and its store segment."""

    experiments = luigi.Parameter(default="$MLP_BASE/experiments", description="directory of "
                                  "experiment YAML files; default: $MLP_BASE/experiments")

    @property
    def experiments_dir(self) -> str:
        """--experiments as an absolute path."""
        return expand_path(self.experiments)

    def store_parts(self):
        parts = super().store_parts()
        d = self.experiments_dir
        parts["model"] = f"{path_safe(os.path.basename(d), 32)}__{short_hash(d)}"
        return parts

    def experiment_list(self):
        """``(file, experiment or None, error or None)`` in run order."""
        from mlprof.experiments import load_experiments

        return load_experiments(self.experiments_dir)

    def experiment_tasks(self) -> dict[str, RunExperiment]:
        """Active experiments and broken files (their error is worth a line on the dashboard)."""
        return {os.path.basename(path): RunExperiment.req(self, experiment_file=path)
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
        return self.local_target("confirm.json")

    def confirm_version(self) -> str:
        """The version of confirming re-measurements."""
        return f"{self.version}{CONFIRM_SUFFIX}"

    def run(self):
        from mlprof.report import collect, to_frame
        from mlprof.report.history import candidates
        from mlprof.tasks.runtime import MeasureRuntime

        report = to_frame(collect([store_base()]))
        found, tasks = [], []
        for c in candidates(report, self.version):
            try:
                with open(c["path"]) as f:
                    params = dict(json.load(f)["task"]["params"])
            except (OSError, KeyError, ValueError):
                continue  # measured before the parameters were recorded
            params.pop("branch", None)
            params.update(version=self.confirm_version(), batch_sizes=str(c["batch_size"]))
            logger.info("%s on %s at batch size %s: %+.1f%% (z %.1f), measuring again to "
                        "confirm", c["model"], c["runtime"], c["batch_size"],
                        100 * c["change"], c["z"])
            task = MeasureRuntime.from_str_params(params)
            tasks.append(task)
            found.append({k: c[k] for k in ("model", "runtime", "runtime_version",
                                            "batch_size", "kind", "change", "z")})
        build_isolated(tasks)
        for c, t in zip(found, tasks, strict=True):
            c["remeasured"] = t.complete()
            c["error"] = "" if c["remeasured"] else failure_reason(t)
        write_json_atomic(self.output().path, {"version": self.version,
                                               "confirm_version": self.confirm_version(),
                                               "candidates": found})
        self.publish_message(f"{len(found)} result(s) measured again to confirm")


class Nightly(_ExperimentsMixin):
    """All active experiments of ``--experiments``, then the report and the dashboard.

    Output: ``nightly.json`` (experiment statuses, alerts, the dashboard's path). The summary
    line is sent via Slack, Telegram or mail when law.cfg's ``[notifications]`` configures them
    (or with ``--notify-slack`` etc.; ``--notify-slack False`` turns one off).
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

    exclude_params_req = {"notify_slack", "notify_telegram", "notify_mail"}

    def requires(self):
        reqs = {"experiments": self.experiment_tasks()}
        if self.confirm:
            reqs["confirm"] = ConfirmResults.req(self)
        return reqs

    def output(self):
        return self.local_target("nightly.json")

    @law.decorator.notify
    def run(self):
        # a generator (the dashboard is a dynamic dependency): luigi runs it again from the
        # top once the dashboard exists, so everything before the yield only reads files
        import pandas as pd

        from mlprof.tasks.dashboard import Dashboard

        inputs = self.input()
        statuses = [_load(inp.path) for inp in inputs["experiments"].values()]
        for path, exp, _ in self.experiment_list():
            if exp is not None and not exp.active:
                statuses.append({"name": exp.name, "file": path, "title": exp.title,
                                 "description": exp.description, "status": "inactive",
                                 "errors": [], "results": ""})
        confirmed = _load(inputs["confirm"].path)["candidates"] if self.confirm else []
        exp_file = self.local_path("experiments.json")
        write_json_atomic(exp_file, statuses)
        current = (self.version, f"{self.version}{CONFIRM_SUFFIX}")
        dashboard = Dashboard.req(self, current=current, experiments_file=exp_file)
        yield dashboard

        site = dashboard.output().path
        alerts = pd.read_csv(os.path.join(site, "alerts.csv"))
        new = alerts[alerts["version"].isin(current) | alerts["first_version"].isin(current)]
        counts = {s: sum(1 for e in statuses if e["status"] == s)
                  for s in ("ok", "partial", "failed", "inactive")}
        summary = {
            "version": self.version, "experiments": statuses, "counts": counts,
            "confirmations": len(confirmed), "candidates": confirmed,
            "new_regressions": new[new["kind"] == "regression"].to_dict("records"),
            "new_improvements": new[new["kind"] == "improvement"].to_dict("records"),
            "dashboard": os.path.join(site, "index.html"),
        }
        write_json_atomic(self.output().path, summary)
        regs = ", ".join(f"{r['model']} {r['runtime']} bs {r['batch_size']} "
                         f"{100 * r['change']:+.0f}%" for r in summary["new_regressions"])
        self.publish_message(
            f"nightly {self.version}: experiments {counts['ok']} ok, {counts['partial']} "
            f"partial, {counts['failed']} failed; {len(summary['new_regressions'])} new "
            f"regression(s){': ' + regs if regs else ''}; "
            f"{len(summary['new_improvements'])} improvement(s); dashboard: "
            f"file://{summary['dashboard']}")


def _load(path: str) -> dict:
    with open(path) as f:
        return json.load(f)
