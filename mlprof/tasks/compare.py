"""CompareInterleaved: several configurations (model x runtime) measured in alternating rounds
in one process per batch size, and the speed-up table with 95 % confidence intervals
(:mod:`mlprof.measure.interleave`). ``PlotMultiRuntimes --interleave`` requires it instead of
independent MergeRuntimes and draws the speed-up plot."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import luigi

from mlprof.errors import MLProfError
from mlprof.measure.quiet import verbose
from mlprof.model import read_model_file
from mlprof.model.precision import check_runtime_precision
from mlprof.results import layout, records
from mlprof.runtimes import (
    DEFAULT_RUNTIME,
    check_device,
    check_installed,
    check_model_kind,
    runtime_info,
    runtime_version,
)
from mlprof.tasks.framework.base import Requirements, failure_reason
from mlprof.tasks.framework.comparing import (
    CompareMixin,
    InterleaveMixin,
    RoundsParameter,
    setting_label,
)
from mlprof.tasks.framework.mixins import (
    BatchSizesMixin,
    ExportMixin,
    MeasurementMixin,
    PrecisionsMixin,
    ScriptMixin,
    refuse_given,
)
from mlprof.tasks.framework.parameters import (
    NamesParameter,
    PathsParameter,
    RuntimesParameter,
)
from mlprof.tasks.runtime import MeasurementTask, MeasureRuntime
from mlprof.util import write_json_atomic, write_text_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

logger = logging.getLogger("mlprof")


class CompareInterleaved(ScriptMixin, ExportMixin, PrecisionsMixin, MeasurementMixin,
                         BatchSizesMixin, InterleaveMixin, CompareMixin):
    """Every model file on every runtime at every precision (and every value of
    ``--compare``), interleaved: per
    batch size one isolated child loads all configurations and runs ``--interleave`` rounds of
    ``--n-calls`` calls per event each.

    A model script is measured on each runtime's own artifact, as MeasureRuntime measures it
    (its :meth:`~mlprof.tasks.runtime.MeasureRuntime.measured_file`): ONNX Runtime and OpenVINO
    its ONNX export (ExportOnnx runs first; a static export per batch size where the model
    needs one), the PyTorch runtimes the script itself; a lower precision on its converted
    model (QuantizeModel) or with the runtime's own setting, as MeasureRuntime measures it.

    Outputs: ``speedup_<bs>_il<R>.csv`` (per batch size and configuration: speed-up over the
    first configuration, 95 % CI, significant, verdict, and the host's noise ``floor`` the
    verdict was judged by: a significant speed-up within it is ``within this host's noise
    (floor X %)``), ``rounds_<bs>_il<R>.csv`` (every round's medians) and
    ``provenance_<bs>_il<R>.json`` (``"interleaved": true``; ``noise_floor``: the fingerprint
    and calibration date of the floor used, or that the host is not calibrated).
    """

    model_files = PathsParameter(description="comma-separated model files (YAML, ONNX or "
                                 "script.py[::HASH]); the first on the first runtime is the "
                                 "reference")
    model_names = NamesParameter(default=(), flag="--model-names", description="names in "
                                 "output paths, one per model file")
    runtimes = RuntimesParameter(default=(DEFAULT_RUNTIME,), description="comma-separated "
                                 "runtimes; default: onnxruntime")
    device = luigi.Parameter(default="cpu", description="device to run on: cpu")
    interleave = RoundsParameter(default=20, description="rounds per batch size; default: 20")

    reqs = Requirements(MeasureRuntime=MeasureRuntime)

    # not parameters here: a round makes exactly --n-calls calls per event of each
    # configuration (no --min-duration), and AOT TensorFlow models cannot be interleaved
    min_duration = 0.0
    tfaot_batch_rules = ""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.interleave import check_interleavable, check_rounds

        check_rounds(self.interleave)
        if not self.model_files:
            raise MLProfError("give at least one model file", field="--model-files")
        if not self.runtimes:
            raise MLProfError("give at least one runtime", field="--runtimes")
        if self.model_names and len(self.model_names) != len(self.model_files):
            raise MLProfError(f"{len(self.model_names)} value(s) for {len(self.model_files)} "
                              "model file(s)", field="--model-names")
        if self.compared and self.compared[0] == "min_duration":
            raise MLProfError("min_duration does not apply with --interleave (a round is "
                              "exactly --n-calls calls per event)", field="--compare")
        # a script without ::HASH that calls one model is that model (as in MeasureRuntime)
        self._specs = [self.single_model(read_model_file(f), self.model_names[i]
                                         if self.model_names else None)
                       for i, f in enumerate(self.model_files)]
        for s in self._specs:
            check_interleavable(s.model_kind, "", file=s.spec_file)
            for rt in self.runtimes:
                check_model_kind(rt, s.model_kind, s.spec_file)
        for rt in self.runtimes:
            check_device(rt, self.device)
            check_installed(rt)
            for precision in self.precisions:
                check_runtime_precision(rt, precision)
        # script and export parameters must change some configuration, or they are refused
        if not any(s.is_script for s in self._specs):
            refuse_given(self, self.SCRIPT_PARAMS + self.EXPORT_PARAMS,
                         "applies to model scripts (.py) only")
        elif not self._exports():
            refuse_given(self, self.EXPORT_PARAMS, "applies to ONNX exports only; none of "
                         f"{', '.join(self.runtimes)} measures one")

    @property
    def resources(self) -> dict[str, int]:
        return {"mlprof_measure": 1}

    def _name(self, i: int) -> str:
        return self.model_names[i] if self.model_names else self._specs[i].name

    def _exports(self) -> bool:
        """Whether some configuration measures a script model's ONNX export."""
        return any(s.is_script for s in self._specs) and any(
            runtime_info(rt).needs_export for rt in self.runtimes)

    def _measurement(self, i: int, runtime: str, branch: int | None = None,
                     precision: dict | None = None):
        """The MeasureRuntime of model file ``i`` on ``runtime`` (the branch of batch size
        number ``branch``) at ``precision`` (:meth:`precision_overrides`; default: the first):
        not run, only asked what it measures, so that a model's artifact per runtime and
        precision (export, static export, converted model, script::HASH) is decided in one
        place."""
        params = MeasurementTask.applicable(self._specs[i].is_script, runtime, {
            p: getattr(self, p) for p in self.SCRIPT_PARAMS + self.EXPORT_PARAMS})
        kw = dict(model_file=self.model_files[i], runtime=runtime, device=self.device,
                  **params, **(precision or self.precision_overrides()[0]))
        if self.model_names:
            kw["model_name"] = self.model_names[i]
        if branch is not None:
            kw["branch"] = branch
        return self.reqs.MeasureRuntime.req(self, **kw)

    def requires(self):
        """A script's export (runtimes that measure one) or discovery (those that run it), and
        the converted models of lower precisions."""
        reqs = {f"{i}-{rt}-{p['precision']}": self._measurement(i, rt, None, p)
                .model_requirements() for i in range(len(self._specs))
                for rt in self.runtimes for p in self.precision_overrides()}
        return {k: v for k, v in reqs.items() if v}

    def configs(self, batch_size: int | None = None) -> list:
        """The configurations in order: model files outer, runtimes, then the values of
        --compare; the first is the reference. Labels name what varies. With ``batch_size``
        (the requirements complete) a script's configuration holds the file its runtime
        measures at that batch size; without, the script (enough for labels)."""
        from mlprof.measure.interleave import Config

        overrides = self.compared_settings()
        many_models, many_rts = len(self._specs) > 1, len(self.runtimes) > 1
        many_values, many_precisions = len(overrides) > 1, len(self.precisions) > 1
        out = []
        for i, s in enumerate(self._specs):
            for rt in self.runtimes:
                for p in self.precision_overrides():
                    measured, argv = s.spec_file, ()
                    if batch_size is not None and (s.is_script or p["precision"] != "fp32"):
                        m = self._measurement(i, rt, self.batch_sizes.index(batch_size), p)
                        measured, argv = m.measured_file(), m.script_argv
                    for o in overrides:
                        parts = ([self._name(i)] if many_models or not (
                            many_rts or many_values or many_precisions) else []) + \
                            ([rt] if many_rts else []) + \
                            ([str(p["precision"])] if many_precisions else []) + \
                            ([setting_label(o)] if many_values else [])
                        precision = (("precision", p["precision"]),) \
                            if p["precision"] != "fp32" else ()
                        out.append(Config(" ".join(parts), measured, rt, self._name(i),
                                          script_args=tuple(argv), settings=o + precision))
        return out

    def store_parts(self) -> dict[str, str]:
        segs = [self.model_segment_of(self._name(i), s) for i, s in enumerate(self._specs)]
        settings = layout.measure_settings_segment(
            self.measure_key(), self.export_key() if self._exports() else None)
        return {
            "model": layout.models_segment(segs),
            "runtime": layout.runtime_segment([(rt, runtime_version(rt))
                                               for rt in self.runtimes], self.device),
            "settings": "__".join(p for p in (settings, self.precisions_part(),
                                              self.compare_part()) if p),
        }

    def output(self):
        return self.declared_outputs(bs_tag=self.bs_tag, rounds=self.interleave)

    def rows(self) -> list[dict]:
        """The finished table's rows."""
        from mlprof.measure.interleave import read_table

        return read_table(self.output()["table"].path)

    def run_summary(self) -> str:
        from mlprof.measure.interleave import format_table

        if not self.complete():
            return f"{self.task_family}: not complete: {failure_reason(self)}"
        return format_table(self.rows()) + "\noutputs:\n" + "\n".join(
            f"  {t.path}" for t in self.output().values())

    def run(self):
        from mlprof.measure.interleave import (
            comparison_rows,
            format_table,
            measure_interleaved_isolated,
            rounds_csv,
            table_csv,
        )
        from mlprof.measure.noise import NOT_CALIBRATED, calibration_date, find_floor

        # a model measured on static graphs: each batch size's graph is exported first (a
        # dynamic dependency, as in MeasureRuntime: which graph is needed shows only once the
        # export has run)
        static = [e for k in range(len(self.batch_sizes)) for i, s in enumerate(self._specs)
                  if s.is_script for rt in self.runtimes
                  for e in [self._measurement(i, rt, k).static_export()] if e is not None]
        missing = [e for e in static if not e.complete()]
        if missing:
            yield missing
        results, rows = [], []
        # this host's noise floor: a significant speed-up within it is "within this host's
        # noise" (issue 36); without one the verdicts are the intervals' alone
        noise = find_floor()
        for bs in self.batch_sizes:
            configs = self.configs(bs)
            self.publish_message(f"interleaving {len(configs)} configurations at batch size "
                                 f"{bs}, {self.interleave} rounds")
            res = measure_interleaved_isolated(
                configs, self.measure_settings(bs, configs[0].runtime, self.device),
                self.interleave)
            results.append(res)
            rows.extend(comparison_rows(res, noise))
        out = self.output()
        write_text_atomic(out["rounds"].path, rounds_csv(results))
        write_json_atomic(out["provenance"].path, records.stamp({
            "interleaved": True, "task": {"family": self.task_family, "version": self.version,
                                          "params": self.to_str_params(only_significant=True)},
            "compared": {"setting": self.compared[0], "values": list(self.compared[1])}
            if self.compared else None,
            "batch_sizes": {str(r.batch_size): r.provenance for r in results},
            "noise_floor": {"fingerprint_id": noise.fingerprint_id,
                            "calibrated": calibration_date(noise),
                            "floors": {str(r["batch_size"]): r["floor"] for r in rows
                                       if r["verdict"] == "reference"}}
            if noise is not None else {"not_calibrated": NOT_CALIBRATED}}, "interleaved"))
        write_text_atomic(out["table"].path, table_csv(rows))  # last: it marks completion
        if verbose():  # else the same table ends the run (run_summary)
            logger.info("interleaved comparison:\n%s", format_table(rows))


def draw_comparison(task, compare: CompareInterleaved) -> Figure:
    """The speed-up plot of a finished CompareInterleaved for ``task`` (a PlotMultiRuntimes:
    its --model-labels, --x-log and --top-right-label apply), as a figure to save."""
    from mlprof import ingest
    from mlprof.plotting.compare import comparison_texts, plot_comparison

    configs = compare.configs()
    n_rt, n_values = len(compare.runtimes), len(compare.compared_settings())
    per_model = n_rt * n_values * len(compare.precisions)
    # each model by its --model-labels entry, else by its label (the names are in the path)
    names = {c.model: task.model_labels[k // per_model] if task.model_labels
             else compare._specs[k // per_model].label for k, c in enumerate(configs)}
    # through mlprof.ingest: a FIFO or a device at the record is one line, never a hang
    labels, corner = comparison_texts(ingest.load_json(compare.output()["provenance"].path),
                                      compare.device, compare.corner_threads(), names)
    if n_values > 1 or len(compare.precisions) > 1:  # --compare, --precisions: the setting
        # tells the curves of one model and runtime apart
        labels = {c.label: ", ".join(x for x in (labels.get(c.label, c.label), setting_label(
                      c.settings).replace("precision=", "")) if x) or c.label for c in configs}
    corner = task.plot_options()["top_right_label"] or corner
    return plot_comparison(compare.rows(), labels=labels, x_log=task.x_log,
                           top_right_label=corner)
