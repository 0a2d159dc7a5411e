"""PlotRuntimes (one model, one runtime), PlotMultiRuntimes (several of each), and from the
same measurements PlotThroughput (events per second vs batch size) and PlotSpeedup (speed-up
over a reference runtime vs batch size)."""

from __future__ import annotations

import dataclasses
import logging

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.model import read_model_file
from mlprof.model.spec import script_model_name
from mlprof.results import layout
from mlprof.runtimes import (
    DEFAULT_RUNTIME,
    TFAOT_MODEL,
    check_device,
    check_installed,
    check_model_kind,
    engine_runtime,
    kinds_text,
    runtime_info,
    runtime_version,
    runtimes_measuring,
)
from mlprof.tasks.compare import CompareInterleaved, draw_comparison
from mlprof.tasks.discover import DiscoverModels
from mlprof.tasks.framework.base import Requirements, failure_cause_of, failure_reason
from mlprof.tasks.framework.comparing import CompareMixin, InterleaveMixin, setting_label
from mlprof.tasks.framework.mixins import (
    BatchSizesMixin,
    ExportMixin,
    LogYMixin,
    MeasurementMixin,
    ModelLabelMixin,
    PlotMixin,
    PrecisionMixin,
    PrecisionsMixin,
    ScriptMixin,
    check_up_front_if_new,
    refuse_given,
)
from mlprof.tasks.framework.parameters import (
    NamesParameter,
    PathsParameter,
    RuntimeParameter,
    RuntimesParameter,
)
from mlprof.tasks.framework.summary import with_outputs
from mlprof.tasks.peak import efficiency_inputs, peak_requirements
from mlprof.tasks.runtime import MeasurementTask, MergeRuntimes

logger = logging.getLogger("mlprof")


def _save(task, fig) -> list[str]:
    """Write ``fig`` (None: the drawing process wrote it) to ``task``'s targets, say where,
    open them with --view-cmd."""
    from mlprof.tasks.framework.summary import listed_at_end

    paths = [t.path for t in task.output().values()]
    if fig is not None:
        from mlprof.plotting import save_figure  # (matplotlib: not for the drawing process's)

        save_figure(fig, paths)
    if not listed_at_end(task):  # else law run lists them at its end
        for p in paths:
            task.publish_message(f"plot: {p}")
    task.view(paths)
    return paths


def _drawn(task, figure: str, *args, **kwargs) -> list[str]:
    """Draw ``figure(*args, **kwargs)`` (``"module:function"``) into ``task``'s targets, in the
    drawing process that law run started when there is one (:mod:`mlprof.plotting.drawer`),
    and :func:`_save` the rest."""
    from mlprof.plotting.drawer import render

    render(figure, [t.path for t in task.output().values()], *args, **kwargs)
    return _save(task, None)


def _draw(task, curves: list[tuple], corner: tuple[str, int],
          efficiency: dict | None = None, caption: str | None = None) -> list[str]:
    """Plot ``(CurveInfo, MergeRuntimes)`` pairs into ``task``'s targets
    (:func:`mlprof.plotting.curves.runtimes_figure`); return the paths."""
    from mlprof.measure.stats import read_stats_csv

    files = [merge.output()["stats"].path for _, merge in curves]
    return _drawn(task, "mlprof.plotting.curves:runtimes_figure", [info for info, _ in curves],
                  [read_stats_csv(f) for f in files], task.plot_options(), corner, efficiency,
                  caption, files)


def _curve(merge: MergeRuntimes, label: str):
    """The :class:`CurveInfo` of a finished MergeRuntimes: the version it was measured with,
    the CPU model and the host (as its provenance records them)."""
    from mlprof.measure.results import measured_versions, read_merged_provenance
    from mlprof.plotting.curves import merged_curve_info

    path = merge.output()["provenance"].path
    return merged_curve_info(label, merge.runtime, measured_versions(path),
                             merge.resolved_runtime_version,
                             read_merged_provenance(path).get("measurements", []))


def _export_caption(task, runtimes: tuple[str, ...]) -> str | None:
    """The caption of a plot with a model script: how it was exported for the runtimes that
    measure an ONNX export (None when none does)."""
    from mlprof.plotting.labels import export_caption

    exported = [rt for rt in runtimes if runtime_info(rt).needs_export]
    if not exported:
        return None
    key = task.export_key(task.precision if isinstance(task, PrecisionMixin) else "fp32")
    return export_caption(exported, key.opset, key.precision, key.ort_optimize, key.tolerances,
                          [rt for rt in runtimes if rt not in exported])


class PlotRuntimes(MeasurementTask, ModelLabelMixin, LogYMixin, PlotMixin):
    """Plot median latency vs batch size with the 16-84 percentile range, for one model."""

    reqs = Requirements(MergeRuntimes=MergeRuntimes)

    def requires(self):
        return self.reqs.MergeRuntimes.req(self)

    def output(self):
        labels = (self.model_label,) if self.given_label() else ()
        return self.plot_targets(f"runtimes_{self.bs_tag}", labels)

    def run_summary(self) -> str:
        precision = f" {self.precision}" if self.precision != "fp32" else ""
        return self.summary_of([(f"{self.resolved_model_name} {self.runtime}{precision}",
                                 self.requires())], [t.path for t in self.output().values()])

    def run(self):
        label = self.given_label() or self.model_spec.label
        if self.precision != "fp32" and not self.given_label():  # the plot says what it shows
            label += f", {self.precision}"
        # --y-axis efficiency: the runtime's GEMM peak, measured once (a dynamic dependency)
        efficiency = None
        if self.y_axis == "efficiency":
            peaks = peak_requirements([self.requires()])
            yield peaks
            efficiency = efficiency_inputs(peaks, [self.requires()])
        caption = _export_caption(self, (self.runtime,)) if self.model_spec.is_script \
            else None
        _draw(self, [(_curve(self.requires(), label), self.requires())],
              (self.device, self.threads), efficiency, caption)


class PlotMultiRuntimes(ScriptMixin, ExportMixin, PrecisionsMixin, MeasurementMixin,
                        BatchSizesMixin, LogYMixin, PlotMixin, InterleaveMixin, CompareMixin):
    """Several models and/or runtimes (and precisions, and values of one measurement setting)
    on one plot.

    Only what varies goes into the legend labels and the file name. ``--model-files`` accepts
    brace expansion and globs: ``'examples/dnn/model_onnx_l{10,20}u128.yaml'``. A model script
    without ``::HASH`` contributes every model it calls (found by DiscoverModels first).
    ``--compare threads=1,2`` draws a curve per value of the setting (``threads=2`` in its
    label); with ``--interleave`` they are configurations of the interleaved rounds.
    ``--precisions fp32,int8-dynamic`` draws a curve per precision and runtime (each lower
    precision's error against fp32 is in its provenance).
    """

    model_files = PathsParameter(description="comma-separated model files (YAML, ONNX or "
                                 "script.py[::HASH]); brace expansion and globs work")
    model_names = NamesParameter(default=(), flag="--model-names", description="names in "
                                 "output paths, one per model file")
    model_labels = law.CSVParameter(default=(), description="legend labels, one per model file")
    runtimes = RuntimesParameter(default=(DEFAULT_RUNTIME,), description="comma-separated "
                                 f"runtimes; default: {DEFAULT_RUNTIME} (for a TF model: its "
                                 "engine's, tensorflow or tfaot)")
    runtime_versions = law.CSVParameter(default=(), description="runtime versions to compare, "
                                        "one curve each: 1.20.1,1.31.1 for the one runtime of "
                                        "--runtimes, or onnxruntime==1.20.1,...; measured in "
                                        "cached virtual environments")
    device = luigi.Parameter(default="cpu", description="device to run on: cpu")

    reqs = Requirements(DiscoverModels=DiscoverModels, MergeRuntimes=MergeRuntimes,
                        CompareInterleaved=CompareInterleaved)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.model_files:
            raise MLProfError("give at least one model file", field="--model-files")
        for fld, values in (("--model-names", self.model_names),
                            ("--model-labels", self.model_labels)):
            if values and len(values) != len(self.model_files):
                raise MLProfError(f"{len(values)} value(s) for {len(self.model_files)} model "
                                  "file(s); give one per model file or none", field=fld)
        # a script without ::HASH that calls one model is that model (as in MergeRuntimes)
        self._specs = [self.single_model(read_model_file(f), self._given_name(i).get("model_name"))
                       for i, f in enumerate(self.model_files)]
        for s in self._specs:
            check_up_front_if_new(s)
        for rt in self.resolved_runtimes:
            check_device(rt, self.device)
        self._pairs = self._runtime_pairs()
        # per model, the curves' runtimes: those of --runtimes that measure its kind (a TF
        # model is not measured by ONNX Runtime); with the default --runtimes, a model no
        # default runtime measures goes to its engine's runtime (tf -> tensorflow)
        from mlprof.model.plan import curve_plan

        self._curves = curve_plan([s.model_kind for s in self._specs], self._pairs,
                                  self.runtimes, tuple(self.runtimes) == (DEFAULT_RUNTIME,),
                                  engine_runtime)
        for i in self._curves.unmeasured[:1]:  # no runtime of --runtimes measures it: one line
            check_model_kind(self.runtimes[0], self._specs[i].model_kind,  # (exit 40)
                             self._specs[i].spec_file)
        self._model_pairs = [list(ps) for ps in self._curves.per_model]
        self._check_curves()
        unused = [rt for rt in self.runtimes
                  if not any(rt == p[0] for ps in self._model_pairs for p in ps)]
        versioned = [rt for rt, v in self._pairs if v and rt in unused]
        if versioned:
            raise MLProfError(f"{versioned[0]} measures none of the models (it cannot measure "
                              f"{self._specs[0].model_kind} models)", field="--runtime-versions")
        # a runtime that measures none of the models is skipped, one line each, and the others
        # are plotted (as a Nightly experiment skips such a pair): the plot has no curve of it,
        # and its file name says so (runtimes_no-tfaot_bs_1.pdf: the question asked)
        for rt in self.skipped_runtimes():
            logger.warning(self._skip_line(rt))
        # script and export parameters must change some curve, or they are refused
        if not any(s.is_script for s in self._specs):
            refuse_given(self, self.SCRIPT_PARAMS + self.EXPORT_PARAMS,
                         "applies to model scripts (.py) only")
        elif not any(runtime_info(rt).needs_export for rt in self.resolved_runtimes):
            refuse_given(self, self.EXPORT_PARAMS, "applies to ONNX exports only; none of "
                         f"{', '.join(self.resolved_runtimes)} measures one")
        if self.interleave:  # all configurations share one process: refused now, not later
            refuse_given(self, ("runtime_versions",), "--interleave: other runtime versions run "
                         "in their own virtual environments and cannot share a process")
            refuse_given(self, ("min_duration", "y_log", "y_min", "y_max", "bs_normalized",
                                "error_style", "y_axis"), "does not apply with --interleave "
                         "(rounds of --n-calls calls; the plot shows speed-ups)")
            self._interleaved()

    def _check_curves(self) -> None:
        """The curves' runtimes installed (those of another version are made), each at every
        precision, and --tfaot-batch-rules only with an AOT model, its rules valid for it: or
        one line (exit 40) before anything is scheduled."""
        aot = [s for s in self._specs if s.model_kind == TFAOT_MODEL]
        if not aot:
            if isinstance(getattr(type(self), "tfaot_batch_rules", None), luigi.Parameter):
                refuse_given(self, ("tfaot_batch_rules",), "applies to AOT TensorFlow models "
                             "(inference_engine: tfaot) only")
        elif self.tfaot_batch_rules:
            from mlprof.runtimes.batching import check_rules

            for s in aot:
                check_rules(self.tfaot_batch_rules, s.compilation["batch_sizes"], s.spec_file)
        for rt, version in self._all_pairs():
            if not version:
                check_installed(rt)
        if tuple(self.precisions) != ("fp32",):  # every runtime at every precision, or one line
            from mlprof.model.precision import check_runtime_precision

            for rt in dict.fromkeys(rt for rt, _ in self._all_pairs()):
                for precision in self.precisions:
                    check_runtime_precision(rt, precision)

    def _skip_line(self, runtime: str) -> str:
        """``skipped tfaot: runtime tfaot measures ...; model.yaml is an ONNX/YAML model: use
        onnxruntime or openvino``: why ``runtime`` has no curve."""
        try:
            check_model_kind(runtime, self._specs[0].model_kind, self._specs[0].spec_file)
        except MLProfError as e:
            return f"skipped {runtime}: {e.message}"
        return f"skipped {runtime}: it measures none of the models"

    @property
    def resolved_runtimes(self) -> tuple[str, ...]:
        """The runtimes of the curves: --runtimes (at least one), where the default gives way
        to a TF model's engine's runtime."""
        if not self.runtimes:
            raise MLProfError("give at least one runtime", field="--runtimes")
        pairs = getattr(self, "_model_pairs", None)
        if pairs is not None:
            return tuple(dict.fromkeys(rt for rt, _ in self._all_pairs()))
        return tuple(self.runtimes)

    def _runtime_pairs(self, entries: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
        """(runtime, version or "" for the installed one) per curve, from ``entries``
        (default: --runtime-versions)."""
        from mlprof.tasks.framework.parameters import runtime_version_pairs

        return runtime_version_pairs(self.runtime_versions if entries is None else entries,
                                     self.resolved_runtimes)

    def _version(self, rt: str, version: str) -> str:
        return version or runtime_version(rt)

    def _name(self, i: int) -> str:
        return self.model_names[i] if self.model_names else self._specs[i].name

    def _label(self, i: int) -> str:
        return self.model_labels[i] if self.model_labels else self._specs[i].label

    def _exports(self) -> bool:
        """Whether some curve measures a script model's ONNX export."""

        return any(s.is_script for s in self._specs) and any(
            runtime_info(rt).needs_export for rt in self.resolved_runtimes)

    def store_parts(self):
        export = self.export_key() if self._exports() else None
        precisions = self.precisions_part()
        if export is not None and tuple(self.precisions) == ("fp16",):
            # a script's fp16 is its fp16 export, which the export part says (as a single
            # MeasureRuntime's path does)
            export, precisions = dataclasses.replace(export, precision="fp16"), ""
        segs = [self.model_segment_of(self._name(i), s) for i, s in enumerate(self._specs)]
        return {
            "model": layout.models_segment(segs),
            "runtime": layout.runtime_segment(
                [(rt, self._version(rt, v)) for rt, v in self._all_pairs()], self.device),
            "settings": "__".join(p for p in (layout.measure_settings_segment(
                self.measure_key(), export), precisions, self.compare_part()) if p),
        }

    def _all_pairs(self) -> list[tuple[str, str]]:
        """Every (runtime, version) of some curve, in order."""
        return list(self._curves.pairs)

    def _expands(self, i: int) -> bool:
        """Whether model file ``i`` is a script whose models are found by discovery."""
        return self._specs[i].is_script and len(self._specs[i].model_hashes) != 1

    def _discovery(self, i: int):
        return self.reqs.DiscoverModels.req(self, model_file=self.model_files[i],
                                            **self._given_name(i))

    def _merge(self, model_file: str, is_script: bool, runtime: tuple[str, str], name: str,
               override: tuple = (), precision: dict | None = None):
        """The MergeRuntimes of one curve; ``override``: its value of --compare; ``precision``:
        its precision's parameters (:meth:`precision_overrides`; default: the first)."""
        rt, version = runtime
        params = MeasurementTask.applicable(is_script, rt, {
            p: getattr(self, p) for p in self.SCRIPT_PARAMS + self.EXPORT_PARAMS})
        params.update(precision or self.precision_overrides()[0])

        aot = not is_script and read_model_file(model_file).model_kind == TFAOT_MODEL
        return self.reqs.MergeRuntimes.req(self, model_file=model_file, runtime=rt,
                                           runtime_version=version, model_name=name,
                                           tfaot_batch_rules=self.tfaot_batch_rules if aot
                                           else "", **params, **dict(override))

    def _given_name(self, i: int) -> dict:
        return {"model_name": self.model_names[i]} if self.model_names else {}

    def _entries(self, only: int | None = None) -> list[tuple[str, bool, str, str, int]]:
        """(model file, is script, name, label, index of the model file) per model (of model
        file ``only``, or of all); scripts expanded once discovered."""
        entries = []
        for i, f in enumerate(self.model_files):
            if only is not None and i != only:
                continue
            name = self.model_names[i] if self.model_names else law.NO_STR
            if not self._expands(i):
                entries.append((f, self._specs[i].is_script, name, self._label(i), i))
                continue
            models = self._discovery(i).selected()
            many = len(models) > 1
            for m in models:
                cls = m["class"].rsplit(".", 1)[-1]
                entries.append((
                    f"{self._specs[i].file}::{m['hash']}", True,
                    # without --model-names the script model's own name: <stem>-<hash>
                    script_model_name(name, m["hash"]) if name != law.NO_STR and many else name,
                    self._label(i) + (f" ({cls} {m['hash']})" if many else ""), i,
                ))
        return entries

    def _interleaved(self) -> CompareInterleaved:
        return self.reqs.CompareInterleaved.req(self, runtimes=self.resolved_runtimes)

    def requires(self):
        if self.interleave:
            return self._interleaved()
        reqs = []
        for i, f in enumerate(self.model_files):
            if self._expands(i):
                reqs.append(self._discovery(i))  # the models follow in run()
            else:
                name = self.model_names[i] if self.model_names else law.NO_STR
                reqs.extend(self._merge(f, self._specs[i].is_script, rt, name, o, p)
                            for rt in self._model_pairs[i] for p in self.precision_overrides()
                            for o in self.compared_settings())
        return reqs

    def output(self):
        stem = ["speedup", layout.interleave_tag(self.interleave)] if self.interleave \
            else ["runtimes"]
        return self.plot_targets("_".join(stem + self.curves_stem()), tuple(self.model_labels))

    def curves_stem(self) -> list[str]:
        """The file-name parts of the curves: the model names when several, the runtimes (with
        versions when --runtime-versions is given) when several, the batch sizes."""
        stem = []
        if len(self.model_files) > 1:
            stem.append(layout.joined_or_hashed([layout.path_safe(self._name(i), 24)
                                                 for i in range(len(self.model_files))]))
        if len(self._all_pairs()) > 1:
            stem.append(layout.joined_or_hashed([
                layout.runtime_name(rt, self._version(rt, v)) if self.runtime_versions else rt
                for rt, v in self._all_pairs()]))
        skipped = self.skipped_runtimes()
        if skipped:  # --runtimes asked for them: the file says they are left out (no-tfaot)
            stem.append("no-" + layout.joined_or_hashed(list(skipped)))
        if len(self.precisions) > 1:
            stem.append("+".join(self.precisions))
        if self.compared:  # compare-threads-1-2 -> threads-1-2
            stem.append(self.compare_part().removeprefix("compare-"))
        stem.append(self.bs_tag)
        return stem

    def skipped_runtimes(self) -> tuple[str, ...]:
        """The runtimes of --runtimes that measure none of the models (skipped, one line each
        when the task is made)."""
        return self._curves.skipped

    def _merges(self) -> list[tuple[str, MergeRuntimes]]:
        """(curve label, MergeRuntimes) per curve (scripts' models once discovered); with
        --compare a curve per value, labelled ``<model>, threads=2``."""
        many = len(self.precisions) > 1
        return [(", ".join(x for x in (label, str(p["precision"]) if many else "",
                                        setting_label(o)) if x),
                 self._merge(f, is_script, rt, name, o, p))
                for f, is_script, name, label, i in self._entries()
                for rt in self._model_pairs[i] for p in self.precision_overrides()
                for o in self.compared_settings()]

    def run_summary(self) -> str:
        if self.interleave:  # the table with its intervals, its files and the plot's
            return self._interleaved().run_summary() + "\n" + "\n".join(
                f"  {t.path}" for t in self.output().values()) if self.complete() else \
                f"{self.task_family}: not complete: {failure_reason(self)}"
        if not self.complete():
            return self.failures_summary()
        setting = self.compared[0] if self.compared else None
        curves = [(" ".join(str(part) for part in [m.resolved_model_name, m.runtime] + (
            [m.precision] if len(self.precisions) > 1 else []) + (
            [setting_label(((setting, getattr(m, setting)),))] if setting else [])), m)
            for _, m in self._merges()]
        return self.summary_of(curves, [t.path for t in self.output().values()])

    def failures_summary(self) -> str:
        """Why the plot is missing: per corpus (the model files' directories) how many model
        files were measured, and the failures grouped by cause (a corpus run with
        ``--model-files 'models/*/*.py'`` ends with this table)."""
        from mlprof.report.causes import corpus_of, format_summary

        rows = []
        for i, f in enumerate(self.model_files):
            if self._expands(i) and not self._discovery(i).complete():
                tasks: list = [self._discovery(i)]
            else:
                tasks = [self._merge(mf, is_script, rt, name, o, p)
                         for mf, is_script, name, _, _ in self._entries(only=i)
                         for rt in self._model_pairs[i] for p in self.precision_overrides()
                         for o in self.compared_settings()]
            bad = next((t for t in tasks if not t.complete()), None)
            row = {"corpus": corpus_of(f), "status": "ok"}
            if bad is not None:
                cause, _ = failure_cause_of(bad)
                row.update(status="failed", cause=cause.cause, detail=cause.detail)
            rows.append(row)
        text = (f"{self.task_family}: not complete: {failure_reason(self)}\n\n"
                + format_summary(rows))
        n = sum(r.get("cause") == "not-run" for r in rows)
        if n:
            text += (f"\n\n{n} not run: the models of scripts are measured once every script is "
                     "discovered (luigi's dynamic dependencies); leave out the scripts that "
                     "fail, or run `mlprof corpus`, which measures every script it can")
        return text

    def run(self):
        if self.interleave:  # the speed-up plot of the interleaved rounds
            _save(self, draw_comparison(self, self._interleaved()))
            return
        # scripts' models are known once discovered: dynamic dependencies
        merges = self._merges()
        yield [m for _, m in merges]
        efficiency = None
        if self.y_axis == "efficiency":  # each curve's runtime's GEMM peak
            peaks = peak_requirements([m for _, m in merges])
            yield peaks
            efficiency = efficiency_inputs(peaks, [m for _, m in merges])
        _draw(self, [(_curve(m, label), m) for label, m in merges],
              (self.device, self.corner_threads()), efficiency, self.caption())

    def caption(self) -> str | None:
        """How the model scripts were exported, for the curves that measure an export."""
        return _export_caption(self, self.resolved_runtimes) if self._exports() else None

    def curve_infos(self):
        """``(CurveInfo, MergeRuntimes)`` per curve (the measurements must be complete)."""
        return [(_curve(m, label), m) for label, m in self._merges()]


class PlotThroughput(PlotMultiRuntimes):
    """Throughput vs batch size: events per second at the median latency
    (:func:`mlprof.measure.stats.throughput`, the one definition everywhere), with the
    throughput at the 84th and 16th latency percentiles as band or bars.

    The same models, runtimes and measurements as PlotMultiRuntimes (it measures what is
    missing, and reuses what PlotMultiRuntimes measured). The y axis is logarithmic when the
    throughputs span more than a decade (``--y-log True/False`` forces it).
    """

    # not parameters here: a throughput is per event and in events per second (no --y-min or
    # --y-max in ms, no per-batch variant, no efficiency axis), and interleaved rounds give
    # speed-ups (PlotMultiRuntimes --interleave), not throughputs
    bs_normalized = True
    y_axis = "latency"
    y_min = None
    y_max = None
    interleave = 0

    def output(self):
        return self.plot_targets("_".join(["throughput"] + self.curves_stem()),
                                 tuple(self.model_labels))

    def run_summary(self) -> str:
        """The throughput plotted (events per second at the median latency) per batch size and
        curve, and the output paths; why the plot is missing otherwise."""
        from mlprof.measure.stats import throughputs_table

        if not self.complete():
            return self.failures_summary()
        table = throughputs_table([(f"{m.resolved_model_name} {m.runtime}",
                                    m.output()["stats"].path) for _, m in self._merges()])
        return with_outputs(table, self)

    def run(self):
        from mlprof.measure.stats import read_stats_csv
        from mlprof.plotting.labels import corner_label, curve_labels

        yield [m for _, m in self._merges()]
        pairs = self.curve_infos()
        infos = [info for info, _ in pairs]
        options = self.plot_options()
        curves = [(label, read_stats_csv(m.output()["stats"].path))
                  for label, (_, m) in zip(curve_labels(infos), pairs, strict=True)]
        _drawn(self, "mlprof.plotting.curves:throughput_figure", curves, x_log=options["x_log"],
               y_log=options["y_log"], error_style=options["error_style"], caption=self.caption(),
               top_right_label=options["top_right_label"] or corner_label(
                   infos, self.device, self.corner_threads()))


class PlotSpeedup(PlotMultiRuntimes):
    """Speed-up over a reference runtime vs batch size: the reference's median latency over
    each other curve's, per model (> 1: faster than the reference).

    ``--reference-runtime`` (default: onnxruntime; its newest version when ``--runtime-versions``
    gives several) must be one of the runtimes. Without ``--runtimes``: the reference and every
    installed runtime that can measure the models (the registry's capabilities; for a script
    also those that measure its ONNX export, OpenVINO), named in the plot's title. A model
    script is compared on its measurement settings: ONNX Runtime and OpenVINO measure its ONNX
    export (whose settings are in the caption under the plot), PyTorch the script itself, all
    with the same calls, events, warm-up and threads.
    """

    reference_runtime = RuntimeParameter(default=DEFAULT_RUNTIME, description="the runtime "
                                         "speed-ups are relative to; default: "
                                         f"{DEFAULT_RUNTIME}")
    runtimes = RuntimesParameter(default=(), description="comma-separated runtimes, the "
                                 "reference among them; default: the reference and every "
                                 "installed runtime that can measure the models (ONNX: "
                                 "openvino; scripts: torch, torch-compile and openvino on "
                                 "the ONNX export)")

    # not parameters here (see PlotThroughput); a speed-up has no band either, and an AOT
    # TensorFlow model is measured by tfaot alone (nothing to compare it with)
    bs_normalized = True
    y_axis = "latency"
    y_min = None
    y_max = None
    interleave = 0
    error_style = "band"
    tfaot_batch_rules = ""
    # the speed-up is between runtimes of one model; settings are compared with
    # PlotMultiRuntimes --compare (and --interleave for a speed-up with its interval)
    compare = ""

    def _runtime_pairs(self, entries: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
        """As PlotMultiRuntimes', where a bare version (``1.20.1``) is one of the reference
        runtime's: ``--runtime-versions 1.20.1`` compares the installed runtimes with that
        version of the reference."""
        if entries is None:
            entries = tuple(e if "==" in str(e) else f"{self.reference_runtime}=={e}"
                            for e in self.runtime_versions)
        return super()._runtime_pairs(entries)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        fld = "--reference-runtime"
        ref = self.reference_runtime
        if ref not in self.resolved_runtimes:
            raise MLProfError(f"{ref} is not one of the runtimes "
                              f"({', '.join(self.resolved_runtimes)})", field=fld)
        for spec, pairs in zip(self._specs, self._model_pairs, strict=True):
            if not any(rt == ref for rt, _ in pairs):
                raise MLProfError(f"{ref} does not measure this model; a speed-up needs the "
                                  "reference on every model", spec.spec_file, fld)
            if len(pairs) < 2:
                raise MLProfError(f"only {ref} measures this model: a speed-up needs a second "
                                  "runtime or version (--runtimes, --runtime-versions)",
                                  spec.spec_file, "--runtimes")

    @property
    def resolved_runtimes(self) -> tuple[str, ...]:
        """--runtimes, or the reference and every installed runtime that can measure one of
        the models on --device (:func:`mlprof.runtimes.runtimes_measuring`: a script also
        through its ONNX export, as OpenVINO measures it), once the model files are read."""
        if self.runtimes:
            return super().resolved_runtimes
        pairs = getattr(self, "_model_pairs", None)
        if pairs is not None:
            return tuple(dict.fromkeys(rt for rt, _ in self._all_pairs()))
        specs = getattr(self, "_specs", None)
        if specs is None:
            return (self.reference_runtime,)
        found, _ = runtimes_measuring([s.model_kind for s in specs], self.device)
        return tuple(dict.fromkeys([self.reference_runtime, *found]))

    def choice_text(self) -> str | None:
        """Which runtimes were chosen and why, for the plot's title (None with --runtimes):
        ``runtimes: every installed one that measures a Python model script`` and the list."""
        from mlprof.plotting.curves import choice_text

        kinds = [s.model_kind for s in self._specs]
        return None if self.runtimes else choice_text(
            kinds_text(kinds), self.resolved_runtimes, runtimes_measuring(kinds, self.device)[1])

    def output(self):
        stem = ["speedup", "vs-" + self.reference_runtime]
        if not self.runtimes:  # the automatic choice may grow with what is installed
            stem.append("auto")
        return self.plot_targets("_".join(stem + self.curves_stem()), tuple(self.model_labels))

    def run(self):
        from mlprof.measure.stats import read_stats_csv
        from mlprof.plotting.labels import corner_label, curve_labels

        yield [m for _, m in self._merges()]
        pairs = self.curve_infos()
        infos = [info for info, _ in pairs]
        curves = [(label, read_stats_csv(m.output()["stats"].path))
                  for label, (_, m) in zip(curve_labels(infos), pairs, strict=True)]
        refs, others = self._references(pairs)
        one_ref = len(set(refs.values())) == 1
        ref_info = pairs[next(iter(refs.values()))][0]
        options = self.plot_options()
        models = [m.model_file for _, m in pairs]
        _drawn(
            self, "mlprof.plotting.curves:speedup_figure",
            curves[next(iter(refs.values()))], [curves[i] for i in others],
            references=[curves[refs[models[i]]] for i in others],
            reference_label=None if one_ref else f"{ref_info.runtime} (each model's)",
            x_log=options["x_log"], y_log=options["y_log"], caption=self.caption(),
            title=self.choice_text(), top_right_label=options["top_right_label"] or corner_label(
                infos, self.device, self.threads))

    def _references(self, pairs) -> tuple[dict[str, int], list[int]]:
        """Per model (the model file and, for a script, the model in it) the index of its
        reference curve among ``pairs`` (:meth:`curve_infos`): the reference runtime's newest
        version; and the indices of the other curves (each compared with its model's)."""
        from mlprof.plotting.curves import reference_curves

        return reference_curves([info for info, _ in pairs], [m.model_file for _, m in pairs],
                                self.reference_runtime)

    def run_summary(self) -> str:
        """The speed-ups plotted (reference median / median) per batch size and curve, and the
        output paths; why the plot is missing otherwise."""
        from mlprof.measure.stats import speedups_table

        if not self.complete():
            return self.failures_summary()
        pairs = self.curve_infos()
        refs, others = self._references(pairs)
        stats = [m.output()["stats"].path for _, m in pairs]
        several = len(refs) > 1  # several models: each column names its model
        columns = []
        for i in others:
            info, m = pairs[i]
            label = " ".join([*([m.resolved_model_name] if several else []), info.runtime,
                              *([info.version] if self.runtime_versions else [])])
            columns.append((label, stats[refs[m.model_file]], stats[i]))
        ref_info = pairs[next(iter(refs.values()))][0]
        reference = ref_info.runtime + (f" {ref_info.version}" if self.runtime_versions
                                         else "") + (" (each model's)" if several else "")
        return with_outputs(speedups_table(columns, reference), self)
