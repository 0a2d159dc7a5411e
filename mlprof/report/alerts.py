"""Robust regression alerts over a history of results.

Relay's rule, ``|x - mean| > 1 std``, fires on about a third of all metrics by chance alone. This
one compares the newest points of a series with a window of up to ``window`` (20) earlier points:

- the *baseline* is their 10 % trimmed mean;
- the *noise* is the robust standard deviation of their residuals around a straight line
  (residuals beyond 5 robust standard deviations count as 5), relative to the baseline. A line,
  not the median: a slow drift does not make the series look noisy and hide itself;
- each run's own spread counts when the report gives it (``p16``, ``p84`` and ``count``): the
  standard error of its median widens that run's noise, and a run whose spread p84 - p16 is
  more than ``spread_limit`` (1.2) times the history's usual one is *disturbed* (a noisy
  neighbour slows some calls more than others): it is left out of the history and neither
  confirms nor breaks a change, unless the change lasts ``persist + disturbed_persist`` runs.

A run of ``persist`` (2) to ``max_run`` (3) points ending at the newest one alerts when all of
these hold: all are on the same side of the baseline, each by at least ``z_each`` (2) noise
units, their mean change is at least ``min_change`` (5 %), and its z (the mean change over its
standard error, ``noise * sqrt(1 / points + 1.06 / history)``) is beyond the Student-t quantile
with ``history - 2`` degrees of freedom at the tail probability of a normal ``z_min`` (3.8):
about 4.8 with 20 earlier points, 6.7 with 10, 19 with 5. A short history's noise estimate can
be far too small by chance; the t quantile pays for that, and its allowance vanishes as the
history grows, so quiet series stay sensitive and short noisy ones stay silent.

With fewer than ``short_history`` (5) earlier points the noise is unknown: it is taken as at
least ``prior_noise`` (15 %), and each point must be ``short_z`` (4) times that away (60 %). On
shared virtual machines runs seconds apart differ a lot (on the test VM, 0.3 s measurements of
one model in one minute had medians from 11.1 to 22.0 ms; 2 s measurements from 11.6 to
17.6 ms). A single confirming re-measurement counts as the second point, so the third run of a
configuration can already alert. After an alert the new level is the new normal: the history
restarts at the alert's first point.

Improvements (lower latency, higher throughput) are reported apart from regressions. Measured
error rates: ``benchmarks/alerts.py`` (README section "Reports and regression alerts").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

MAD_SCALE = 1.4826
#: the standard error of a median is this times the standard deviation over sqrt(n)
MEDIAN_SE = 1.2533
#: residuals beyond WINSOR robust standard deviations are outliers (a normal
#: variable is beyond 5 sd once in 1.7 million)
WINSOR = 5.0
#: the baseline is a trimmed mean (TRIM of the points cut at each end); its variance is
#: TRIM_VAR times that of a plain mean for normal noise
TRIM, TRIM_VAR = 0.1, 1.06
#: 3 x the relative standard deviation of p84 - p16 times sqrt(count) (normal calls): a run
#: of ``count`` calls is disturbed only beyond ``1 + SPREAD_SD / sqrt(count)`` too
SPREAD_SD = 2.5


@dataclass(frozen=True)
class AlertRule:
    """The thresholds of the rule (see the module docstring)."""

    z_min: float = 3.8
    min_change: float = 0.05
    persist: int = 2
    window: int = 20
    #: past points needed before anything can alert (two earlier runs, then a candidate and
    #: its confirmation: the third run of a configuration can already alert)
    min_history: int = 2
    #: with fewer past points than this, the measured noise says little: assume at least
    #: ``prior_noise`` and require every point of the run ``short_z`` times that (60 %) away
    short_history: int = 5
    prior_noise: float = 0.15
    short_z: float = 4.0
    #: floor of the noise scale, relative to the baseline
    mad_floor: float = 0.002
    #: each point of a run must be at least this many noise scales beyond the baseline
    z_each: float = 2.0
    #: a run whose own spread (p84 - p16) is more than this times the typical spread of the
    #: history is disturbed: it neither counts for nor against a change
    spread_limit: float = 1.2
    #: ... unless the change lasts this many points more than ``persist``
    disturbed_persist: int = 3
    #: runs of ``persist`` up to ``max_run`` points ending at the newest one are tested (the
    #: mean of a longer run is less noisy: a smaller change is caught a run or two later)
    max_run: int = 3


@dataclass(frozen=True)
class Alert:
    """One alert: where in the series, which way, and how far."""

    index: int            # the point that confirmed the alert (the last of the run)
    start: int            # the first point of the run
    kind: str             # "regression" or "improvement"
    value: float
    baseline: float       # level (trimmed mean) of the window before the run
    change: float         # relative change of value vs baseline
    z: float

    def as_dict(self) -> dict:
        """Plain dict (for tables)."""
        return asdict(self)


def _level(past: np.ndarray) -> float:
    """The baseline: the mean of ``past`` without its highest and lowest TRIM share."""
    k = int(TRIM * len(past))
    v = np.sort(past)
    return float(v[k:len(v) - k].mean())


def t_quantile(z: float, dof: float) -> float:
    """The Student-t quantile with ``dof`` degrees of freedom at the normal quantile ``z``.

    The Cornish-Fisher expansion (Abramowitz and Stegun 26.7.5, three terms): within a few per
    cent for dof >= 10 at the tail probabilities used here, about 20 % low at dof 3 (``z_min``
    was tuned with it as it is: benchmarks/alerts.py).
    """
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    return z + g1 / dof + g2 / dof ** 2 + g3 / dof ** 3


def _noise(past: np.ndarray, med: float) -> float:
    """Relative run-to-run noise of ``past``: the residuals of a straight line through it.

    A line, not the median: a drift moves the median but not the residuals of a line, so a
    slow drift does not make the series look noisy and hide itself. Residuals beyond WINSOR
    robust standard deviations are outliers and count as WINSOR of them.
    """
    n = len(past)
    if n < 3:
        return 0.0
    t = np.arange(n) - (n - 1) / 2
    y = past / med
    r = y - y.mean() - t * float(t @ (y - y.mean())) / float(t @ t)
    r = np.abs(r)
    limit = WINSOR * MAD_SCALE * float(np.median(r))
    if limit > 0:
        r = np.minimum(r, limit)
    return float(np.sqrt(r @ r / (n - 2)))


def detect(values: Sequence[float], rule: AlertRule = AlertRule(),
           higher_is_worse: bool = True, *, p16: Sequence[float] | None = None,
           p84: Sequence[float] | None = None, count: Sequence[float] | None = None
           ) -> list[Alert]:
    """Alerts in a time-ordered series (latency: ``higher_is_worse=True``).

    ``p16``, ``p84`` and ``count`` (the report's columns of the same runs) add each run's own
    spread: the standard error of its median, and whether the run was disturbed.
    """
    x = np.asarray(values, dtype=float)
    n = len(x)
    if p16 is not None and p84 is not None:
        spread = (np.asarray(p84, dtype=float) - np.asarray(p16, dtype=float)) / np.where(
            x > 0, x, np.nan)
    else:
        spread = np.full(n, np.nan)
    cnt = np.asarray(count, dtype=float) if count is not None else np.full(n, np.nan)
    se = MEDIAN_SE * (spread / 2) / np.sqrt(cnt)           # relative, nan when unknown
    ok = np.isfinite(x)
    disturbed = np.zeros(n, dtype=bool)
    alerts: list[Alert] = []
    reset = 0  # after an alert, the shifted level is the new normal: history restarts there
    longest = rule.persist + rule.disturbed_persist
    i = 0
    while i < n:
        idx = np.arange(max(reset, i - rule.window), i)
        idx = idx[ok[idx] & ~disturbed[idx]]
        if len(idx) < rule.min_history or not ok[i]:
            i += 1
            continue
        known = spread[idx][np.isfinite(spread[idx])]
        if len(known) >= rule.min_history:
            limit = max(rule.spread_limit, 1 + SPREAD_SD / np.sqrt(cnt[i]))
            disturbed[i] = bool(spread[i] > limit * np.median(known))
        found = None
        # runs ending at i: the usual ``persist`` points of undisturbed runs, or a longer run
        # of points that may be disturbed
        for length in (*range(rule.persist, max(rule.persist, rule.max_run) + 1), longest):
            start = i - length + 1
            found = _check(x, start, i, length, rule, disturbed, se, reset)
            if found is not None:
                break
        if found is not None:
            start, med, z, change = found
            worse = (z > 0) == higher_is_worse
            alerts.append(Alert(index=i, start=start,
                                kind="regression" if worse else "improvement",
                                value=float(x[i]), baseline=med, change=change, z=z))
            reset = start
        i += 1
    return alerts


def _check(x: np.ndarray, start: int, end: int, length: int, rule: AlertRule,
           disturbed: np.ndarray, se: np.ndarray, reset: int):
    """``(start, baseline, z, change)`` when points ``start..end`` make an alert, else None."""
    if start < reset:
        return None
    allow_disturbed = length > max(rule.persist, rule.max_run)
    if not allow_disturbed and disturbed[start:end + 1].any():
        return None
    idx = np.arange(max(reset, start - rule.window), start)
    idx = idx[np.isfinite(x[idx]) & ~disturbed[idx]]
    if len(idx) < rule.min_history:
        return None
    past = x[idx]
    med = _level(past)
    if not med:
        return None
    pts = x[start:end + 1]
    if not np.isfinite(pts).all():
        return None
    d = pts / med - 1
    if len(set(np.sign(d))) != 1:
        return None
    n = len(past)
    measured = _noise(past, med)
    if n < rule.short_history:
        # two to four points cannot tell how noisy a configuration is: assume prior_noise
        sigma = max(measured, rule.prior_noise)
        each = np.abs(d) / sigma
        if not (each >= rule.short_z).all() or abs(d.mean()) < rule.min_change:
            return None
        return start, med, float(d.mean() / sigma), float(d[-1])
    sigma = max(measured, rule.mad_floor)
    own = np.nan_to_num(se[start:end + 1], nan=0.0)
    if not (np.abs(d) / np.hypot(sigma, own) >= rule.z_each).all():
        return None
    mean = float(d.mean())
    z = mean / (sigma * np.sqrt(1 / length + TRIM_VAR / n))
    # the noise is estimated with n - 2 degrees of freedom: z is Student-t distributed, with
    # heavier tails the shorter the history
    need = t_quantile(rule.z_min, n - 2)
    if abs(z) >= need and abs(mean) >= rule.min_change:
        return start, med, z, float(d[-1])
    return None
