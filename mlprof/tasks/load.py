"""MeasureLoad (a workflow over load points: concurrent streams, or a server with random
arrivals) and PlotLoad (latency against throughput, and the answer in one line).

The measurement itself is :mod:`mlprof.measure.loadgen`; these tasks only choose the points,
name their files (:func:`mlprof.results.layout.load_point_tag`) and wire the calls. The
settings segment is the measurement tasks' own (``--threads`` is per stream or worker,
``--min-duration`` how long a streams point or a server rate runs at least, ``--n-calls`` the
fewest calls per stream, ``--warmup`` the untimed calls per session).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import luigi

from mlprof.results import layout
from mlprof.tasks.framework.base import BaseTask, Requirements
from mlprof.tasks.framework.mixins import PlotMixin
from mlprof.tasks.framework.parameters import (
    BatchSizesParameter,
    settings_parameter,
)
from mlprof.tasks.framework.remote import HTCondorWorkflow, SlurmWorkflow, batch_job_info
from mlprof.tasks.framework.workflow import MeasurementWorkflow, refused
from mlprof.tasks.runtime import MeasurementTask, logger
from mlprof.util import write_text_atomic

if TYPE_CHECKING:
    from mlprof.measure.loadgen.settings import LoadSettings


def _load_parameter(name: str) -> luigi.Parameter:
    """The law parameter of load option ``name``, from its one definition in
    :class:`~mlprof.measure.loadgen.settings.LoadSettings` (type, default, help, option)."""
    from mlprof.measure.loadgen.settings import LOAD_FIELDS, LoadSettings

    return settings_parameter(name, LOAD_FIELDS, LoadSettings, "load")


class LoadMixin(BaseTask):
    """The load to put on the model: the scenario and its points (beside a
    :class:`~mlprof.tasks.runtime.MeasurementTask`, whose model and settings it measures).
    The parameters are :class:`~mlprof.measure.loadgen.settings.LoadSettings`' options,
    checked once, as one :class:`LoadSettings`, when the task is made."""

    exclude_index = True

    # LoadSettings' options, in its order (each one's type, default and help are its field's)
    (scenario, streams, sessions, rates, latency_bound_ms, percentile, max_batch,
     max_wait_ms) = map(_load_parameter, ("scenario", "streams", "sessions", "rates",
                                          "latency_bound_ms", "percentile", "max_batch",
                                          "max_wait_ms"))
    batch_sizes = BatchSizesParameter(
        default=(1,),
        description="comma-separated batch sizes: events per call of each stream, or per "
        "request; default: 1")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.loadgen.settings import LoadSettings, load_options

        self.load_settings = LoadSettings(**{f.name: getattr(self, f.name)
                                             for f in load_options()})

    def load_points(self) -> list[tuple[str, int, LoadSettings]]:
        """``(file tag, batch size, the point's load settings)`` of every branch, in order:
        by streams, then batch size, then rate."""
        points = []
        per_point = self.load_settings.points()
        for s in self.load_settings.streams:
            for bs in self.batch_sizes:
                for p in (p for p in per_point if p.workers == s):
                    tag = layout.load_point_tag(
                        p.scenario, s, bs, p.sessions, max_batch=p.max_batch,
                        max_wait_ms=p.max_wait_ms, rate=p.rates[0] if p.rates else None,
                        latency_bound_ms=p.latency_bound_ms, percentile=p.percentile)
                    points.append((tag, bs, p))
        return points


class MeasureLoad(LoadMixin, MeasurementTask, MeasurementWorkflow, SlurmWorkflow,
                  HTCondorWorkflow):
    """Put the model under load, one branch per load point: a number of streams (and batch
    size), or a number of server workers at one rate (or searching for the highest rate that
    meets the latency bound).

    Each branch writes ``load_<point>.csv`` (every timed call or served request) and
    ``load_<point>.json`` (provenance and each point's summary: events/s, events per CPU-second,
    latency percentiles; for the server the verdict against the bound and the generator's
    lateness). Under ``--workflow slurm``/``htcondor`` each branch is a job on a whole node.
    """

    param_reasons = {
        "branch": "one branch: its own load point's files (all of the workflow's where it has "
                  "one point)",
    }

    def measurement_points(self) -> list[tuple[str, int, LoadSettings]]:
        """The load points (:meth:`load_points`), one branch each."""
        return self.load_points()

    def jobs_tag(self) -> str:
        """Remote jobs of other point sets keep apart (see RemoteJobsMixin)."""
        return layout.load_set_tag([t for t, _, _ in self.load_points()])

    def measurement_threads(self) -> int:
        """A job's cores: every stream's or worker's threads."""
        return max(self.load_settings.streams) * int(self.threads or 0)

    def output(self):
        return self.declared_outputs(tag=self.branch_data[0])

    def point_failure_file(self) -> str:
        """One failure record per load point (the branches share a directory; with one
        record for all, a point that succeeded after another failed dropped its record)."""
        return layout.load_failure_file(self.branch_data[0])

    @staticmethod
    def record_damage(json_path: str) -> str | None:
        """What :func:`mlprof.measure.loadgen.read_load` refuses in the record."""
        from mlprof.measure.loadgen import read_load

        return refused(read_load, json_path)

    def run(self):
        from mlprof.measure.loadgen import measure_load_isolated, write_load

        self.replace_damaged()
        tag, bs, point = self.branch_data
        label = f"{self.resolved_model_name} on {self.runtime}, {tag}"
        self.publish_message(f"load: {label}")
        # its progress lines as a sweep's: the model, the runtime, which configuration
        which = point.scenario + (f", configuration {self.branch + 1} of {len(self.branch_map)}"
                                  if len(self.branch_map) > 1 else "")
        progress = self.progress_reporter(f"{self.resolved_model_name} on {self.runtime} under "
                                          f"load ({which})")
        measured = self.measured_model_file()
        result = measure_load_isolated(measured, self.measure_settings(
            bs, self.runtime, self.device, self.precision), point,
            script_args=self.script_argv, progress=progress)
        out = self.output()
        write_load(result, {k: t.path for k, t in out.items()}, task={
            "family": self.task_family, "version": self.version,
            "model_name": self.resolved_model_name, "model_file": self.model_file,
            "measured_file": measured, "params": self.to_str_params(only_significant=True)},
            model_identity=self.model_identity().to_dict(),
            batch_job=batch_job_info())  # the Slurm/HTCondor job, None when local
        if result.provenance.get("compile_s") is not None:  # apart from the timing, as a sweep
            logger.info("%s: compiled in %.1f s (store's compile cache: %s)", label,
                        result.provenance["compile_s"], result.provenance["compile_cache"])


class PlotLoad(LoadMixin, MeasurementTask, PlotMixin):
    """Latency (median and p99) against throughput for each configuration, the chosen point
    circled (server), or throughput and latency against the number of streams (streams); the
    points as CSV and as a text table ending with the answer in one line."""

    reqs = Requirements(MeasureLoad=MeasureLoad)

    def requires(self):
        return self.reqs.MeasureLoad.req(self)

    def set_tag(self) -> str:
        return layout.load_set_tag([t for t, _, _ in self.load_points()])

    def records(self) -> list[dict]:
        """The branches' load records, checked (:func:`mlprof.measure.loadgen.record.read_load`)."""
        from mlprof.measure.loadgen import read_load

        coll = self.input()["collection"]
        return [read_load(coll.targets[b]["json"].path) for b in sorted(coll.targets)]

    def output(self):
        """The plots, the points as CSV and the table with the answer (the family's files)."""
        return self.plot_targets(layout.load_plot_files(self.set_tag())["plot"])

    def run_summary(self) -> str:
        from mlprof.tasks.framework.base import table_summary

        return table_summary(self)

    def run(self):
        from mlprof.plotting import save_figure
        from mlprof.plotting.labels import corner_label, curve_info
        from mlprof.plotting.load import plot_load
        from mlprof.report.load import COLUMNS, answer, format_table, no_rate_lines, points_table

        records = self.records()
        df = points_table(records)
        if not df.empty:
            df = df.sort_values([c for c in ("streams", "threads", "batch_size", "max_batch",
                                              "rate") if df[c].notna().any()], kind="stable")
        line = answer(df, no_rate_lines(records))
        write_text_atomic(self.output()["csv"].path, df[list(COLUMNS)].to_csv(index=False))
        write_text_atomic(self.output()["text"].path, format_table(df) + "\n" + line + "\n")
        options = self.plot_options()
        infos = [curve_info(self.model_spec.label, self.runtime,
                            str(r.get("runtime_version") or self.resolved_runtime_version), r)
                 for r in records]
        corner = options["top_right_label"] or corner_label(infos, self.device, self.threads)
        title = self.model_spec.label + (f", {self.precision}" if self.precision != "fp32"
                                         else "")
        paths = [t.path for k, t in self.output().items() if k in self.file_types]
        if df.empty:  # nothing to draw: the plot says why
            from mlprof.plotting.backend import use_backend

            plt = use_backend()
            fig, ax = plt.subplots(figsize=(7.5, 2.5))
            ax.axis("off")
            ax.text(0.5, 0.5, f"{title}\n{line}", ha="center", va="center", wrap=True)
        else:
            fig = plot_load(df, title=title, top_right_label=corner, caption=line)
        save_figure(fig, paths)
        from mlprof.tasks.framework.summary import listed_at_end

        if not listed_at_end(self):
            for p in paths:
                self.publish_message(f"plot: {p}")
        self.view(paths)
