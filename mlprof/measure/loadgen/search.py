"""The server's search for the highest rate whose percentile stays under the bound: doubling
and halving to bracket it, then bisecting on a log scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mlprof.measure.loadgen.settings import MAX_POINTS, MAX_RATE, TOLERANCE


def search(point: Callable[[float, bool], dict[str, Any]], start_rate: float, *,
           tolerance: float = TOLERANCE, max_points: int = MAX_POINTS,
           floor: float | None = None) -> tuple[float | None, list[dict[str, Any]], str]:
    """The highest rate whose point is ``met``: from ``start_rate``, doubling while met and
    halving while missed until a met and a missed rate bracket it, then their geometric mean
    until they are within ``tolerance``. ``(best rate or None, the points, why it ended)``;
    below ``floor`` (default ``start_rate / 1000``) no rate meets the bound.

    ``point(rate, decisive)`` measures one rate. ``decisive`` is true for the points that can
    decide the answer: those inside a bracket, which plan :data:`DECISIVE_FACTOR` times the
    requests (see :func:`measure_server`), and the ends of the final bracket. An end that was
    measured before the bracket existed, with the percentile's minimum of requests, is measured
    again as decisive before the search ends, and the search goes on from what it finds (the
    newest verdict of a rate counts). Why: a short first point can miss on one stall
    (ResNet-18 at a load of 0.69: p99 417 ms in 192 requests), and halving and bisecting below
    it never reach above it: 49.6 events/s, where searches beside it found 73-80."""
    floor = start_rate / 1000 if floor is None else floor
    known: dict[float, tuple[bool, bool]] = {}  # rate: (met, decisive), the newest verdict
    r, decisive = start_rate, False
    points: list[dict[str, Any]] = []
    while len(points) < max_points:
        p = point(r, decisive)
        points.append(p)
        known[r] = (p.get("verdict") == "met", decisive)
        met = [x for x, (ok, _) in known.items() if ok]
        lo = max(met) if met else None
        missed = [x for x, (ok, _) in known.items() if not ok and (lo is None or x > lo)]
        hi = min(missed) if missed else None
        if lo is not None and hi is not None:
            if hi / lo > 1 + tolerance:
                r, decisive = math.sqrt(lo * hi), True
            elif not known[hi][1]:
                r, decisive = hi, True
            elif not known[lo][1]:
                r, decisive = lo, True
            else:
                return lo, points, f"bracketed within {tolerance:.0%}"
        elif lo is None:
            if p.get("service_verdict") == "missed":
                return None, points, (
                    f"the calls alone miss it (p{p['percentile']:g} of the calls "
                    f"{p['service_percentile_ms']:.3g} ms at {r:.3g} requests/s): a lower rate "
                    f"only removes queueing")
            r, decisive = min(known) / 2, False
            if r < floor:
                return None, points, f"none met down to {min(known):.3g} requests/s"
        else:
            r, decisive = max(known) * 2, False
            if r > MAX_RATE:
                return lo, points, f"met up to the highest rate mlprof asks for ({MAX_RATE:g}/s)"
    met = [x for x, (ok, _) in known.items() if ok]
    return (max(met) if met else None), points, f"stopped after {max_points} points"
