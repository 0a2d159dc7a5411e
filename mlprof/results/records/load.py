"""Load records (MeasureLoad, ``load_<point>.json``): the load, its points and the bounds a
load point may ask for (:mod:`mlprof.measure.loadgen.settings` names these).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from mlprof.errors import CorruptResult
from mlprof.results.records.core import (
    FORMAT_VERSION,
    MAX_RECORD_BATCH_SIZE,
    Header,
    _check_environment,
    _Fields,
    _Record,
    stamp,
)
from mlprof.runtimes import COMPILE_CACHE_STATES

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


@dataclass(frozen=True, kw_only=True)
class LoadOptions:
    """The options of a load that both the load (:class:`LoadSpec`) and each of its points
    (:class:`LoadPoint`) carry, with their bounds checked the same for both by
    :meth:`read_options` (keyword-only, so that the records' own required fields come first)."""

    sessions: str | None = None
    max_batch: int | None = None
    max_wait_ms: float | None = None
    latency_bound_ms: float | None = None
    percentile: float | None = None

    @staticmethod
    def read_options(f: _Fields, bound_key: str = "latency_bound_ms") -> dict[str, Any]:
        """The options of ``f`` checked, as keyword arguments; the bound read from
        ``bound_key`` (a format 1 point named it ``bound_ms``)."""
        return {"sessions": f.text("sessions", LOAD_SESSIONS),
                "max_batch": f.integer("max_batch", 1, LOAD_MAX_BATCH, none=True),
                "max_wait_ms": f.number("max_wait_ms", 0.0, LOAD_MAX_WAIT_MS, none=True),
                "latency_bound_ms": f.number(bound_key, 0.0, LOAD_MAX_BOUND_MS, lo_open=True,
                                             none=True),
                "percentile": _check_percentile(f, "percentile")}


@dataclass(frozen=True)
class LoadPoint(LoadOptions):
    """One load point of a load record: its configuration, throughput and latency, checked.
    ``data``: the point's JSON as read (every other field, for :meth:`to_json`)."""

    scenario: str
    streams: int
    threads: int
    events_per_s: float
    p50_ms: float | None
    p99_ms: float | None
    batch_size: int
    rate: float | None = None
    percentile_ms: float | None = None
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
            # format 1 and older named the bound bound_ms
            **cls.read_options(f, "latency_bound_ms" if "latency_bound_ms" in f.obj
                               else "bound_ms"),
            rate=f.number("rate", 0.0, LOAD_MAX_RATE, lo_open=True, none=True),
            percentile_ms=f.number("percentile_ms", none=True),
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
class LoadSpec(LoadOptions):
    """A load record's ``load``: the scenario and its options, and a search's answer."""

    scenario: str
    streams: int | None = None
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
            **cls.read_options(f),
            best_rate=best_rate, best_point=best_point, searched=search is not None,
            data=f.obj)


@dataclass(frozen=True)
class LoadRecord(_Record):
    """A MeasureLoad record (``load_<point>.json``): its :class:`Header`, the load
    (:class:`LoadSpec`) and the points (:class:`LoadPoint`), every field checked by
    :meth:`from_json`; ``data``: the record as read, so that :meth:`to_json` keeps every
    field (an older record's upgraded to this format)."""

    KIND: ClassVar[str] = "load"

    header: Header
    load: LoadSpec
    points: tuple[LoadPoint, ...]
    #: a compiling runtime's compiles of the load's sessions (or their loads from the store's
    #: cache), summed, apart from the timing; None for other runtimes and older records
    compile_s: float | None = None
    #: ``hit``, ``miss`` or ``none`` (:data:`mlprof.runtimes.COMPILE_CACHE_STATES`)
    compile_cache: str | None = None
    format: int = FORMAT_VERSION
    data: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, obj: Any, file: str | None = None) -> LoadRecord:
        """The record of ``obj`` (a parsed ``load_*.json``), of format 0 to 2; a
        :class:`~mlprof.errors.CorruptResult` naming ``file`` and the first field that is
        missing, of the wrong type (a boolean is no number, a float no count) or out of range
        (``batch_size`` 1 to 2**20, ``streams`` 1 to 64, rates > 0, percentiles 50 to 99.99,
        every number finite)."""
        f, fmt, header = cls._open(obj, file)
        points = f.items("points", required=True, none=False) or []
        load = LoadSpec.from_json(f.mapping("load", required=True, none=False), file,
                                  len(points))
        batch_size = header.batch_size or (header.settings or {}).get("batch_size") or 1
        return cls(header, load,
                   tuple(LoadPoint.from_json(p, file, f"points[{i}]", load.scenario, batch_size)
                         for i, p in enumerate(points)),
                   compile_s=f.number("compile_s", none=True),
                   compile_cache=f.text("compile_cache", COMPILE_CACHE_STATES),
                   format=fmt, data=obj)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON of this format (:func:`stamp`), every field kept."""
        return stamp({**(self.data or {}), "points": [p.to_json() for p in self.points]},
                     self.KIND)
