"""Runtimes behind one interface (:class:`mlprof.runtimes.base.Runtime`), found by name.

The registry holds one :class:`RuntimeInfo` per runtime: its name and aliases, where its class
lives (a ``module:Class`` string, imported only by :func:`get_runtime`), the package whose
version is recorded, and what it can do (devices, model kinds, whether model scripts go through
their ONNX export first, whether the measurement needs torch, whether the first call
compiles). Looking a name up imports no runtime library, so the tasks can build output paths
cheaply.

Code outside this package asks the registry (``runtime_info(name).needs_export``, ...) instead
of comparing runtime names. Adding a runtime is one module with a
:class:`~mlprof.runtimes.base.Runtime` subclass plus one :func:`register` call below; the class
reads its name, aliases, package and devices from that registration.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from mlprof.errors import MLProfError
from mlprof.runtimes import precisions as _precisions
from mlprof.runtimes.precisions import runtime_precisions
from mlprof.util import did_you_mean

#: what a compiling runtime's ``compile_cache`` may say (:class:`mlprof.runtimes.base.Compiled`):
#: the compiled code came from the store's cache (``hit``), was made and kept there (``miss``),
#: or no cache was used (``none``: ``MLP_COMPILE_CACHE=0``, or a cache directory refused: a
#: link on its way or not writable, ``runtime_settings.compile.cache_refused`` says which)
COMPILE_CACHE_STATES = ("hit", "miss", "none")

#: model kinds: ONNX models (a YAML spec or an ``.onnx`` file), Python model scripts, and
#: TensorFlow models (``inference_engine: tf``: a frozen graph or a SavedModel; ``tfaot``: a
#: SavedModel compiled ahead of time for chosen batch sizes)
ONNX_MODEL = "onnx"
SCRIPT_MODEL = "script"
TF_MODEL = "tf"
TFAOT_MODEL = "tfaot"
MODEL_KINDS = (ONNX_MODEL, SCRIPT_MODEL, TF_MODEL, TFAOT_MODEL)
_KIND_TEXT = {ONNX_MODEL: "ONNX/YAML models", SCRIPT_MODEL: "Python model scripts (.py)",
              TF_MODEL: "TensorFlow models (inference_engine: tf)",
              TFAOT_MODEL: "AOT TensorFlow models (inference_engine: tfaot)"}
#: the precisions mlprof measures at (``--precision``), by these names so that scripts and
#: experiment files can rely on them, with int8-static's calibration default and what people
#: type for them: from THE precision table, :mod:`mlprof.runtimes.precisions`
PRECISIONS = _precisions.PRECISIONS
DEFAULT_PRECISION = _precisions.DEFAULT_PRECISION
DEFAULT_CALIBRATION_BATCHES = _precisions.DEFAULT_CALIBRATION_BATCHES
_PRECISION_HINTS = _precisions.HINTS


def check_precision(value: object, field: str = "--precision") -> str:
    """``value`` as one of :data:`PRECISIONS` (case and blanks ignored), or a one-line error
    naming ``field`` (and what was probably meant)."""
    text = str(value).strip().lower().replace("_", "-")
    if text in PRECISIONS:
        return text
    # worded as an unknown runtime or device is: the suggestion first, then the valid names
    hint = _PRECISION_HINTS.get(text)
    close = f"; did you mean {hint}?" if hint else did_you_mean(text, PRECISIONS)
    raise MLProfError(f"unknown precision {str(value)[:40]!r}{close}{' ' if close else '; '}"
                      f"one of {', '.join(PRECISIONS)}", field=field)


_IS_TEXT = {ONNX_MODEL: "an ONNX/YAML model", SCRIPT_MODEL: "a Python model script",
            TF_MODEL: "a TensorFlow model (inference_engine: tf)",
            TFAOT_MODEL: "an AOT TensorFlow model (inference_engine: tfaot)"}


@dataclass(frozen=True)
class RuntimeInfo:
    """What mlprof knows about one runtime without importing it."""

    #: canonical name, used in output paths
    name: str
    #: ``"module:Class"`` of its :class:`~mlprof.runtimes.base.Runtime` subclass
    target: str
    #: the distribution whose version is recorded (and part of the output path)
    package: str
    #: other names accepted on the command line
    aliases: tuple[str, ...] = ()
    devices: tuple[str, ...] = ("cpu",)
    #: what the runtime itself measures: ``"onnx"`` (YAML/ONNX model files) and/or ``"script"``
    #: (Python model scripts)
    model_kinds: tuple[str, ...] = (ONNX_MODEL,)
    #: model scripts are measured through their ONNX export (ExportOnnx runs first)
    needs_export: bool = False
    #: measures the script's PyTorch model itself (needs the discovery manifest)
    runs_script: bool = False
    #: the measurement process must import torch
    needs_torch: bool = False
    #: pip package for measuring another version in a cached venv (None: not supported)
    venv_package: str | None = None
    #: how plots and reports name it ("ONNX Runtime"); default: the name
    label: str = ""
    #: what compiles the model at the first call of each batch size ("torch.compile"), for
    #: progress messages; empty: the first call does not compile
    compiler: str = ""
    #: the optional extra of mlprof that installs the runtime's library ("" : always installed)
    extra: str = ""
    #: the runtime's own per-operator profiler, read by :mod:`mlprof.measure.profile` through
    #: :meth:`Runtime.op_profiler <mlprof.runtimes.base.Runtime.op_profiler>` (empty: none)
    profiler: str = ""
    #: whether :mod:`mlprof.measure.peak` has a GEMM microbenchmark on it (the machine's peak
    #: for ``--y-axis efficiency``)
    peak_benchmark: bool = False
    #: the precisions (:data:`PRECISIONS`) it measures at
    precisions: tuple[str, ...] = (DEFAULT_PRECISION,)
    #: those of :attr:`precisions` it measures on a converted ONNX model (the QuantizeModel
    #: task makes it); the others it applies itself (an inference precision hint, autocast)
    converted_precisions: tuple[str, ...] = ()
    #: those of :attr:`precisions` it runs only on a CPU with native instructions for them
    #: (:data:`mlprof.model.precision.NATIVE_ISA`): elsewhere the runtime would silently
    #: compute in fp32, so the combination is refused up front
    native_precisions: tuple[str, ...] = ()
    #: the points of one sweep may share a measurement process, one after another
    #: (:func:`mlprof.measure.harness.measure_isolated`'s ``reuse``): each has its own session,
    #: and nothing the runtime keeps per process changes what a later one measures
    reuses_process: bool = False
    #: its generation backend (issue 37, :mod:`mlprof.measure.generation`), ``module:Class``
    #: (empty: it does not generate)
    generation: str = ""

    def __post_init__(self) -> None:
        problems = []
        if not self.name or self.name != self.name.strip().lower():
            problems.append("the name must be lower case without surrounding blanks")
        if any(a != a.strip().lower() for a in self.aliases):
            problems.append("aliases must be lower case without surrounding blanks")
        module, sep, cls = self.target.partition(":")
        if not (module and sep and cls):
            problems.append(f"target {self.target!r} is not 'module:Class'")
        unknown = [k for k in self.model_kinds if k not in MODEL_KINDS]
        if unknown or not self.model_kinds:
            problems.append(f"model_kinds must be some of {MODEL_KINDS}, got {self.model_kinds}")
        if not self.devices:
            problems.append("no devices")
        if self.needs_export and (SCRIPT_MODEL in self.model_kinds
                                  or ONNX_MODEL not in self.model_kinds):
            problems.append("needs_export is for runtimes that measure ONNX models only")
        if self.runs_script and SCRIPT_MODEL not in self.model_kinds:
            problems.append("runs_script needs 'script' in model_kinds")
        if (DEFAULT_PRECISION not in self.precisions
                or any(p not in PRECISIONS for p in self.precisions)
                or any(p not in self.precisions for p in (*self.converted_precisions,
                                                          *self.native_precisions))):
            problems.append(f"precisions must be some of {PRECISIONS} with fp32, and "
                            "converted/native ones among them")
        if problems:
            raise ValueError(f"runtime {self.name!r}: " + "; ".join(problems))
        if not self.label:
            object.__setattr__(self, "label", self.name)

    @property
    def compiles_on_first_call(self) -> bool:
        """Whether the first call of each batch size compiles the model (it may take minutes)."""
        return bool(self.compiler)

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name and every alias."""
        return (self.name, *self.aliases)

    def measures(self, kind: bool | str) -> bool:
        """Whether models of this kind (one of :data:`MODEL_KINDS`; ``True``/``False``: a
        script or an ONNX model) can be measured (model scripts also via their export)."""
        kind = _kind(kind)
        if kind == SCRIPT_MODEL:
            return SCRIPT_MODEL in self.model_kinds or self.needs_export
        return kind in self.model_kinds


def _kind(kind: bool | str) -> str:
    """A model kind from a kind or from the older ``is_script`` flag."""
    if isinstance(kind, bool):
        return SCRIPT_MODEL if kind else ONNX_MODEL
    return kind


_REGISTRY: dict[str, RuntimeInfo] = {}
#: every accepted name (canonical and aliases) -> canonical name
_LOOKUP: dict[str, str] = {}


def register(info: RuntimeInfo) -> RuntimeInfo:
    """Add a runtime to the registry (before its class's module is imported).

    Registering the same information twice is a no-op; a name or alias that is taken already
    raises ``ValueError``.
    """
    if _REGISTRY.get(info.name) == info:
        return info
    taken = [n for n in info.names if n in _LOOKUP]
    if taken or len(set(info.names)) != len(info.names):
        raise ValueError(f"runtime {info.name!r}: name or alias already taken: "
                         f"{', '.join(taken) or 'twice in its own names'}")
    _REGISTRY[info.name] = info
    _LOOKUP.update(dict.fromkeys(info.names, info.name))
    return info


register(RuntimeInfo(
    name="onnxruntime", target="mlprof.runtimes.onnxruntime:OnnxRuntime",
    package="onnxruntime", aliases=("ort",), devices=("cpu",), model_kinds=(ONNX_MODEL,),
    needs_export=True, venv_package="onnxruntime", label="ONNX Runtime",
    profiler="ONNX Runtime session profiling", peak_benchmark=True, reuses_process=True,
    generation="mlprof.measure.generation.backends.onnxruntime:OrtGenaiBackend",
    **runtime_precisions("onnxruntime")))
register(RuntimeInfo(
    name="torch", target="mlprof.runtimes.torch:TorchRuntime",
    package="torch", aliases=("torch-eager", "pytorch", "eager"), devices=("cpu",),
    model_kinds=(SCRIPT_MODEL,), runs_script=True, needs_torch=True, label="PyTorch",
    profiler="torch.profiler",
    generation="mlprof.measure.generation.backends.torch:TorchBackend",
    **runtime_precisions("torch")))
register(RuntimeInfo(
    name="torch-compile", target="mlprof.runtimes.torch:TorchCompileRuntime",
    package="torch", aliases=("torch-compiled", "inductor", "compile"), devices=("cpu",),
    model_kinds=(SCRIPT_MODEL,), runs_script=True, needs_torch=True,
    label="PyTorch (torch.compile)", compiler="torch.compile",
    generation="mlprof.measure.generation.backends.torch:TorchCompileBackend"))

register(RuntimeInfo(
    name="openvino", target="mlprof.runtimes.openvino:OpenVinoRuntime",
    package="openvino", aliases=("ov",), devices=("cpu",), model_kinds=(ONNX_MODEL,),
    needs_export=True, venv_package="openvino", label="OpenVINO", extra="openvino",
    profiler="OpenVINO performance counters", reuses_process=True,
    generation="mlprof.measure.generation.backends.openvino:OpenVinoBackend",
    **runtime_precisions("openvino")))
register(RuntimeInfo(
    name="tensorflow", target="mlprof.runtimes.tensorflow:TensorFlowRuntime",
    package="tensorflow-cpu", aliases=("tf",), devices=("cpu",), model_kinds=(TF_MODEL,),
    label="TensorFlow", extra="tf"))
register(RuntimeInfo(
    name="tfaot", target="mlprof.runtimes.tensorflow:TfAotRuntime",
    package="tensorflow-cpu", aliases=("tf-aot",), devices=("cpu",),
    model_kinds=(TFAOT_MODEL,), label="TensorFlow AOT (XLA)", extra="tf"))

#: the runtime used when none is given
DEFAULT_RUNTIME = "onnxruntime"
#: the runtimes PlotGeneration measures when none are given, the reference first (the tokens of
#: the others are checked against it); torch-compile is not among them: its first generate
#: compiles for 19-51 s here, again for every batch size and prompt length
GENERATION_DEFAULT = ("torch", "onnxruntime", "openvino")
#: the reference of a generation comparison when it is measured (else the first runtime)
GENERATION_REFERENCE = "torch"


def generation_runtimes() -> tuple[str, ...]:
    """The runtimes with a generation backend (:attr:`RuntimeInfo.generation`)."""
    return tuple(name for name, info in _REGISTRY.items() if info.generation)


def precision_problem(runtime: str, precision: str) -> str | None:
    """Why ``runtime`` cannot measure at ``precision`` (naming the runtimes that can), None
    when it can (the CPU's instructions are checked by
    :func:`mlprof.model.precision.check_runtime_precision`)."""
    info = runtime_info(runtime)
    precision = check_precision(precision)
    if precision in info.precisions:
        return None
    can = [i.name for i in _REGISTRY.values() if precision in i.precisions]
    return (f"{info.name} does not measure at {precision} (it measures at "
            f"{', '.join(info.precisions)})"
            + (f"; {', '.join(can)} {'does' if len(can) == 1 else 'do'}" if can else ""))


def runtime_info(name: str) -> RuntimeInfo:
    """The registration of a runtime name or alias (``ort`` -> onnxruntime's); unknown names
    fail clearly."""
    canon = _LOOKUP.get(str(name).strip().lower())
    if canon is None:
        known = ", ".join(f"{i.name} (alias {', '.join(i.aliases)})" if i.aliases else i.name
                          for i in _REGISTRY.values())
        hint = did_you_mean(name, [*_REGISTRY, *(a for i in _REGISTRY.values() for a in i.aliases)])
        raise MLProfError(f"unknown runtime {name!r}{hint}{' ' if hint else '; '}available: "
                          f"{known}", field="--runtime")
    return _REGISTRY[canon]


#: the runtime of each model kind's own engine (MLProf's inference_engine)
_ENGINE_RUNTIMES = {ONNX_MODEL: "onnxruntime", SCRIPT_MODEL: "onnxruntime",
                    TF_MODEL: "tensorflow", TFAOT_MODEL: "tfaot"}


def engine_runtime(kind: str) -> str:
    """The runtime that measures models of ``kind`` when no runtime is chosen: the YAML's
    ``inference_engine`` decides, as in MLProf (``tf`` -> tensorflow)."""
    return _ENGINE_RUNTIMES[kind]


def runtime_names() -> tuple[str, ...]:
    """The canonical names, in registration order."""
    return tuple(_REGISTRY)


def runtime_packages() -> tuple[str, ...]:
    """The distinct packages whose versions the runtimes record."""
    return tuple(dict.fromkeys(i.package for i in _REGISTRY.values()))


def registration_of(target: str) -> RuntimeInfo | None:
    """The registration whose class is ``target`` (``"module:Class"``), if any."""
    return next((i for i in _REGISTRY.values() if i.target == target), None)


def canonical_runtime(name: str) -> str:
    """Resolve a runtime name or alias (``ort`` -> ``onnxruntime``); unknown names fail clearly."""
    return runtime_info(name).name


def check_device(runtime: str, device: str) -> str:
    """Validate ``device`` for ``runtime`` and return its canonical (lower-case) name."""
    dev = str(device).strip().lower()
    info = runtime_info(runtime)
    if dev not in info.devices:
        hint = did_you_mean(dev, info.devices)
        raise MLProfError(f"device {device!r} is not supported by {info.name}{hint}"
                          f"{' ' if hint else '; '}supported: {', '.join(info.devices)}",
                          field="--device")
    return dev


def check_model_kind(runtime: str, kind: bool | str, file: str) -> None:
    """Raise :class:`MLProfError` (field ``--runtime``) when ``runtime`` cannot measure ``file``
    of model kind ``kind`` (:attr:`ModelSpec.model_kind <mlprof.model.ModelSpec.model_kind>`;
    ``True``/``False`` for a script/an ONNX model).

    Model scripts are measurable by every runtime that measures scripts itself or measures their
    ONNX export (``needs_export``).
    """
    info = runtime_info(runtime)
    kind = _kind(kind)
    if info.measures(kind):
        return
    can = " or ".join(i.name for i in _REGISTRY.values() if i.measures(kind))
    measures = " and ".join(_KIND_TEXT[k] for k in info.model_kinds)
    raise MLProfError(f"runtime {info.name} measures {measures}; {file} is {_IS_TEXT[kind]}"
                      + (f": use {can}" if can else ""), field="--runtime")


def check_installed(runtime: str) -> None:
    """A one-line error naming the extra to install when ``runtime``'s library is missing."""
    from mlprof.util import dist_version

    info = runtime_info(runtime)
    if info.extra and not dist_version(info.package):
        raise MLProfError(f"runtime {info.name} needs {info.package}, which is not installed: "
                          f"pip install -e '.[{info.extra}]' (setup.sh installs it unless "
                          "MLP_EXTRAS leaves it out)", field="--runtime")


def runtime_version(name: str) -> str:
    """The installed version of a runtime's library, without importing it."""
    from mlprof.util import dist_version

    return dist_version(runtime_info(name).package) or "unknown"


def get_runtime(name: str):
    """Import and return the runtime class for ``name`` (an alias works too)."""
    module, cls = runtime_info(name).target.split(":")
    return getattr(importlib.import_module(module), cls)


def peak_runtimes() -> tuple[str, ...]:
    """The runtimes with a peak microbenchmark (:attr:`RuntimeInfo.peak_benchmark`)."""
    return tuple(n for n in runtime_names() if runtime_info(n).peak_benchmark)


def runtimes_measuring(kinds: list[str] | tuple[str, ...], device: str = "cpu"
                       ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(installed, not installed)``: every registered runtime that can measure a model of one
    of ``kinds`` on ``device`` (:meth:`RuntimeInfo.measures`: a script also through its ONNX
    export, as OpenVINO measures it), in registration order.

    The automatic choice of runtimes (PlotSpeedup without ``--runtimes``) is this, so that a new
    runtime joins it by its registration alone, not by a list in a task."""
    installed: list[str] = []
    missing: list[str] = []
    for info in _REGISTRY.values():
        if not any(info.measures(k) for k in kinds):
            continue
        try:
            check_device(info.name, device)
        except MLProfError:
            continue
        try:
            check_installed(info.name)
        except MLProfError:
            missing.append(info.name)
            continue
        installed.append(info.name)
    return tuple(installed), tuple(missing)


def kinds_text(kinds: list[str] | tuple[str, ...]) -> str:
    """``"a Python model script"``, ``"an ONNX/YAML model or a Python model script"``."""
    return " or ".join(_IS_TEXT[k] for k in dict.fromkeys(kinds))
