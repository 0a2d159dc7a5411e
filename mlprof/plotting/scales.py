"""The scales of history panels: their y range and unit, shared by PlotHistory
(:mod:`mlprof.plotting.history`) and the dashboard's SVG panels and trend lines (``report``
reads them from here: plotting is below report, tests/test_imports.py).

Pure functions, no matplotlib: importing this module costs nothing.
"""

from __future__ import annotations

import math

#: a history panel's y range is at least this fraction of its level: a 0.3 % wobble then
#: stays a wobble instead of filling the panel from top to bottom (PlotHistory and the
#: dashboard's panels and trend lines all draw with :func:`history_y_range`)
MIN_RELATIVE_SPAN = 0.2


def history_y_range(values, pad: float = 0.1) -> tuple[float, float]:
    """The y limits of one history panel (or trend line) over ``values``.

    Why a floor: each panel has its own range (batch sizes span decades), and a range spanning
    only its own min-max turns noise into a cliff. The range is the data, widened to at least
    :data:`MIN_RELATIVE_SPAN` of the level (the median of ``|values|``) around its middle,
    plus ``pad`` of that on each side; never below zero for data that is not negative.
    Non-finite values are ignored; ``(0, 1)`` when none is left.
    """
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not vals:
        return 0.0, 1.0
    lo, hi = min(vals), max(vals)
    level = sorted(abs(v) for v in vals)[len(vals) // 2]
    span = max(hi - lo, MIN_RELATIVE_SPAN * level, 1e-12)
    mid = (lo + hi) / 2
    lo, hi = min(lo, mid - span / 2), max(hi, mid + span / 2)
    d = pad * (hi - lo)
    bottom = lo - d
    if min(vals) >= 0:
        bottom = max(bottom, 0.0)
    return bottom, hi + d


def history_unit(statistic: str, values) -> tuple[str, float]:
    """``(unit, scale)`` of a panel of ``statistic`` (values in ms, or events/s): µs when
    every value is below 0.1 ms, so that ticks read ``18.2 µs`` rather than ``0.0182``."""
    if statistic == "throughput":
        return "events/s", 1.0
    peak = max((abs(float(v)) for v in values), default=0.0)
    return ("\u00b5s", 1000.0) if peak < 0.1 else ("ms", 1.0)
