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

import functools
import os
import re
from dataclasses import dataclass

from mlprof.errors import MLProfError
from mlprof.results.layout.segments import (
    model_segment,
    parse_model_segment,
    parse_runtime_segment,
    parse_settings_segment,
    runtime_name,
)

# --- the store ----------------------------------------------------------------------------------


def store_base() -> str:
    """The store directory: ``$MLP_STORE`` (default ``$MLP_BASE/data/store``), absolute.

    An empty ``$MLP_STORE`` means the default, like an unset one.
    """
    store = os.environ.get("MLP_STORE")
    if not store:
        base = os.environ.get("MLP_BASE") or os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
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


def compile_cache_problem(directory: str, store: str | None = None) -> str | None:
    """Why a compiler must not keep its artifacts in ``directory`` (a :func:`compile_cache_dir`
    below ``store``), or None after making it.

    Refused: a symbolic link on the way from the store (what a compiler loads through it is not
    the store's: another user's or another machine's code would run as this model's, and its
    entries would be counted as this model's hits), a path that is not a directory, one that
    cannot be created, written or searched. The compiling runtimes then compile without the
    store's cache (``compile_cache`` ``none``, the reason in
    ``runtime_settings.compile.cache_refused``)."""
    store = os.path.abspath(store or store_base())
    directory = os.path.abspath(directory)
    rel = os.path.relpath(directory, store)
    if rel == os.curdir or rel.split(os.sep)[0] == os.pardir:
        return f"{directory} is not below the store {store}"
    path = store
    for part in rel.split(os.sep):
        path = os.path.join(path, part)
        if os.path.islink(path):
            return f"{path} is a symbolic link"
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        return f"{directory} cannot be created: {e.strerror or e}"
    if not os.path.isdir(directory) or os.path.islink(directory):
        return f"{directory} is not a directory"
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"{directory} is not writable"
    return None


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
    return _checked_version(str(value), field, given)


@functools.lru_cache(maxsize=256)
def _checked_version(value: str, field: str, given: bool) -> str:
    """:func:`check_version` of a str, kept per (value, field, given): a task checks its
    version ~7 times as it is made and requested (0.1 ms each, 2,100 calls for 300 branches of
    a sweep); a refused one raises every time (exceptions are not cached)."""
    from mlprof.ingest import clean_name

    text = check_segment(clean_name(value, field), field)
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
