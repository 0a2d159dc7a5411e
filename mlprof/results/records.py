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
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

from mlprof.errors import CorruptResult
from mlprof.runtimes import COMPILE_CACHE_STATES

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

    def integer(self, key: str, lo: int = 0, hi: int = MAX_COUNT, *, required: bool = False,
                none: bool = False, default: int | None = None) -> int | None:
        """A whole number (never a boolean or a float) from ``lo`` to ``hi``."""
        there, v = self._get(key, required)
        if not there or (v is None and none):
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            raise self._bad(key, f"not a whole number: {v!r}")
        if not lo <= v <= hi:
            raise self._bad(key, f"must be from {lo} to {hi}, got {v}")
        return v

    def number(self, key: str, lo: float = 0.0, hi: float = 1e12, *, lo_open: bool = False,
               required: bool = False, none: bool = False,
               default: float | None = None) -> float | None:
        """A finite number (never a boolean or a string) from ``lo`` (excluded with
        ``lo_open``) to ``hi``."""
        there, v = self._get(key, required)
        if not there or (v is None and none):
            return default
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self._bad(key, f"not a number: {v!r}")
        if not math.isfinite(v):
            raise self._bad(key, f"not a finite number: {v!r}")
        if v < lo or (lo_open and v == lo) or v > hi:
            low = f"> {lo:g}" if lo_open else f">= {lo:g}"
            raise self._bad(key, f"must be {low} and <= {hi:g}, got {v!r}")
        return float(v) if isinstance(v, float) else v

    def text(self, key: str, choices: tuple[str, ...] = (), *, required: bool = False,
             none: bool = True, default: str | None = None) -> str | None:
        """A string (one of ``choices`` when given)."""
        there, v = self._get(key, required)
        if not there or (v is None and none):
            return default
        if not isinstance(v, str):
            raise self._bad(key, f"not a string: {_kind(v)}")
        if choices and v not in choices:
            raise self._bad(key, f"{v!r} is not one of {', '.join(choices)}")
        return v

    def boolean(self, key: str, *, none: bool = True) -> bool | None:
        there, v = self._get(key, False)
        if not there or (v is None and none):
            return None
        if not isinstance(v, bool):
            raise self._bad(key, f"not true or false: {v!r}")
        return v

    def mapping(self, key: str, *, required: bool = False,
                none: bool = True) -> Mapping[str, Any] | None:
        """A JSON object."""
        there, v = self._get(key, required)
        if not there or (v is None and none):
            return None
        if not isinstance(v, Mapping):
            raise self._bad(key, f"not an object but {_kind(v)}")
        return v

    def sub(self, key: str, *, required: bool = False) -> _Fields | None:
        """The fields of the object ``key`` (None when absent or null)."""
        v = self.mapping(key, required=required)
        return None if v is None else _Fields(v, self.file, f"{self.prefix}{key}.")

    def items(self, key: str, *, required: bool = False, none: bool = True) -> list | None:
        """A JSON list."""
        there, v = self._get(key, required)
        if not there or (v is None and none):
            return None
        if not isinstance(v, list):
            raise self._bad(key, f"not a list but {_kind(v)}")
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
            library_versions=f.mapping("library_versions"))


# --- load records (MeasureLoad) -----------------------------------------------------------------

#: what a load record may hold, and so what a load point may ask for: the options'
#: bounds (:mod:`mlprof.measure.loadgen.settings` names these)
LOAD_SCENARIOS = ("streams", "server")
LOAD_SESSIONS = ("each", "shared", "process")
LOAD_MAX_STREAMS = 64
LOAD_MAX_RATE = 1_000_000.0
LOAD_MAX_BOUND_MS = 60_000.0
LOAD_PERCENTILE_RANGE = (50.0, 99.99)
LOAD_MAX_BATCH = 1024
LOAD_MAX_WAIT_MS = 1000.0
LOAD_VERDICTS = ("met", "missed", "undecided")

#: a load point's numbers that are >= 0 (or null) when present: times, rates, counts per
#: second, shares
_POINT_NUMBERS = ("offered_rate", "events_per_cpu_s", "calls_per_s", "cpu_s", "wall_s",
                  "cores_used", "busy", "p90_ms", "p999_ms", "mean_ms", "max_ms",
                  "queue_mean_ms", "service_mean_ms", "mean_batch", "percentile_ms",
                  "service_percentile_ms")
#: a load point's counts (whole numbers >= 0) when present
_POINT_COUNTS = ("requests", "planned", "calls", "events", "overs")


def _check_percentile(f: _Fields, key: str) -> float | None:
    lo, hi = LOAD_PERCENTILE_RANGE
    return f.number(key, lo, hi, none=True)


def _check_summary(f: _Fields, key: str) -> None:
    """``lateness_us`` and ``dispatch_us``: ``n`` and percentiles (a lateness may be < 0)."""
    sub = f.sub(key)
    if sub is not None:
        sub.integer("n", none=True)
        for k in ("p50", "p99", "max"):
            sub.number(k, -1e12, 1e12, none=True)


@dataclass(frozen=True)
class LoadPoint:
    """One load point of a load record: its configuration, throughput and latency, checked.
    ``data``: the point's JSON as read (every other field, for :meth:`to_json`)."""

    scenario: str
    streams: int
    threads: int
    events_per_s: float
    p50_ms: float | None
    p99_ms: float | None
    batch_size: int
    sessions: str | None = None
    max_batch: int | None = None
    max_wait_ms: float | None = None
    rate: float | None = None
    percentile: float | None = None
    percentile_ms: float | None = None
    latency_bound_ms: float | None = None
    verdict: str | None = None
    busy: float | None = None
    contended: bool = False
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None, where: str, scenario: str,
                  batch_size: int) -> LoadPoint:
        """A point (``where``: ``points[3]``) of a record of ``scenario``, whose points
        without a batch size of their own (older records) have the record's."""
        f = _Fields(obj, file, where + ".", what=where)
        for k in _POINT_NUMBERS:
            f.number(k, none=True)
        for k in _POINT_COUNTS:
            f.integer(k, none=True)
        for k in ("lateness_us", "dispatch_us"):
            _check_summary(f, k)
        f.text("stopped")
        f.text("service_verdict", LOAD_VERDICTS)
        f.boolean("decisive")
        env = _check_environment(f)
        streams = f.items("per_stream")
        for i, s in enumerate(streams or ()):
            sf = _Fields(s, file, f"{where}.per_stream[{i}].", what=f"{where}.per_stream[{i}]")
            sf.integer("stream", none=True)
            sf.integer("calls", none=True)
            for k in ("span_s", "calls_per_s", "p50_ms", "p90_ms", "p99_ms", "p999_ms",
                      "mean_ms", "max_ms"):
                sf.number(k, none=True)
        point = cls(
            scenario=f.text("scenario", LOAD_SCENARIOS, default=scenario) or scenario,
            streams=f.integer("streams", 1, LOAD_MAX_STREAMS, required=True) or 1,
            threads=int(f.integer("threads", required=True) or 0),
            events_per_s=float(f.number("events_per_s", required=True) or 0.0),
            p50_ms=f.number("p50_ms", required=True, none=True),
            p99_ms=f.number("p99_ms", required=True, none=True),
            batch_size=f.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE,
                                 default=batch_size) or batch_size,
            sessions=f.text("sessions", LOAD_SESSIONS),
            max_batch=f.integer("max_batch", 1, LOAD_MAX_BATCH, none=True),
            max_wait_ms=f.number("max_wait_ms", 0.0, LOAD_MAX_WAIT_MS, none=True),
            rate=f.number("rate", 0.0, LOAD_MAX_RATE, lo_open=True, none=True),
            percentile=_check_percentile(f, "percentile"),
            percentile_ms=f.number("percentile_ms", none=True),
            # format 1 and older named it bound_ms
            latency_bound_ms=f.number("latency_bound_ms" if "latency_bound_ms" in f.obj
                                      else "bound_ms", 0.0, LOAD_MAX_BOUND_MS, lo_open=True,
                                      none=True),
            verdict=f.text("verdict", LOAD_VERDICTS),
            busy=f.number("busy", none=True),
            contended=bool(env is not None and env.get("contended") is True),
            data=f.obj)
        return point

    def to_json(self) -> dict[str, Any]:
        """The point as JSON of this format: what was read, with what an older record left
        out (its scenario, batch size) filled in, and its bound under its one name."""
        out = {k: v for k, v in (self.data or {}).items() if k != "bound_ms"}
        if self.latency_bound_ms is not None:
            out["latency_bound_ms"] = self.latency_bound_ms
        return {**out, "scenario": self.scenario, "batch_size": self.batch_size}


@dataclass(frozen=True)
class LoadSpec:
    """A load record's ``load``: the scenario and its options, and a search's answer."""

    scenario: str
    streams: int | None = None
    sessions: str | None = None
    max_batch: int | None = None
    max_wait_ms: float | None = None
    latency_bound_ms: float | None = None
    percentile: float | None = None
    best_rate: float | None = None
    best_point: int | None = None
    searched: bool = False
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None, n_points: int) -> LoadSpec:
        f = _Fields(obj, file, "load.", what="load")
        for i, r in enumerate(f.items("rates") or ()):
            _Fields({f"rates[{i}]": r}, file, "load.").number(
                f"rates[{i}]", 0.0, LOAD_MAX_RATE, lo_open=True)
        service = f.sub("service_ms")
        for k in (service.obj if service is not None else {}):
            service.number(k, none=True)  # type: ignore[union-attr]
        f.number("capacity_estimate", none=True)
        f.number("confidence", 0.0, 1.0, none=True)
        f.integer("decisive_factor", 1, 1_000_000, none=True)
        search = f.sub("search")
        best_rate = best_point = None
        if search is not None:
            best_rate = search.number("best_rate", 0.0, LOAD_MAX_RATE, lo_open=True, none=True)
            if n_points:
                best_point = search.integer("best_point", 0, n_points - 1, none=True)
            elif search.obj.get("best_point") is not None:
                raise CorruptResult(f"not the index of a point (there are none): "
                                    f"{search.obj.get('best_point')!r}", file,
                                    "load.search.best_point")
            search.text("ended")
        return cls(
            scenario=f.text("scenario", LOAD_SCENARIOS, required=True, none=False) or "",
            streams=f.integer("streams", 1, LOAD_MAX_STREAMS, none=True),
            sessions=f.text("sessions", LOAD_SESSIONS),
            max_batch=f.integer("max_batch", 1, LOAD_MAX_BATCH, none=True),
            max_wait_ms=f.number("max_wait_ms", 0.0, LOAD_MAX_WAIT_MS, none=True),
            latency_bound_ms=f.number("latency_bound_ms", 0.0, LOAD_MAX_BOUND_MS,
                                      lo_open=True, none=True),
            percentile=_check_percentile(f, "percentile"),
            best_rate=best_rate, best_point=best_point, searched=search is not None,
            data=f.obj)


@dataclass(frozen=True)
class LoadRecord:
    """A MeasureLoad record (``load_<point>.json``): its :class:`Header`, the load
    (:class:`LoadSpec`) and the points (:class:`LoadPoint`), every field checked by
    :meth:`from_json`; ``data``: the record as read, so that :meth:`to_json` keeps every
    field (an older record's upgraded to this format)."""

    header: Header
    load: LoadSpec
    points: tuple[LoadPoint, ...]
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> LoadRecord:
        """The record of ``obj`` (a parsed ``load_*.json``), of format 0 to 2; a
        :class:`~mlprof.errors.CorruptResult` naming ``file`` and the first field that is
        missing, of the wrong type (a boolean is no number, a float no count) or out of range
        (``batch_size`` 1 to 2**20, ``streams`` 1 to 64, rates > 0, percentiles 50 to 99.99,
        every number finite)."""
        f = _Fields(obj, file)
        fmt = _check_format(obj, "load", file)
        header = Header.from_json(obj, file)
        points = f.items("points", required=True, none=False) or []
        load = LoadSpec.from_json(f.mapping("load", required=True, none=False), file,
                                  len(points))
        batch_size = header.batch_size or (header.settings or {}).get("batch_size") or 1
        return cls(header, load,
                   tuple(LoadPoint.from_json(p, file, f"points[{i}]", load.scenario, batch_size)
                         for i, p in enumerate(points)),
                   fmt, obj)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp({**(self.data or {}), "points": [p.to_json() for p in self.points]},
                     "load")


# --- branch, profile and peak records ------------------------------------------------------------

@dataclass(frozen=True)
class BranchRecord:
    """A MeasureRuntime branch's provenance (``runtime_bs_<N>.json``): its :class:`Header` and
    what the timed loop recorded, every field checked by :meth:`from_json`; ``data``: the record
    as read (:meth:`to_json` keeps every field)."""

    header: Header
    batch_size: int
    n_samples: int
    session_creation_ms: float | None = None
    first_call_ms: float | None = None
    #: a compiling runtime's compile (or load from the store's cache), before the first call
    #: and apart from it (:class:`mlprof.runtimes.base.Compiled`; None for other runtimes and
    #: records written before: their torch-compile ``first_call_ms`` includes the compile)
    compile_s: float | None = None
    #: ``hit``, ``miss`` or ``none`` (:data:`mlprof.runtimes.COMPILE_CACHE_STATES`)
    compile_cache: str | None = None
    warmup_ms: float | None = None
    rounds: int | None = None
    loop_wall_s: float | None = None
    timed_sum_s: float | None = None
    lock_wait_s: float | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @property
    def settings(self) -> Mapping[str, Any]:
        """The measurement settings (always there: a branch without them does not read)."""
        return self.header.settings or {}

    @property
    def contended(self) -> bool:
        """Other processes used the CPUs during the timed loop (``environment.contended``)."""
        return bool((self.header.environment or {}).get("contended") is True)

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> BranchRecord:
        """The branch of ``obj`` (format 0 or 1); a :class:`~mlprof.errors.CorruptResult`
        naming ``file`` and the first field that is missing, of the wrong type or out of
        range."""
        f = _Fields(obj, file)
        fmt = _check_format(obj, "branch", file)
        header = Header.from_json(obj, file)
        settings = f.sub("settings", required=True)
        assert settings is not None
        bs = settings.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE, required=True) or 1
        return cls(
            header, bs, f.integer("n_samples", 1, required=True) or 1,
            session_creation_ms=f.number("session_creation_ms", none=True),
            first_call_ms=f.number("first_call_ms", none=True),
            compile_s=f.number("compile_s", none=True),
            compile_cache=f.text("compile_cache", COMPILE_CACHE_STATES),
            warmup_ms=f.number("warmup_ms", none=True),
            rounds=f.integer("rounds", none=True),
            loop_wall_s=f.number("loop_wall_s", none=True),
            timed_sum_s=f.number("timed_sum_s", none=True),
            lock_wait_s=f.number("lock_wait_s", none=True), format=fmt, data=obj)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp(self.data or {}, "branch")


@dataclass(frozen=True)
class ProfileRecord:
    """A ProfileRuntime branch's provenance (``profile_bs_<N>_<budget>.json``): its
    :class:`Header`, the profiler and what the profiled calls took, every field checked by
    :meth:`from_json`."""

    header: Header
    profiler: str
    batch_size: int
    n_profiled_calls: int
    wall_ms: tuple[float, ...]
    wall_ms_per_call: float
    op_ms_per_call: float
    coverage: float
    overhead_ms_per_call: float | None = None
    operator_coverage: float | None = None
    warmup_calls: int | None = None
    budget_s: float | None = None
    cut_by_budget: bool | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @property
    def contended(self) -> bool:
        """Other processes used the CPUs during the profiled calls (``environment``; a profile
        written before it was recorded: False)."""
        return bool((self.header.environment or {}).get("contended") is True)

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> ProfileRecord:
        f = _Fields(obj, file)
        fmt = _check_format(obj, "profile", file)
        header = Header.from_json(obj, file)
        for k in ("runtime", "runtime_version"):
            f.text(k, required=True, none=False)
        walls = f.items("wall_ms", required=True, none=False) or []
        for i, w in enumerate(walls):
            _Fields({f"wall_ms[{i}]": w}, file).number(f"wall_ms[{i}]")
        f.integer("n_op_types", none=True)
        return cls(
            header, f.text("profiler", required=True, none=False) or "",
            f.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE, required=True) or 1,
            f.integer("n_profiled_calls", required=True) or 0,
            tuple(float(w) for w in walls),
            float(f.number("wall_ms_per_call", required=True) or 0.0),
            float(f.number("op_ms_per_call", required=True) or 0.0),
            float(f.number("coverage", required=True) or 0.0),
            overhead_ms_per_call=f.number("overhead_ms_per_call", -1e12, none=True),
            operator_coverage=f.number("operator_coverage", none=True),
            warmup_calls=f.integer("warmup_calls", none=True),
            budget_s=f.number("budget_s", none=True),
            cut_by_budget=f.boolean("cut_by_budget"), format=fmt, data=obj)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp(self.data or {}, "profile")


@dataclass(frozen=True)
class PeakRecord:
    """A MeasurePeak record (``peak.json``): its :class:`Header` and the GEMM peak, every field
    checked by :meth:`from_json`."""

    header: Header
    peak_gflops: float
    spread: float | None = None
    n: int | None = None
    stable: bool | None = None
    contended: bool = False
    lock_wait_s: float | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> PeakRecord:
        f = _Fields(obj, file)
        fmt = _check_format(obj, "peak", file)
        header = Header.from_json(obj, file)
        for i, size in enumerate(f.items("sizes") or ()):
            sf = _Fields(size, file, f"sizes[{i}].", what=f"sizes[{i}]")
            sf.integer("n", none=True)
            sf.number("median_gflops", none=True)
        for i, a in enumerate(f.items("attempts") or ()):
            af = _Fields(a, file, f"attempts[{i}].", what=f"attempts[{i}]")
            af.number("peak_gflops", none=True)
            af.boolean("contended")
            af.number("other_cpu_cores", hi=1e9, none=True)
        f.text("benchmark")
        return cls(
            header, float(f.number("peak_gflops", 0.0, lo_open=True, required=True) or 0.0),
            spread=f.number("spread", none=True), n=f.integer("n", none=True),
            stable=f.boolean("stable"), contended=bool(f.boolean("contended")),
            lock_wait_s=f.number("lock_wait_s", none=True), format=fmt, data=obj)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp(self.data or {}, "peak")


# --- interleaved comparisons (CompareInterleaved) ------------------------------------------------

@dataclass(frozen=True)
class InterleavedRun:
    """One batch size of an interleaved comparison: its :class:`Header` (no one runtime: each
    configuration names its own), the rounds and the configurations, checked."""

    header: Header
    rounds: int
    configs: tuple[Mapping[str, Any], ...]
    method: str | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None, where: str) -> InterleavedRun:
        f = _Fields(obj, file, where + ".", what=where)
        header = Header.from_json(obj, file, where + ".")
        configs = f.items("configs", required=True, none=False) or []
        for i, c in enumerate(configs):
            cf = _Fields(c, file, f"{where}.configs[{i}].", what=f"{where}.configs[{i}]")
            for k in ("label", "model", "runtime", "runtime_version", "model_file",
                      "model_sha256"):
                cf.text(k)
            cf.mapping("runtime_settings")
            cf.mapping("settings")
            cf.mapping("error_vs_fp32")
            cf.texts("script_args")
        f.number("started_unix", none=True)
        f.number("finished_unix", none=True)
        f.boolean("interleaved")
        return cls(header, f.integer("rounds", 1, required=True) or 1, tuple(configs),
                   f.text("method"))


@dataclass(frozen=True)
class InterleavedRecord:
    """A CompareInterleaved record (``provenance_<bs>_il<R>.json``): the task, the setting
    compared and one :class:`InterleavedRun` per batch size, every field checked by
    :meth:`from_json`."""

    runs: Mapping[int, InterleavedRun]
    compared: Mapping[str, Any] | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> InterleavedRecord:
        f = _Fields(obj, file)
        fmt = _check_format(obj, "interleaved", file)
        f.boolean("interleaved")
        f.mapping("task")
        compared = f.sub("compared")
        if compared is not None:
            compared.text("setting")
            compared.items("values")
        by_bs = f.sub("batch_sizes", required=True)
        assert by_bs is not None
        runs: dict[int, InterleavedRun] = {}
        for key, run in by_bs.obj.items():
            where = f"batch_sizes.{key}"
            if not (isinstance(key, str) and key.isdigit()
                    and 1 <= int(key) <= MAX_RECORD_BATCH_SIZE):
                raise CorruptResult(f"not a batch size: {key!r}", file, where)
            runs[int(key)] = InterleavedRun.from_json(run, file, where)
        return cls(runs, None if compared is None else compared.obj, fmt, obj)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp(self.data or {}, "interleaved")


# --- noise floors (CalibrateNoise) ------------------------------------------------------------

#: the most A/A pairs of one class a noise record may hold (CalibrateNoise's ``--pairs`` bound)
NOISE_MAX_PAIRS = 1000
#: the most classes of configuration in one noise record
NOISE_MAX_CLASSES = 64


@dataclass(frozen=True)
class NoiseClass:
    """The floor of one class of configuration (a call time and a thread count): A/A pairs of
    one configuration against itself, interleaved in a fresh random order each round.

    ``floor`` is the 95th percentile of ``|ratio - 1|`` over the pairs (relative: 0.03 is
    3 %), ``ci_low``/``ci_high`` its bootstrap 95 % interval; ``call_ms`` the configuration's
    median call time, which chooses the class a measurement is judged by."""

    call_ms: float
    threads: int
    pairs: int
    floor: float
    ci_low: float
    ci_high: float
    median_abs: float | None = None
    model: str | None = None
    runtime: str | None = None
    batch_size: int | None = None
    ratios: tuple[float, ...] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None, where: str) -> NoiseClass:
        f = _Fields(obj, file, where + ".", what=where)
        floor = float(f.number("floor", 0.0, 10.0, required=True) or 0.0)
        low = float(f.number("ci_low", 0.0, 10.0, required=True) or 0.0)
        high = float(f.number("ci_high", 0.0, 10.0, required=True) or 0.0)
        if not low <= floor <= high:
            raise CorruptResult(f"floor {floor} is outside its interval [{low}, {high}]",
                                file, where + ".floor")
        ratios = f.items("ratios")
        if ratios is not None:
            if len(ratios) > NOISE_MAX_PAIRS:
                raise CorruptResult(f"{len(ratios)} ratios, more than {NOISE_MAX_PAIRS}", file,
                                    where + ".ratios")
            rf = _Fields({str(i): r for i, r in enumerate(ratios)}, file, where + ".ratios.")
            for i in range(len(ratios)):
                rf.number(str(i), 0.0, 1e6, lo_open=True, required=True)
        return cls(
            call_ms=float(f.number("call_ms", 0.0, 1e7, lo_open=True, required=True) or 0.0),
            threads=int(f.integer("threads", 1, 4096, required=True) or 1),
            pairs=int(f.integer("pairs", 1, NOISE_MAX_PAIRS, required=True) or 1),
            floor=floor, ci_low=low, ci_high=high,
            median_abs=f.number("median_abs", 0.0, 10.0, none=True),
            model=f.text("model"), runtime=f.text("runtime"),
            batch_size=f.integer("batch_size", 1, MAX_RECORD_BATCH_SIZE, none=True),
            ratios=None if ratios is None else tuple(float(r) for r in ratios))

    def to_json(self) -> dict[str, Any]:
        """The class as JSON (None fields left out)."""
        out = {}
        for fld in fields(self):
            v = getattr(self, fld.name)
            if v is not None:
                out[fld.name] = list(v) if isinstance(v, tuple) else v
        return out


@dataclass(frozen=True)
class NoiseRecord:
    """A CalibrateNoise record (``noise.json``): the host's :class:`Header`, its fingerprint
    (:func:`mlprof.sysinfo.host_fingerprint`) and id, and the floor of each class of
    configuration, every field checked by :meth:`from_json`.

    The *minimum detectable change* of a measurement on this host is ``2 x floor`` of its
    class (:meth:`class_for`): the alert rule's threshold is never below it, and interleaved
    and ``--compare`` verdicts within the floor say so."""

    header: Header
    fingerprint: Mapping[str, Any]
    fingerprint_id: str
    classes: tuple[NoiseClass, ...]
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> NoiseRecord:
        f = _Fields(obj, file)
        _check_format(obj, "noise", file)
        header = Header.from_json(obj, file)
        fp = f.mapping("fingerprint", required=True)
        fid = f.text("fingerprint_id", required=True) or ""
        if not (len(fid) == 12 and all(c in "0123456789abcdef" for c in fid)):
            raise CorruptResult(f"fingerprint_id is {fid!r:.40}, not 12 hex digits", file,
                                "fingerprint_id")
        items = f.items("classes", required=True, none=False) or []
        if not items or len(items) > NOISE_MAX_CLASSES:
            raise CorruptResult(f"{len(items)} classes, expected 1 to {NOISE_MAX_CLASSES}",
                                file, "classes")
        classes = tuple(NoiseClass.from_json(c, file, f"classes[{i}]")
                        for i, c in enumerate(items))
        return cls(header, fp or {}, fid, classes, format_version(obj, file), obj)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp(self.data or {}, "noise")

    def class_for(self, call_ms: float | None = None, threads: int | None = None
                  ) -> NoiseClass:
        """The class a measurement of median call time ``call_ms`` with ``threads`` is judged
        by: of the classes with its thread count (all when none has it), the nearest call time
        on a log scale; without a call time, the class with the highest floor (the
        conservative choice)."""
        pool = [c for c in self.classes if threads is not None and c.threads == threads]
        pool = pool or list(self.classes)
        if call_ms is None or not call_ms > 0 or not math.isfinite(call_ms):
            return max(pool, key=lambda c: c.floor)
        return min(pool, key=lambda c: (abs(math.log(c.call_ms / call_ms)), -c.floor))

    def floor_for(self, call_ms: float | None = None, threads: int | None = None) -> float:
        """The floor (relative) of the class of :meth:`class_for`."""
        return self.class_for(call_ms, threads).floor

    def min_detectable(self, call_ms: float | None = None, threads: int | None = None
                       ) -> float:
        """The smallest change (relative) this host can tell from noise: 2 x the floor."""
        return 2.0 * self.floor_for(call_ms, threads)


# --- generation (MeasureGeneration) -------------------------------------------------------------

#: what a generation record may hold, and so what a generation point may ask for (the options'
#: bounds, :mod:`mlprof.measure.generation.settings`, name these)
GENERATION_MAX_PROMPT = 32768
GENERATION_MAX_NEW_TOKENS = 4096
GENERATION_MAX_BATCH = 256
#: the most runtimes one generation point compares
GENERATION_MAX_RUNTIMES = 16
#: nesting a generation record's metrics, agreement and speed-ups may have
_MAX_DEPTH = 8


def _finite_tree(value: Any, file: str | None, where: str, depth: int = 0) -> None:
    """Every number below ``value`` (objects and lists of numbers, strings, booleans, null)
    finite; a :class:`~mlprof.errors.CorruptResult` naming the first that is not (``where``:
    its path in the record, ``runtimes[1].metrics.ttft_ms.p50``)."""
    if depth > _MAX_DEPTH:
        raise CorruptResult(f"nested deeper than {_MAX_DEPTH} levels", file, where)
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise CorruptResult(f"a key that is not a string: {k!r}", file, where)
            _finite_tree(v, file, f"{where}.{k}", depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite_tree(v, file, f"{where}[{i}]", depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        raise CorruptResult(f"not a finite number: {value!r}", file, where)
    elif not isinstance(value, str | int | float | bool | type(None)):
        raise CorruptResult(f"not JSON: {_kind(value)}", file, where)


@dataclass(frozen=True)
class GenerationRuntime:
    """One runtime of a generation point: what it ran with (``info``: the library, versions,
    threads, cache, export), its metrics (TTFT, TPOT, inter-token latency, tokens/s with their
    intervals and formulas: :mod:`mlprof.measure.generation.metrics`' JSON), its teacher-forced
    agreement with the reference runtime (None for the reference itself:
    :mod:`mlprof.measure.generation.agreement`' JSON), its peak resident memory and timed
    calls, checked."""

    runtime: str
    version: str | None
    info: Mapping[str, Any]
    metrics: Mapping[str, Any]
    agreement: Mapping[str, Any] | None
    peak_rss_mb: float | None
    calls: int

    @classmethod
    def from_json(cls, obj: Any, file: str | None, where: str) -> GenerationRuntime:
        f = _Fields(obj, file, where + ".", what=where)
        metrics = f.mapping("metrics", required=True, none=False) or {}
        for k in ("ttft", "tpot"):
            if k not in metrics:
                raise CorruptResult("missing", file, f"{where}.metrics.{k}")
        agreement = f.mapping("agreement")
        for key, tree in (("info", f.mapping("info")), ("metrics", metrics),
                          ("agreement", agreement)):
            _finite_tree(tree, file, f"{where}.{key}")
        return cls(
            runtime=f.text("runtime", required=True, none=False) or "",
            version=f.text("version"), info=f.mapping("info") or {}, metrics=metrics,
            agreement=agreement, peak_rss_mb=f.number("peak_rss_mb", none=True),
            calls=int(f.integer("calls", 1, MAX_COUNT, required=True) or 1))

    def to_json(self) -> dict[str, Any]:
        """The runtime's entry as JSON."""
        return {"runtime": self.runtime, "version": self.version, "info": dict(self.info),
                "metrics": dict(self.metrics),
                "agreement": None if self.agreement is None else dict(self.agreement),
                "peak_rss_mb": self.peak_rss_mb, "calls": self.calls}


@dataclass(frozen=True)
class GenerationRecord:
    """A MeasureGeneration record (``generation_p<prompt>_bs<batch>.json``): its
    :class:`Header` (no one runtime: each entry names its own; ``settings`` the point's
    options, ``model`` the decoder), the point (prompt length, batch size, new tokens), the
    reference runtime, one :class:`GenerationRuntime` per runtime in the order measured, the
    paired speed-ups of each runtime against the reference with their intervals, and the
    interleaved rounds; every field checked by :meth:`from_json`; ``data``: the record as read
    (:meth:`to_json` keeps every field)."""

    header: Header
    prompt_length: int
    batch_size: int
    new_tokens: int
    reference: str
    runtimes: tuple[GenerationRuntime, ...]
    speedups: tuple[Mapping[str, Any], ...]
    rounds: int
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> GenerationRecord:
        """The record of ``obj`` (a parsed ``generation_*.json``); a
        :class:`~mlprof.errors.CorruptResult` naming ``file`` and the first field that is
        missing, of the wrong type or out of range (prompt length 1 to
        :data:`GENERATION_MAX_PROMPT`, new tokens 2 to :data:`GENERATION_MAX_NEW_TOKENS`, batch
        size 1 to :data:`GENERATION_MAX_BATCH`, every number finite, the reference one of the
        runtimes, no runtime twice)."""
        f = _Fields(obj, file)
        fmt = _check_format(obj, "generation", file)
        header = Header.from_json(obj, file)
        point = f.sub("point", required=True)
        assert point is not None
        items = f.items("runtimes", required=True, none=False) or []
        if not 1 <= len(items) <= GENERATION_MAX_RUNTIMES:
            raise CorruptResult(f"{len(items)} runtimes, expected 1 to "
                                f"{GENERATION_MAX_RUNTIMES}", file, "runtimes")
        runtimes = tuple(GenerationRuntime.from_json(r, file, f"runtimes[{i}]")
                         for i, r in enumerate(items))
        names = tuple(r.runtime for r in runtimes)
        if len(set(names)) != len(names):
            raise CorruptResult(f"a runtime twice: {', '.join(names)}", file, "runtimes")
        reference = f.text("reference", names, required=True, none=False) or names[0]
        speedups = f.items("speedups", required=True, none=False) or []
        for i, s in enumerate(speedups):
            sf = _Fields(s, file, f"speedups[{i}].", what=f"speedups[{i}]")
            sf.text("runtime", names, required=True, none=False)
            _finite_tree(s, file, f"speedups[{i}]")
        _finite_tree(f.mapping("formulas"), file, "formulas")
        f.number("lock_wait_s", none=True)
        failed = f.items("failed") or []  # runtimes that could not run this model
        if len(failed) > GENERATION_MAX_RUNTIMES:
            raise CorruptResult(f"{len(failed)} failed runtimes, expected at most "
                                f"{GENERATION_MAX_RUNTIMES}", file, "failed")
        for i, item in enumerate(failed):
            ff = _Fields(item, file, f"failed[{i}].", what=f"failed[{i}]")
            rt = ff.text("runtime", required=True, none=False)
            if rt in names:
                raise CorruptResult(f"{rt!r:.40} both ran and failed", file, f"failed[{i}]")
            ff.text("error", required=True, none=False)
        return cls(
            header=header,
            prompt_length=int(point.integer("prompt_length", 1, GENERATION_MAX_PROMPT,
                                            required=True) or 1),
            batch_size=int(point.integer("batch_size", 1, GENERATION_MAX_BATCH,
                                         required=True) or 1),
            new_tokens=int(point.integer("new_tokens", 2, GENERATION_MAX_NEW_TOKENS,
                                         required=True) or 2),
            reference=reference, runtimes=runtimes, speedups=tuple(speedups),
            rounds=int(f.integer("rounds", 1, MAX_COUNT, required=True) or 1),
            format=fmt, data=obj)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp(self.data or {}, "generation")
