"""ProfileRuntime (a workflow over batch sizes: time per operator type, with the runtime's own
profiler) and PlotProfile (the share of each operator type against the batch size, and the top
operators as a table).

Separate from MeasureRuntime on purpose: a profiler slows every call down (ONNX Runtime's by
~4 µs per node, 15 -> 65 µs per call for ``examples/cnn`` at batch size 1), so profiled calls
are never timing samples. The settings segment is the measurement tasks' own.
"""

from __future__ import annotations

import logging

import luigi

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.runtimes import runtime_version
from mlprof.tasks.export import ExportOnnx
from mlprof.tasks.framework.base import BaseTask, Requirements
from mlprof.tasks.framework.mixins import PlotMixin
from mlprof.tasks.framework.workflow import MeasurementWorkflow, refused
from mlprof.tasks.runtime import MeasurementTask
from mlprof.util import write_text_atomic

logger = logging.getLogger("mlprof")


class ProfileMixin(BaseTask):
    """What profiling cannot vary: the runtime must have a per-operator profiler
    (:func:`mlprof.measure.profile.check_profilable`), and it is the installed version. And
    ``--time-budget``: how long one batch size's profile may take."""

    exclude_index = True

    time_budget = luigi.IntParameter(
        default=60, description="seconds one batch size's profile may take: the warm-up stops "
        "after a quarter of it, the profiled calls once it is spent (at least 3, and one per "
        "event), even short of --warmup and --n-calls; what was cut is recorded and shown; "
        "0: no budget; in the file names (budget60s, nobudget); default: 60")

    runtime_version = luigi.Parameter(default="", significant=False, description="profiles "
                                      "the installed version of the runtime only (refused "
                                      "otherwise)")
    tfaot_batch_rules = luigi.Parameter(default="", significant=False, description="AOT "
                                        "(tfaot) models only, which cannot be profiled "
                                        "(refused)")

    param_reasons = {
        "runtime_version": "only the installed version is profiled (its version is in the "
                           "path); another one is refused",
        "tfaot_batch_rules": "applies to AOT TensorFlow models, which have no per-operator "
                             "profiler: refused with every model that can be profiled",
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.profile import check_profilable

        check_profilable(self.runtime)
        if self.time_budget < 0:
            raise MLProfError(f"must be >= 0 seconds, got {self.time_budget}",
                              field="--time-budget")
        installed = runtime_version(self.runtime)
        if self.runtime_version and self.runtime_version != installed:
            raise MLProfError(f"profiles the installed {self.runtime} {installed} only",
                              field="--runtime-version")


class ProfileRuntime(ProfileMixin, MeasurementTask, MeasurementWorkflow):
    """Profile one model per operator, one branch per batch size, with the runtime's own
    profiler (ONNX Runtime's session profiling, ``torch.profiler``).

    Each branch writes ``profile_bs_<N>.csv`` (op_type, calls, ms_per_call, share) and
    ``profile_bs_<N>.json`` (provenance: runtime version, profiler, wall time per call, the
    operators' sum and their ``coverage`` of the wall time). A model script is profiled on its
    ONNX export (onnxruntime) or as the script's PyTorch model (torch), as MeasureRuntime
    measures it; a static export per batch size where the export says so.
    """

    def measurement_points(self) -> tuple[int, ...]:
        """The batch sizes, one branch each."""
        return self.batch_sizes

    def output(self):
        return self.declared_outputs(batch_size=self.branch_data, budget=self.time_budget)

    def profiled_export(self) -> ExportOnnx:
        """The export this branch profiles: the static graph of its batch size when the
        export is static (as MeasureRuntime does), else the export itself."""
        export = self.export_req()
        record = export.record()
        if record and record.get("batch") == "static" and \
                record.get("batch_size") != self.branch_data:
            return self.export_req(export_batch_size=self.branch_data)
        return export

    def profiled_file(self) -> str:
        """The YAML/ONNX file, the export (its static graph of this batch size where it has
        them), the converted model of a lower precision, or ``script::HASH`` for the torch
        runtime."""
        return self.measured_model_file(self.profiled_export() if self.measures_export
                                        else None)

    @staticmethod
    def record_damage(json_path: str) -> str | None:
        """What :func:`mlprof.measure.profile.read_profile` refuses in the profile."""
        from mlprof.measure.profile import read_profile

        return refused(read_profile, json_path[:-5] + ".csv", json_path)

    def run(self):
        from mlprof.measure.profile import profile_isolated, write_profile

        if self.measures_export and not self.profiled_export().complete():
            yield self.profiled_export()  # a static graph: known once the export has run
        self.replace_damaged()
        bs = self.branch_data
        label = f"{self.resolved_model_name} on {self.runtime} at batch size {bs}"
        self.publish_message(f"profiling {label}")
        profiled = self.profiled_file()
        result = profile_isolated(profiled, self.measure_settings(bs, self.runtime, self.device,
                                                                  self.precision),
                                  script_args=self.script_argv, budget_s=self.time_budget)
        outputs = self.output()
        write_profile(result, {k: t.path for k, t in outputs.items()}, task={
            "family": self.task_family, "version": self.version,
            "model_name": self.resolved_model_name, "model_file": self.model_file,
            "profiled_file": profiled, "params": self.to_str_params(only_significant=True)})
        p = result.provenance
        if p.get("cut_by_budget"):
            self.publish_message(
                f"{label}: --time-budget {self.time_budget} s: {p['warmup_calls']} of "
                f"{self.warmup} warm-up calls, {p['n_profiled_calls']} profiled calls (asked: "
                f"{self.n_calls} per event); --time-budget 0 for all")
        logger.info("%s: operators %.4f + runtime overhead %.4f of %.4f ms per call "
                    "(coverage %.2f), top: %s", label, p["op_ms_per_call"],
                    p.get("overhead_ms_per_call", 0.0), p["wall_ms_per_call"], p["coverage"],
                    ", ".join(r.op_type for r in result.ops[:3]))


class PlotProfile(ProfileMixin, MeasurementTask, PlotMixin):
    """The share of time per operator type against the batch size (stacked; the ``--top-ops``
    types and "other"), their time per event under the profiled calls' wall time, and the top
    operators per batch size as CSV and text."""

    top_ops = luigi.IntParameter(default=8, description="operator types shown one by one (the "
                                 "rest is 'other') and listed per batch size; default: 8")

    reqs = Requirements(ProfileRuntime=ProfileRuntime)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not 1 <= self.top_ops <= 20:
            raise MLProfError(f"must be 1 to 20, got {self.top_ops}", field="--top-ops")

    def requires(self):
        return self.reqs.ProfileRuntime.req(self)

    def output(self):
        return self.plot_targets(layout.profile_plot_files(self.bs_tag, self.top_ops,
                                                           self.time_budget)["plot"])

    def profiles(self) -> list:
        """The branches' profiles (:class:`mlprof.plotting.profile.Profile`)."""
        from mlprof.measure.profile import read_profile
        from mlprof.plotting.profile import Profile
        from mlprof.results.records import ProfileRecord

        coll = self.input()["collection"]
        out = []
        for b in sorted(coll.targets):
            path = coll.targets[b]["json"].path
            rows, prov = read_profile(coll.targets[b]["csv"].path, path)
            rec = ProfileRecord.from_json(prov, path)  # checked by read_profile
            out.append(Profile(rec.batch_size, rows, list(rec.wall_ms),
                               rec.header.events_per_call))
        return out

    def contended_batch_sizes(self) -> list[dict]:
        """``{"batch_size", "contended"}`` per branch: whether other processes used the CPUs
        during its profiled calls (``environment``; False for a profile written before)."""
        from mlprof.results.records import ProfileRecord

        coll = self.input()["collection"]
        out = []
        for b in sorted(coll.targets):
            path = coll.targets[b]["json"].path
            rec = ProfileRecord.from_json(ingest.load_json(path), path)
            out.append({"batch_size": rec.batch_size, "contended": rec.contended})
        return out

    def provenances(self) -> list[dict]:
        """The branches' provenance records, in batch-size order."""
        coll = self.input()["collection"]
        out = []
        for b in sorted(coll.targets):
            out.append(ingest.load_json(coll.targets[b]["json"].path))
        return out

    def run_summary(self) -> str:
        if not self.complete():
            from mlprof.tasks.framework.base import failure_reason

            return f"{self.task_family}: not complete: {failure_reason(self)}"
        table = ingest.read_text(self.output()["text"].path, ingest.MAX_RECORD_BYTES,
                                 what="a table")
        return (table + "outputs:\n"
                + "\n".join(f"  {t.path}" for t in self.output().values()))

    def run(self):
        import csv
        import io

        from mlprof.measure.contention import contended_warning
        from mlprof.plotting import save_figure
        from mlprof.plotting.labels import corner_label, curve_info
        from mlprof.plotting.profile import (
            calls_caption,
            format_top_table,
            plot_profile,
            top_table,
        )

        profiles = self.profiles()
        records = self.provenances()
        warning = contended_warning(self.resolved_model_name, self.contended_batch_sizes(),
                                    self.runtime)
        if warning:  # a disturbed profile: its operators' times may be too high
            logger.warning(warning)
        rows = top_table(profiles, self.top_ops)
        text = io.StringIO()
        w = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        write_text_atomic(self.output()["csv"].path, text.getvalue())
        write_text_atomic(self.output()["text"].path, format_top_table(rows))
        options = self.plot_options()
        # the corner as every plot's: runtime and measured version, CPU, threads and host, as
        # the profiles' provenance records them
        infos = [curve_info(self.model_spec.label, self.runtime,
                            str(r.get("runtime_version") or self.resolved_runtime_version), r)
                 for r in records]
        options["top_right_label"] = options["top_right_label"] or corner_label(
            infos, self.device, self.threads)
        title = self.model_spec.label + (f", {self.precision}" if self.precision != "fp32"
                                         else "")
        fig = plot_profile(profiles, top=self.top_ops, title=title,
                           caption=calls_caption(records), **options)
        paths = [t.path for k, t in self.output().items() if k in self.file_types]
        save_figure(fig, paths)
        from mlprof.tasks.framework.summary import listed_at_end

        if not listed_at_end(self):  # else law run lists them at its end
            for p in paths:
                self.publish_message(f"plot: {p}")
        self.view(paths)
