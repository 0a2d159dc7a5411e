"""The load scenarios' names, limits and checks: what a load point may ask for.

:class:`LoadSettings` defines each option of the load once (type, default, command-line option,
help): MeasureLoad's and PlotLoad's law parameters are made from its fields
(:mod:`mlprof.tasks.load`), and an instance is checked once, when it is made, so the measurement
code takes it as it is. Each check raises a one-line :class:`~mlprof.errors.MLProfError` naming
the option.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mlprof.errors import MLProfError
from mlprof.measure.settings import one_per_point, store_checked
from mlprof.results import records

# what a load point may ask for is what a load record may hold: the bounds are defined once,
# with the record (mlprof.results.records, the layer below), and named here as the options know
# them
#: scenarios of MeasureLoad
SCENARIOS = records.LOAD_SCENARIOS
#: how streams get their sessions
SESSIONS = records.LOAD_SESSIONS
#: at most this many streams or server workers (each holds a session and a thread)
MAX_STREAMS = records.LOAD_MAX_STREAMS
#: request rates (per second) a server point may ask for
MAX_RATE = records.LOAD_MAX_RATE
#: latency bounds (ms) a search may ask for
MAX_BOUND_MS = records.LOAD_MAX_BOUND_MS
#: percentiles a search may ask for (above 99.99 no run of this tool's length can claim one)
PERCENTILE_RANGE = records.LOAD_PERCENTILE_RANGE
#: dynamic batching: at most this many requests per call, waiting at most this long (ms)
MAX_BATCH = records.LOAD_MAX_BATCH
MAX_WAIT_MS = records.LOAD_MAX_WAIT_MS
#: at most this many requests per server point, calls per stream (memory: 40 bytes each)
MAX_REQUESTS = 1_000_000
#: the confidence of a verdict (MLPerf's early stopping uses 99 %)
CONFIDENCE = 0.99
#: a server point ends after this many seconds (or twice its planned requests' time) even if
#: undecided: a search that goes down to low rates must not take hours
MAX_POINT_S = 120.0
#: a search stops bisecting when the highest met and lowest missed rate are this close
TOLERANCE = 0.05
#: and after this many points in all
MAX_POINTS = 16
#: once a met and a missed rate bracket the answer, each point of the search plans this many
#: times the requests its percentile needs at least (459 -> 1,836 at p99). A server's overs
#: come in clumps, one per long busy period: ResNet-18 near its answer had 25 overs in 6
#: clumps of up to 10 in 4,200 requests. With 459 requests a point is met only with no over at
#: all, so one busy period decides it; with 1,836 it is met with up to 8 overs, a few clumps.
#: ResNet-18 at p99 <= 100 ms, four searches each, interleaved: factor 1 answered 49.6-73.3
#: events/s at a load (rate x mean call) of 0.51-0.80, factor 4 68.4-80.2 at 0.70-0.77
#: (``benchmarks/load_search.py --factors 1,4``; docs/design/load.md)
DECISIVE_FACTOR = 4

#: the GIL's switch interval while serving (s): see :func:`serve`
SWITCH_INTERVAL_S = 2e-5

#: the columns of a streams point's CSV (one row per timed call)
STREAM_COLUMNS = ("stream", "call", "start_ms", "latency_ms", "events")
#: the columns of a server point's CSV (one row per completed request)
#: (``point``: the index of the point in the record's ``points``; a search can measure a rate
#: twice, see :func:`search`)
SERVER_COLUMNS = ("point", "rate", "request", "arrival_ms", "start_ms", "end_ms", "latency_ms",
                  "batch")
#: what a load record's summary must hold per point
POINT_FIELDS = ("events_per_s", "p50_ms", "p99_ms")


def _positive(value: float, field_: str, upper: float, unit: str = "") -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise MLProfError(f"not a number: {value!r}", field=field_) from None
    if not math.isfinite(v) or v <= 0:
        raise MLProfError(f"must be > 0{unit}, got {value}", field=field_)
    if v > upper:
        raise MLProfError(f"must be at most {upper:g}{unit}, got {value}", field=field_)
    return v


def check_streams(streams: Sequence[int], field_: str = "--streams") -> tuple[int, ...]:
    """The stream (or worker) counts, each 1 to :data:`MAX_STREAMS`, without repeats."""
    out = []
    for s in streams:
        if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= MAX_STREAMS:
            raise MLProfError(f"must be whole numbers from 1 to {MAX_STREAMS}, got {s}",
                              field=field_)
        if s not in out:
            out.append(s)
    if not out:
        raise MLProfError("give at least one", field=field_)
    return tuple(out)


def min_rate() -> float:
    """The lowest request rate a server point may ask for: one request per ``$MLP_TIMEOUT``
    (a point at a lower rate cannot see one request before the measurement is killed)."""
    from mlprof.measure.isolate import default_timeout

    return 1.0 / default_timeout()


def check_rates(rates: Sequence[float]) -> tuple[float, ...]:
    """Request rates per second, each at least :func:`min_rate` and at most :data:`MAX_RATE`,
    without repeats."""
    out: list[float] = []
    for r in rates:
        v = _positive(r, "--rates", MAX_RATE, "/s")
        if v < min_rate():
            raise MLProfError(f"must be at least one request per MLP_TIMEOUT "
                              f"({1 / min_rate():g} s), {min_rate():.3g}/s, got {r}",
                              field="--rates")
        if v not in out:
            out.append(v)
    return tuple(out)


def check_bound(latency_bound_ms: float) -> float:
    """A latency bound in ms: > 0 and at most :data:`MAX_BOUND_MS`."""
    return _positive(latency_bound_ms, "--latency-bound-ms", MAX_BOUND_MS, " ms")


def check_percentile(p: float) -> float:
    """A percentile within :data:`PERCENTILE_RANGE`."""
    lo, hi = PERCENTILE_RANGE
    try:
        v = float(p)
    except (TypeError, ValueError):
        raise MLProfError(f"not a number: {p!r}", field="--percentile") from None
    if not (math.isfinite(v) and lo <= v <= hi):
        raise MLProfError(f"must be from {lo:g} to {hi:g}, got {p}", field="--percentile")
    return v


def check_batching(max_batch: int, max_wait_ms: float) -> tuple[int, float]:
    """Dynamic batching: ``max_batch`` 1 to :data:`MAX_BATCH`, ``max_wait_ms`` 0 to
    :data:`MAX_WAIT_MS` (0 with ``max_batch`` 1: no batching)."""
    if isinstance(max_batch, bool) or not isinstance(max_batch, int) or \
            not 1 <= max_batch <= MAX_BATCH:
        raise MLProfError(f"must be 1 to {MAX_BATCH}, got {max_batch}", field="--max-batch")
    try:
        w = float(max_wait_ms)
    except (TypeError, ValueError):
        raise MLProfError(f"not a number: {max_wait_ms!r}", field="--max-wait-ms") from None
    if not (math.isfinite(w) and 0 <= w <= MAX_WAIT_MS):
        raise MLProfError(f"must be 0 to {MAX_WAIT_MS:g} ms, got {max_wait_ms}",
                          field="--max-wait-ms")
    return max_batch, w


def allowed_batches(max_batch: int) -> list[int]:
    """The call sizes a dynamic batch is padded to: powers of two below ``max_batch``, and
    ``max_batch`` (TF Serving's ``allowed_batch_sizes``)."""
    out = [1]
    while out[-1] * 2 < max_batch:
        out.append(out[-1] * 2)
    if max_batch > 1:
        out.append(max_batch)
    return out


# --- the settings of a load, each defined once ----------------------------------------------------


def _option(default: Any, *, flag: str, help: str, server: bool = False,
            choices: tuple[str, ...] = (), cli: bool = True) -> Any:
    """A :class:`LoadSettings` field: ``flag`` its command-line option, ``help`` the law
    parameter's description, ``server`` whether it applies to the server scenario only,
    ``cli`` whether it is a law parameter at all."""
    return field(default=default, metadata={"flag": flag, "help": help, "server": server,
                                            "choices": choices, "cli": cli})


@dataclass(frozen=True)
class LoadSettings:
    """The load to put on the model (the measurement settings aside): the scenario and its
    points. Checked when made (:meth:`__post_init__`): every value, and every combination that
    would leave an option unused, is refused in one line naming the option.

    A task's settings hold every stream count and rate; :meth:`points` splits them into one
    per branch (one stream count, at most one rate), the form the measurement takes."""

    scenario: str = _option(
        "streams", flag="--scenario", choices=SCENARIOS,
        help="streams: N callers at once, each calling back to back (MLPerf "
        "MultiStream, a CMSSW job's streams); server: requests at random (Poisson) times, "
        "served by N workers (MLPerf Server); default: streams")
    streams: tuple[int, ...] = _option(
        (1,), flag="--streams",
        help="comma-separated numbers of concurrent streams (streams) or server "
        "workers (server), each with --threads intra-op threads; 1 to 64; default: 1")
    sessions: str = _option(
        "each", flag="--sessions", choices=SESSIONS,
        help="each stream or worker a thread with its own session (each), or all "
        "sharing one (shared, CMSSW's way); streams: each stream a process of its own "
        "(process: no GIL between streams); default: each")
    rates: tuple[float, ...] = _option(
        (), flag="--rates", server=True,
        help="server: comma-separated request rates per second, each measured (one "
        "branch each)")
    latency_bound_ms: float | None = _option(
        None, flag="--latency-bound-ms", server=True,
        help="server: the latency bound (ms) the --percentile must meet; without "
        "--rates: search for the highest rate that meets it")
    percentile: float = _option(
        99.0, flag="--percentile", server=True,
        help="server: the latency percentile judged against --latency-bound-ms (50 "
        "to 99.99); default: 99")
    max_batch: int = _option(
        1, flag="--max-batch", server=True,
        help="server: dynamic batching, at most this many requests per call (1: "
        "none); default: 1")
    max_wait_ms: float = _option(
        0.0, flag="--max-wait-ms", server=True,
        help="server: with --max-batch, how long the oldest request may wait for more "
        "(ms); default: 0 (take what is queued)")
    decisive_factor: int = _option(
        DECISIVE_FACTOR, flag="decisive_factor", server=True, cli=False,
        help="the requests of a search's points inside the bracket, in multiples of the "
        "percentile's minimum (benchmarks/load_search.py compares factors)")

    def __post_init__(self) -> None:
        store_checked(self, _checked(self))

    @property
    def workers(self) -> int:
        """A branch's number of streams or server workers (its one stream count)."""
        return one_per_point(self.streams, "stream count per load point", "--streams")

    def points(self) -> list[LoadSettings]:
        """One per branch: each stream count, and (server) each rate or the search."""
        return [dataclasses.replace(self, streams=(s,), rates=(() if r is None else (r,)))
                for s in self.streams for r in (self.rates or (None,))]


#: the fields of :class:`LoadSettings` by name
LOAD_FIELDS: dict[str, dataclasses.Field] = {f.name: f for f in dataclasses.fields(LoadSettings)}


def load_options() -> list[dataclasses.Field]:
    """The fields of :class:`LoadSettings` that are law parameters (all but
    ``decisive_factor``)."""
    return [f for f in LOAD_FIELDS.values() if f.metadata["cli"]]


def _given(s: LoadSettings, name: str) -> bool:
    return bool(getattr(s, name) != LOAD_FIELDS[name].default)


def _checked(s: LoadSettings) -> dict[str, Any]:
    """The values of ``s`` checked and normalized (see :class:`LoadSettings`)."""
    if s.scenario not in SCENARIOS:
        raise MLProfError(f"one of {', '.join(SCENARIOS)}, got {s.scenario!r}",
                          field="--scenario")
    if s.sessions not in SESSIONS:
        raise MLProfError(f"one of {', '.join(SESSIONS)}, got {s.sessions!r}",
                          field="--sessions")
    out: dict[str, Any] = {"streams": check_streams(tuple(s.streams))}
    if s.scenario == "streams":
        given = [f.metadata["flag"] for f in LOAD_FIELDS.values()
                 if f.metadata["server"] and f.metadata["cli"] and _given(s, f.name)]
        if given:
            raise MLProfError("applies to --scenario server only", field=", ".join(given))
        return out
    if s.sessions == "process":
        raise MLProfError("process applies to --scenario streams only: the server's "
                          "workers take requests from one queue, in one process",
                          field="--sessions")
    out["rates"] = check_rates(tuple(s.rates))
    out["percentile"] = check_percentile(s.percentile)
    out["max_batch"], out["max_wait_ms"] = check_batching(s.max_batch, s.max_wait_ms)
    if s.latency_bound_ms is not None:
        out["latency_bound_ms"] = check_bound(s.latency_bound_ms)
    elif not out["rates"]:
        raise MLProfError("the server scenario needs --rates or --latency-bound-ms (the "
                          "search for the highest rate that meets it)", field="--rates")
    elif _given(s, "percentile"):
        raise MLProfError("judged against --latency-bound-ms only: give one, or leave "
                          "--percentile out (the rates' points report p50 to p99.9 anyway)",
                          field="--percentile")
    if out["max_batch"] == 1 and _given(s, "max_wait_ms"):
        raise MLProfError("applies with --max-batch above 1 only (dynamic batching)",
                          field="--max-wait-ms")
    f = s.decisive_factor
    if isinstance(f, bool) or not isinstance(f, int) or not 1 <= f <= 16:
        raise MLProfError(f"a whole number from 1 to 16, got {f!r}", field="decisive_factor")
    return out
