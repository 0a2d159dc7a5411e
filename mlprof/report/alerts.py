"""Robust regression alerts over a history of results.

Relay's rule, ``|x - mean| > 1 std``, fires on about a third of all metrics by chance alone. This
one compares each new point with the *median* and the *MAD* (median absolute deviation, scaled
by 1.4826 to estimate a standard deviation for normal noise) of a window of past points, and
alerts only when all of these hold:

- ``|z| >= z_min`` (default 4), with ``z = (x - median) / (1.4826 * MAD)``; with a short
  history (fewer than 5 past points) the noise is taken as at least 15 % (so a change must be
  >= 60 %), since two or three points cannot tell how noisy a configuration is, and on shared
  virtual machines runs seconds apart differ a lot (on the test VM, 0.3 s measurements of one
  model in one minute had medians from 11.1 to 22.0 ms; 2 s measurements from 11.6 to 17.6 ms);
- the relative change ``|x - median| / median >= min_change`` (default 5 %), so that a tiny,
  very stable metric does not alert on an irrelevant shift;
- it persists: ``persist`` consecutive points (default 2) are all beyond both thresholds in the
  same direction, each compared with the window before the first of them (a single confirming
  re-measurement counts as the second point).

Improvements (lower latency, higher throughput) are reported apart from regressions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

MAD_SCALE = 1.4826


@dataclass(frozen=True)
class AlertRule:
    """The thresholds of the rule (see the module docstring)."""

    z_min: float = 4.0
    min_change: float = 0.05
    persist: int = 2
    window: int = 10
    #: past points needed before anything can alert (two earlier runs, then a candidate and
    #: its confirmation: the third run of a configuration can already alert)
    min_history: int = 2
    #: with fewer past points than this, the MAD says little about the noise: assume at least
    #: ``prior_noise`` (relative) run-to-run noise, so that z >= 4 needs a change of 60 %
    short_history: int = 5
    prior_noise: float = 0.15
    #: floor of the noise scale, relative to the median (a perfectly flat history still needs
    #: a change of z_min * mad_floor to count)
    mad_floor: float = 0.002


@dataclass(frozen=True)
class Alert:
    """One alert: where in the series, which way, and how far."""

    index: int            # the point that confirmed the alert (the last of the run)
    start: int            # the first point of the run
    kind: str             # "regression" or "improvement"
    value: float
    baseline: float       # median of the window before the run
    change: float         # relative change of value vs baseline
    z: float

    def as_dict(self) -> dict:
        """Plain dict (for tables)."""
        return asdict(self)


def _score(x: float, past: np.ndarray, rule: AlertRule) -> tuple[float, float, float]:
    med = float(np.median(past))
    mad = MAD_SCALE * float(np.median(np.abs(past - med)))
    floor = rule.prior_noise if len(past) < rule.short_history else rule.mad_floor
    mad = max(mad, floor * abs(med), 1e-12)
    return med, (x - med) / mad, (x - med) / med if med else float("inf")


def detect(values: Sequence[float], rule: AlertRule = AlertRule(),
           higher_is_worse: bool = True) -> list[Alert]:
    """Alerts in a time-ordered series (latency: ``higher_is_worse=True``)."""
    x = np.asarray(values, dtype=float)
    alerts: list[Alert] = []
    reset = 0  # after an alert, the shifted level is the new normal: history restarts there
    i = rule.min_history + rule.persist - 1
    while i < len(x):
        start = i - rule.persist + 1
        past = x[max(reset, start - rule.window):start]
        past = past[np.isfinite(past)]
        if len(past) < rule.min_history:
            i += 1
            continue
        signs = set()
        last = None
        for j in range(start, i + 1):
            med, z, change = _score(float(x[j]), past, rule)
            if not (abs(z) >= rule.z_min and abs(change) >= rule.min_change):
                break
            signs.add(np.sign(z))
            last = (med, z, change)
        else:
            if len(signs) == 1 and last is not None:
                med, z, change = last
                worse = (z > 0) == higher_is_worse
                alerts.append(Alert(index=i, start=start,
                                    kind="regression" if worse else "improvement",
                                    value=float(x[i]), baseline=med, change=change, z=z))
                reset = start
                i += 1
                continue
        i += 1
    return alerts
