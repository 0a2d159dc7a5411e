"""THE store layout: how a result's directory is built from its settings, and parsed back.

Every result lives in ``$MLP_STORE/<Task>/<segments...>/<version>/<files>``. Which segments a
task has, in which order, and how each segment spells its settings is defined here and nowhere
else: the law tasks build their output paths with these functions, ``mlprof store``,
``mlprof.report.collect``, the dashboard and the remote job directories parse them with the same
functions. No law import (the library and the ``mlprof`` command use it without a scheduler).

Segments (``<...>`` is filled in, ``[...]`` appears only when not the default)::

    model     <name>__<hash8>            hash: the model files' content (and, for model scripts,
                                         the script arguments and discovery depth); a model of
                                         a script is <stem>-<model hash>__<hash8> in every
                                         family, with or without ::HASH (see script_model_hash)
              <stem>__<hash8>                         (a script as a whole: DiscoverModels, and
                                         the plots of all models of a multi-model script)
              <name1>__<h1>-<name2>__<h2>              (several models on one plot)
              <n>x_<first>_<hash8>                    (a list too long for one segment)
    runtime   <runtime>-<version>__<device>           e.g. onnxruntime-1.31.1__cpu
              <rt1>-<v1>-<rt2>-<v2>__<device>          (several runtimes on one plot)
    settings  measurement tasks: calls<N>_events<N>_warmup<N>_mindur<F>_threads<N>_input-<kind>
                  [__onnx-op<N>-<fp32|fp16>[-ortopt][-tol<hash4>]]   (script models, exported)
                  [__prec-<precision>[-cal<N>]]   (a precision other than fp32, see PrecisionKey)
              ExportOnnx: onnx-op<N>-<precision>...[-bs<N>][_args-<hash6>][_depth<N>]
                          (-bs<N>: a static graph for batch size N, see ExportKey)
              DiscoverModels: default | args-<hash6>[_depth<N>]
              QuantizeModel: [<ExportOnnx' settings>__]prec-<precision>[-cal<N>]

This is the layout mlprof has always written, so a store written before this module existed is
read as it is (``tests/test_layout.py`` keeps paths of that store as fixtures).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mlprof.errors import MLProfError
from mlprof.runtimes.precisions import PRECISIONS
from mlprof.util import float_tag, short_hash

# --- the store ----------------------------------------------------------------------------------


def store_base() -> str:
    """The store directory: ``$MLP_STORE`` (default ``$MLP_BASE/data/store``), absolute.

    An empty ``$MLP_STORE`` means the default, like an unset one.
    """
    store = os.environ.get("MLP_STORE")
    if not store:
        base = os.environ.get("MLP_BASE") or os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))
        store = os.path.join(base, "data", "store")
    return os.path.abspath(os.path.expandvars(os.path.expanduser(store)))


#: the segments between ``<store>/<Task>/`` and the version directory, per task family; a task
#: not listed here has no segments of its own (its outputs sit in ``<Task>/<version>/``)
LAYOUTS: dict[str, tuple[str, ...]] = {
    "DiscoverModels": ("model", "settings"),
    "ExportOnnx": ("model", "settings"),
    "QuantizeModel": ("model", "settings"),
    "MeasureRuntime": ("model", "runtime", "settings"),
    "MergeRuntimes": ("model", "runtime", "settings"),
    "PlotRuntimes": ("model", "runtime", "settings"),
    "PlotMultiRuntimes": ("model", "runtime", "settings"),
    "PlotThroughput": ("model", "runtime", "settings"),
    "PlotSpeedup": ("model", "runtime", "settings"),
    "CompareInterleaved": ("model", "runtime", "settings"),
    "ComparePrecisions": ("model", "runtime", "settings"),
    "ProfileRuntime": ("model", "runtime", "settings"),
    "PlotProfile": ("model", "runtime", "settings"),
    "MeasureLoad": ("model", "runtime", "settings"),
    "PlotLoad": ("model", "runtime", "settings"),
    "MeasureGeneration": ("model", "runtime", "settings"),
    "PlotGeneration": ("model", "runtime", "settings"),
    "Report": ("model",),
    "PlotHistory": ("model",),
    "Dashboard": ("model", "settings"),
    "RunExperiment": ("model",),
    "ConfirmResults": ("model",),
    "Nightly": ("model",),
    "MeasurePeak": ("host", "runtime", "settings"),
    "CalibrateNoise": ("host", "fingerprint"),
}

#: top-level directories that hold model *sources* (no versions), e.g. the API's saved models
SOURCE_DIRS: dict[str, tuple[str, ...]] = {"ApiModels": ("model",)}

#: the store's cache of derived model files (a decoder's ``save_pretrained`` directory,
#: :func:`mlprof.model.decoder.default_cache_dir`; its exports for ONNX Runtime and OpenVINO)
CACHE_DIR = "cache"


def generation_cache_dir(store: str | None = None) -> str:
    """Where the generation runtimes keep their exports of a decoder, by its content hash:
    ``<store>/cache/generation`` (made once, reused by every version and task)."""
    return os.path.join(store or store_base(), CACHE_DIR, "generation")


#: compiled artifacts under :data:`CACHE_DIR` (see :func:`compile_cache_dir`)
COMPILED_DIR = "compiled"


def compile_cache_dir(model_name: str, content_hash: str, runtime: str, runtime_version: str,
                      settings: str, store: str | None = None) -> str:
    """Where a compiling runtime keeps what it compiled for one model:
    ``<store>/cache/compiled/<name>__<hash8>/<runtime>-<version>/<settings>``.

    Keyed like ExportOnnx' outputs: the model's content hash (the model segment), the runtime's
    version, and the settings that change the compiled code (``settings``, e.g.
    ``fp32_threads1``); shared by every ``--version`` and task, so a compile happens once per
    model, runtime version and settings (torch.compile of linear.py: 18.2 s with an empty
    cache, 2.4 s from this cache, here). The batch sizes share one directory: the compilers
    key their artifacts by the input shapes themselves."""
    return os.path.join(store or store_base(), CACHE_DIR, COMPILED_DIR,
                        model_segment(model_name, content_hash),
                        runtime_name(runtime, runtime_version),
                        check_segment(settings, "compile cache settings"))


#: where remote workflows keep their job files: ``<store>/jobs/<result path>/<bs>/<system>``
JOBS_DIR = "jobs"

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_segment(value: str, field: str) -> str:
    """``value`` as one safe path segment, or a one-line error naming ``field``.

    Refused: empty, ``.``/``..``, absolute paths, anything with ``/`` or ``\\``, control
    characters, a leading ``.`` (hidden: the store's own temporary files) and more than 200
    characters.
    """
    text = str(value)
    why = None
    if not text.strip():
        why = "must not be empty"
    elif "/" in text or "\\" in text or os.path.isabs(text) or text in (".", ".."):
        why = "must be one name, not a path (no '/')"
    elif text.startswith("."):
        why = "must not start with '.'"
    elif _CONTROL.search(text):
        why = "must not contain control characters"
    elif len(text) > 200:
        why = f"must be at most 200 characters, got {len(text)}"
    if why:
        raise MLProfError(f"{why}, got {text!r}", field=field)
    return text


#: the suffix of the version under which a Nightly measures suspicious results again
#: (:func:`mlprof.report.nightly.confirm_version`): mlprof's own, never a version given by a user
CONFIRM_SUFFIX = ".confirm"

#: version names that belong to luigi or to the store's own housekeeping: luigi's atomic files
#: and directories (``<name>-luigi-tmp-<9 digits>``, which ``mlprof store clean`` removes as
#: leftovers) and directories renamed for deletion (``.mlprof-deleting-``); a version named so
#: would be deleted whole by ``mlprof store clean``
_RESERVED_VERSION = re.compile(r".*-luigi-tmp-\d+|.*\.mlprof-deleting-.*")


def check_version(value: str, field: str = "--version", *, given: bool = False) -> str:
    """``value`` as a version directory name, NFC-normalized and stripped, or a one-line error
    naming ``field``.

    Versions that differ only by Unicode normalization or surrounding spaces were distinct
    directories; control and bidi characters make two versions look alike
    (:func:`mlprof.ingest.clean_name`). Names reserved by luigi and the store
    (:data:`_RESERVED_VERSION`) are refused, so that ``mlprof store clean`` never takes a real
    version for a leftover. ``given``: a version from the user (the command line, the API),
    which must not end in :data:`CONFIRM_SUFFIX` either (that suffix marks a Nightly's
    re-measurements; mlprof's own tasks use it, so a task alone cannot refuse it).
    """
    from mlprof.ingest import clean_name

    text = check_segment(clean_name(str(value), field), field)
    if _RESERVED_VERSION.fullmatch(text):
        raise MLProfError(f"{text!r} is a name reserved for luigi's and the store's temporary "
                          "files (mlprof store clean would delete it); choose another",
                          field=field)
    if given and text.endswith(CONFIRM_SUFFIX):
        raise MLProfError(f"{text!r} ends in {CONFIRM_SUFFIX!r}, the suffix of a Nightly's "
                          "confirming re-measurements; choose another", field=field)
    return text


def result_dir(task: str, version: str, segments: dict[str, str] | None = None,
               store: str | None = None) -> str:
    """``<store>/<task>/<segments in LAYOUTS order>/<version>``.

    ``segments`` must name exactly the segments of ``LAYOUTS[task]`` (an error otherwise: a
    segment that is built but not used would be a setting that never reaches the path).
    """
    segments = dict(segments or {})
    names = LAYOUTS.get(task, ())
    if set(segments) != set(names):
        raise ValueError(f"{task}: segments {sorted(segments)} do not match the layout "
                         f"{list(names)}")
    parts = [segments[n] for n in names]
    for p in parts:
        if not p or "/" in p or p in (".", ".."):
            raise ValueError(f"{task}: bad path segment {p!r}")
    return os.path.join(store or store_base(), task, *parts, check_version(version))


@dataclass(frozen=True)
class ResultPath:
    """A path in the store, parsed: task, segments, version and the file below it."""

    store: str
    task: str
    segments: dict[str, str]
    version: str | None
    file: str = ""

    @property
    def directory(self) -> str:
        """The version directory."""
        names = LAYOUTS.get(self.task, ())
        return os.path.join(self.store, self.task, *[self.segments[n] for n in names],
                            self.version or "")

    def parsed(self) -> dict:
        """Every segment parsed into its settings (see :func:`parse_segments`)."""
        return parse_segments(self.segments)


def parse_result_path(path: str, store: str | None = None) -> ResultPath:
    """Split a path below ``store`` into task, segments, version and file (the inverse of
    :func:`result_dir`). Raises ``ValueError`` for a path that does not fit the layout."""
    store = os.path.abspath(store or store_base())
    rel = os.path.relpath(os.path.abspath(path), store)
    parts = [] if rel == "." else rel.split(os.sep)
    if not parts or parts[0] in ("..", ""):
        raise ValueError(f"{path} is not below the store {store}")
    task = parts[0]
    names = LAYOUTS.get(task)
    if names is None:
        raise ValueError(f"{path}: unknown task directory {task!r}")
    if len(parts) < 2 + len(names):
        raise ValueError(f"{path}: expected {task}/{'/'.join(names)}/<version>")
    segments = dict(zip(names, parts[1:1 + len(names)], strict=True))
    version = parts[1 + len(names)]
    return ResultPath(store, task, segments, version, os.path.join(*parts[2 + len(names):])
                      if len(parts) > 2 + len(names) else "")


def parse_segments(segments: dict[str, str]) -> dict:
    """The settings behind each segment: ``model`` -> :func:`parse_model_segment` etc."""
    out: dict = {}
    if "model" in segments:
        out.update(parse_model_segment(segments["model"]))
    if "runtime" in segments:
        out.update(parse_runtime_segment(segments["runtime"]))
    if "settings" in segments:
        out["settings"] = parse_settings_segment(segments["settings"])
    return out


def job_dir(result_directory: str, bs_tag: str, system: str, store: str | None = None) -> str:
    """Where a remote workflow keeps its job files (submission file, logs, job scripts)."""
    store = store or store_base()
    rel = os.path.relpath(result_directory, store)
    if rel.startswith(".."):
        raise ValueError(f"{result_directory} is not below the store {store}")
    return os.path.join(store, JOBS_DIR, rel, bs_tag, system)


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
    (:meth:`mlprof.tasks.parameters.ScriptMixin.single_model`), so that one model has one
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


# --- file names ---------------------------------------------------------------------------------

#: the file next to a task's outputs that records why it failed (never an output itself)
FAILURE_FILE = "_failure.json"

_BRANCH_FILE = re.compile(r"runtime_bs_(\d+)\.(csv|json)")
_BRANCH_FAILURE = re.compile(r"_failure_bs_(-?\w+)\.json")
_LOAD_FAILURE = re.compile(r"_failure_((?:streams|server)_[\w.-]+)\.json")
_GENERATION_FAILURE = re.compile(r"_failure_generation_(p\d+_bs\d+)\.json")


def branch_files(batch_size: int) -> dict[str, str]:
    """MeasureRuntime's files of one batch size: raw samples and provenance."""
    stem = f"runtime_bs_{int(batch_size)}"
    return {"csv": f"{stem}.csv", "json": f"{stem}.json"}


#: glob patterns of MeasureRuntime's provenance files and failure records
BRANCH_JSON_GLOB = "runtime_bs_*.json"
BRANCH_FAILURE_GLOB = "_failure_bs_*.json"


def branch_failure_file(batch_size: int) -> str:
    """The failure record of one MeasureRuntime branch (the branches share a directory)."""
    return f"_failure_bs_{int(batch_size)}.json"


def parse_branch_file(name: str) -> tuple[int, str] | None:
    """``runtime_bs_8.csv`` -> ``(8, "csv")``; None for another name."""
    m = _BRANCH_FILE.fullmatch(os.path.basename(name))
    return (int(m.group(1)), m.group(2)) if m else None


def parse_branch_failure(name: str) -> int | None:
    """``_failure_bs_8.json`` -> 8; None for another name or a batch size that is no number."""
    m = _BRANCH_FAILURE.fullmatch(os.path.basename(name))
    if not m:
        return None
    try:
        return int(m.group(1))
    except ValueError:
        return None


def batch_sizes_tag(sizes: Sequence[int]) -> str:
    """``bs_1_2_4``, or ``bs_1-1024_n11_<hash>`` for more than six batch sizes."""
    sizes = tuple(int(b) for b in sizes)
    if len(sizes) <= 6:
        return "bs_" + "_".join(map(str, sizes))
    return f"bs_{sizes[0]}-{sizes[-1]}_n{len(sizes)}_{short_hash(*sizes, length=6)}"


def merged_files(bs_tag: str) -> dict[str, str]:
    """MergeRuntimes' files: all raw samples, statistics per batch size, provenance."""
    return {"raw": f"runtimes_{bs_tag}.csv", "stats": f"stats_{bs_tag}.csv",
            "provenance": f"provenance_{bs_tag}.json"}


def interleave_tag(rounds: int) -> str:
    """``il20``: an interleaved comparison of 20 rounds."""
    return f"il{int(rounds)}"


def interleaved_files(bs_tag: str, rounds: int) -> dict[str, str]:
    """CompareInterleaved's files: the speed-up table, every round's medians, provenance."""
    tag = f"{bs_tag}_{interleave_tag(rounds)}"
    return {"table": f"speedup_{tag}.csv", "rounds": f"rounds_{tag}.csv",
            "provenance": f"provenance_{tag}.json"}


def precision_files(bs_tag: str, rounds: int, budget: int = 0) -> dict[str, str]:
    """ComparePrecisions' files: the table as CSV and as text (the profiles' time budget in
    the name: the reasons come from profiles it may cut short)."""
    stem = f"precisions_{bs_tag}_{interleave_tag(rounds)}_{budget_tag(budget)}"
    return {"csv": f"{stem}.csv", "text": f"{stem}.txt"}


def budget_tag(seconds: int) -> str:
    """``budget60s``: a profile's time budget per batch size; ``nobudget``: none (0)."""
    return f"budget{int(seconds)}s" if int(seconds) > 0 else "nobudget"


def profile_files(batch_size: int, budget: int = 0) -> dict[str, str]:
    """ProfileRuntime's files of one batch size: time per operator type, provenance (the
    time budget in the name: it may cut the profiled calls short)."""
    stem = f"profile_bs_{int(batch_size)}_{budget_tag(budget)}"
    return {"csv": f"{stem}.csv", "json": f"{stem}.json"}


def profile_plot_files(bs_tag: str, top: int, budget: int = 0) -> dict[str, str]:
    """PlotProfile's files besides the plots: the ``plot`` stem (the plot options' tag and the
    file type follow), the top operators as ``csv`` and as a ``text`` table."""
    stem = f"profile_{bs_tag}_top{int(top)}_{budget_tag(budget)}"
    return {"plot": stem, "csv": f"{stem}.csv", "text": f"{stem}.txt"}


def _num_tag(value: float) -> str:
    """``2.5`` -> ``2p5``, ``1000.0`` -> ``1000``: a number in a file name, exact: two numbers
    have two tags. Six significant digits (``:g``) where they hold the number exactly (every
    tag of a store written before stays), else the shortest text that reads back as it
    (``repr``): ``200.00001`` -> ``200p00001`` (``:g`` made it ``200``, and the rates 200.00001
    and 200.00002 one point, measured once and shown twice)."""
    v = float(value)
    text = f"{v:g}"
    if float(text) != v:
        text = repr(v)
    return text.replace(".", "p").replace("+", "")


def load_point_tag(scenario: str, streams: int, batch_size: int, sessions: str, *,
                   max_batch: int = 1, max_wait_ms: float = 0.0, rate: float | None = None,
                   latency_bound_ms: float | None = None, percentile: float = 99.0) -> str:
    """One MeasureLoad branch's part of its file names: ``streams_s2_bs1_each``, or
    ``server_w1_bs1_each_mb8_mw2`` followed by ``_r5000`` (a rate) and/or ``_p99le1ms`` (the
    percentile and bound its verdicts are judged by; without a rate: the search for the
    highest rate that meets it)."""
    tag = f"{scenario}_{'s' if scenario == 'streams' else 'w'}{int(streams)}_bs{int(batch_size)}"
    tag += f"_{sessions}"
    if scenario == "server":
        tag += f"_mb{int(max_batch)}_mw{_num_tag(max_wait_ms)}"
        if rate is not None:
            tag += f"_r{_num_tag(rate)}"
        if latency_bound_ms is not None:
            tag += f"_p{_num_tag(percentile)}le{_num_tag(latency_bound_ms)}ms"
    return tag


def load_files(tag: str) -> dict[str, str]:
    """MeasureLoad's files of one branch: every timed call or served request (``csv``), and
    the record with each point's summary and the provenance (``json``)."""
    return {"csv": f"load_{tag}.csv", "json": f"load_{tag}.json"}


def load_failure_file(tag: str) -> str:
    """The failure record of one MeasureLoad branch (the branches share a directory, so each
    load point has its own: a point that succeeds must not drop another's record)."""
    return f"_failure_{tag}.json"


def parse_generation_failure(name: str) -> str | None:
    """``_failure_generation_p16_bs1.json`` -> ``p16_bs1``; None for another name."""
    m = _GENERATION_FAILURE.fullmatch(os.path.basename(name))
    return m.group(1) if m else None


def parse_load_failure(name: str) -> str | None:
    """``_failure_streams_s2_bs1_each.json`` -> ``streams_s2_bs1_each``; None for another
    name."""
    m = _LOAD_FAILURE.fullmatch(os.path.basename(name))
    return m.group(1) if m else None


def load_set_tag(tags: Sequence[str]) -> str:
    """PlotLoad: the branches it shows, as one file-name part (the tag itself for one, a
    hash of them for more)."""
    tags = list(tags)
    if len(tags) == 1:
        return tags[0]
    return f"{tags[0].split('_')[0]}_n{len(tags)}_{short_hash(*tags, length=8)}"


def load_plot_files(set_tag: str) -> dict[str, str]:
    """PlotLoad's files besides the plots: the ``plot`` stem, the points as ``csv`` and the
    table with the answer as ``text``."""
    stem = f"load_{set_tag}"
    return {"plot": stem, "csv": f"{stem}.csv", "text": f"{stem}.txt"}


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


def generation_point_tag(prompt_length: int, batch_size: int) -> str:
    """One MeasureGeneration branch's part of its file names: ``p128_bs4``."""
    return f"p{int(prompt_length)}_bs{int(batch_size)}"


def generation_files(tag: str) -> dict[str, str]:
    """MeasureGeneration's files of one point: every timed call's per-token times (``csv``)
    and the record (``json``: provenance, each runtime's metrics and agreement, speed-ups)."""
    return {"csv": f"generation_{tag}.csv", "json": f"generation_{tag}.json"}


def generation_failure_file(tag: str) -> str:
    """The failure record of one MeasureGeneration point (the points share a directory)."""
    return f"_failure_generation_{tag}.json"


def generation_set_tag(prompt_lengths: Sequence[int], batch_sizes: Sequence[int]) -> str:
    """PlotGeneration: its points as one file-name part, ``p16-128_bs1-4`` (hashed when
    long)."""
    tag = (f"p{'-'.join(str(int(p)) for p in prompt_lengths)}"
           f"_bs{'-'.join(str(int(b)) for b in batch_sizes)}")
    if len(tag) <= 60:
        return tag
    return (f"p{len(prompt_lengths)}x_bs{len(batch_sizes)}x_"
            f"{short_hash(*prompt_lengths, '/', *batch_sizes, length=8)}")


def generation_plot_files(set_tag: str) -> dict[str, str]:
    """PlotGeneration's files besides the plots: the ``plot`` stem, the table as ``csv`` and
    as ``text``."""
    stem = f"generation_{set_tag}"
    return {"plot": stem, "csv": f"{stem}.csv", "text": f"{stem}.txt"}


#: MeasurePeak's record (mlprof.measure.peak)
PEAK_FILE = "peak.json"
#: MeasurePeak's version directory: the GEMM benchmark's revision, never ``--version`` (a peak
#: belongs to the host, runtime version and threads; raise it when the benchmark changes)
PEAK_REVISION = "gemm1"


#: CalibrateNoise's record (mlprof.measure.noise)
NOISE_FILE = "noise.json"
#: CalibrateNoise's version directory: the calibration's revision, never ``--version`` (a floor
#: belongs to the host's fingerprint; raise it when the calibration changes)
NOISE_REVISION = "aa1"


def fingerprint_segment(fingerprint_id: str) -> str:
    """CalibrateNoise: ``fp-<12 hex digits>`` (:func:`mlprof.sysinfo.fingerprint_id`)."""
    return "fp-" + safe_name(fingerprint_id, 32)


def host_segment(host: str) -> str:
    """MeasurePeak: the host the peak was measured on (a peak belongs to one machine)."""
    return safe_name(host, 64)


def peak_settings_segment(threads: int) -> str:
    """MeasurePeak's settings: ``threads<N>`` (the benchmark itself is fixed by the code)."""
    return f"threads{int(threads)}"


def model_page(model: str, model_hash: str | None) -> str:
    """The dashboard's page of one model, relative to the site: its model segment
    (:func:`model_segment`, so the page and the store's directories name a model alike; the
    hash is never cut), or the name alone for a result without a hash."""
    if model_hash:
        return f"models/{safe_name(model, 48)}__{model_hash}.html"
    return f"models/{safe_name(model, 64)}.html"


# --- segments of the report and nightly tasks -----------------------------------------------------


def stores_segment(stores: Sequence[str]) -> str:
    """Report, PlotHistory and Dashboard: ``stores_<hash8>`` of the stores they read."""
    return "stores_" + short_hash(*stores)


def dashboard_settings_segment(statistic: str, reference_runtime: str,
                               extras: Sequence[str] = ()) -> str:
    """``<statistic>_ref-<runtime>``, plus a hash of the other options when any is given."""
    tag = f"{statistic}_ref-{reference_runtime}"
    if any(extras):
        tag += "_" + short_hash(*extras, length=8)
    return tag


def experiment_segment(experiment_file: str, content_hash: str) -> str:
    """RunExperiment: ``<file stem>__<hash8 of the file's content>``."""
    stem = os.path.splitext(os.path.basename(experiment_file))[0]
    return f"{path_safe(stem, 48)}__{content_hash[:8]}"


def experiments_dir_segment(directory: str) -> str:
    """ConfirmResults and Nightly: ``<directory name>__<hash8 of its path>``."""
    return f"{path_safe(os.path.basename(directory), 32)}__{short_hash(directory)}"


_MERGED_FILE = re.compile(r"(runtimes|stats|provenance)_(bs_[0-9A-Za-z_-]+)\.(csv|json)")


def parse_merged_file(name: str) -> tuple[str, str] | None:
    """``stats_bs_1_2.csv`` -> ``("stats", "bs_1_2")`` (keys of :func:`merged_files`); None for
    another name."""
    m = _MERGED_FILE.fullmatch(os.path.basename(name))
    if not m:
        return None
    kind = {"runtimes": "raw"}.get(m.group(1), m.group(1))
    return (kind, m.group(2)) if merged_files(m.group(2))[kind] == os.path.basename(name) \
        else None


def versions_in(store: str, task: str = "MeasureRuntime") -> set[str]:
    """The version directories of ``task`` in ``store`` (names only)."""
    depth = len(LAYOUTS.get(task, ()))
    level = [os.path.join(store, task)]
    for _ in range(depth):
        level = [e.path for d in level if os.path.isdir(d) for e in os.scandir(d)
                 if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
    return {e.name for d in level if os.path.isdir(d) for e in os.scandir(d)
            if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")}
