"""History: the same configuration across versions, and alerts along it.

Only like is compared with like: a series is one model (by name and file), runtime (by name),
device, host and CPU, threads, measurement settings and batch size, ordered by the measurement
timestamp (:data:`mlprof.results.identity.SERIES_KEY`). A different host starts another series;
a new runtime version or an edited model continues it, as an event on it that an alert
coinciding with it names (``event``: "onnxruntime 1.31.1 -> 1.32.0").
"""

from __future__ import annotations

import math

from mlprof.report.alerts import AlertRule, detect
from mlprof.results import identity
from mlprof.results.identity import GROUP_KEY, SERIES_KEY

__all__ = ["GROUP_KEY", "HIGHER_IS_BETTER", "MIN_RELATIVE_SPAN", "SERIES_KEY", "alerts_table",
           "candidates", "history_groups", "history_unit", "history_y_range", "series"]

#: the report's columns that give each run's own spread to the alert rule
SPREAD_COLUMNS = ("median_ms", "p16_ms", "p84_ms", "count")

#: statistics where a higher value is better
HIGHER_IS_BETTER = {"throughput"}

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


def series(report, statistic: str = "median_ms"):
    """``{key tuple: DataFrame(version, timestamp, value, ...)}`` of the successful results.

    Besides ``value`` (the statistic) each frame keeps the run's own spread when the report has
    it (``median_ms``, ``p16_ms``, ``p84_ms``, ``count``): what the alert rule needs to tell a
    disturbed run from a change (see :func:`run_spread`).
    """
    ok = identity.assign(report[report["status"] == "ok"])
    if "batch_size" in ok and ok["batch_size"].notna().all():
        # every result has one; a failure row without one made the column float (``bs 8.0``)
        ok = ok.astype({"batch_size": "int64"})
    out = {}
    for key, g in ok.groupby(SERIES_KEY, sort=True, dropna=False):
        g = g.sort_values("timestamp", kind="stable")
        extra = [c for c in (*SPREAD_COLUMNS, *identity.EVENT_FIELDS, "runtime")
                 if c in g and c != statistic]
        cols = ["version", "timestamp", statistic, *extra] + (["path"] if "path" in g else [])
        s = g[cols].rename(columns={statistic: "value"})
        if statistic == "median_ms":
            s["median_ms"] = s["value"]
        out[key] = s
    return out


def run_spread(s) -> dict:
    """The keyword arguments of :func:`~mlprof.report.alerts.detect` for each run's spread.

    ``p16``, ``p84`` and ``count`` of every run of the series ``s`` (a frame of
    :func:`series`), relative to the run's median whatever the statistic (for ``p99_ms`` or
    ``throughput`` too: a neighbour widens the spread of the calls, whichever statistic is
    followed). Empty when the report lacks the columns (an older report): then the rule sees
    the values only.
    """
    if not set(SPREAD_COLUMNS) <= set(s.columns):
        return {}
    return {"p16": s["p16_ms"].to_numpy(dtype=float), "p84": s["p84_ms"].to_numpy(dtype=float),
            "count": s["count"].to_numpy(dtype=float),
            "center": s["median_ms"].to_numpy(dtype=float)}


def alerts_table(report, statistic: str = "median_ms", rule: AlertRule | None = None):
    """One row per alert: the series key, the version that confirmed it, kind, the test that
    found it (``step`` or ``trend``), sizes, the runtime version of the alerting point, and the
    ``event`` it coincides with: a runtime upgrade or model edit at a point from the first
    alerting one to the confirming one ("onnxruntime 1.31.1 -> 1.32.0"; "" for none)."""
    import pandas as pd

    rule = rule or AlertRule()
    rows = []
    for key, s in series(report, statistic).items():
        found = identity.events(s)
        for a in detect(s["value"].to_numpy(), rule,
                        higher_is_worse=statistic not in HIGHER_IS_BETTER, **run_spread(s)):
            ev = identity.events_between(found, a.start, a.index)
            rows.append({**dict(zip(SERIES_KEY, key, strict=True)), "statistic": statistic,
                         "kind": a.kind, "test": a.test, "version": s["version"].iloc[a.index],
                         "first_version": s["version"].iloc[a.start], "value": a.value,
                         "baseline": a.baseline, "change": a.change, "z": a.z,
                         "runtime_version": _at(s, "runtime_version", a.index),
                         "model_hash": _at(s, "model_hash", a.index),
                         "event": "; ".join(e.text for e in ev)})
    cols = [*SERIES_KEY, "statistic", "kind", "test", "version", "first_version", "value",
            "baseline", "change", "z", "runtime_version", "model_hash", "event"]
    return pd.DataFrame(rows, columns=cols)


def _at(s, column: str, index: int) -> str:
    """The value of ``column`` at point ``index`` of a series frame ("" without one)."""
    if column not in s.columns:
        return ""
    v = s[column].iloc[index]
    return "" if v is None or v != v else str(v)


def candidates(report, version: str, statistic: str = "median_ms",
               rule: AlertRule | None = None) -> list[dict]:
    """Results of ``version`` that would alert if confirmed: worth a re-measurement.

    A series whose *last* point is from ``version`` and beyond both thresholds on its own (the
    rule with ``persist=1``); a confirming re-measurement that is beyond them too makes the
    alert (two points in a row). Returns the series key plus ``kind``, ``path``, ``change``.
    """
    import dataclasses

    rule1 = dataclasses.replace(rule or AlertRule(), persist=1)
    out = []
    for key, s in series(report, statistic).items():
        if len(s) == 0 or s["version"].iloc[-1] != version:
            continue
        found = detect(s["value"].to_numpy(), rule1,
                       higher_is_worse=statistic not in HIGHER_IS_BETTER, **run_spread(s))
        if found and found[-1].index == len(s) - 1:
            a = found[-1]
            out.append({**dict(zip(SERIES_KEY, key, strict=True)), "kind": a.kind,
                        "runtime_version": _at(s, "runtime_version", len(s) - 1),
                        "model_hash": _at(s, "model_hash", len(s) - 1),
                        "path": s["path"].iloc[-1] if "path" in s else None,
                        "change": a.change, "z": a.z})
    return out


def history_groups(report, alerts: list[dict], statistic: str = "median_ms",
                   min_points: int = 1) -> list[tuple[dict, dict, list]]:
    """One entry per configuration (the series key but the batch size), for plotting.

    Each is ``(configuration, {"batch size N": (versions, values)}, marks)`` with ``marks`` the
    ``(line label, version, kind)`` of ``alerts`` (rows of :func:`alerts_table`) in it; series
    with fewer than ``min_points`` points are left out. The configuration has, besides the
    group key, ``runtime_version`` (of its latest point; ``a -> b`` when it changed) and
    ``events``: ``(version, text)`` of each runtime upgrade or model edit, in time order.
    """
    lines: dict[tuple, dict] = {}
    info: dict[tuple, dict] = {}
    for key, s in series(report, statistic).items():
        if len(s) < min_points:
            continue
        k = dict(zip(SERIES_KEY, key, strict=True))
        gk = tuple(k[g] for g in GROUP_KEY)
        lines.setdefault(gk, {})[f"batch size {k['batch_size']}"] = (
            list(s["version"]), list(s["value"]))
        gi = info.setdefault(gk, {"versions": [], "events": {}})
        gi["versions"] += [(t, _at(s, "runtime_version", i))
                           for i, t in enumerate(s["timestamp"].astype(str))]
        for e in identity.events(s):
            gi["events"].setdefault(str(s["version"].iloc[e.index]), (
                str(s["timestamp"].iloc[e.index]), e.text))
    out = []
    for gkey, group_lines in lines.items():
        g = dict(zip(GROUP_KEY, gkey, strict=True))
        seen = [v for _, v in sorted(info[gkey]["versions"]) if v]
        first, last = (seen[0], seen[-1]) if seen else ("", "")
        g["runtime_version"] = last if first == last else f"{first} -> {last}"
        g["events"] = [(v, text) for v, (_, text) in
                       sorted(info[gkey]["events"].items(), key=lambda kv: kv[1][0])]
        marks = [(f"batch size {a['batch_size']}", a["version"], a["kind"]) for a in alerts
                 if all(str(a[c]) == str(g[c]) for c in GROUP_KEY)]
        out.append((g, group_lines, marks))
    return out
