"""Parameter mixins: each owns its parameters *and* its segment of the output path."""

from __future__ import annotations

import os

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.tasks.base import BaseTask, path_safe
from mlprof.util import float_tag, short_hash

DEFAULT_MODEL = "$MLP_BASE/examples/dnn/model_onnx_l10u128.yaml"
DEFAULT_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def expand_path(value: str) -> str:
    """Expand ``~`` and variables and make the path absolute."""
    return os.path.abspath(os.path.expandvars(os.path.expanduser(str(value))))


def expand_model_file(value: str) -> str:
    """Like :func:`expand_path`, keeping a ``::HASH`` suffix (script models)."""
    path, sep, rest = str(value).partition("::")
    return expand_path(path) + sep + rest.strip().lower()


class PathParameter(luigi.Parameter):
    """A file path (``script.py::HASH`` too), made absolute so equal files give equal ids."""

    def normalize(self, x):
        return expand_model_file(x) if x not in (None, "") else x


class PathsParameter(law.CSVParameter):
    """Comma-separated file paths with brace expansion and globs, made absolute."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("brace_expand", True)
        super().__init__(*args, **kwargs)

    def normalize(self, x):
        import glob

        paths = []
        for p in super().normalize(x):
            p = expand_model_file(p)
            if any(c in p for c in "*?["):
                matches = sorted(glob.glob(p))
                if not matches:
                    raise MLProfError(f"no file matches {p!r}", field="--model-files")
                paths.extend(matches)
            else:
                paths.append(p)
        return tuple(dict.fromkeys(paths))


class RuntimeParameter(luigi.Parameter):
    """A runtime name; aliases (``ort``) resolve to the canonical name."""

    def normalize(self, x):
        from mlprof.runtimes import canonical_runtime

        return canonical_runtime(x)


class RuntimesParameter(law.CSVParameter):
    """Comma-separated runtime names (aliases resolved, duplicates dropped)."""

    def normalize(self, x):
        from mlprof.runtimes import canonical_runtime

        return tuple(dict.fromkeys(canonical_runtime(r) for r in super().normalize(x)))


class BatchSizesParameter(law.CSVParameter):
    """Comma-separated batch sizes (>= 1), made unique and sorted."""

    def __init__(self, *args, **kwargs):
        kwargs.update(cls=luigi.IntParameter, unique=True, sort=True)
        super().__init__(*args, **kwargs)

    def normalize(self, x):
        sizes = super().normalize(x)
        if not sizes:
            raise MLProfError("give at least one batch size", field="--batch-sizes")
        bad = [b for b in sizes if int(b) < 1]
        if bad:
            raise MLProfError(f"batch sizes must be >= 1, got {', '.join(map(str, bad))}",
                              field="--batch-sizes")
        return sizes


def batch_sizes_tag(sizes: tuple[int, ...]) -> str:
    """``bs_1_2_4``, or ``bs_1-1024_n11_<hash>`` for long lists."""
    sizes = tuple(int(b) for b in sizes)
    if len(sizes) <= 6:
        return "bs_" + "_".join(map(str, sizes))
    return f"bs_{sizes[0]}-{sizes[-1]}_n{len(sizes)}_{short_hash(*sizes, length=6)}"


class ScriptMixin(BaseTask):
    """How model scripts run: ``--script-args`` and ``--max-depth``."""

    script_args = luigi.Parameter(default="", description="arguments for model scripts, e.g. "
                                  "'--batch_size 8 --max_seq_length 64'")
    max_depth = luigi.IntParameter(default=0, description="discover sub-modules down to this "
                                   "depth (0: models the script calls itself)")

    @property
    def script_argv(self) -> tuple[str, ...]:
        """--script-args split like a shell would."""
        import shlex

        try:
            return tuple(shlex.split(self.script_args))
        except ValueError as e:
            raise MLProfError(f"cannot split {self.script_args!r}: {e}",
                              field="--script-args") from None

    def script_tag(self) -> str:
        """Path part for the script arguments and depth (empty by default)."""
        tags = []
        if self.script_argv:
            tags.append("args-" + short_hash(*self.script_argv, length=6))
        if self.max_depth:
            tags.append(f"depth{self.max_depth}")
        return "_".join(tags)


class ExportMixin(BaseTask):
    """How script models are exported to ONNX."""

    opset = luigi.IntParameter(default=0, description="ONNX opset for exports; default: "
                               "$MLP_ONNX_OPSET or 18")
    precision = luigi.ChoiceParameter(default="fp32", choices=("fp32", "fp16"),
                                      description="precision of exported ONNX models")
    ort_optimize = luigi.BoolParameter(default=False, description="save ONNX Runtime's "
                                       "offline-optimized graph as the exported model")
    atol = luigi.FloatParameter(default=law.NO_FLOAT, description="absolute tolerance of the "
                                "export check; default: 1e-4 (fp32), 1e-2 (fp16)")
    rtol = luigi.FloatParameter(default=law.NO_FLOAT, description="relative tolerance of the "
                                "export check; default: 1e-3 (fp32), 1e-2 (fp16)")

    @property
    def resolved_opset(self) -> int:
        """--opset, else $MLP_ONNX_OPSET, else the default."""
        from mlprof.model.export import default_opset

        return self.opset or default_opset()

    def export_tag(self) -> str:
        """``onnx-op18-fp32`` (+ ``-ortopt``, tolerances when given)."""
        tag = f"onnx-op{self.resolved_opset}-{self.precision}"
        if self.ort_optimize:
            tag += "-ortopt"
        if self.atol != law.NO_FLOAT or self.rtol != law.NO_FLOAT:
            tag += f"-tol{short_hash(self.atol, self.rtol, length=4)}"
        return tag


class ModelMixin(ScriptMixin, ExportMixin):
    """One model: ``--model-file`` (YAML, ONNX or ``script.py[::HASH]``), name and label."""

    model_file = PathParameter(default=DEFAULT_MODEL, description="model YAML (MLProf format), "
                               ".onnx file or Python model script (script.py or script.py::HASH)"
                               "; default: the 10x128 example DNN")
    model_name = luigi.Parameter(default=law.NO_STR, description="name in output paths; "
                                 "default: the YAML's name, else the file name")
    model_label = luigi.Parameter(default=law.NO_STR, description="label in plots; default: the "
                                  "YAML's label, else its name")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.model import read_model_file

        # read (and check) the model file up front: bad input fails before anything runs
        self.model_spec = read_model_file(self.model_file)
        if self.model_spec.is_script and not _outputs_exist(self):
            # the script will run in the measurement server: start it (it imports torch,
            # ~2.5 s) now, so that this overlaps with law's start-up and scheduling
            from mlprof.measure.isolate import prestart

            prestart(torch=True)

    @property
    def resolved_model_name(self) -> str:
        """--model-name, else the spec's name."""
        return self.model_name if self.model_name != law.NO_STR else self.model_spec.name

    @property
    def resolved_model_label(self) -> str:
        """--model-label, else the spec's label."""
        return self.model_label if self.model_label != law.NO_STR else self.model_spec.label

    @property
    def is_script(self) -> bool:
        """Whether the model is a Python script."""
        return self.model_spec.is_script

    def store_parts(self):
        parts = super().store_parts()
        content = self.model_spec.content_hash
        if self.is_script:
            content = short_hash(content, *self.script_argv, self.max_depth, length=64)
        parts["model"] = model_segment(self.resolved_model_name, content)
        return parts


def _outputs_exist(task) -> bool:
    """Whether all outputs of ``task`` exist (False if they cannot be known yet)."""
    try:
        return all(t.exists() for t in law.util.flatten(task.output()))
    except Exception:
        return False


def model_segment(name: str, content_hash: str) -> str:
    """``<name>__<8 hex of the model files' sha256>``."""
    return f"{path_safe(name, 48)}__{content_hash[:8]}"


class RuntimeMixin(BaseTask):
    """``--runtime`` and ``--device``; the path segment also carries the runtime's version."""

    runtime = RuntimeParameter(default="onnxruntime", description="inference runtime: "
                               "onnxruntime (alias ort)")
    runtime_version = luigi.Parameter(default="", description="measure with this version of "
                                      "the runtime (e.g. 1.20.1 or onnxruntime==1.20.1), in a "
                                      "cached virtual environment; default: the installed one")
    device = luigi.Parameter(default="cpu", description="device to run on: cpu")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.runtimes import check_device

        check_device(self.runtime, self.device)
        if self.runtime_version:
            from mlprof.measure.venvs import parse_runtime_version

            self.runtime_version = parse_runtime_version(self.runtime, self.runtime_version)

    @property
    def resolved_runtime_version(self) -> str:
        """--runtime-version, else the installed version of the runtime."""
        from mlprof.runtimes import runtime_version

        return self.runtime_version or runtime_version(self.runtime)

    @property
    def uses_venv(self) -> bool:
        """Whether the measurement runs in another environment (another runtime version)."""
        from mlprof.runtimes import runtime_version

        return bool(self.runtime_version) and self.runtime_version != runtime_version(
            self.runtime)

    def store_parts(self):
        parts = super().store_parts()
        parts["runtime"] = f"{self.runtime}-{self.resolved_runtime_version}__{self.device}"
        return parts


class MeasurementMixin(BaseTask):
    """How to measure: calls, events, warm-up, minimum duration, input data, threads."""

    n_calls = luigi.IntParameter(default=100, description="timed calls per event; default: 100")
    n_events = luigi.IntParameter(default=1, description="events (distinct inputs) per batch "
                                  "size; default: 1")
    warmup = luigi.IntParameter(default=10, description="untimed calls after the first call; "
                                "default: 10")
    min_duration = luigi.FloatParameter(default=0.5, description="keep measuring in rounds of "
                                        "n-calls per event until this many seconds; default: 0.5")
    input_data = luigi.Parameter(default="random", description="random, incremental, zeros, "
                                 "ones, or a .npz/.npy file; default: random")
    threads = luigi.IntParameter(default=1, description="intra-op threads (0: the runtime's "
                                 "default); default: 1")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.inputs import check_input_data

        for name, minimum in (("n_calls", 1), ("n_events", 1), ("warmup", 0), ("threads", 0)):
            if getattr(self, name) < minimum:
                raise MLProfError(f"must be >= {minimum}, got {getattr(self, name)}",
                                  field="--" + name.replace("_", "-"))
        if self.min_duration < 0:
            raise MLProfError(f"must be >= 0, got {self.min_duration}", field="--min-duration")
        self._input_data = check_input_data(self.input_data)

    @property
    def input_tag(self) -> str:
        """The input data kind, or ``file-<stem>-<hash>`` for an input file."""
        if self._input_data in ("random", "incremental", "zeros", "ones"):
            return self._input_data
        from mlprof.util import sha256_file

        stem = path_safe(os.path.splitext(os.path.basename(self._input_data))[0], 24)
        return f"file-{stem}-{sha256_file(self._input_data)[:8]}"

    def store_parts(self):
        parts = super().store_parts()
        settings = (f"calls{self.n_calls}_events{self.n_events}_warmup{self.warmup}"
                    f"_mindur{float_tag(self.min_duration)}_threads{self.threads}"
                    f"_input-{self.input_tag}")
        # script models measured on an exported ONNX file: how it was exported matters too
        if getattr(self, "is_script", False) and getattr(self, "runtime", "") == "onnxruntime":
            settings += "__" + self.export_tag()
        parts["settings"] = settings
        return parts

    def measure_settings(self, batch_size: int):
        """The harness settings for one batch size."""
        from mlprof.measure import MeasureSettings

        return MeasureSettings(batch_size=int(batch_size), runtime=self.runtime,
                               device=self.device, threads=self.threads, n_calls=self.n_calls,
                               n_events=self.n_events, warmup=self.warmup,
                               min_duration=self.min_duration, input_data=self._input_data)


class BatchSizesMixin(BaseTask):
    """``--batch-sizes``: the batch sizes of a sweep."""

    batch_sizes = BatchSizesParameter(default=DEFAULT_BATCH_SIZES, description="comma-separated "
                                      "batch sizes; default: 1,2,4,...,1024")

    @property
    def bs_tag(self) -> str:
        """The batch sizes as a file-name part."""
        return batch_sizes_tag(self.batch_sizes)


class PlotMixin(BaseTask):
    """MLProf's plot options."""

    x_log = luigi.BoolParameter(default=True, parsing=luigi.BoolParameter.EXPLICIT_PARSING,
                                description="logarithmic (base 2) x-axis; default: True, since "
                                "batch sizes are usually powers of two (--x-log False: linear)")
    y_log = luigi.BoolParameter(default=False, parsing=luigi.BoolParameter.EXPLICIT_PARSING,
                                description="logarithmic y-axis (--y-log or --y-log True)")
    y_min = luigi.FloatParameter(default=law.NO_FLOAT, description="y-axis minimum")
    y_max = luigi.FloatParameter(default=law.NO_FLOAT, description="y-axis maximum")
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
    view_cmd = luigi.Parameter(default=law.NO_STR, significant=False,
                               description="command to open the plots with, e.g. imgcat")

    def plot_options(self) -> dict:
        """Plot options for :mod:`mlprof.plotting`."""
        return {
            "x_log": self.x_log, "y_log": self.y_log,
            "y_min": None if self.y_min == law.NO_FLOAT else self.y_min,
            "y_max": None if self.y_max == law.NO_FLOAT else self.y_max,
            "bs_normalized": self.bs_normalized, "error_style": self.error_style,
            "top_right_label": None if self.top_right_label == law.NO_STR else
            self.top_right_label,
        }

    def plot_tag(self) -> str:
        """File-name part for every non-default plot option (so options never share a file)."""
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
        if self.plot_postfix != law.NO_STR:
            tags.append(path_safe(self.plot_postfix))
        return "__" + "_".join(tags) if tags else ""

    def plot_targets(self, stem: str) -> dict[str, law.LocalFileTarget]:
        """One target per file type."""
        return {ext: self.local_target(f"{stem}{self.plot_tag()}.{ext}")
                for ext in self.file_types}

    def view(self, paths: list[str]) -> None:
        """Run --view-cmd on the plots, if given."""
        if self.view_cmd == law.NO_STR:
            return
        import shlex
        import subprocess

        for p in paths:
            subprocess.call(shlex.split(self.view_cmd) + [p])
