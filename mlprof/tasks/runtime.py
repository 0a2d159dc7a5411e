"""MeasureRuntime (a workflow over batch sizes) and MergeRuntimes, on one base that composes
their settings into the output path."""

from __future__ import annotations

import functools
import logging
import os

from mlprof.errors import MLProfError
from mlprof.measure.quiet import verbose
from mlprof.model.plan import (
    CONVERTED,
    EXPORT,
    MODEL_FILE,
    REFERENCE_EXPORT,
    SCRIPT,
    FileOf,
    MeasurementPlan,
    chosen_file,
    measurement_plan,
)
from mlprof.results import layout, records
from mlprof.runtimes import TFAOT_MODEL
from mlprof.runtimes.precisions import DEFAULT_PRECISION
from mlprof.tasks.discover import DiscoverModels
from mlprof.tasks.export import ExportOnnx
from mlprof.tasks.framework.base import Requirements
from mlprof.tasks.framework.mixins import (
    BatchSizesMixin,
    ExportMixin,
    MeasurementMixin,
    ModelMixin,
    PrecisionMixin,
    RuntimeMixin,
    ScriptMixin,
    param_defaults,
    refuse_given,
)
from mlprof.tasks.framework.remote import HTCondorWorkflow, SlurmWorkflow, batch_job_info
from mlprof.tasks.framework.workflow import MeasurementWorkflow
from mlprof.tasks.quantize import QuantizeModel

logger = logging.getLogger("mlprof")


class MeasurementTask(ModelMixin, ScriptMixin, ExportMixin, RuntimeMixin, PrecisionMixin,
                      MeasurementMixin, BatchSizesMixin):
    """One model on one runtime with one set of measurement settings: the parameters and the
    output directory shared by MeasureRuntime, MergeRuntimes and PlotRuntimes.

    Script and export parameters apply only where they change what is measured (a model script;
    an export only for runtimes that measure one): given anywhere else they are refused, never
    ignored. :meth:`applicable` tells a caller which values to pass for a model and runtime.
    """

    exclude_index = True
    reqs = Requirements(DiscoverModels=DiscoverModels, ExportOnnx=ExportOnnx,
                        QuantizeModel=QuantizeModel)

    def __init__(self, *args, **kwargs):
        self._model_segment: str | None = None
        super().__init__(*args, **kwargs)
        from mlprof.model.precision import check_runtime_precision
        from mlprof.runtimes import check_model_kind

        check_model_kind(self.runtime, self.model_spec.model_kind, self.model_spec.spec_file)
        check_runtime_precision(self.runtime, self.precision)
        if self.model_spec.model_kind != TFAOT_MODEL:
            refuse_given(self, ("tfaot_batch_rules",), "applies to AOT TensorFlow models "
                         "(inference_engine: tfaot) only", self.model_spec.spec_file)
        elif self.tfaot_batch_rules:
            from mlprof.runtimes.batching import check_rules

            check_rules(self.tfaot_batch_rules, self.model_spec.compilation["batch_sizes"],
                        self.model_spec.spec_file)
        if not self.is_script:
            refuse_given(self, self.SCRIPT_PARAMS + self.EXPORT_PARAMS,
                         "applies to model scripts (.py) only", self.model_spec.spec_file)
        elif not self.runtime_info.needs_export:
            refuse_given(self, self.EXPORT_PARAMS, f"applies to ONNX exports only; "
                         f"{self.runtime} measures the script's model itself",
                         self.model_spec.spec_file)

    @classmethod
    def applicable(cls, is_script: bool, runtime: str, params: dict) -> dict:
        """``params`` with the script and export parameters that do not apply to this kind of
        model and runtime reset to their defaults (for tasks that fan out over both)."""
        from mlprof.runtimes import runtime_info

        drop = set()
        if not is_script:
            drop = set(cls.SCRIPT_PARAMS + cls.EXPORT_PARAMS)
        elif not runtime_info(runtime).needs_export:
            drop = set(cls.EXPORT_PARAMS)
        defaults = param_defaults(cls)
        return {k: (defaults[k] if k in drop else v) for k, v in params.items()}

    @functools.cached_property
    def plan(self) -> MeasurementPlan:
        """What is measured and made first (:func:`mlprof.model.plan.measurement_plan`); once
        per task: a branch asks it about five times while it is scheduled."""
        return measurement_plan(self.is_script, self.runtime, self.precision)

    @property
    def measures_export(self) -> bool:
        """Whether the measured file is this script model's ONNX export."""
        return self.plan.measures_export

    def model_identity(self) -> records.ModelIdentity:
        """The model as the user named it (never an export's spec): recorded with each result,
        so that every table, page and plot shows one name and label for it."""
        spec = self.model_spec
        name = self.resolved_model_name
        label = spec.label if spec.label and spec.label != spec.name else name
        seg = layout.parse_model_segment(self.model_segment())
        return records.ModelIdentity(name, label, str(self.model_file), seg.get("model_hash"))

    def model_segment(self) -> str:
        """``<name>__<hash>``: the model's content (and a script's arguments and depth); once
        per task (each output path asks it)."""
        if self._model_segment is None:
            self._model_segment = self.model_segment_of(self.resolved_model_name,
                                                        self.model_spec)
        return self._model_segment

    def store_parts(self) -> dict[str, str]:
        export = self.export_key(self.precision) if self.measures_export else None
        return {"model": self.model_segment(), "runtime": self.runtime_segment(),
                "settings": layout.measure_settings_segment(self.measure_key(), export,
                                                            self.precision_key())}

    def export_req(self, **params) -> ExportOnnx:
        """The ExportOnnx of this model: at fp16 when fp16 is measured (the export converts
        it), else at fp32 (the lower precisions are converted from it by QuantizeModel)."""
        params.setdefault("precision", self.plan.export_precision or DEFAULT_PRECISION)
        return self.reqs.ExportOnnx.req(self, **params)

    @property
    def measures_converted(self) -> bool:
        """Whether the measured file is a converted model (QuantizeModel): a precision the
        runtime measures on a converted graph, except a script's fp16, which its export
        converts itself."""
        return self.plan.converted

    def plan_files(self, export: ExportOnnx | None = None) -> dict[str, FileOf]:
        """The files of the plan (:data:`mlprof.model.plan.SOURCES`), each made when asked:
        the YAML/ONNX file, the script's ONNX export (``export``, default this task's), the
        converted model, ``script::HASH`` for the runtimes that run the script's model, and
        the fp32 export a script's lower precision is compared with."""
        reqs = self.requires()

        def script() -> str:
            model = self.the_model(reqs["discover"])
            return f"{self.model_spec.file}::{model['hash']}"

        return {MODEL_FILE: self.model_spec.spec_file,
                EXPORT: lambda: (export or reqs["export"]).output()["onnx"].path,
                CONVERTED: lambda: reqs["quantize"].measured(),
                SCRIPT: script,
                REFERENCE_EXPORT: lambda: reqs["reference"].output()["onnx"].path}

    def measured_model_file(self, export: ExportOnnx | None = None) -> str:
        """The file a measurement child loads (:func:`mlprof.model.plan.measurement_plan`):
        the converted model of a lower precision, the YAML/ONNX file, the script's ONNX export
        (``export``, default this task's), or ``script::HASH`` for the runtimes that run the
        script's model."""
        return chosen_file(self.plan.source, self.plan_files(export))

    def model_requirements(self) -> dict:
        """Script models: the ONNX export, or the discovery for runtimes that run the script;
        a converted model for a lower precision, and then the fp32 export its error is
        measured against."""
        plan = self.plan
        reqs: dict = {}
        if plan.measures_export:
            reqs["export"] = self.export_req()
            if plan.reference == REFERENCE_EXPORT:
                reqs["reference"] = self.export_req(precision=DEFAULT_PRECISION)
        if plan.discover:
            reqs["discover"] = self.reqs.DiscoverModels.req(self)
        if plan.converted:
            reqs["quantize"] = self.reqs.QuantizeModel.req(self)
        return reqs

    def prestart_torch(self) -> bool:
        """The measurement server imports torch for a model script (its discovery runs the
        script there) and for the runtimes that need it (MeasureRuntime, ProfileRuntime,
        MeasureLoad: :meth:`MeasurementWorkflow.prestart_torch`)."""
        return self.is_script or self.runtime_info.needs_torch


class MeasureRuntime(MeasurementTask, MeasurementWorkflow, SlurmWorkflow, HTCondorWorkflow):
    """Measure the inference latency of one model, one branch per batch size.

    Each branch writes ``runtime_bs_<N>.csv`` (raw samples: batch_size, event, call,
    runtime_ms) and ``runtime_bs_<N>.json`` (provenance). ``--branch K`` runs one batch size.

    A model script is measured on its ONNX export; a model whose export is static (its graph
    with a symbolic batch dimension is wrong at other batch sizes) on the static graph of
    each branch's batch size (``ExportOnnx --export-batch-size N``, see
    :meth:`static_export`). The provenance holds the record of the graph measured (``export``:
    exporter, ``batch`` and ``batch_size``, verdict), so no result hides which graph it is of.
    """

    fixed_result_dir = True  # store_parts: parameters, the model's content, the runtime version

    def jobs_tag(self) -> str:
        """Remote jobs of other batch-size lists keep apart (see RemoteJobsMixin)."""
        return self.bs_tag

    def measurement_points(self) -> tuple[int, ...]:
        """The batch sizes, one branch each."""
        return self.batch_sizes

    def static_export(self) -> ExportOnnx | None:
        """The static graph this branch measures, when the model has them: its export says
        ``"batch": "static"`` (its graph with a symbolic batch dimension is wrong at other
        batch sizes) and its static graph is for another batch size. None otherwise, and as
        long as the export has not run.

        A dynamic dependency (:meth:`run` yields it), not a requirement: which graph a branch
        needs shows only once the export has run, and luigi checks at run time that the
        requirements are the ones scheduled."""
        if not (self.is_branch() and self.measures_export):
            return None
        record = self.export_req().record()
        if not record or record.get("batch") != "static" or \
                record.get("batch_size") == self.branch_data:
            return None
        return self.export_req(export_batch_size=self.branch_data)

    def measured_export(self) -> ExportOnnx:
        """The export whose graph this branch measures (see :meth:`static_export`)."""
        return self.static_export() or self.requires()["export"]

    def measured_file(self) -> str:
        """What the harness measures: the YAML/ONNX file, the export (its static graph of this
        branch's batch size where it has them), the converted model of a lower precision, or
        script::HASH."""
        plan = self.plan
        export = self.measured_export() if plan.source == EXPORT else None
        return chosen_file(plan.source, self.plan_files(export))

    def reference_file(self) -> str | None:
        """The fp32 model a lower precision's outputs are compared with (None at fp32): a
        script's fp32 export, the model file, or the script run by torch, in fp32."""
        reference = self.plan.reference
        return None if reference is None else chosen_file(reference, self.plan_files())

    def point_failure_file(self) -> str:
        """One failure record per batch size (the branches share a directory)."""
        return layout.branch_failure_file(self.branch_data)

    def output(self):
        return self.declared_outputs(batch_size=self.branch_data)

    @staticmethod
    def record_damage(json_path: str) -> str | None:
        """What :func:`mlprof.measure.results.branch_problem` finds wrong with the branch (its
        samples too), read once per process and file state (about 0.15 ms for 1000
        samples)."""
        from mlprof.measure.results import branch_problem

        csv_path = json_path[:-5] + ".csv"
        if not (os.path.exists(csv_path) and os.path.exists(json_path)):
            return None  # a file missing: not there, not damaged
        problem = branch_problem(csv_path, json_path)
        return None if problem is None else str(problem)

    def run(self):
        import numpy as np

        from mlprof.measure import measure_isolated
        from mlprof.measure.results import write_branch

        if self.measures_export:
            # a model measured on static graphs: this batch size's graph is exported first (a
            # dynamic dependency: which graph is needed shows only once the export has run)
            export = self.measured_export()
            if not export.complete():
                yield export
        self.replace_damaged()
        bs = self.branch_data
        label = f"{self.resolved_model_name} on {self.runtime} at batch size {bs}"
        point = f"{label} (point {self.branch + 1} of {len(self.branch_map)})"
        self.publish_message(f"measuring {point}")
        progress = self.progress_reporter(point)  # luigi's percentage and a line per LOG_EVERY s

        measured = self.measured_file()
        settings = self.measure_settings(bs, self.runtime, self.device, self.precision)
        reference = self.reference_file()
        if self.uses_venv:  # another version of the runtime, in its own environment
            from mlprof.measure.venvs import ensure_venv, measure_in_venv

            python = ensure_venv(self.runtime, self.runtime_version,
                                 log=lambda m: logger.info("%s: %s", label, m))
            result = measure_in_venv(python, measured, settings, script_args=self.script_argv,
                                     reference_file=reference)
            if result.provenance.get("runtime_version") != self.runtime_version:
                raise MLProfError(f"measured with {self.runtime} "
                                  f"{result.provenance.get('runtime_version')}, not "
                                  f"{self.runtime_version}", python, "--runtime-version")
            result.provenance["venv"] = python
        else:
            result = measure_isolated(measured, settings, script_args=self.script_argv,
                                      progress=progress, reference_file=reference, reuse=True)
        for note in result.provenance["model"].get("notes", []):
            logger.warning("%s: %s", label, note)
        outputs = self.output()
        write_branch(
            result, {k: t.path for k, t in outputs.items()},
            task={"family": self.task_family, "version": self.version,
                  "model_name": self.resolved_model_name, "model_file": self.model_file,
                  "measured_file": measured, "output": outputs["csv"].path,
                  # enough to measure this again (a confirming re-measurement)
                  "params": self.to_str_params(only_significant=True)},
            batch_job=batch_job_info(),  # the Slurm/HTCondor job, None when local
            script={"file": self.model_spec.file, "script_args": self.script_argv,
                    "max_depth": self.max_depth} if self.is_script else None,
            export_record_file=self.measured_export().output()["json"].path
            if self.measures_export else None,
            quantize_record_file=self.requires()["quantize"].output()["json"].path
            if self.measures_converted else None,
            model_identity=self.model_identity())
        if result.provenance.get("compile_s") is not None:  # apart from the measurement
            logger.info("%s: compiled in %.1f s (store's compile cache: %s), first call "
                        "%.3f ms", label, result.provenance["compile_s"],
                        result.provenance.get("compile_cache"),
                        result.provenance["first_call_ms"])
        if verbose():  # else the table at the end has the medians (a line per point said
            # "measuring ..." already: 11 more lines in the quick start)
            logger.info("%s: median %.4f ms over %d calls", label,
                        float(np.median(result.samples_ms)), result.samples_ns.size)


class MergeRuntimes(MeasurementTask):
    """Merge the branches of :class:`MeasureRuntime` and compute statistics per batch size.

    Outputs: ``runtimes_<bs>.csv`` (all raw samples), ``stats_<bs>.csv`` (count, mean, std, CV,
    min, p16, median, p84, p90, p95, p99, max, throughput, unstable, contended, FLOPs and, below
    fp32, the error against fp32) and
    ``provenance_<bs>.json``.
    """

    reqs = Requirements(MeasureRuntime=MeasureRuntime)

    def requires(self):
        return self.reqs.MeasureRuntime.req(self)

    def output(self):
        return self.declared_outputs(bs_tag=self.bs_tag)

    def run_summary(self) -> str:
        precision = f" {self.precision}" if self.precision != "fp32" else ""
        return self.summary_of([(f"{self.resolved_model_name} {self.runtime}{precision}", self)],
                               [t.path for t in self.output().values()])

    def run(self):
        from mlprof.measure.contention import contended_warning
        from mlprof.measure.results import merge_branches, unstable_warning
        from mlprof.model.flops import measured_cost
        from mlprof.tasks.peak import recorded_peak

        coll = self.input()["collection"]
        branches = [{k: t.path for k, t in coll.targets[b].items()} for b in sorted(coll.targets)]
        rows = merge_branches(branches, {k: t.path for k, t in self.output().items()}, {
            "model_name": self.resolved_model_name, "model_label": self.model_spec.label,
            "runtime": self.runtime, "device": self.device,
            "batch_sizes": list(self.batch_sizes), "peak": recorded_peak(self)},
            cost=measured_cost)
        warning = unstable_warning(self.resolved_model_name, rows, self.runtime)
        if warning:
            logger.warning(warning)
        warning = contended_warning(self.resolved_model_name, rows, self.runtime)
        if warning:
            logger.warning(warning)
