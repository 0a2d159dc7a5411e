"""MeasureLoad (a workflow over load points: concurrent streams, or a server with random
arrivals) and PlotLoad (latency against throughput, and the answer in one line).

The measurement itself is :mod:`mlprof.measure.loadgen`; these tasks only choose the points,
name their files (:func:`mlprof.results.layout.load_point_tag`) and wire the calls. The
settings segment is the measurement tasks' own (``--threads`` is per stream or worker,
``--min-duration`` how long a streams point or a server rate runs at least, ``--n-calls`` the
fewest calls per stream, ``--warmup`` the untimed calls per session).
"""

from __future__ import annotations

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.tasks.base import BaseTask, Requirements
from mlprof.tasks.parameters import (
    AsciiFloatParameter,
    AsciiIntParameter,
    BatchSizesParameter,
    PlotMixin,
    refuse_given,
)
from mlprof.tasks.remote import HTCondorWorkflow, SlurmWorkflow, batch_job_info
from mlprof.tasks.runtime import MeasurementTask
from mlprof.util import write_text_atomic


def _named(param, name: str):
    """``param`` with the option name its ASCII-digits error names."""
    param._mlprof_name = name
    return param


class OptionalAsciiFloatParameter(luigi.OptionalFloatParameter):
    """A number in ASCII digits (see :class:`~mlprof.tasks.parameters.AsciiFloatParameter`), or
    nothing (None)."""

    def parse(self, x):
        from mlprof.ingest import ascii_float

        value = super().parse(x)
        if value is not None and isinstance(x, str):
            ascii_float(x, "--" + getattr(self, "_mlprof_name", "value"))
        return value


class _StreamsInt(AsciiIntParameter):
    _mlprof_name = "streams"


class _RatesFloat(AsciiFloatParameter):
    _mlprof_name = "rates"


class IntsParameter(law.CSVParameter):
    """Comma-separated whole numbers in ASCII digits (``1,2,4``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("cls", _StreamsInt)
        super().__init__(*args, **kwargs)


class FloatsParameter(law.CSVParameter):
    """Comma-separated numbers in ASCII digits (``1000,2000``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("cls", _RatesFloat)
        super().__init__(*args, **kwargs)


class LoadMixin(BaseTask):
    """The load to put on the model: the scenario and its points (beside a
    :class:`~mlprof.tasks.runtime.MeasurementTask`, whose model and settings it measures)."""

    exclude_index = True

    scenario = luigi.ChoiceParameter(
        default="streams", choices=("streams", "server"),
        description="streams: N callers at once, each calling back to back (MLPerf "
        "MultiStream, a CMSSW job's streams); server: requests at random (Poisson) times, "
        "served by N workers (MLPerf Server); default: streams")
    streams = IntsParameter(
        default=(1,),
        description="comma-separated numbers of concurrent streams (streams) or server "
        "workers (server), each with --threads intra-op threads; 1 to 64; default: 1")
    sessions = luigi.ChoiceParameter(
        default="each", choices=("each", "shared", "process"),
        description="each stream or worker a thread with its own session (each), or all "
        "sharing one (shared, CMSSW's way); streams: each stream a process of its own "
        "(process: no GIL between streams); default: each")
    rates = FloatsParameter(
        default=(),
        description="server: comma-separated request rates per second, each measured (one "
        "branch each)")
    latency_bound_ms = _named(OptionalAsciiFloatParameter(
        default=None,
        description="server: the latency bound (ms) the --percentile must meet; without "
        "--rates: search for the highest rate that meets it"), "latency-bound-ms")
    percentile = _named(AsciiFloatParameter(
        default=99.0,
        description="server: the latency percentile judged against --latency-bound-ms (50 "
        "to 99.99); default: 99"), "percentile")
    max_batch = _named(AsciiIntParameter(
        default=1,
        description="server: dynamic batching, at most this many requests per call (1: "
        "none); default: 1"), "max-batch")
    max_wait_ms = _named(AsciiFloatParameter(
        default=0.0,
        description="server: with --max-batch, how long the oldest request may wait for more "
        "(ms); default: 0 (take what is queued)"), "max-wait-ms")
    batch_sizes = BatchSizesParameter(
        default=(1,),
        description="comma-separated batch sizes: events per call of each stream, or per "
        "request; default: 1")

    SERVER_PARAMS = ("rates", "latency_bound_ms", "percentile", "max_batch", "max_wait_ms")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure import loadgen as load

        self._streams = load.check_streams(tuple(self.streams))
        if self.scenario == "streams":
            refuse_given(self, self.SERVER_PARAMS, "applies to --scenario server only",
                         self.model_spec.spec_file)
            return
        if self.sessions == "process":
            raise MLProfError("process applies to --scenario streams only: the server's "
                              "workers take requests from one queue, in one process",
                              self.model_spec.spec_file, field="--sessions")
        load.check_rates(self.rates)
        load.check_percentile(self.percentile)
        load.check_batching(self.max_batch, self.max_wait_ms)
        if self.latency_bound_ms is not None:
            load.check_bound(self.latency_bound_ms)
        elif not self.rates:
            raise MLProfError("the server scenario needs --rates or --latency-bound-ms (the "
                              "search for the highest rate that meets it)", field="--rates")

    def load_points(self) -> list[tuple[str, dict]]:
        """``(file tag, load arguments)`` of every branch, in order."""
        points = []
        for s in self._streams:
            for bs in self.batch_sizes:
                common = {"sessions": self.sessions}
                if self.scenario == "streams":
                    tag = layout.load_point_tag("streams", s, bs, self.sessions)
                    points.append((tag, {"scenario": "streams", "streams": s,
                                         "batch_size": bs, **common}))
                    continue
                server = {"scenario": "server", "workers": s, "batch_size": bs,
                          "max_batch": self.max_batch, "max_wait_ms": self.max_wait_ms,
                          "bound_ms": self.latency_bound_ms, "percentile": self.percentile,
                          **common}
                for rate in (self.rates or (None,)):
                    tag = layout.load_point_tag(
                        "server", s, bs, self.sessions, max_batch=self.max_batch,
                        max_wait_ms=self.max_wait_ms, rate=rate,
                        bound_ms=self.latency_bound_ms, percentile=self.percentile)
                    points.append((tag, {**server, "rates": (rate,) if rate else ()}))
        return points


class MeasureLoad(LoadMixin, MeasurementTask, law.LocalWorkflow, SlurmWorkflow, HTCondorWorkflow):
    """Put the model under load, one branch per load point: a number of streams (and batch
    size), or a number of server workers at one rate (or searching for the highest rate that
    meets the latency bound).

    Each branch writes ``load_<point>.csv`` (every timed call or served request) and
    ``load_<point>.json`` (provenance and each point's summary: events/s, events per CPU-second,
    latency percentiles; for the server the verdict against the bound and the generator's
    lateness). Under ``--workflow slurm``/``htcondor`` each branch is a job on a whole node.
    """

    local_workflow_require_branches = True

    param_reasons = {
        "workflow": "where the branches run (local, slurm, htcondor): the same measurement "
                    "into the same files",
        "effective_workflow": "law's resolved --workflow (see workflow)",
        "branches": "which branches run; each branch writes its own load point's files",
        "branch": "one branch: its own load point's files (all of the workflow's where it has "
                  "one point)",
        **dict.fromkeys(("acceptance", "tolerance", "pilot"), "law's rules for when the "
                        "workflow counts as complete; each branch writes the same files"),
    }

    def create_branch_map(self) -> dict[int, tuple[str, dict]]:
        return dict(enumerate(self.load_points()))

    def jobs_tag(self) -> str:
        """Remote jobs of other point sets keep apart (see RemoteJobsMixin)."""
        return layout.load_set_tag([t for t, _ in self.load_points()])

    def measurement_threads(self) -> int:
        """A job's cores: every stream's or worker's threads."""
        return max(self._streams) * int(self.threads or 0)

    @property
    def priority(self) -> int:
        return max(1, 10_000 - self.branch) if self.is_branch() else 0

    def workflow_requires(self):
        reqs = super().workflow_requires()
        reqs.update(self.model_requirements())
        return reqs

    def requires(self):
        return self.model_requirements()

    @property
    def resources(self) -> dict[str, int]:
        # never beside a measurement of this run, whatever --workers says
        return {"mlprof_measure": 1} if self.is_branch() else {}

    def output(self):
        return self.declared_outputs(tag=self.branch_data[0])

    def failure_path(self) -> str:
        """One failure record per load point (the branches share a directory; with one
        record for all, a point that succeeded after another failed dropped its record)."""
        if self.is_branch():
            return self.local_path(layout.load_failure_file(self.branch_data[0]))
        return super().failure_path()

    def run(self):
        from mlprof.measure.loadgen import measure_load_isolated, write_load

        tag, point = self.branch_data
        point = dict(point)
        bs = point.pop("batch_size")
        label = f"{self.resolved_model_name} on {self.runtime}, {tag}"
        self.publish_message(f"load: {label}")
        measured = self.measured_model_file()
        result = measure_load_isolated(measured, self.measure_settings(
            bs, self.runtime, self.device, self.precision), point,
            script_args=self.script_argv)
        out = self.output()
        write_load(result, {k: t.path for k, t in out.items()}, task={
            "family": self.task_family, "version": self.version,
            "model_name": self.resolved_model_name, "model_file": self.model_file,
            "measured_file": measured, "params": self.to_str_params(only_significant=True)},
            model_identity=self.model_identity().to_dict(),
            batch_job=batch_job_info())  # the Slurm/HTCondor job, None when local


class PlotLoad(LoadMixin, MeasurementTask, PlotMixin):
    """Latency (median and p99) against throughput for each configuration, the chosen point
    circled (server), or throughput and latency against the number of streams (streams); the
    points as CSV and as a text table ending with the answer in one line."""

    reqs = Requirements(MeasureLoad=MeasureLoad)

    def requires(self):
        return self.reqs.MeasureLoad.req(self)

    def set_tag(self) -> str:
        return layout.load_set_tag([t for t, _ in self.load_points()])

    def records(self) -> list[dict]:
        """The branches' load records, checked (:func:`mlprof.measure.loadgen.record.read_load`)."""
        from mlprof.measure.loadgen import read_load

        coll = self.input()["collection"]
        return [read_load(coll.targets[b]["json"].path) for b in sorted(coll.targets)]

    def output(self):
        """The plots, the points as CSV and the table with the answer (the family's files)."""
        return self.plot_targets(layout.load_plot_files(self.set_tag())["plot"])

    def run_summary(self) -> str:
        if not self.complete():
            from mlprof.tasks.base import failure_reason

            return f"{self.task_family}: not complete: {failure_reason(self)}"
        from mlprof import ingest

        table = ingest.read_text(self.output()["text"].path, ingest.MAX_RECORD_BYTES,
                                 what="a table")
        return table + "outputs:\n" + "\n".join(f"  {t.path}" for t in self.output().values())

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
        from mlprof.tasks.summary import listed_at_end

        if not listed_at_end(self):
            for p in paths:
                self.publish_message(f"plot: {p}")
        self.view(paths)
