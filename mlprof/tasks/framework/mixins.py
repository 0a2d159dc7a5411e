"""Parameter mixins, one concern each: their parameters and the settings they stand for.

A mixin never looks at another mixin's parameters and never builds a path: it turns its own
parameters into values (a :class:`mlprof.results.layout.MeasureKey`, an ``ExportKey``, a runtime
segment, ...), and the concrete task composes them with :mod:`mlprof.results.layout`. The
parameter types are :mod:`mlprof.tasks.framework.parameters`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.model import read_model_file
from mlprof.model.spec import ModelSpec, checked_before
from mlprof.results import layout
from mlprof.runtimes import (
    DEFAULT_CALIBRATION_BATCHES,
    DEFAULT_RUNTIME,
    check_device,
    engine_runtime,
    runtime_info,
    runtime_version,
)
from mlprof.runtimes.precisions import (
    BY_NAME as PRECISION_TABLE,
)
from mlprof.runtimes.precisions import (
    CALIBRATED_PRECISIONS,
    DEFAULT_PRECISION,
    PRECISIONS,
    export_precision,
    listed,
)
from mlprof.tasks.framework.base import BaseTask
from mlprof.tasks.framework.parameters import (
    AsciiFloatParameter,
    AsciiIntParameter,
    BatchSizesParameter,
    NameParameter,
    PathParameter,
    PrecisionParameter,
    PrecisionsParameter,
    RuntimeParameter,
    expand_path,
    model_kind,
)
from mlprof.util import float_tag, short_hash

DEFAULT_MODEL = "$MLP_BASE/examples/dnn/model_onnx_l10u128.yaml"
DEFAULT_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def _default_runtime() -> str:
    return DEFAULT_RUNTIME


_DEFAULTS: dict[type, dict[str, object]] = {}


def param_defaults(cls: type) -> dict[str, object]:
    """The default of every parameter of task class ``cls`` (cached per class)."""
    if cls not in _DEFAULTS:
        _DEFAULTS[cls] = {n: p._default for n, p in cls.get_params()}
    return _DEFAULTS[cls]


def _non_default(task: BaseTask, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` differ from their parameter's default on ``task``."""
    defaults = param_defaults(type(task))
    return [n for n in names if getattr(task, n) != defaults[n]]


def refuse_given(task: BaseTask, names: tuple[str, ...], why: str, file: str = "") -> None:
    """A one-line error when any of ``names`` was given (not its default): a parameter that
    does not apply must never be silently ignored (it would return an unchanged result)."""
    given = _non_default(task, names)
    if given:
        raise MLProfError(why, file or None,
                          ", ".join("--" + n.replace("_", "-") for n in given))


def check_up_front_if_new(spec: ModelSpec) -> None:
    """Check a model file against its graph before anything is scheduled
    (:func:`mlprof.model.onnx_graph.check_up_front`) when it is a new ONNX file, the only kind
    checked there: onnx (and numpy with it, 0.1-0.17 s) is imported for nothing else, neither
    on a model script's way to its discovery nor by a rerun of a checked file."""
    if spec.model_kind == "onnx" and not checked_before(spec):
        from mlprof.model.onnx_graph import check_up_front

        check_up_front(spec)


class ModelMixin(BaseTask):
    """One model: ``--model-file`` (YAML, ONNX or ``script.py[::HASH]``) and its name."""

    exclude_index = True

    model_file = PathParameter(default=DEFAULT_MODEL, description="model YAML (MLProf format), "
                               ".onnx file or Python model script (script.py or script.py::HASH)"
                               "; default: the 10x128 example DNN")
    model_name = NameParameter(default=law.NO_STR, flag="--model-name", description="name in "
                               "output paths; default: the YAML's name, else the file name")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not str(self.model_file).strip():
            raise MLProfError("must not be empty (an unset variable?)", field="--model-file")
        # read (and check against its graph) the model file up front: bad input fails once,
        # before anything is scheduled, instead of once per batch size
        self.model_spec = read_model_file(self.model_file)
        if isinstance(self, ScriptMixin) and self.names_single_model:
            self.model_spec = self.single_model(
                self.model_spec, None if self.model_name == law.NO_STR else self.model_name)
        check_up_front_if_new(self.model_spec)

    @property
    def resolved_model_name(self) -> str:
        """--model-name, else the spec's name."""
        return self.model_name if self.model_name != law.NO_STR else self.model_spec.name

    @property
    def is_script(self) -> bool:
        """Whether the model is a Python script."""
        return self.model_spec.is_script


class ModelLabelMixin(BaseTask):
    """``--model-label``: the model's label in plots (plot tasks only: a label changes a
    plot, never a measurement)."""

    exclude_index = True

    model_label = luigi.Parameter(default=law.NO_STR, description="label in plots; default: the "
                                  "YAML's label, else its name")

    def given_label(self) -> str | None:
        """--model-label, None when not given."""
        return None if self.model_label == law.NO_STR else self.model_label


#: ``(task, script spec, --model-name) -> hash of the script's one model, or None``: set by
#: :mod:`mlprof.tasks.discover` when it is imported (it makes a DiscoverModels, whose module
#: imports this one; every module defining a task with :class:`ScriptMixin` imports it)
ONLY_MODEL: Callable[[Any, ModelSpec, str | None], str | None] | None = None


class ScriptMixin(BaseTask):
    """How model scripts run: ``--script-args`` and ``--max-depth``."""

    exclude_index = True

    script_args = luigi.Parameter(default="", description="arguments for model scripts, e.g. "
                                  "'--batch_size 8 --max_seq_length 64'")
    max_depth = luigi.IntParameter(default=0, description="discover sub-modules down to this "
                                   "depth (0: models the script calls itself)")

    SCRIPT_PARAMS = ("script_args", "max_depth")

    #: whether a script given without ``::HASH`` that calls one model is that model (every
    #: task but DiscoverModels, which is about the script)
    names_single_model = True

    def single_model(self, spec: ModelSpec, model_name: str | None = None) -> ModelSpec:
        """``spec``; for a script given without ``::HASH`` that calls exactly one model, the
        spec of ``script.py::HASH`` of that model, so that the model has one name and hash in
        every path, record and page however it was named (``linear.py`` and
        ``linear.py::ee07f9c5`` are both ``linear-ee07f9c5__<hash>``). The discovery is read
        from the store, or made now (:func:`mlprof.tasks.discover.only_model`). ``model_name``:
        the --model-name that names the script's discovery."""
        if not spec.is_script or spec.model_hashes:
            return spec
        if ONLY_MODEL is None:  # every module of a task with this mixin imports it
            raise RuntimeError("mlprof.tasks.discover is not imported: no discovery")
        found = ONLY_MODEL(self, spec, model_name)
        return spec if found is None else read_model_file(f"{spec.file}::{found}")

    def the_model(self, discovery: Any) -> dict:
        """The one model of this task's script, from its finished ``discovery`` (a
        :class:`~mlprof.tasks.discover.DiscoverModels`; an error listing the models when the
        script calls several and no ``::HASH`` picks one).

        An error too when the script calls one model but this task's paths name the script:
        its discovery failed before the task was scheduled and worked since (a timeout under
        load?). Measuring now would keep the model under a second name; the next run names
        it by the model."""
        (model,) = discovery.selected(single=True)
        spec = getattr(self, "model_spec", None)
        if spec is not None and spec.is_script and not spec.model_hashes:
            raise MLProfError(f"the script calls one model ({model['hash']}), found only after "
                              "this task's paths were chosen (its discovery failed before "
                              "scheduling); run it again", spec.spec_file, "--model-file")
        return model

    def model_segment_of(self, name: str, spec: ModelSpec) -> str:
        """The model segment of ``spec`` named ``name``: its content hash (a script's with the
        script arguments and depth, :func:`mlprof.results.layout.script_model_hash`)."""
        content = spec.content_hash
        if spec.is_script:
            content = layout.script_model_hash(content, self.script_argv, self.max_depth)
        return layout.model_segment(name, content)

    @property
    def script_argv(self) -> tuple[str, ...]:
        """--script-args split like a shell would."""
        import shlex

        try:
            return tuple(shlex.split(self.script_args))
        except ValueError as e:
            raise MLProfError(f"cannot split {self.script_args!r}: {e}",
                              field="--script-args") from None

    def script_key(self) -> layout.ScriptKey:
        """The script arguments and depth as the layout keys them."""
        if self.max_depth < 0:
            raise MLProfError(f"must be >= 0, got {self.max_depth}", field="--max-depth")
        return layout.script_key(self.script_argv, self.max_depth)


class ExportMixin(BaseTask):
    """How model scripts are exported to ONNX."""

    exclude_index = True

    opset = luigi.IntParameter(default=0, description="ONNX opset for exports; default: "
                               "$MLP_ONNX_OPSET or 18")
    ort_optimize = luigi.BoolParameter(default=False, description="save ONNX Runtime's "
                                       "offline-optimized graph as the exported model")
    atol = luigi.OptionalFloatParameter(default=None, description="absolute tolerance of the "
                                "export check; default: 1e-4 (fp32), 1e-2 (fp16)")
    rtol = luigi.OptionalFloatParameter(default=None, description="relative tolerance of the "
                                "export check; default: 1e-3 (fp32), 1e-2 (fp16)")

    EXPORT_PARAMS = ("opset", "ort_optimize", "atol", "rtol")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.opset != 0 and not 7 <= self.opset <= 40:
            raise MLProfError(f"must be an ONNX opset from 7 on (0: the default), got "
                              f"{self.opset}", field="--opset")
        self.tolerances()  # checked now, not when the export runs

    @property
    def resolved_opset(self) -> int:
        """--opset, else $MLP_ONNX_OPSET, else the default."""
        from mlprof.model.exporters import default_opset

        return self.opset or default_opset()

    def tolerances(self) -> tuple[float | None, float | None]:
        """--atol and --rtol (None: the precision's default)."""
        import math

        for flag, value in (("--atol", self.atol), ("--rtol", self.rtol)):
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise MLProfError(f"must be a finite number >= 0, got {value!r}", field=flag)
        return self.atol, self.rtol

    def export_key(self, precision: str = DEFAULT_PRECISION) -> layout.ExportKey:
        """The export settings as the layout keys them, for a measurement at ``precision``
        (the task's own, passed by the task that has one): the export is fp16 when fp16 is
        measured, which the export converts to itself, else fp32."""
        return layout.ExportKey(self.resolved_opset, export_precision(precision),
                                bool(self.ort_optimize),
                                layout.tolerances_tag(*self.tolerances()))


class PrecisionMixin(BaseTask):
    """``--precision`` and, for int8-static, ``--calibration-batches``."""

    exclude_index = True

    precision = PrecisionParameter(default=DEFAULT_PRECISION, description="precision to "
                                   f"measure at: {listed()} (what a runtime supports: "
                                   f"`mlprof system-info`); default: {DEFAULT_PRECISION}")
    calibration_batches = AsciiIntParameter(default=DEFAULT_CALIBRATION_BATCHES,
                                            description=f"{listed(CALIBRATED_PRECISIONS)} "
                                            "only: batches of 8 "
                                            "random events that calibrate the activations' "
                                            "ranges, 1 to 1000; default: "
                                            f"{DEFAULT_CALIBRATION_BATCHES}")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _ = self.resolved_calibration_batches  # checked now, not when a branch runs

    @property
    def resolved_calibration_batches(self) -> int:
        """--calibration-batches (checked) for int8-static, 0 otherwise (given for another
        precision it is refused: it would change nothing)."""
        from mlprof.model.precision import check_calibration_batches

        if not PRECISION_TABLE[self.precision].calibrated:
            if self.calibration_batches != DEFAULT_CALIBRATION_BATCHES:
                raise MLProfError(f"applies to --precision {listed(CALIBRATED_PRECISIONS)} "
                                  "only", field="--calibration-batches")
            return 0
        return check_calibration_batches(self.calibration_batches)

    def precision_key(self) -> layout.PrecisionKey:
        """The precision as the layout keys it."""
        return layout.PrecisionKey(self.precision, self.resolved_calibration_batches)


class PrecisionsMixin(BaseTask):
    """``--precisions`` (a curve per precision, crossed with the runtimes) and, for
    int8-static, ``--calibration-batches``: the plots' counterpart of :class:`PrecisionMixin`."""

    exclude_index = True

    precisions = PrecisionsParameter(default=(DEFAULT_PRECISION,), description="comma-"
                                     "separated precisions, a curve each (crossed with "
                                     f"--runtimes): {', '.join(PRECISIONS)}; default: "
                                     f"{DEFAULT_PRECISION}")
    calibration_batches = PrecisionMixin.calibration_batches

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.model.precision import check_calibration_batches

        if not self.precisions:
            raise MLProfError("give at least one precision", field="--precisions")
        if not self.calibrated() and self.calibration_batches != DEFAULT_CALIBRATION_BATCHES:
            raise MLProfError(f"applies to {listed(CALIBRATED_PRECISIONS)} only (not in "
                              "--precisions)", field="--calibration-batches")
        check_calibration_batches(self.calibration_batches)

    def precision_overrides(self) -> list[dict[str, object]]:
        """The parameters of each precision's measurement: ``precision`` and, for
        int8-static, ``calibration_batches``."""
        return [{"precision": p, "calibration_batches": self.calibration_batches
                 if PRECISION_TABLE[p].calibrated else DEFAULT_CALIBRATION_BATCHES}
                for p in self.precisions]

    def calibrated(self) -> bool:
        """Whether one of the precisions is calibrated (``--calibration-batches`` applies)."""
        return any(PRECISION_TABLE[p].calibrated for p in self.precisions)

    def precisions_part(self) -> str:
        """The precisions as a path part: "" for fp32 alone, ``prec-int8-dynamic``,
        ``prec-fp32+int8-static-cal16`` (the calibration when int8-static is among them)."""
        if tuple(self.precisions) == (DEFAULT_PRECISION,):
            return ""
        cal = self.calibration_batches if self.calibrated() else 0
        return layout.precision_segment(layout.PrecisionKey("+".join(self.precisions), cal))


class RuntimeMixin(BaseTask):
    """``--runtime``, ``--runtime-version`` and ``--device``."""

    exclude_index = True

    runtime = RuntimeParameter(default=_default_runtime(), description="inference runtime "
                               "(see `mlprof system-info` for the installed ones)")
    runtime_version = luigi.Parameter(default="", description="measure with this version of "
                                      "the runtime (e.g. 1.20.1 or onnxruntime==1.20.1), in a "
                                      "cached virtual environment; default: the installed one")
    device = luigi.Parameter(default="cpu", description="device to run on: cpu")

    @classmethod
    def modify_param_values(cls, params):
        """The default runtime of a model that ONNX Runtime does not measure is its engine's
        (``inference_engine: tf`` -> tensorflow), as MLProf's YAML decides the engine."""
        params = super().modify_param_values(params)

        if params.get("runtime") == DEFAULT_RUNTIME and params.get("model_file"):
            try:
                kind = model_kind(params["model_file"])
            except MLProfError:  # reported by the task itself
                return params
            if not runtime_info(DEFAULT_RUNTIME).measures(kind):
                params["runtime"] = engine_runtime(kind)
        return params

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

        check_device(self.runtime, self.device)
        if self.runtime_version:
            from mlprof.measure.venvs import parse_runtime_version

            self.runtime_version = parse_runtime_version(self.runtime, self.runtime_version)
        else:  # the installed version is measured: it must be there
            from mlprof.runtimes import check_installed

            check_installed(self.runtime)

    @property
    def runtime_info(self):
        """The runtime's registration (capabilities, package, aliases)."""

        return runtime_info(self.runtime)

    @property
    def resolved_runtime_version(self) -> str:
        """--runtime-version, else the installed version of the runtime."""

        return self.runtime_version or runtime_version(self.runtime)

    @property
    def uses_venv(self) -> bool:
        """Whether the measurement runs in another environment (another runtime version)."""

        return bool(self.runtime_version) and self.runtime_version != runtime_version(
            self.runtime)

    def runtime_segment(self) -> str:
        """``<runtime>-<version>__<device>``."""
        return layout.runtime_segment([(self.runtime, self.resolved_runtime_version)],
                                      self.device)


def _setting_parameter(name: str) -> luigi.Parameter:
    """The law parameter of measurement setting ``name``, from its one definition in
    :mod:`mlprof.measure.settings` (type, default and help text)."""
    from mlprof.measure.settings import setting

    s = setting(name)
    cls = {int: AsciiIntParameter, float: AsciiFloatParameter}.get(s.type, luigi.Parameter)
    param: Any = cls(default=s.default, description=f"{s.help}; default: {s.default}")
    param._mlprof_name = name.replace("_", "-")  # named in the ASCII-digits error
    return param


class MeasurementMixin(BaseTask):
    """How to measure: calls, events, warm-up, minimum duration, input data, threads."""

    exclude_index = True

    n_calls = _setting_parameter("n_calls")
    n_events = _setting_parameter("n_events")
    warmup = _setting_parameter("warmup")
    min_duration = _setting_parameter("min_duration")
    input_data = _setting_parameter("input_data")
    threads = _setting_parameter("threads")

    tfaot_batch_rules = luigi.Parameter(default="", description="AOT (tfaot) models only: how "
                                        "batch sizes that were not compiled are composed of "
                                        "compiled ones, MLProf's syntax: dash-separated "
                                        "target:size,size,... (15:1,2,4,8-3:ones); default: "
                                        "CMSSW's rule")
    oversubscribe = luigi.BoolParameter(default=False, significant=False, description="allow "
                                        "--threads above this machine's logical CPUs")

    MEASURE_PARAMS = ("n_calls", "n_events", "warmup", "min_duration", "input_data", "threads")
    param_reasons = {"oversubscribe": "only permits a --threads above this machine's CPUs; the "
                                      "threads themselves are in the path"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.settings import (
            check_calls_per_round,
            check_setting,
            check_threads_here,
            quick,
        )

        quick()  # $MLP_QUICK, which the defaults read: a value it does not take is one line
        # the one validation of every setting (the harness applies the same)
        for name in self.MEASURE_PARAMS:
            check_setting(name, getattr(self, name))
        check_calls_per_round(self.n_calls, self.n_events)
        check_threads_here(self.threads, allow_more=self.oversubscribe)
        self._input_data = check_setting("input_data", self.input_data)
        self._batch_rules = check_setting("tfaot_batch_rules", self.tfaot_batch_rules)

    def measure_key(self) -> layout.MeasureKey:
        """The measurement settings as the layout keys them."""
        file_hash = None
        if self._input_data not in ("random", "incremental", "zeros", "ones"):
            from mlprof.util import sha256_file

            file_hash = sha256_file(self._input_data)
        return layout.MeasureKey(self.n_calls, self.n_events, self.warmup, self.min_duration,
                                 self.threads, layout.input_tag(self._input_data, file_hash),
                                 self._batch_rules)

    def measure_settings(self, batch_size: int, runtime: str, device: str,
                         precision: str = "fp32"):
        """The harness settings for one batch size."""
        from mlprof.measure import MeasureSettings

        return MeasureSettings(batch_size=int(batch_size), runtime=runtime, device=device,
                               precision=precision,
                               threads=self.threads, n_calls=self.n_calls,
                               n_events=self.n_events, warmup=self.warmup,
                               min_duration=self.min_duration, input_data=self._input_data,
                               tfaot_batch_rules=self._batch_rules)


class BatchSizesMixin(BaseTask):
    """``--batch-sizes``: the batch sizes of a sweep."""

    exclude_index = True

    batch_sizes = BatchSizesParameter(default=DEFAULT_BATCH_SIZES, description="comma-separated "
                                      "batch sizes; default: 1,2,4,...,1024")

    @property
    def bs_tag(self) -> str:
        """The batch sizes as a file-name part."""
        return layout.batch_sizes_tag(self.batch_sizes)


class PlotMixin(BaseTask):
    """MLProf's plot options; each one that is not the default reaches the plot's file name."""

    exclude_index = True

    x_log = luigi.BoolParameter(default=True, parsing=luigi.BoolParameter.EXPLICIT_PARSING,
                                description="logarithmic (base 2) x-axis; default: True, since "
                                "batch sizes are usually powers of two (--x-log False: linear)")
    y_log = luigi.BoolParameter(default=False, parsing=luigi.BoolParameter.EXPLICIT_PARSING,
                                description="logarithmic y-axis (--y-log or --y-log True)")
    y_min = luigi.OptionalFloatParameter(default=None, description="y-axis minimum in ms "
                                         "(per event or per batch, as plotted); default: auto")
    y_max = luigi.OptionalFloatParameter(default=None, description="y-axis maximum in ms; "
                                         "default: auto")
    bs_normalized = luigi.BoolParameter(default=True, parsing=luigi.BoolParameter.EXPLICIT_PARSING,
                                        description="divide by the batch size (time per event); "
                                        "default: True")
    error_style = luigi.ChoiceParameter(default="band", choices=("band", "bars"),
                                        description="16-84 percentile range as band or bars")
    top_right_label = luigi.Parameter(default=law.NO_STR, description="text over the top right "
                                      "corner; default: runtime, device and CPU")
    file_types = law.CSVParameter(default=("pdf",), choices=("pdf", "png", "svg"), unique=True,
                                  description="plot file types; default: pdf")
    plot_postfix = luigi.Parameter(default=law.NO_STR, description="postfix added with two "
                                   "underscores to plot file names")
    y_axis = luigi.ChoiceParameter(default="latency", choices=("latency", "efficiency"),
                                   description="latency, or efficiency: the achieved GFLOP/s "
                                   "(the ONNX graph's FLOPs at the median latency) over the "
                                   "runtime's measured GEMM peak (MeasurePeak)")
    view_cmd = luigi.Parameter(default=law.NO_STR, significant=False,
                               description="command to open the plots with, e.g. imgcat")

    param_reasons = {"view_cmd": "only opens the finished plots in a viewer"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        import math

        for flag, value in (("--y-min", self.y_min), ("--y-max", self.y_max)):
            if value is not None and not math.isfinite(value):
                raise MLProfError(f"must be a finite number, got {value!r}", field=flag)
        if self.y_min is not None and self.y_max is not None and self.y_min >= self.y_max:
            raise MLProfError(f"--y-min ({self.y_min:g}) must be below --y-max "
                              f"({self.y_max:g})", field="--y-min")
        if self.y_log and self.y_min is not None and self.y_min <= 0:
            raise MLProfError(f"must be > 0 on a logarithmic axis, got {self.y_min:g}",
                              field="--y-min")
        if not self.file_types:
            raise MLProfError("give at least one of pdf, png, svg", field="--file-types")
        if self.y_axis == "efficiency":
            refuse_given(self, ("y_min", "y_max", "bs_normalized"), "applies to latency "
                         "plots only (an efficiency is a fraction of the peak per call)")

    def complete(self) -> bool:
        done = super().complete()
        if not done:  # the sweep's server start imports the plot modules (note_pending_plot)
            from mlprof.tasks.framework.workflow import note_pending_plot

            note_pending_plot(self.file_types)
        return done

    def plot_options(self) -> dict:
        """Plot options for :mod:`mlprof.plotting`."""
        return {
            "x_log": self.x_log, "y_log": self.y_log, "y_min": self.y_min, "y_max": self.y_max,
            "bs_normalized": self.bs_normalized, "error_style": self.error_style,
            "top_right_label": None if self.top_right_label == law.NO_STR else
            self.top_right_label,
        }

    def plot_tag(self, labels: tuple[str, ...] = ()) -> str:
        """File-name part for every non-default plot option and every given label (so a plot
        with other options or labels never shares a file with this one)."""

        o = self.plot_options()
        tags = []
        if not o["x_log"]:
            tags.append("xlin")
        if o["y_log"]:
            tags.append("ylog")
        if not o["bs_normalized"]:
            tags.append("perbatch")
        if o["error_style"] != "band":
            tags.append(o["error_style"])
        if o["y_min"] is not None or o["y_max"] is not None:
            tags.append(f"y{float_tag(o['y_min']) if o['y_min'] is not None else ''}-"
                        f"{float_tag(o['y_max']) if o['y_max'] is not None else ''}")
        if o["top_right_label"]:
            tags.append("trl" + short_hash(o["top_right_label"], length=6))
        if labels:
            tags.append("lbl" + short_hash(*labels, length=6))
        if self.y_axis != "latency":
            tags.append(self.y_axis)
        if self.plot_postfix != law.NO_STR:
            tags.append(layout.path_safe(self.plot_postfix))
        return "__" + "_".join(tags) if tags else ""

    def plot_targets(self, stem: str, labels: tuple[str, ...] = ()) -> dict:
        """One target per file type."""
        return self.declared_outputs(stem=stem, tag=self.plot_tag(labels),
                                     file_types=tuple(self.file_types))

    def view(self, paths: list[str]) -> None:
        """Run --view-cmd on the plots, if given."""
        if self.view_cmd == law.NO_STR:
            return
        import shlex
        import subprocess

        for p in paths:
            subprocess.call(shlex.split(self.view_cmd) + [p])


class StoresMixin(BaseTask):
    """``--stores``: the stores whose results a report reads."""

    exclude_index = True

    stores = law.CSVParameter(default=(), description="comma-separated store directories; "
                              "default: $MLP_STORE")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for s in self.stores:
            if not str(s).strip():
                raise MLProfError("an empty store path (an unset variable?)", field="--stores")
            if not os.path.isdir(expand_path(s)):
                raise MLProfError("no such store directory", expand_path(s), "--stores")

    def resolved_stores(self) -> list[str]:
        """--stores as absolute paths (each store once, however it is spelled or linked), or
        the current store."""
        stores = [expand_path(s) for s in self.stores] or [layout.store_base()]
        unique: dict[str, str] = {}
        for s in stores:
            unique.setdefault(os.path.realpath(s), s)
        return list(unique.values())

    def stores_segment(self) -> str:
        """``stores_<hash>`` of the resolved stores."""
        return layout.stores_segment(self.resolved_stores())


class ThreadsMixin(BaseTask):
    """``--threads`` alone, for tasks that measure the machine rather than a model (the peak)."""

    exclude_index = True

    threads = _setting_parameter("threads")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.settings import (
            check_setting,
            check_threads_here,
        )

        check_setting("threads", self.threads)
        check_threads_here(self.threads, allow_more=False)


class LogYMixin(BaseTask):
    """``--y-log``: explicit (True, False) or, by default, automatic.

    Automatic: a logarithmic y axis when the plotted values span more than a decade
    (:func:`mlprof.plotting.runtimes.use_log_y`), so that a sweep from batch size 1 to 1024 does
    not put everything beyond 32 on zero. The choice reaches the file name: ``__ylog`` for
    ``--y-log True``, ``__ylin`` for ``--y-log False``, nothing for the automatic axis.
    """

    exclude_index = True

    y_log = luigi.OptionalBoolParameter(
        default=None, parsing=luigi.BoolParameter.EXPLICIT_PARSING,
        description="logarithmic y-axis: True or False; default: automatic (logarithmic when "
        "the plotted values span more than a factor of 10)")

    def plot_tag(self, labels: tuple[str, ...] = ()) -> str:
        """The plot options' file-name part, with ``ylin`` for a forced linear y axis."""
        tag = super().plot_tag(labels)  # type: ignore[misc]  (PlotMixin's, after this in the MRO)
        if self.y_log is not False:
            return tag
        parts = tag[2:].split("_") if tag else []
        parts.insert(1 if parts[:1] == ["xlin"] else 0, "ylin")
        return "__" + "_".join(parts)
