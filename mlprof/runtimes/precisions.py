"""THE table of precisions: one row per precision mlprof measures at, with how it is made,
which runtimes run it and how, whether a conversion (QuantizeModel) or an export at that
precision is made for it, and its calibration default; every other place that offers or
checks a precision derives from it.

Part of the runtime registry (layer 1, imports nothing of mlprof but its errors): the store's
layout (:mod:`mlprof.results.layout`) builds its precision pattern from it, the registry
(:mod:`mlprof.runtimes`) each runtime's precisions, the tasks their choices and the dashboard
its order. ``tests/test_precision_table.py`` compares every place that offers a precision with
this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

#: how a precision is made: the model as it is, a converted ONNX graph (cast to fp16, int8
#: quantization), or the runtime's own setting (an inference precision hint, autocast)
AS_IS = "as is"
CAST = "cast"
DYNAMIC_QUANTIZATION = "dynamic quantization"
STATIC_QUANTIZATION = "static quantization"
RUNTIME_HINT = "runtime hint"
MADE_BY = (AS_IS, CAST, DYNAMIC_QUANTIZATION, STATIC_QUANTIZATION, RUNTIME_HINT)


@dataclass(frozen=True)
class Precision:
    """One precision: its fixed name (scripts and experiment files rely on it), what it is and
    how each runtime gets it."""

    #: the name of ``--precision``, in output paths (``prec-<name>``)
    name: str
    #: one line: what it is
    what: str
    #: how it is made (one of :data:`MADE_BY`)
    made_by: str
    #: the runtimes that measure it on a converted ONNX model (QuantizeModel makes it once)
    converted_on: tuple[str, ...] = ()
    #: the runtimes that apply it themselves (an inference precision hint, autocast,
    #: ``quantize_dynamic`` of the eager model)
    applied_by: tuple[str, ...] = ()
    #: those of :attr:`applied_by` that run it only on a CPU with :attr:`isa` (elsewhere they
    #: would compute in fp32 without a word: refused up front)
    native_on: tuple[str, ...] = ()
    #: the CPU flags (any one) that :attr:`native_on` needs
    isa: tuple[str, ...] = ()
    #: a model script's ONNX export is made at this precision (``ExportOnnx --precision``)
    exported: bool = False
    #: calibration batches by default (``--calibration-batches``); 0: not calibrated
    calibration_default: int = 0
    #: what people type for it (``half``, ``bfloat16``): named in the error of a wrong name
    typed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.made_by not in MADE_BY:
            raise ValueError(f"precision {self.name}: made_by {self.made_by!r} not in {MADE_BY}")
        if set(self.converted_on) & set(self.applied_by):
            raise ValueError(f"precision {self.name}: a runtime either converts or applies it")
        if not set(self.native_on) <= set(self.applied_by) or bool(self.native_on) != bool(
                self.isa):
            raise ValueError(f"precision {self.name}: native_on needs isa and applied_by")

    @property
    def runtimes(self) -> tuple[str, ...]:
        """Every runtime that measures at it (fp32: every runtime, see
        :func:`runtime_precisions`)."""
        return (*self.converted_on, *self.applied_by)

    @property
    def converted(self) -> bool:
        """Whether QuantizeModel makes a converted model of it."""
        return bool(self.converted_on)

    @property
    def calibrated(self) -> bool:
        """Whether it is calibrated (``--calibration-batches`` applies)."""
        return self.calibration_default > 0


#: int8-static's calibration batches by default (the reasons for the count and its bound are at
#: :data:`mlprof.model.precision.MAX_CALIBRATION_BATCHES`)
DEFAULT_CALIBRATION_BATCHES = 16

#: THE table, in the order every list, choice and table shows them (fp32, the reference, first)
TABLE: tuple[Precision, ...] = (
    Precision("fp32", "the model as it is (the reference)", AS_IS, exported=True,
              typed=("float32", "float", "f32")),
    Precision("fp16", "half-precision weights and arithmetic", CAST,
              converted_on=("onnxruntime", "openvino"), exported=True,
              typed=("float16", "half", "f16")),
    Precision("bf16", "bfloat16 arithmetic", RUNTIME_HINT, applied_by=("torch", "openvino"),
              native_on=("openvino",), isa=("avx512_bf16", "amx_bf16"), typed=("bfloat16",)),
    Precision("int8-dynamic", "int8 weights; activations quantized per call",
              DYNAMIC_QUANTIZATION, converted_on=("onnxruntime", "openvino"),
              applied_by=("torch",), typed=("dynamic",)),
    Precision("int8-static", "int8 weights and activations, scales calibrated beforehand",
              STATIC_QUANTIZATION, converted_on=("onnxruntime", "openvino"),
              calibration_default=DEFAULT_CALIBRATION_BATCHES, typed=("static",)),
)

BY_NAME: dict[str, Precision] = {p.name: p for p in TABLE}
#: the names, in the table's order
PRECISIONS: tuple[str, ...] = tuple(BY_NAME)
#: the reference every other precision's error is measured against
DEFAULT_PRECISION = TABLE[0].name
#: the precisions QuantizeModel converts an ONNX model to
CONVERTED_PRECISIONS: tuple[str, ...] = tuple(p.name for p in TABLE if p.converted)
#: the precisions a model script's ONNX export is made at (ExportOnnx)
EXPORT_PRECISIONS: tuple[str, ...] = tuple(p.name for p in TABLE if p.exported)
#: the precisions ``--calibration-batches`` applies to
CALIBRATED_PRECISIONS: tuple[str, ...] = tuple(p.name for p in TABLE if p.calibrated)
#: what people type for a precision that is not one of :data:`PRECISIONS`; a name typed for
#: several (``int8``) names them all
HINTS: dict[str, str] = {
    **{t: p.name for p in TABLE for t in p.typed},
    "int8": " or ".join(p.name for p in TABLE if p.name.startswith("int8")),
    "qint8": " or ".join(p.name for p in TABLE if p.name.startswith("int8")),
}
#: precisions that need instructions of their own on the CPU (any one of the flags) on the
#: runtimes of :attr:`Precision.native_on`
NATIVE_ISA: dict[str, tuple[str, ...]] = {p.name: p.isa for p in TABLE if p.isa}


def listed(names: tuple[str, ...] | list[str] | None = None, last: str = "or") -> str:
    """``fp32, fp16, bf16, int8-dynamic or int8-static``: ``names`` (default: all) for help
    texts."""
    names = list(PRECISIONS if names is None else names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def calibration_default(precision: str) -> int:
    """The calibration batches of ``precision`` by default (0: not calibrated)."""
    return BY_NAME[precision].calibration_default


def order(precision: object) -> int:
    """The position of ``precision`` in the table (for sorting; unknown names last)."""
    name = str(precision)
    return PRECISIONS.index(name) if name in BY_NAME else len(PRECISIONS)


class RuntimePrecisions(TypedDict):
    """The precision fields of :class:`mlprof.runtimes.RuntimeInfo`."""

    precisions: tuple[str, ...]
    converted_precisions: tuple[str, ...]
    native_precisions: tuple[str, ...]


def runtime_precisions(runtime: str) -> RuntimePrecisions:
    """A runtime's precision capabilities as :class:`mlprof.runtimes.RuntimeInfo` holds them:
    ``precisions`` (fp32 and every precision naming it), ``converted_precisions`` and
    ``native_precisions``."""
    return {
        "precisions": tuple(p.name for p in TABLE
                            if p.name == DEFAULT_PRECISION or runtime in p.runtimes),
        "converted_precisions": tuple(p.name for p in TABLE if runtime in p.converted_on),
        "native_precisions": tuple(p.name for p in TABLE if runtime in p.native_on),
    }


def export_precision(precision: str) -> str:
    """The precision of the ONNX export a model script is measured on at ``precision``: itself
    where the export is made at it (fp16), else fp32 (the lower precisions are converted from
    the fp32 export by QuantizeModel, or applied by the runtime)."""
    return precision if precision in EXPORT_PRECISIONS else DEFAULT_PRECISION
