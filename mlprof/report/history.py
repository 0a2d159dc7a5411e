"""History: the same configuration across versions, and alerts along it.

Only like is compared with like: a series is one model (by name and file), runtime (by name),
device, host and CPU, threads, measurement settings and batch size, ordered by the measurement
timestamp (:data:`mlprof.results.identity.SERIES_KEY`). A different host starts another series;
a new runtime version or an edited model continues it, as an event on it that an alert
coinciding with it names (``event``: "onnxruntime 1.31.1 -> 1.32.0").

An alert fires only above the host's noise: a series is judged by the rule with ``min_change``
raised to 2 x the noise floor (:mod:`mlprof.measure.noise`) of the host fingerprint its points
were measured on, in the class of its median call time and threads (:class:`NoiseFloors`);
a series of a host that is not calibrated keeps the rule as it is.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass

from mlprof.measure import noise
from mlprof.plotting.scales import MIN_RELATIVE_SPAN, history_unit, history_y_range
from mlprof.report.alerts import AlertRule, detect
from mlprof.results import identity, layout
from mlprof.results.identity import GROUP_KEY, SERIES_KEY
from mlprof.results.records import NoiseRecord

__all__ = ["GROUP_KEY", "HIGHER_IS_BETTER", "MIN_RELATIVE_SPAN", "SERIES_KEY", "NoiseFloors",
           "alerts_table", "candidates", "floor_rule", "history_groups", "history_unit",
           "history_y_range", "min_detectable_lines", "read_alerts", "series"]

#: the report's columns that give each run's own spread to the alert rule
SPREAD_COLUMNS = ("median_ms", "p16_ms", "p84_ms", "count")

#: statistics where a higher value is better
HIGHER_IS_BETTER = {"throughput"}

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
        extra = [c for c in (*SPREAD_COLUMNS, *identity.EVENT_FIELDS, "runtime",
                             "host_fingerprint")
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


@dataclass(frozen=True)
class SeriesFloor:
    """The noise floor a series is judged by: ``floor`` (relative: 0.04 is 4 %) of ``record``'s
    class for the series' median call time and threads; both None when the host the series
    was measured on is not calibrated."""

    floor: float | None = None
    record: NoiseRecord | None = None


def floor_rule(rule: AlertRule, floor: float | None) -> AlertRule:
    """``rule`` with its ``min_change`` raised to 2 x ``floor`` (unchanged without a floor);
    the tolerance within which a step's points agree stays the rule's (``agree_within``).

    Why: a change smaller than twice what an A/A pair of this host moves (the floor is their
    95th percentile of ``|ratio - 1|``) cannot be told from the host's own noise, whatever the
    history's run-to-run noise says. ``benchmarks/alerts_floor.py`` (seed 1, 2000 simulated
    series of 40 nights): A/A false alerts on quiet nights of a host with a slow state went
    from 1.6 to 0.2 % at a 3.1 % floor (32.4 to 0.0 % at 9.3 %), at most 1 % under every noise
    model, and a +20 % step at 3 % noise is still found by the second night after it in 98.4 %
    of series (98.2 % without the floor; 82.2 % at a 9.3 % floor, 2 x which is 18.6 %)."""
    if floor is None or not floor > 0:
        return rule
    # the points of a step still have to agree as closely as without a floor
    agree = rule.min_change if rule.agree_within is None else rule.agree_within
    return dataclasses.replace(rule, min_change=max(rule.min_change, 2.0 * floor),
                               agree_within=agree)


class NoiseFloors:
    """The noise records of the host fingerprints a report's series were measured on, each
    looked up once in ``stores`` and then the configured store (:func:`layout.store_base`,
    where CalibrateNoise writes), and which series were judged by which (:meth:`summary`).

    A series' points carry the fingerprint of their host (``host_fingerprint``, in every
    record header since the noise floor); a series of older records without it is judged by
    the current host's floor when it was measured on a host of this name, else by none."""

    def __init__(self, stores: Iterable[str | os.PathLike] | None = None, *,
                 host: str | None = None, fingerprint_id: str | None = None) -> None:
        # CalibrateNoise writes to the configured store: it is searched after ``stores``
        self.stores = list(dict.fromkeys(
            [*(os.fspath(s) for s in (stores or ())), layout.store_base()]))
        self._host = host
        self._fid = fingerprint_id
        self._records: dict[str, NoiseRecord | None] = {}
        #: fingerprint id (None: not calibrated) -> series judged by it
        self.judged: dict[str | None, int] = {}

    @property
    def host(self) -> str:
        """This machine's host name (as record headers write it)."""
        if self._host is None:
            from mlprof.sysinfo import system_info
            self._host = str(system_info().get("host") or "")
        return self._host

    @property
    def fingerprint_id(self) -> str:
        """This machine's fingerprint id."""
        if self._fid is None:
            from mlprof.sysinfo import fingerprint_id
            self._fid = fingerprint_id()
        return self._fid

    def record(self, fingerprint_id: str) -> NoiseRecord | None:
        """The noise record of ``fingerprint_id`` in the first store holding one, or None."""
        if fingerprint_id not in self._records:
            found = None
            for store in self.stores:
                found = noise.find_floor(store, fingerprint_id)
                if found is not None:
                    break
            self._records[fingerprint_id] = found
        return self._records[fingerprint_id]

    def current(self) -> NoiseRecord | None:
        """This machine's noise record, or None (not calibrated)."""
        return self.record(self.fingerprint_id)

    def for_series(self, key: dict, s) -> SeriesFloor:
        """The floor of one series (``key`` a :data:`SERIES_KEY` dict, ``s`` a frame of
        :func:`series`): of the fingerprints its points carry, the highest floor of their
        records in the class of the series' median call time (``median_ms``) and threads.
        The highest: a series measured on two states of a machine is judged by the noisier."""
        fids = sorted({v for v in s["host_fingerprint"] if isinstance(v, str) and v}
                      ) if "host_fingerprint" in s.columns else []
        if not fids and str(key.get("host")) == self.host:
            fids = [self.fingerprint_id]
        call_ms = _median_call_ms(s)
        threads = key.get("threads")
        try:
            threads = int(threads) if threads is not None and threads == threads else None
        except (TypeError, ValueError):
            threads = None
        found = [(r.floor_for(call_ms, threads), r) for r in map(self.record, fids)
                 if r is not None]
        if not found:
            self.judged[None] = self.judged.get(None, 0) + 1
            return SeriesFloor()
        floor, rec = max(found, key=lambda t: t[0])
        self.judged[rec.fingerprint_id] = self.judged.get(rec.fingerprint_id, 0) + 1
        return SeriesFloor(floor, rec)

    def summary(self, rule: AlertRule | None = None) -> str:
        """One line: how many series were judged by which host's floor, and how many by the
        rule alone because their host is not calibrated (said once)."""
        rule = rule or AlertRule()
        parts = []
        for fid, n in sorted(self.judged.items(), key=lambda kv: str(kv[0])):
            if fid is None:
                continue
            rec = self.record(fid)
            parts.append(f"{n} series above max({100 * rule.min_change:g} %, 2 x the noise "
                         f"floor of fingerprint {fid}, calibrated "
                         f"{noise.calibration_date(rec) if rec else '?'})")
        if self.judged.get(None):
            parts.append(f"{self.judged[None]} series of a host {noise.NOT_CALIBRATED_SHORT} "
                         f"(the rule's {100 * rule.min_change:g} %)")
        return "alert thresholds: " + ("; ".join(parts) if parts else "no series")


def min_detectable_lines(report, floors: NoiseFloors | None = None) -> list[str]:
    """What Report and the dashboard state: the minimum detectable change (2 x floor, per
    class where they differ, with the fingerprint id and calibration date) of each host
    fingerprint of the report's results (this machine's when none carries one: a report of
    older records, or of none), or that the host is not calibrated."""
    floors = NoiseFloors() if floors is None else floors
    ok = report[report["status"] == "ok"] if "status" in report.columns else report
    fids: list[str] = []
    if "host_fingerprint" in ok.columns:
        counts = ok["host_fingerprint"].dropna().astype(str).value_counts()
        fids = [f for f in counts.index if f]
    if not fids:
        fids = [floors.fingerprint_id]
    hosts: dict[str, str] = {}
    if "host" in ok.columns and "host_fingerprint" in ok.columns:
        for f, h in zip(ok["host_fingerprint"], ok["host"], strict=True):
            if isinstance(f, str) and isinstance(h, str):
                hosts.setdefault(f, h)
    lines = []
    for fid in fids:
        rec = floors.record(fid)
        here = fid == floors.fingerprint_id
        host = "this host" if here else f"host {hosts.get(fid, '?')}"
        text = noise.min_detectable_text(rec, host)
        if rec is None:
            text += f" (fingerprint {fid})"
        lines.append(text)
    return lines


def _median_call_ms(s) -> float | None:
    """The median of a series' median call times (ms), None without any."""
    col = "median_ms" if "median_ms" in s.columns else None
    if col is None:
        return None
    vals = [float(v) for v in s[col] if v is not None and math.isfinite(float(v)) and v > 0]
    if not vals:
        return None
    vals.sort()
    return vals[len(vals) // 2]


#: the columns :func:`alerts_table` adds for the noise floor (an older ``alerts.csv`` lacks
#: them: :func:`read_alerts` fills them in as unknown)
FLOOR_COLUMNS = ("threshold", "floor", "floor_fingerprint")

ALERT_COLUMNS = [*SERIES_KEY, "statistic", "kind", "test", "version", "first_version", "value",
                 "baseline", "change", "z", "runtime_version", "model_hash", "event",
                 *FLOOR_COLUMNS]


def alerts_table(report, statistic: str = "median_ms", rule: AlertRule | None = None,
                 floors: NoiseFloors | None = None, frames=None):
    """One row per alert: the series key, the version that confirmed it, kind, the test that
    found it (``step`` or ``trend``), sizes, the runtime version of the alerting point, and the
    ``event`` it coincides with: a runtime upgrade or model edit at a point from the first
    alerting one to the confirming one ("onnxruntime 1.31.1 -> 1.32.0"; "" for none); then
    the ``threshold`` the series was judged by (``min_change`` of :func:`floor_rule`), its
    ``floor`` and the fingerprint the floor belongs to (both empty for a host that is not
    calibrated). ``floors``: where the noise records are (:class:`NoiseFloors`, the configured
    store by default); it counts the series judged by each (:meth:`NoiseFloors.summary`).
    ``frames``: :func:`series` of the same report and statistic where the caller has them (the
    dashboard draws them too: deriving them twice was 0.16 s of a 1 s build of 488 results)."""
    import pandas as pd

    rule = rule or AlertRule()
    floors = NoiseFloors() if floors is None else floors
    rows = []
    for key, s in (series(report, statistic) if frames is None else frames).items():
        kd = dict(zip(SERIES_KEY, key, strict=True))
        sf = floors.for_series(kd, s)
        used = floor_rule(rule, sf.floor)
        found = identity.events(s)
        for a in detect(s["value"].to_numpy(), used,
                        higher_is_worse=statistic not in HIGHER_IS_BETTER, **run_spread(s)):
            ev = identity.events_between(found, a.start, a.index)
            rows.append({**kd, "statistic": statistic,
                         "kind": a.kind, "test": a.test, "version": s["version"].iloc[a.index],
                         "first_version": s["version"].iloc[a.start], "value": a.value,
                         "baseline": a.baseline, "change": a.change, "z": a.z,
                         "runtime_version": _at(s, "runtime_version", a.index),
                         "model_hash": _at(s, "model_hash", a.index),
                         "event": "; ".join(e.text for e in ev),
                         "threshold": used.min_change, "floor": sf.floor,
                         "floor_fingerprint": sf.record.fingerprint_id if sf.record else ""})
    return pd.DataFrame(rows, columns=ALERT_COLUMNS)


def read_alerts(path: str):
    """An ``alerts.csv`` (of :func:`alerts_table`) as a DataFrame; one written before the noise
    floor lacks :data:`FLOOR_COLUMNS`: ``threshold`` and ``floor`` are then empty (NaN) and
    ``floor_fingerprint`` ``""``."""
    import pandas as pd

    df = pd.read_csv(path)
    for c in FLOOR_COLUMNS:
        if c not in df.columns:
            df[c] = "" if c == "floor_fingerprint" else float("nan")
    return df


def _at(s, column: str, index: int) -> str:
    """The value of ``column`` at point ``index`` of a series frame ("" without one)."""
    if column not in s.columns:
        return ""
    v = s[column].iloc[index]
    return "" if v is None or v != v else str(v)


def candidates(report, version: str, statistic: str = "median_ms",
               rule: AlertRule | None = None, floors: NoiseFloors | None = None
               ) -> list[dict]:
    """Results of ``version`` that would alert if confirmed: worth a re-measurement.

    A series whose *last* point is from ``version`` and beyond both thresholds on its own (the
    rule with ``persist=1``); a confirming re-measurement that is beyond them too makes the
    alert (two points in a row). Returns the series key plus ``kind``, ``path``, ``change``.
    The thresholds are the alert's (:func:`floor_rule` of the series' floor, ``floors`` as
    for :func:`alerts_table`): a change within the host's noise is not worth measuring again.
    """
    rule1 = dataclasses.replace(rule or AlertRule(), persist=1)
    floors = NoiseFloors() if floors is None else floors
    out = []
    for key, s in series(report, statistic).items():
        if len(s) == 0 or s["version"].iloc[-1] != version:
            continue
        sf = floors.for_series(dict(zip(SERIES_KEY, key, strict=True)), s)
        found = detect(s["value"].to_numpy(), floor_rule(rule1, sf.floor),
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
