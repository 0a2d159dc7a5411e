"""Typed, versioned records: what every JSON record mlprof writes starts with, and the model a
result is about.

A store kept for years by a nightly outlives the code that wrote it (asv keeps an
``api_version`` in each result file, pyperf a ``_JSON_VERSION``). Every record written from
now on carries ``format_version`` (:data:`FORMAT_VERSION`) and ``record`` (its kind: ``branch``,
``merged``, ``profile``, ``peak``, ``interleaved``); a record without them was written before
(format 0) and is read as it is, through :func:`model_identity` for what changed meaning. A
record of a *newer* format than this code reads is refused in one line (its fields may mean
something else), never guessed at.

The model a result is about (:class:`ModelIdentity`) is the model the user named: the YAML,
ONNX file or script and its name and label. A model script measured on ONNX Runtime runs its
export, whose own spec (``provenance["model"]``) is named ``model``; a label or name taken from
there titled every script "model" on the dashboard (issue 20). Format 1 writes the identity
under ``model_identity``; format 0 records have it from ``task.model_name``/``model_file``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

from mlprof.errors import CorruptResult

#: the format of the records this code writes (0: the records written before it had one;
#: 2: a load point names its bound ``latency_bound_ms``, as the option and the load settings
#: do, where format 1 wrote ``bound_ms``: read as such)
FORMAT_VERSION = 2

#: the kinds of record (``record`` field)
KINDS = ("branch", "merged", "profile", "peak", "interleaved", "load", "noise", "generation")


def stamp(record: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """``record`` with ``format_version`` and ``record`` (its kind) first: what every record
    writer passes its dict through."""
    if kind not in KINDS:
        raise ValueError(f"unknown record kind {kind!r}")
    rest = {k: v for k, v in record.items() if k not in ("format_version", "record")}
    return {"format_version": FORMAT_VERSION, "record": kind, **rest}


def format_version(record: Mapping[str, Any], file: str | None = None) -> int:
    """The record's format (0 for a record written before formats existed); a
    :class:`~mlprof.errors.CorruptResult` for one that is no whole number or newer than
    :data:`FORMAT_VERSION`."""
    value = record.get("format_version", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CorruptResult(f"format_version is {value!r}, not a whole number", file)
    if value > FORMAT_VERSION:
        raise CorruptResult(f"format_version {value} is newer than this mlprof reads "
                            f"({FORMAT_VERSION}): update mlprof to read it", file)
    return value


@dataclass(frozen=True)
class ModelIdentity:
    """The model a result is about, as the user named it.

    ``name``: the model's one name (``--model-name``, else the YAML's or file's stem; a script
    model's ``<script>`` or ``<script>-<hash>``); ``label``: what titles and legends show (the
    YAML's ``label``, else the name); ``file``: the YAML, ONNX file or script (``::<hash>``
    selects a model in a script); ``hash``: the 8 hex digits of the store's model segment (the
    content, and a script's arguments).
    """

    name: str
    label: str
    file: str | None = None
    hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``model_identity`` of a format-1 record)."""
        return asdict(self)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def model_identity(prov: Mapping[str, Any], name: str | None = None,
                   model_hash: str | None = None) -> ModelIdentity:
    """The :class:`ModelIdentity` of a provenance record of any format.

    ``name`` and ``model_hash`` are the store path's (its model segment), used where the
    record says nothing. For format 0: the task's ``model_name`` and ``model_file``, and the
    spec's label only when the spec *is* the user's model (not an export of a script: an
    exported ``model.onnx`` is called ``model``).
    """
    ident = prov.get("model_identity")
    if isinstance(ident, Mapping) and _text(ident.get("name")):
        nm = _text(ident.get("name")) or ""
        return ModelIdentity(nm, _text(ident.get("label")) or nm, _text(ident.get("file")),
                             _text(ident.get("hash")) or model_hash)
    task = _mapping(prov.get("task"))
    spec = _mapping(prov.get("model"))
    nm = _text(task.get("model_name")) or name or _text(spec.get("name")) or "model"
    file = _text(task.get("model_file")) or _text(spec.get("spec_file"))
    own_spec = file is not None and _text(spec.get("spec_file")) == file
    label = (_text(spec.get("label")) if own_spec else None) or nm
    return ModelIdentity(nm, label, file, model_hash)


# --- checked reading -----------------------------------------------------------------------------

#: the field every record's header starts its versions with (readers that show it as a column
#: name it through this constant; :class:`Header` is the one writer)
MLPROF_VERSION = "mlprof_version"

#: the largest batch size a record may name (the settings allow less: this is what a reader
#: accepts as a batch size at all)
MAX_RECORD_BATCH_SIZE = 2 ** 20
#: the largest thread, stream, process id count a record may name
MAX_COUNT = 2 ** 31

_KIND_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}


def _kind(value: Any) -> str:
    return _KIND_NAMES.get(type(value), type(value).__name__)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


class _Fields:
    """Checked access to the fields of one JSON object of a record: each getter returns the
    field's value or raises :class:`~mlprof.errors.CorruptResult` naming the file and the field
    (``prefix`` + key: ``points[2].p99_ms``). A field that is absent reads as ``default``
    unless it is ``required``; ``null`` is accepted where ``none`` says so."""

    def __init__(self, obj: Any, file: str | None, prefix: str = "", what: str = "") -> None:
        if not isinstance(obj, Mapping):
            raise CorruptResult(f"not an object but {_kind(obj)}", file,
                                (prefix.rstrip(".") or what) or None)
        self.obj, self.file, self.prefix = obj, file, prefix

    def _bad(self, key: str, text: str) -> CorruptResult:
        return CorruptResult(text, self.file, self.prefix + key)

    def _get(self, key: str, required: bool) -> tuple[bool, Any]:
        if key not in self.obj:
            if required:
                raise self._bad(key, "missing")
            return False, None
        return True, self.obj[key]

    def _typed(self, key: str, required: bool, none: bool, ok: Callable[[Any], bool],
               why: Callable[[Any], str]) -> tuple[bool, Any]:
        """``(False, None)`` when ``key`` is absent (an error when ``required``) or null where
        ``none`` allows it; else ``(True, value)`` once ``ok(value)`` holds (else the error
        ``why(value)`` naming the field): the opening every getter shares."""
        there, v = self._get(key, required)
        if not there or (v is None and none):
            return False, None
        if not ok(v):
            raise self._bad(key, why(v))
        return True, v

    def integer(self, key: str, lo: int = 0, hi: int = MAX_COUNT, *, required: bool = False,
                none: bool = False, default: int | None = None) -> int | None:
        """A whole number (never a boolean or a float) from ``lo`` to ``hi``."""
        there, v = self._typed(key, required, none, _is_int,
                               lambda v: f"not a whole number: {v!r}")
        if not there:
            return default
        if not lo <= v <= hi:
            raise self._bad(key, f"must be from {lo} to {hi}, got {v}")
        return v

    def number(self, key: str, lo: float = 0.0, hi: float = 1e12, *, lo_open: bool = False,
               required: bool = False, none: bool = False,
               default: float | None = None) -> float | None:
        """A finite number (never a boolean or a string) from ``lo`` (excluded with
        ``lo_open``) to ``hi``."""
        there, v = self._typed(key, required, none, _is_number, lambda v: f"not a number: {v!r}")
        if not there:
            return default
        if not math.isfinite(v):
            raise self._bad(key, f"not a finite number: {v!r}")
        if v < lo or (lo_open and v == lo) or v > hi:
            low = f"> {lo:g}" if lo_open else f">= {lo:g}"
            raise self._bad(key, f"must be {low} and <= {hi:g}, got {v!r}")
        return float(v) if isinstance(v, float) else v

    def text(self, key: str, choices: tuple[str, ...] = (), *, required: bool = False,
             none: bool = True, default: str | None = None) -> str | None:
        """A string (one of ``choices`` when given)."""
        there, v = self._typed(key, required, none, lambda v: isinstance(v, str),
                               lambda v: f"not a string: {_kind(v)}")
        if not there:
            return default
        if choices and v not in choices:
            raise self._bad(key, f"{v!r} is not one of {', '.join(choices)}")
        return v

    def boolean(self, key: str, *, none: bool = True) -> bool | None:
        _, v = self._typed(key, False, none, lambda v: isinstance(v, bool),
                           lambda v: f"not true or false: {v!r}")
        return v

    def mapping(self, key: str, *, required: bool = False,
                none: bool = True) -> Mapping[str, Any] | None:
        """A JSON object."""
        _, v = self._typed(key, required, none, lambda v: isinstance(v, Mapping),
                           lambda v: f"not an object but {_kind(v)}")
        return v

    def sub(self, key: str, *, required: bool = False) -> _Fields | None:
        """The fields of the object ``key`` (None when absent or null)."""
        v = self.mapping(key, required=required)
        return None if v is None else _Fields(v, self.file, f"{self.prefix}{key}.")

    def items(self, key: str, *, required: bool = False, none: bool = True) -> list | None:
        """A JSON list."""
        _, v = self._typed(key, required, none, lambda v: isinstance(v, list),
                           lambda v: f"not a list but {_kind(v)}")
        return v

    def texts(self, key: str) -> tuple[str, ...] | None:
        """A list of strings."""
        v = self.items(key)
        if v is None:
            return None
        for i, x in enumerate(v):
            if not isinstance(x, str):
                raise self._bad(f"{key}[{i}]", f"not a string: {_kind(x)}")
        return tuple(v)


def _check_format(rec: Mapping[str, Any], kind: str, file: str | None) -> int:
    """The record's format (:func:`format_version`) and its kind: format 1 names it
    (``record``), format 0 does not (a record without it is read as ``kind``)."""
    fmt = format_version(rec, file)
    got = rec.get("record", kind)
    if got != kind:
        raise CorruptResult(f"record is {got!r}, not {kind!r}", file, "record")
    return fmt


#: the ``environment`` numbers (mlprof.measure.contention), when there
_ENVIRONMENT_NUMBERS = ("window_s", "other_cpu_cores", "own_cpu_cores", "steal_share",
                        "cpu_mhz", "contended_threshold_cores",
                        # the cause record's signals (mlprof.measure.causes)
                        "run_wait_s", "run_wait_share", "own_wait_share", "runnable_threads",
                        "usable_cpus", "psi_cpu_share", "psi_memory_share", "psi_io_share",
                        "throttled_s", "gc_pause_s")
#: the cause record's counts
_ENVIRONMENT_COUNTS = ("cpus", "threads", "nr_throttled", "invol_ctx_switches", "major_faults")

#: every cause an ``environment`` record may name (``causes``), in the order they are listed
#: (:mod:`mlprof.measure.causes` judges them)
ENVIRONMENT_CAUSES = ("others", "cpu-wait", "throttled", "steal", "memory", "io", "gc",
                      "oversubscribed", "drift")


def _check_environment(f: _Fields, key: str = "environment") -> Mapping[str, Any] | None:
    env = f.sub(key)
    if env is None:
        return None
    for k in _ENVIRONMENT_NUMBERS:
        env.number(k, hi=1e9, none=True)
    for k in _ENVIRONMENT_COUNTS:
        env.integer(k, none=True)
    env.number("drift_pct", lo=-1e9, hi=1e9, none=True)
    env.number("loop_drift_pct", lo=-1e9, hi=1e9, none=True)
    for i, cause in enumerate(env.texts("causes") or ()):
        if cause not in ENVIRONMENT_CAUSES:
            raise env._bad(f"causes[{i}]", f"not a cause: {cause!r:.40}")
    env.boolean("contended")
    return env.obj


@dataclass(frozen=True)
class Header:
    """What every measurement record starts with: the versions (mlprof, its git commit, the
    runtime and the libraries), the machine (host, platform, Python, CPU), when, the model, the
    runtime's and the measurement's settings, the precision, and what else used the machine
    meanwhile (``environment``, :mod:`mlprof.measure.contention`).

    Written by one function (:func:`mlprof.measure.provenance.measurement_header`) for every
    measurement record (branch, profile, peak, interleaved, load); read back, checked, by
    :meth:`from_json`. A field that is None is not written (a record kind without a runtime
    has no ``runtime``), except the versions and the machine, which are always written.
    """

    mlprof_version: str
    git_commit: str | None = None
    timestamp: str | None = None
    host: str | None = None
    platform: str | None = None
    python: str | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None
    isa: tuple[str, ...] | None = None
    cpu_affinity: int | None = None
    #: :func:`mlprof.sysinfo.fingerprint_id` of the machine: which noise floor
    #: (:class:`NoiseRecord`) the record's figures are judged against
    host_fingerprint: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    device: str | None = None
    threads: int | None = None
    runtime_settings: Mapping[str, Any] | None = None
    precision: Mapping[str, Any] | None = None
    model: Mapping[str, Any] | None = None
    model_identity: ModelIdentity | None = None
    settings: Mapping[str, Any] | None = None
    batch_size: int | None = None
    events_per_call: int | None = None
    environment: Mapping[str, Any] | None = None
    peak_rss_mb: float | None = None
    pid: int | None = None
    parent_pid: int | None = None
    #: the measurements its process ran before it (0: a new process; the points of a sweep
    #: may share one, :func:`mlprof.measure.isolate.run_isolated`'s ``reuse``)
    earlier_in_process: int | None = None
    library_versions: Mapping[str, str | None] | None = None

    #: written even when None (a record without a git checkout says so)
    ALWAYS: ClassVar[tuple[str, ...]] = (
        MLPROF_VERSION, "git_commit", "timestamp", "host", "platform", "python", "cpu_model",
        "cpu_count", "isa", "cpu_affinity")

    def to_json(self) -> dict[str, Any]:
        """The header's fields as JSON (in this order), None ones left out except
        :data:`ALWAYS`."""
        out: dict[str, Any] = {}
        for fld in fields(self):
            k, v = fld.name, getattr(self, fld.name)
            if v is None and k not in self.ALWAYS:
                continue
            if isinstance(v, ModelIdentity):
                v = v.to_dict()
            elif isinstance(v, tuple):
                v = list(v)
            elif isinstance(v, Mapping):
                v = dict(v)
            out[k] = v
        return out

    @classmethod
    def from_json(cls, rec: Mapping[str, Any], file: str | None = None,
                  prefix: str = "") -> Header:
        """The header of a record of any format, every field checked (type and range) where
        it is present; a :class:`~mlprof.errors.CorruptResult` naming the file and the field
        (``prefix``: where the header is in its record, ``batch_sizes.8.``)."""
        f = _Fields(rec, file, prefix)
        # a hostile model_identity falls back to the task's names (model_identity), as always
        ident = rec.get("model_identity")
        settings = f.sub("settings")
        if settings is not None:
            settings.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE, none=True)
            settings.integer("threads", none=True)
            for k in ("n_calls", "n_events", "warmup"):
                settings.integer(k, none=True)
            settings.number("min_duration", none=True)
            for k in ("runtime", "device", "input_data", "precision"):
                settings.text(k)
        for k in ("runtime_settings", "precision", "model", "library_versions", "task"):
            f.mapping(k)
        return cls(
            mlprof_version=f.text(MLPROF_VERSION) or "",
            git_commit=f.text("git_commit"), timestamp=f.text("timestamp"),
            host=f.text("host"), platform=f.text("platform"), python=f.text("python"),
            cpu_model=f.text("cpu_model"), cpu_count=f.integer("cpu_count", none=True),
            isa=f.texts("isa"), cpu_affinity=f.integer("cpu_affinity", none=True),
            host_fingerprint=f.text("host_fingerprint"),
            runtime=f.text("runtime"), runtime_version=f.text("runtime_version"),
            device=f.text("device"), threads=f.integer("threads", none=True),
            runtime_settings=f.mapping("runtime_settings"), precision=f.mapping("precision"),
            model=f.mapping("model"),
            model_identity=model_identity(rec) if isinstance(ident, Mapping) else None,
            settings=None if settings is None else settings.obj,
            batch_size=f.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE, none=True),
            events_per_call=f.integer("events_per_call", 1, MAX_COUNT, none=True),
            environment=_check_environment(f),
            peak_rss_mb=f.number("peak_rss_mb", none=True),
            pid=f.integer("pid", none=True), parent_pid=f.integer("parent_pid", none=True),
            earlier_in_process=f.integer("earlier_in_process", 0, MAX_COUNT, none=True),
            library_versions=f.mapping("library_versions"))


class _Record:
    """What every kind of record shares: its kind (``KIND``, the ``record`` field),
    :meth:`to_json` (the record as read, stamped with this format: every field kept) and the
    opening of ``from_json`` (:meth:`_open`)."""

    KIND: ClassVar[str]
    data: Mapping[str, Any] | None

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp(self.data or {}, self.KIND)

    @classmethod
    def _open(cls, obj: Any, file: str | None) -> tuple[_Fields, int, Header]:
        """The checked fields of ``obj``, its format (a ``KIND`` record's, checked) and its
        :class:`Header`."""
        f = _Fields(obj, file)
        fmt = _check_format(obj, cls.KIND, file)
        return f, fmt, Header.from_json(obj, file)
