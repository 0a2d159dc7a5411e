"""What is measured: which file a runtime loads for a model at a precision, and which artifacts
are made for it first (an ONNX export, the fp32 export a lower precision's error is measured
against, the discovery of a script's models, a converted model); and which runtimes draw a
curve of which model on a plot of several. Decided here once, without law: the tasks
(MeasureRuntime, ProfileRuntime, MeasureLoad, CompareInterleaved, PlotMultiRuntimes) ask, and
so does everything that builds them (the Python API, the corpus runner).

A model is measured as one of four files (:data:`SOURCES`):

- ``model file``: the YAML/ONNX/TensorFlow file as given (fp32, or a precision the runtime
  applies itself: OpenVINO's bf16 hint, torch's autocast);
- ``export``: a model script's ONNX export, for runtimes that measure ONNX (ONNX Runtime,
  OpenVINO); at fp16 the fp16 export (the export converts it itself), else the fp32 one;
- ``converted``: the converted model of a lower precision (QuantizeModel: fp16 of a YAML
  model, int8 of anything), on the runtimes that measure that precision on a converted graph;
- ``script``: ``script.py::HASH``, run by the runtimes that run the script's PyTorch model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlprof.runtimes import DEFAULT_PRECISION, runtime_info
from mlprof.runtimes.precisions import export_precision

MODEL_FILE = "model file"
EXPORT = "export"
CONVERTED = "converted"
SCRIPT = "script"
SOURCES = (MODEL_FILE, EXPORT, CONVERTED, SCRIPT)
#: the reference of a lower precision that is a script's fp32 export (the others are one of
#: :data:`SOURCES`)
REFERENCE_EXPORT = "fp32 export"


@dataclass(frozen=True)
class MeasurementPlan:
    """What one measurement (a model on a runtime at a precision) loads and needs first."""

    #: the file loaded (one of :data:`SOURCES`)
    source: str
    #: the precision of the script's ONNX export that is made (None: no export)
    export_precision: str | None
    #: the file a lower precision's outputs are compared with (None at fp32): one of
    #: :data:`SOURCES` or :data:`REFERENCE_EXPORT` (the script's fp32 export, made too)
    reference: str | None
    #: the script's models are discovered (a runtime that runs the script)
    discover: bool

    @property
    def measures_export(self) -> bool:
        """Whether a script's ONNX export is made (and measured, unless converted)."""
        return self.export_precision is not None

    @property
    def converted(self) -> bool:
        """Whether the measured file is a converted model (QuantizeModel makes it)."""
        return self.source == CONVERTED


@functools.lru_cache(maxsize=256)
def measurement_plan(is_script: bool, runtime: str, precision: str = DEFAULT_PRECISION
                     ) -> MeasurementPlan:
    """The plan of measuring a model (a script when ``is_script``) on ``runtime`` at
    ``precision`` (both checked by the caller). Cached: every branch of a sweep asks it
    several times while it is scheduled (0.09 ms per branch of 1,000 uncached)."""
    from mlprof.model.precision import converted

    info = runtime_info(runtime)
    exports = is_script and info.needs_export
    # a script's fp16 is its fp16 export: the export converts it, no QuantizeModel
    convert = converted(runtime, precision) and not (
        exports and export_precision(precision) == precision)
    source = CONVERTED if convert else EXPORT if exports else SCRIPT if is_script \
        else MODEL_FILE
    reference = None
    if precision != DEFAULT_PRECISION:
        reference = REFERENCE_EXPORT if exports else SCRIPT if is_script else MODEL_FILE
    return MeasurementPlan(source, export_precision(precision) if exports else None, reference,
                           is_script and not exports)


#: a file of the plan, given or made when asked (the artifacts' paths are known only once
#: their tasks are made, and the script's model only once discovered)
FileOf = str | Callable[[], str] | None


def chosen_file(source: str, files: dict[str, FileOf]) -> str:
    """The path of ``source`` (:data:`SOURCES` or :data:`REFERENCE_EXPORT`) among ``files``
    (each a path, or a function that gives it); ValueError for a file the caller has not."""
    value = files.get(source)
    if value is None:
        raise ValueError(f"no {source} file to measure")
    return value() if callable(value) else value


# --- curves of a plot ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CurvePlan:
    """The curves of a plot of several models and runtimes: per model its (runtime, version)
    pairs, the runtimes asked for that measure none of the models, and the models no runtime
    measures."""

    #: per model (in order), the (runtime, version or "") pairs that draw a curve of it
    per_model: tuple[tuple[tuple[str, str], ...], ...]
    #: runtimes asked for that measure none of the models (skipped, one line each)
    skipped: tuple[str, ...]
    #: indexes of the models no runtime measures (refused)
    unmeasured: tuple[int, ...]

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """Every (runtime, version) of some curve, in order."""
        return tuple(dict.fromkeys(p for ps in self.per_model for p in ps))


def curve_plan(model_kinds: Sequence[str], pairs: Sequence[tuple[str, str]],
               runtimes: Sequence[str], default_runtimes: bool,
               engine_runtime: Callable[[str], str]) -> CurvePlan:
    """Which (runtime, version) ``pairs`` draw a curve of each model (of ``model_kinds``): those
    whose runtime measures its kind (a TF model is not measured by ONNX Runtime). With the
    default runtimes (``default_runtimes``) a model no runtime measures goes to its engine's
    runtime (``engine_runtime(kind)``: tf -> tensorflow), and nothing is skipped; otherwise
    the ``runtimes`` that measure none of the models are skipped."""
    per_model = []
    unmeasured = []
    for i, kind in enumerate(model_kinds):
        mine = [p for p in pairs if runtime_info(p[0]).measures(kind)]
        if not mine and default_runtimes:
            mine = [(engine_runtime(kind), "")]
        if not mine:
            unmeasured.append(i)
        per_model.append(tuple(mine))
    used = {rt for ps in per_model for rt, _ in ps}
    skipped = () if default_runtimes else tuple(rt for rt in runtimes if rt not in used)
    return CurvePlan(tuple(per_model), skipped, tuple(unmeasured))
