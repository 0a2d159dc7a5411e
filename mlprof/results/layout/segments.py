"""The segments of a result's path: how each spells its settings (model, runtime, measurement,
export, precision, script, generation), and parsed back (:mod:`mlprof.results.layout`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mlprof.runtimes.precisions import PRECISIONS
from mlprof.util import float_tag, short_hash

# --- segments -----------------------------------------------------------------------------------


def path_safe(text: str, max_len: int = 64) -> str:
    """Make ``text`` safe as one path segment (letters, digits, ``._-+``)."""
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "_", str(text)).strip("_.") or "x"
    return safe[:max_len]


def safe_name(text: str, max_len: int = 48) -> str:
    """``text`` as one path segment; when it had to change (characters replaced, cut to
    ``max_len``), a hash of the original is appended, so distinct inputs never share a name
    (``a/b`` and ``a b`` were both ``a_b`` before).

    A name holding ``__`` (the separator of a name and its hash in a model segment) changes
    too: ``a__deadbeef-b`` kept as it is would read back as two models ``a`` and ``b``, so two
    different models of that name would share one history and ``mlprof store delete --model b``
    would remove them. Its runs of ``_`` become one and the hash is appended
    (``a_deadbeef-b-<hash6>``), so the name never holds the separator.
    """
    safe = path_safe(text, max_len)
    if safe == str(text) and "__" not in safe:
        return safe
    return (f"{re.sub(r'_{2,}', '_', path_safe(text, max_len - 7))}-"
            f"{short_hash(str(text), length=6)}")


def joined_or_hashed(items: Sequence[str], max_len: int = 60) -> str:
    """``a-b-c`` when short, else ``<n>x_<first>_<hash>`` so paths stay short and unique."""
    joined = "-".join(items)
    if len(joined) <= max_len:
        return joined
    return f"{len(items)}x_{items[0][:24]}_{short_hash(*items)}"


def model_segment(name: str, content_hash: str) -> str:
    """``<name>__<8 hex of the model files' hash>`` (see :func:`safe_name` for the name)."""
    return f"{safe_name(name, 48)}__{content_hash[:8]}"


def models_segment(segments: Sequence[str]) -> str:
    """One model's segment, or several joined (hashed when long) for a multi-model plot."""
    return segments[0] if len(segments) == 1 else joined_or_hashed(list(segments), 80)


#: a model segment ``<name>__<8 hex>``, possibly several joined by ``-``
_MODEL_SEG = re.compile(r"(.+?)__([0-9a-f]{8,12})(?:-|$)")


def parse_model_segment(segment: str) -> dict:
    """``name__hash8``, several joined by ``-`` (multi-model plots), or another name.

    Returns ``model`` (the name, or the whole segment for several), ``model_hash`` (None for
    several) and ``models`` (every name shown).
    """
    pairs = _MODEL_SEG.findall(segment)
    if pairs and "-".join(f"{n}__{h}" for n, h in pairs) == segment:
        names = [n for n, _ in pairs]
        if len(pairs) == 1:
            return {"model": names[0], "model_hash": pairs[0][1], "models": names}
        return {"model": segment, "model_hash": None, "models": names}
    return {"model": segment, "model_hash": None, "models": [segment]}


def looks_like_model(segment: str) -> bool:
    """Whether ``segment`` is named like a model segment (or a Report's ``stores_<hash>``)."""
    return bool(re.fullmatch(r".+__[0-9a-f]{8,12}|stores_[0-9a-f]{8}", segment))


def runtime_name(runtime: str, version: str) -> str:
    """``onnxruntime-1.31.1``."""
    return f"{runtime}-{version}"


def runtime_segment(runtimes: Sequence[tuple[str, str]], device: str) -> str:
    """``<runtime>-<version>__<device>``; several runtimes joined (hashed when long)."""
    names = [runtime_name(rt, v) for rt, v in runtimes]
    return f"{joined_or_hashed(names)}__{device}"


def parse_runtime_segment(segment: str) -> dict:
    """``onnxruntime-1.31.1__cpu`` or ``onnxruntime-1.31.1-torch-2.14.1__cpu`` into parts.

    Returns ``runtime`` (comma-joined names), ``runtimes``, ``runtime_version`` (comma-joined,
    None if none is known) and ``device``. Runtime names may hold dashes themselves
    (``torch-compile``), so the registry's names decide where a name ends.
    """
    from mlprof.runtimes import runtime_names

    rt, sep, after = segment.rpartition("__")
    device: str | None = after
    if not sep:
        rt, device = segment, None
    names = sorted(runtime_names(), key=len, reverse=True)
    found: list[tuple[str, str]] = []
    # split at every "-<runtime>-" (versions may hold dashes too)
    starts = [0] + [m.start() + 1 for m in re.finditer("-", rt)
                    if any(rt.startswith(n + "-", m.start() + 1) for n in names)]
    for i, s in enumerate(starts):
        piece = rt[s:starts[i + 1] - 1] if i + 1 < len(starts) else rt[s:]
        name = next((n for n in names if piece.startswith(n + "-")), None)
        if name is not None:
            found.append((name, piece[len(name) + 1:]))
    if not found:  # a hashed list (``3x_onnxruntime-1.2_<hash>``) or an unknown runtime
        found = [(n, "") for n in names if n in rt]
        if not found:
            found = [(rt.partition("-")[0], rt.partition("-")[2])]
    return {"runtime": ",".join(n for n, _ in found), "runtimes": [n for n, _ in found],
            "runtime_version": ",".join(v for _, v in found if v) or None, "device": device}


@dataclass(frozen=True)
class MeasureKey:
    """The measurement settings that define a result (see :mod:`mlprof.measure.settings`).

    ``input`` is the input-data tag: ``random``, ``zeros``, ... or ``file-<stem>-<hash8>``.
    """

    n_calls: int
    n_events: int
    warmup: int
    min_duration: float
    threads: int
    input: str
    #: tfaot batch rules (``--tfaot-batch-rules``), normalized; "" for CMSSW's default rule
    batch_rules: str = ""


@dataclass(frozen=True)
class ExportKey:
    """How a model script was exported to ONNX.

    ``tolerances`` is a hash of explicitly given tolerances ("" for the defaults);
    ``batch_size`` is 0 for the graph with a symbolic batch dimension, N for a static graph
    exported for batch size N (models whose symbolic graph is wrong at other batch sizes are
    measured on one static graph per batch size; only ExportOnnx has such keys).
    """

    opset: int
    precision: str = "fp32"
    ort_optimize: bool = False
    tolerances: str = ""
    batch_size: int = 0


@dataclass(frozen=True)
class PrecisionKey:
    """The precision a model is measured at (one of :data:`mlprof.runtimes.PRECISIONS`; a plot
    of several: ``+``-joined) and, for int8-static, how many batches calibrated it (0
    otherwise)."""

    precision: str = "fp32"
    calibration_batches: int = 0


def precision_segment(key: PrecisionKey) -> str:
    """``prec-int8-dynamic``, ``prec-int8-static-cal16``."""
    tag = f"prec-{key.precision}"
    if key.calibration_batches:
        tag += f"-cal{int(key.calibration_batches)}"
    return tag


#: the precision names of THE precision table (:mod:`mlprof.runtimes.precisions`), longest
#: first so that none is cut short
_PREC = "(?:" + "|".join(re.escape(p) for p in sorted(PRECISIONS, key=len, reverse=True)) + ")"
_PRECISION_SEG = re.compile(rf"prec-({_PREC}(?:\+{_PREC})*)(?:-cal(\d+))?")


def parse_precision_segment(segment: str) -> PrecisionKey:
    """The inverse of :func:`precision_segment`; ``ValueError`` for another string."""
    m = _PRECISION_SEG.fullmatch(segment)
    if not m:
        raise ValueError(f"not a precision segment: {segment!r}")
    return PrecisionKey(m.group(1), int(m.group(2) or 0))


@dataclass(frozen=True)
class ScriptKey:
    """How a model script runs: its arguments (hashed) and the discovery depth."""

    args: str = ""  # hash of the arguments, "" for none
    max_depth: int = 0


def input_tag(input_data: str, file_hash: str | None = None) -> str:
    """The input-data tag of a :class:`MeasureKey`: the kind, or ``file-<stem>-<hash8>``."""
    if file_hash is None:
        return input_data
    stem = path_safe(os.path.splitext(os.path.basename(input_data))[0], 24)
    return f"file-{stem}-{file_hash[:8]}"


def measure_segment(key: MeasureKey) -> str:
    """``calls100_events1_warmup10_mindur0p5_threads1_input-random`` (+ ``_rules-<hash8>``
    with tfaot batch rules)."""
    seg = (f"calls{key.n_calls}_events{key.n_events}_warmup{key.warmup}"
           f"_mindur{float_tag(key.min_duration)}_threads{key.threads}_input-{key.input}")
    if key.batch_rules:
        seg += f"_rules-{batch_rules_tag(key.batch_rules)}"
    return seg


def batch_rules_tag(rules: str) -> str:
    """8 hex digits of the normalized tfaot batch rules (``#<hash8>``, as parsed from a path,
    stays that hash)."""
    return rules[1:] if rules.startswith("#") else short_hash(rules, length=8)


_MEASURE_SEG = re.compile(r"calls(\d+)_events(\d+)_warmup(\d+)_mindur([0-9pem]+)_threads(\d+)"
                          r"_input-(.+?)(?:_rules-([0-9a-f]{8}))?")


def _float_from_tag(tag: str) -> float:
    return float(tag.replace("p", ".").replace("m", "-"))


def parse_measure_segment(segment: str) -> MeasureKey:
    """The inverse of :func:`measure_segment`; ``ValueError`` for another string."""
    m = _MEASURE_SEG.fullmatch(segment)
    if not m:
        raise ValueError(f"not a measurement segment: {segment!r}")
    calls, events, warmup, mindur, threads, inp, rules = m.groups()
    # the path keeps a hash of the rules only: the rules themselves are in the provenance
    return MeasureKey(int(calls), int(events), int(warmup), _float_from_tag(mindur),
                      int(threads), inp, f"#{rules}" if rules else "")


def export_segment(key: ExportKey) -> str:
    """``onnx-op18-fp32`` (+ ``-ortopt``, ``-tol<hash4>`` when given, ``-bs<N>`` for a static
    graph)."""
    tag = f"onnx-op{key.opset}-{key.precision}"
    if key.ort_optimize:
        tag += "-ortopt"
    if key.tolerances:
        tag += f"-tol{key.tolerances}"
    if key.batch_size:
        tag += f"-bs{int(key.batch_size)}"
    return tag


_EXPORT_SEG = re.compile(r"onnx-op(\d+)-(fp32|fp16)(-ortopt)?(?:-tol([0-9a-f]+))?(?:-bs(\d+))?")


def parse_export_segment(segment: str) -> ExportKey:
    """The inverse of :func:`export_segment`; ``ValueError`` for another string."""
    m = _EXPORT_SEG.fullmatch(segment)
    if not m:
        raise ValueError(f"not an export segment: {segment!r}")
    return ExportKey(int(m.group(1)), m.group(2), bool(m.group(3)), m.group(4) or "",
                     int(m.group(5) or 0))


def tolerances_tag(atol: float | None, rtol: float | None) -> str:
    """The ``tolerances`` of an :class:`ExportKey`: "" unless a tolerance is given."""
    if atol is None and rtol is None:
        return ""
    return short_hash(atol, rtol, length=4)


def script_key(argv: Sequence[str], max_depth: int) -> ScriptKey:
    """A :class:`ScriptKey` from the split script arguments and the depth."""
    return ScriptKey(short_hash(*argv, length=6) if argv else "", int(max_depth))


def script_segment(key: ScriptKey) -> str:
    """``args-<hash6>``, ``depth<N>``, both joined by ``_``, or "" for a plain run."""
    tags = []
    if key.args:
        tags.append(f"args-{key.args}")
    if key.max_depth:
        tags.append(f"depth{key.max_depth}")
    return "_".join(tags)


_SCRIPT_SEG = re.compile(r"(?:args-([0-9a-f]{6}))?_?(?:depth(\d+))?")


def parse_script_segment(segment: str) -> ScriptKey:
    """The inverse of :func:`script_segment` (``default`` and "" are a plain run)."""
    if segment in ("", "default"):
        return ScriptKey()
    m = _SCRIPT_SEG.fullmatch(segment)
    if not m or not any(m.groups()):
        raise ValueError(f"not a script segment: {segment!r}")
    return ScriptKey(m.group(1) or "", int(m.group(2) or 0))


def measure_settings_segment(measure: MeasureKey, export: ExportKey | None = None,
                             precision: PrecisionKey | None = None) -> str:
    """Measurement tasks' settings: the measurement, plus the export when a model script is
    measured through its ONNX export, plus the precision when it is not fp32 and the export
    does not say it already (a script's fp16 export: ``onnx-op18-fp16``), ``__`` between the
    parts. A store written before precisions existed reads as fp32."""
    parts = [measure_segment(measure)]
    if export is not None:
        parts.append(export_segment(export))
    if precision is not None and precision.precision != "fp32" and not (
            export is not None and export.precision == precision.precision):
        parts.append(precision_segment(precision))
    return "__".join(parts)


def quantize_settings_segment(precision: PrecisionKey,
                              export: tuple[ExportKey, ScriptKey] | None = None) -> str:
    """QuantizeModel's settings: the precision, after the export's settings when the model is a
    script's ONNX export."""
    parts = [export_settings_segment(*export)] if export is not None else []
    parts.append(precision_segment(precision))
    return "__".join(parts)


def export_settings_segment(export: ExportKey, script: ScriptKey) -> str:
    """ExportOnnx' settings: the export, plus how the script ran (``_`` between the parts)."""
    return "_".join(t for t in (export_segment(export), script_segment(script)) if t)


def discovery_settings_segment(script: ScriptKey) -> str:
    """DiscoverModels' settings: how the script ran, ``default`` for a plain run."""
    return script_segment(script) or "default"


def script_model_hash(content_hash: str, argv: Sequence[str], max_depth: int) -> str:
    """A script model's hash in the model segment: its content, arguments and depth (the same
    model called with other arguments may take other shapes).

    ``content_hash`` is the spec's (:attr:`mlprof.model.spec.ModelSpec.content_hash`): for
    ``script.py::HASH`` the script and the selected hash, so that a script's models never share
    a directory; for the script alone (its sha256), the hash of the script as a whole, which
    names its DiscoverModels and the plots of all its models. The tasks give a script that
    calls one model, named without ``::HASH``, that model's ``::HASH`` before they build a path
    (:meth:`mlprof.tasks.framework.mixins.ScriptMixin.single_model`), so that one model has one
    segment however it was named."""
    return short_hash(content_hash, *argv, max_depth, length=64)


def parse_settings_segment(segment: str) -> dict:
    """The inverse of the ``*_settings_segment`` builders: ``measure``, ``export``, ``script``
    (each None when absent) and ``other`` (parts of other tasks' settings, kept as strings)."""
    out: dict = {"measure": None, "export": None, "script": None, "precision": None,
                 "generation": None, "other": []}
    if segment == "default":
        return out
    for part in segment.split("__"):
        m = re.fullmatch(r"(onnx-op.+?)_((?:args-|depth).+)", part)
        pieces = [m.group(1), m.group(2)] if m else [part]
        for piece in pieces:
            for key, parse in (("generation", parse_generation_settings_segment),
                               ("measure", parse_measure_segment),
                               ("export", parse_export_segment),
                               ("script", parse_script_segment),
                               ("precision", parse_precision_segment)):
                if out[key] is None:
                    try:
                        out[key] = parse(piece)
                        break
                    except ValueError:
                        continue
            else:
                out["other"].append(piece)
    return out


def interleave_tag(rounds: int) -> str:
    """``il20``: an interleaved comparison of 20 rounds."""
    return f"il{int(rounds)}"


def generation_settings_segment(new_tokens: int, warmup: int, n_calls: int,
                                min_duration: float, rounds: int, threads: int,
                                precision: str = "fp32") -> str:
    """MeasureGeneration's and PlotGeneration's settings (the points, prompt lengths and batch
    sizes, are in the file names): ``gen-new32_warmup2_calls3_mindur1_il6_threads1``, plus
    ``__prec-<precision>`` below fp32."""
    seg = (f"gen-new{int(new_tokens)}_warmup{int(warmup)}_calls{int(n_calls)}"
           f"_mindur{float_tag(min_duration)}_{interleave_tag(rounds)}_threads{int(threads)}")
    if precision != "fp32":
        seg += f"__prec-{precision}"
    return seg


_GENERATION_SEG = re.compile(r"gen-new(\d+)_warmup(\d+)_calls(\d+)_mindur([0-9pem]+)_il(\d+)"
                             r"_threads(\d+)(?:__prec-([a-z0-9-]+))?")


def parse_generation_settings_segment(segment: str) -> dict:
    """The inverse of :func:`generation_settings_segment`; ``ValueError`` for another
    string."""
    m = _GENERATION_SEG.fullmatch(segment)
    if not m:
        raise ValueError(f"not a generation settings segment: {segment!r}")
    new, warmup, calls, mindur, rounds, threads, precision = m.groups()
    return {"new_tokens": int(new), "warmup": int(warmup), "n_calls": int(calls),
            "min_duration": _float_from_tag(mindur), "interleave": int(rounds),
            "threads": int(threads), "precision": precision or "fp32"}
