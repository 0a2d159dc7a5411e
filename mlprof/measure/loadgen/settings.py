"""The load scenarios' names, limits and checks: what a load point may ask for.

Each check raises a one-line :class:`~mlprof.errors.MLProfError` naming the option.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlprof.errors import MLProfError

#: scenarios of MeasureLoad
SCENARIOS = ("streams", "server")
#: how streams get their sessions
SESSIONS = ("each", "shared", "process")
#: at most this many streams or server workers (each holds a session and a thread)
MAX_STREAMS = 64
#: request rates (per second) a server point may ask for
MAX_RATE = 1_000_000.0
#: latency bounds (ms) a search may ask for
MAX_BOUND_MS = 60_000.0
#: percentiles a search may ask for (above 99.99 no run of this tool's length can claim one)
PERCENTILE_RANGE = (50.0, 99.99)
#: dynamic batching: at most this many requests per call, waiting at most this long (ms)
MAX_BATCH = 1024
MAX_WAIT_MS = 1000.0
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
#: (``benchmarks/load_search.py --factors 1,4``; docs/load.md "How well it holds")
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


def check_rates(rates: Sequence[float]) -> tuple[float, ...]:
    """Request rates per second, each > 0 and at most :data:`MAX_RATE`."""
    return tuple(_positive(r, "--rates", MAX_RATE, "/s") for r in rates)


def check_bound(bound_ms: float) -> float:
    """A latency bound in ms: > 0 and at most :data:`MAX_BOUND_MS`."""
    return _positive(bound_ms, "--latency-bound-ms", MAX_BOUND_MS, " ms")


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
