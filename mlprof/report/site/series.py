"""The dashboard's data: current results, series with their baselines, models and settings.

Nothing here derives a second time what :mod:`mlprof.report.history` and
:mod:`mlprof.report.alerts` derive: a series is :func:`mlprof.report.history.series`'s (the one
the alert rule judged), a baseline the rule's level (:func:`mlprof.report.alerts.level`). What
this module adds is the dashboard's view of them: the current result of each series (the
latest, a failure too), anchors of the history panels, the models' labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlprof.report import history
from mlprof.report.alerts import level
from mlprof.report.nightly import CONFIRM_SUFFIX
from mlprof.report.site.table import number
from mlprof.results import identity, layout
from mlprof.util import short_hash


def current_results(report, versions: Iterable[str] | None = None):
    """The current result of each configuration and batch size.

    With ``versions``, only results of those versions count; of several (a result and its
    confirming re-measurement), the latest is current. Without, the latest of all.
    """
    df = identity.assign(report)
    versions = list(versions or [])
    if versions:
        df = df[df["version"].isin(versions)]
    if df.empty:
        return df.copy()
    df = df.assign(_ts=df["timestamp"].fillna(""))
    df = df.sort_values("_ts", kind="stable")
    latest = df.groupby(identity.LATEST_KEY, dropna=False, sort=False).tail(1)
    return latest.drop(columns="_ts").sort_values(
        ["model", "runtime", "runtime_version", "settings_key", "batch_size"],
        kind="stable", ignore_index=True)


#: a key part, normalized as every reader of results normalizes it
norm = identity.norm


def series_key(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The :data:`~mlprof.results.identity.SERIES_KEY` of a row, normalized
    (:func:`mlprof.results.identity.key_of`)."""
    return identity.key_of(row)


def base_version(version: str) -> str:
    """A night's version for its confirming re-measurement (``n3.confirm`` -> ``n3``)."""
    v = str(version)
    return v[: -len(CONFIRM_SUFFIX)] if v.endswith(CONFIRM_SUFFIX) else v


@dataclass
class Series:
    """The successful results of one series, oldest first."""

    versions: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    timestamps: list[str] = field(default_factory=list)
    #: point index -> alert kind
    alerts: dict[int, str] = field(default_factory=dict)
    #: each point's runtime version and model hash (their changes are events)
    runtime_versions: list[str] = field(default_factory=list)
    model_hashes: list[str] = field(default_factory=list)
    runtime: str = ""

    def events(self) -> dict[int, str]:
        """Point index -> the runtime upgrade or model edit that came with it."""
        rows = [{"runtime_version": v, "model_hash": h}
                for v, h in zip(self.runtime_versions, self.model_hashes, strict=True)]
        out: dict[int, str] = {}
        for e in identity.events(rows, self.runtime):
            out[e.index] = "; ".join(filter(None, (out.get(e.index), e.text)))
        return out

    def points(self) -> list[tuple[str, float, bool]]:
        """``(version, value, is_confirmation)`` of each point."""
        return [(v, x, v.endswith(CONFIRM_SUFFIX)) for v, x in zip(self.versions, self.values,
                                                                   strict=True)]


def build_series(report, statistic: str, frames=None) -> dict[tuple[str, ...], Series]:
    """Every series of ``report``'s successful results, keyed by :func:`series_key`: the
    series of :func:`mlprof.report.history.series` (the alerts' own, so the panels show what
    the rule judged), without points that have no value. ``frames``: those series where the
    caller has them already."""
    out: dict[tuple[str, ...], Series] = {}
    if report.empty:
        return out
    if frames is None:
        frames = history.series(report, statistic)
    for key, frame in frames.items():
        s = Series(runtime=str(frame["runtime"].iloc[0]) if len(frame) else "")
        versions = frame["runtime_version"] if "runtime_version" in frame else [""] * len(frame)
        hashes = frame["model_hash"] if "model_hash" in frame else [""] * len(frame)
        for v, ts, x, rv, mh in zip(frame["version"], frame["timestamp"], frame["value"],
                                    versions, hashes, strict=True):
            value = number(x)
            if value is None:
                continue
            s.versions.append(str(v))
            s.timestamps.append(ts if isinstance(ts, str) else "")
            s.values.append(value)
            s.runtime_versions.append(norm(rv))
            s.model_hashes.append(norm(mh))
        if s.values:
            out[tuple(norm(v) for v in key)] = s
    return out


def baseline_of(s: Series, version: str, timestamp: str, window: int) -> float | None:
    """The baseline of a result: the alert rule's level (:func:`mlprof.report.alerts.level`,
    the 10 % trimmed mean) of up to ``window`` earlier results of its series, other nights
    only (a confirming re-measurement of the same night is no baseline). None without any."""
    night = base_version(version)
    past = [v for ver, ts, v in zip(s.versions, s.timestamps, s.values, strict=True)
            if ts < timestamp and base_version(ver) != night][-window:]
    return level(np.asarray(past, dtype=float)) if past else None


def cfg_id(key: tuple[str, ...]) -> str:
    """The anchor of a configuration (the series key without the batch size) on its page."""
    return short_hash(*key[:-1])


def anchor_of(key: tuple[str, ...]) -> str:
    """The anchor of a series' history panel: ``h-<configuration>-bs<N>``."""
    return f"h-{cfg_id(key)}-bs{layout.path_safe(key[-1], 12)}"



def model_labels(current) -> dict[tuple[str, str], str]:
    """``{(model, hash): label}``: the label of the model the user named (the report's
    ``label``, from :func:`mlprof.results.records.model_identity`: a YAML's label, a script
    model's name; never an export's spec, which is called ``model``), else the model's name."""
    labels: dict[tuple[str, str], str] = {}
    ok = current[current["status"] == "ok"]
    for (model, mhash), g in ok.groupby(["model", "model_hash"], sort=False, dropna=False):
        given = [v.strip() for v in g.get("label", []) if isinstance(v, str) and v.strip()]
        labels[(model, mhash)] = given[-1] if given else str(model)
    return labels


def settings_parts(settings_key: Any) -> tuple[str, str]:
    """``(measurement settings, export settings)`` of a settings segment (export: "" for a
    model measured as it is)."""
    parts = str(settings_key or "").split("__", 1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def version_key(version: str) -> tuple:
    """Sort key of a version string: 1.9.0 < 1.20.1 < 1.31.1 (numbers compared as numbers)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in re.split(r"[.+-]", version))

