"""Lower precisions of an ONNX model (fp16, int8-dynamic, int8-static), which runtime runs which
precision on this CPU, and the error a lower precision costs against fp32.

The conversions are ONNX Runtime's own tools, the ones its documentation gives for CPUs:

- ``fp16``: ``onnxruntime.transformers.float16.convert_float_to_float16`` with the inputs and
  outputs kept in float32 (the model's interface does not change);
- ``int8-dynamic``: ``onnxruntime.quantization.quantize_dynamic`` (int8 weights; activations
  quantized per call, ``DynamicQuantizeLinear`` + ``MatMulInteger``/``ConvInteger``);
- ``int8-static``: ``quantize_static`` in the QDQ format (``QuantizeLinear``/
  ``DequantizeLinear`` pairs around each quantized operator, the format OpenVINO also reads as
  int8), its activation ranges calibrated (min/max) on batches of mlprof's own random inputs.

Measured on this 2-core AVX2 VM without VNNI (the example DNN, 10x128, batch size 64, 1 thread):
ONNX Runtime fp32 0.283 ms, int8-dynamic 0.221, int8-static 0.321, fp16 0.338 (its CPU kernels
compute fp16 by casting around them); OpenVINO fp32 0.391, int8-static 0.754, int8-dynamic
1.08. Lower precision is not faster by itself: it needs the instructions (VNNI, AMX, AVX-512
BF16) that :func:`mlprof.sysinfo.isa` records in every provenance.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy on first use: the tasks check precisions at start-up (0.1-0.2 s)
    import numpy as np

from mlprof.errors import MLProfError
from mlprof.progress import Progress
from mlprof.runtimes import (
    DEFAULT_CALIBRATION_BATCHES as DEFAULT_CALIBRATION_BATCHES,  # here with its bound
)
from mlprof.runtimes import (
    DEFAULT_PRECISION,
    check_precision,
    precision_problem,
    runtime_info,
)
from mlprof.runtimes.precisions import NATIVE_ISA as _NATIVE_ISA

#: precisions that need instructions of their own on the CPU (any one of the flags), where a
#: runtime would otherwise compute in fp32 without a word (OpenVINO's bf16 hint on an AVX2 CPU
#: reads back as f32): from THE precision table
NATIVE_ISA: dict[str, tuple[str, ...]] = _NATIVE_ISA

#: calibration batches of int8-static (``--calibration-batches``, default
#: :data:`DEFAULT_CALIBRATION_BATCHES`): each is one call of the
#: fp32 model (with a ReduceMin/ReduceMax added per tensor) during calibration; ONNX Runtime's
#: min/max calibrator keeps only those per batch, so memory does not grow with the count, time
#: does. Its ``CalibMaxIntermediateOutputs`` option is not used: in onnxruntime 1.32 it drops
#: the batches collected so far instead of merging them (16 batches with it at 16: "No data is
#: collected"; 20: calibrated on the last 4)
#: a bound far above any real use (the field calibrates on 100-1000 samples): 1000 batches of
#: :data:`CALIBRATION_BATCH_SIZE` are 8000 events, each batch one model call (ResNet-18: about
#: 80 s here)
MAX_CALIBRATION_BATCHES = 1000
#: events per calibration batch
CALIBRATION_BATCH_SIZE = 8
#: the seed of the calibration inputs: not the measurement's (0), so that the error measured
#: afterwards is on inputs the calibration did not see
CALIBRATION_SEED = 1


def check_calibration_batches(value: Any, field: str = "--calibration-batches") -> int:
    """``value`` as a count of calibration batches, 1 to :data:`MAX_CALIBRATION_BATCHES`.

    A numpy integer is one too, and can only exist once numpy is imported: the check imports
    no numpy (a plot task checks this in its ``__init__``, and numpy's import was 0.06-0.1 s
    of every ``law run PlotSpeedup``, also with nothing to do)."""
    import sys

    np = sys.modules.get("numpy")
    integer = (int,) if np is None else (int, np.integer)
    if isinstance(value, bool) or not isinstance(value, integer):
        raise MLProfError(f"must be a whole number, got {value!r}", field=field)
    if not 1 <= int(value) <= MAX_CALIBRATION_BATCHES:
        raise MLProfError(f"must be from 1 to {MAX_CALIBRATION_BATCHES}, got {int(value)}",
                          field=field)
    return int(value)


def check_runtime_precision(runtime: str, precision: str, flags: frozenset[str] | None = None
                            ) -> str:
    """``precision`` (checked) when ``runtime`` measures at it on this CPU; else a one-line
    error naming what would work. ``flags``: the CPU's flags (default: this machine's)."""
    from mlprof.sysinfo import ISA_FLAGS, cpu_flags

    precision = check_precision(precision)
    have = cpu_flags() if flags is None else flags
    problem = precision_problem(runtime, precision)
    if problem:  # naming the runtimes that can, on this CPU
        can = [n for n in _runtimes_with(precision, have) if n != runtime_info(runtime).name]
        problem = problem.split(";")[0] + (
            f"; {', '.join(can)} {'does' if len(can) == 1 else 'do'}" if can else "")
        raise MLProfError(problem, field="--precision")
    info = runtime_info(runtime)
    if precision in info.native_precisions:
        need = NATIVE_ISA.get(precision, ())
        if need and not any(f in have for f in need):
            other = [r for r in _runtimes_with(precision, have) if r != info.name]
            raise MLProfError(
                f"{info.name} runs {precision} only on CPUs with "
                f"{' or '.join(ISA_FLAGS.get(f, f) for f in need)}, and this one has none "
                f"(it would compute in fp32)" + (f"; {', '.join(other)} emulates it"
                                                 if other else ""), field="--precision")
    return precision


def _runtimes_with(precision: str, flags: frozenset[str]) -> list[str]:
    """The runtimes that measure at ``precision`` on a CPU with ``flags``."""
    from mlprof.runtimes import runtime_names

    def native_ok(name: str) -> bool:
        need = NATIVE_ISA.get(precision, ())
        return precision not in runtime_info(name).native_precisions or not need or any(
            f in flags for f in need)

    return [n for n in runtime_names() if precision in runtime_info(n).precisions
            and native_ok(n)]


def converted(runtime: str, precision: str) -> bool:
    """Whether ``runtime`` measures ``precision`` on a converted model (QuantizeModel)."""
    info = runtime_info(runtime)
    return precision != DEFAULT_PRECISION and precision in info.converted_precisions


# --- conversion ---------------------------------------------------------------------------------


def convert_onnx(src: str, dst: str, precision: str, *,
                 calibration: Sequence[dict[str, np.ndarray]] = (),
                 rep: Progress | None = None) -> dict[str, Any]:
    """Write ``src`` (an ONNX file) converted to ``precision`` to ``dst`` and return its recipe:
    the tool, its settings and the conversion time (a cold-start cost of the precision).

    ``calibration``: the feeds int8-static calibrates on (one call each). ``dst`` appears
    complete or not at all (written beside and renamed). ``rep`` hears each phase
    (pre-processing, converting or calibrating, writing), so a slow one still says what it is
    doing every few seconds (:mod:`mlprof.progress`).
    """
    import onnx
    import onnxruntime

    rep = rep or Progress(None)

    precision = check_precision(precision)
    tmp = f"{dst}.tmp{os.getpid()}.onnx"
    prep = f"{dst}.prep{os.getpid()}.onnx"
    source = src  # what the quantizer reads: src, or its pre-processed graph
    recipe: dict[str, Any] = {"precision": precision, "source": src,
                              "tool_version": onnxruntime.__version__}
    t0 = time.perf_counter()
    # the quantizer's advice (pre-process first) goes to the root logger: it is followed below
    logging.getLogger().setLevel(logging.ERROR)
    try:
        if precision.startswith("int8"):
            rep.phase("pre-processing for quantization (shape inference, graph optimization)",
                      0.1)
            recipe["preprocess"] = _preprocess(src, prep)
            if recipe["preprocess"] == "done":
                source = prep
        if precision == "fp16":
            from onnxruntime.transformers.float16 import convert_float_to_float16

            from mlprof.model.export import topological_sort

            rep.phase("converting to fp16", 0.3)
            model = convert_float_to_float16(onnx.load(src), keep_io_types=True)
            # the converter appends the Cast nodes of the kept float32 inputs at the end of the
            # graph: ONNX Runtime accepts that, ONNX's checker and OpenVINO do not
            topological_sort(model.graph)
            onnx.save(model, tmp)
            recipe.update(tool="onnxruntime.transformers.float16.convert_float_to_float16",
                          keep_io_types=True)
        elif precision == "int8-dynamic":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            rep.phase("quantizing the weights to int8 (quantize_dynamic)", 0.3)
            quantize_dynamic(source, tmp, weight_type=QuantType.QInt8)
            recipe.update(tool="onnxruntime.quantization.quantize_dynamic",
                          weight_type="QInt8", activations="uint8, quantized per call")
        elif precision == "int8-static":
            from onnxruntime.quantization import (
                CalibrationDataReader,
                CalibrationMethod,
                QuantFormat,
                QuantType,
                quantize_static,
            )

            if not calibration:
                raise MLProfError("int8-static needs calibration batches", src,
                                  "--calibration-batches")

            class _Reader(CalibrationDataReader):
                def __init__(self) -> None:
                    self.feeds = iter(calibration)

                def get_next(self) -> dict | None:
                    return next(self.feeds, None)

            rep.phase(f"calibrating on {len(calibration)} batch(es) and quantizing to int8 "
                      "(quantize_static)", 0.3)
            quantize_static(source, tmp, _Reader(), quant_format=QuantFormat.QDQ,
                            activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                            calibrate_method=CalibrationMethod.MinMax)
            recipe.update(tool="onnxruntime.quantization.quantize_static", format="QDQ",
                          activation_type="QInt8", weight_type="QInt8",
                          calibration_method="MinMax", calibration_batches=len(calibration),
                          calibration_batch_size=_batch_of(calibration[0]),
                          calibration_inputs="random", calibration_seed=CALIBRATION_SEED)
        else:
            raise MLProfError(f"{precision} is not made by converting an ONNX model (the runtime "
                              "applies it itself)", src, "--precision")
        rep.phase("writing the converted graph", 0.9)
        _keep_metadata(src, tmp)
        os.replace(tmp, dst)
    except MLProfError:
        raise
    except Exception as e:
        text = " ".join(str(e).split())[:300] or type(e).__name__
        raise MLProfError(f"converting to {precision} failed: {text}", src,
                          "--precision") from None
    finally:
        for path in (tmp, prep):
            if os.path.exists(path):
                os.unlink(path)
    recipe["convert_s"] = time.perf_counter() - t0
    recipe["bytes"] = {"source": os.path.getsize(src), "converted": os.path.getsize(dst)}
    recipe["op_types"] = _op_counts(dst)
    return recipe


def _keep_metadata(src: str, dst: str) -> None:
    """The source's metadata (which inputs carry the batch, from an export) in the converted
    graph, where a converter dropped it."""
    import onnx

    have = onnx.load(src, load_external_data=False).metadata_props
    model = onnx.load(dst)
    known = {p.key for p in model.metadata_props}
    missing = [p for p in have if p.key not in known]
    if missing:
        for p in missing:
            model.metadata_props.add(key=p.key, value=p.value)
        onnx.save(model, dst)


def _preprocess(src: str, dst: str) -> str:
    """ONNX Runtime's pre-processing for quantization (shape inference and graph optimization,
    ``quant_pre_process``, which its quantizer asks for); ``"done"``, or why it was skipped
    (the model is then quantized as it is)."""
    _ort_tools_without_torch()
    from onnxruntime.quantization.shape_inference import quant_pre_process

    try:
        quant_pre_process(src, dst)
    except Exception as e:
        return "skipped: " + (" ".join(str(e).split())[:200] or type(e).__name__)
    return "done"


def _ort_tools_without_torch() -> None:
    """Make ``onnxruntime.tools`` importable without running its ``__init__``, which imports
    PyTorch whenever it is installed (for ``infer_input_info``, a helper no conversion uses).

    ``quant_pre_process`` imports ``onnxruntime.tools.symbolic_shape_infer``, and so torch:
    measured here (2 vCPUs, warm page cache), 3.6 s of the 4.8 s of an int8-static conversion
    of the 10x128 example DNN was importing torch; on a loaded machine with the CUDA wheel's
    libraries out of the page cache that import is what made QuantizeModel take 350-470 s
    (issue 38). Only in the disposable conversion process: the package object has its path,
    so its submodules import as ever. Nothing when torch or the package is already loaded."""
    import importlib.util
    import sys

    if "onnxruntime.tools" in sys.modules or "torch" in sys.modules:
        return
    spec = importlib.util.find_spec("onnxruntime.tools")
    if spec is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["onnxruntime.tools"] = module
    import onnxruntime

    onnxruntime.tools = module


def _batch_of(feed: dict[str, np.ndarray]) -> int:
    return int(next(iter(feed.values())).shape[0]) if feed else 0


def _op_counts(path: str) -> dict[str, int]:
    """How many nodes of each operator type the converted graph has (what it became)."""
    import onnx

    counts: dict[str, int] = {}
    for node in onnx.load(path, load_external_data=False).graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


# --- the error it costs -------------------------------------------------------------------------


def as_arrays(result: Any) -> list[np.ndarray]:
    """A runtime call's outputs as a flat list of numpy arrays (a list, a tuple, a dict-like
    ``OVDict``, a tensor)."""
    import numpy as np

    if isinstance(result, np.ndarray):
        return [result]
    if hasattr(result, "detach"):  # a torch tensor, without importing torch
        return [result.detach().float().cpu().numpy()]
    if isinstance(result, dict) or (hasattr(result, "values") and hasattr(result, "keys")):
        return [a for v in result.values() for a in as_arrays(v)]
    if isinstance(result, (list, tuple)):
        return [a for v in result for a in as_arrays(v)]
    return [np.asarray(result)]


#: ``nonfinite`` of an error against fp32 (:func:`output_error`): why its ``max_abs_error`` and
#: ``max_rel_error`` are infinite (None in a record: JSON has no infinity). ``"inf"``: an
#: output is infinite where fp32's is a number or the other infinity (an fp16 overflow);
#: ``"nan-mismatch"``: an output is NaN where fp32's is not, or the other way round. A model
#: whose outputs are NaN or infinite at the same positions at both precisions has no error
#: there (those positions are left out, counted in ``same_nonfinite``).
NONFINITE = {"inf": "inf", "nan-mismatch": "NaN outputs differ"}


def output_error(reference: Sequence[np.ndarray], got: Sequence[np.ndarray]) -> dict[str, Any]:
    """The error of ``got`` against the fp32 ``reference`` outputs (same inputs, same order).

    - ``max_abs_error``: the largest ``|got - reference|`` over every output element;
    - ``max_rel_error``: per output, its largest absolute error over its largest ``|reference|``
      (an element-wise ratio explodes where the reference is near 0), the largest of these;
    - ``nonfinite``: None, or why the error is infinite (:data:`NONFINITE`: ``"inf"``,
      ``"nan-mismatch"``); the two errors are then None (JSON has no infinity; read them with
      :func:`error_number`, which gives ``inf``). NaN and infinite values at the same positions
      in both are no error (``same_nonfinite`` counts them); NaNs are never subtracted;
    - for outputs that look like class scores (2-D floats, batch x at least 2 classes):
      ``top1_agreement``, the fraction of rows whose arg-max is the reference's, and with at
      least 6 classes ``top5_agreement``, the fraction whose reference arg-max is among the
      five highest scores (the first such output; None when there is none).
    """
    import numpy as np

    if len(reference) != len(got):
        raise MLProfError(f"{len(got)} outputs, the fp32 model has {len(reference)}",
                          field="--precision")
    max_abs = 0.0
    max_rel = 0.0
    nonfinite: str | None = None
    same = 0
    top1 = top5 = None
    for ref, out in zip(reference, got, strict=True):
        ref = np.asarray(ref)
        out = np.asarray(out)
        if ref.shape != out.shape:
            raise MLProfError(f"an output of shape {out.shape}, the fp32 model's is "
                              f"{ref.shape}", field="--precision")
        if not np.issubdtype(ref.dtype, np.number) or ref.size == 0:
            continue
        r = ref.astype(np.float64)
        o = np.asarray(out, dtype=np.float64)
        r_nan, o_nan = np.isnan(r), np.isnan(o)
        both_nan = r_nan & o_nan
        # an infinity equal at both (same sign, same position) is no error; any other
        # infinity is an infinite one
        both_inf = np.isinf(r) & (o == r)
        finite = np.isfinite(r) & np.isfinite(o)
        same += int(both_nan.sum() + both_inf.sum())
        if np.any(r_nan != o_nan):
            nonfinite = "nan-mismatch"
        elif not np.all(finite | both_nan | both_inf) and nonfinite is None:
            nonfinite = "inf"
        d = np.abs(o[finite] - r[finite])
        err = float(d.max()) if d.size else 0.0
        scale = float(np.abs(r[np.isfinite(r)]).max()) if np.isfinite(r).any() else 0.0
        max_abs = max(max_abs, err)
        max_rel = max(max_rel, err / scale if scale > 0 else (0.0 if err == 0 else np.inf))
        if top1 is None and ref.ndim == 2 and ref.shape[1] >= 2 and \
                np.issubdtype(ref.dtype, np.floating):
            want = r.argmax(axis=1)
            top1 = float(np.mean(o.argmax(axis=1) == want))
            if ref.shape[1] >= 6:
                best5 = np.argsort(-o, axis=1)[:, :5]
                top5 = float(np.mean(np.any(best5 == want[:, None], axis=1)))
    if nonfinite is not None:  # the outputs: both errors infinite
        max_abs = max_rel = math.inf
    elif not (math.isfinite(max_abs) and math.isfinite(max_rel)):
        nonfinite = "inf"  # a difference beyond float64, or an error of a zero reference
    return {"max_abs_error": max_abs if math.isfinite(max_abs) else None,
            "max_rel_error": max_rel if math.isfinite(max_rel) else None,
            "top1_agreement": top1, "top5_agreement": top5, "nonfinite": nonfinite,
            "same_nonfinite": same}


def error_number(error: Any, key: str) -> float | None:
    """``error[key]`` (an error against fp32, :func:`output_error`) as a float: ``inf`` for
    the two errors of an error whose ``nonfinite`` says why (and of older records, which held
    ``Infinity``), None where there is no number (fp32, no class scores, a damaged value)."""
    if not isinstance(error, dict):
        return None
    value = error.get(key)
    if key in ("max_abs_error", "max_rel_error") and value is None and \
            error.get("nonfinite") in NONFINITE:
        return float("inf")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if value != value else value


def error_note(error: Any) -> str:
    """Why an error against fp32 is infinite (a key of :data:`NONFINITE`), "" when it is not:
    from ``nonfinite``, or from an infinite ``max_abs_error`` of an older record."""
    if not isinstance(error, dict):
        return ""
    note = error.get("nonfinite")
    if note in NONFINITE:
        return str(note)
    value = error_number(error, "max_abs_error")
    return "inf" if value is not None and math.isinf(value) else ""


def converted_spec_yaml(spec: Any, onnx_name: str, precision: str) -> str:
    """The YAML of a converted model: ``spec``'s name, label, inputs and outputs, its file the
    converted ``onnx_name`` beside it (so that the converted model is measured as the model
    file the user gave describes it)."""
    import yaml

    model: dict[str, Any] = {"name": spec.name, "label": spec.label, "inference_engine": "onnx",
                             "file": onnx_name}
    if spec.version:
        model["version"] = str(spec.version)
    if spec.inputs:
        model["inputs"] = [{"name": i.name, "shape": list(i.shape),
                            **({"dtype": i.dtype} if i.dtype else {})} for i in spec.inputs]
    if spec.outputs:
        model["outputs"] = [{"name": o} for o in spec.outputs]
    head = f"# {spec.spec_file} converted to {precision} by mlprof (QuantizeModel)\n"
    return head + yaml.safe_dump({"model": model}, sort_keys=False)
