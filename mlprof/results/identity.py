"""What makes two results the same result, and what makes them one series: defined here once,
for the Report, the history, the alerts and the dashboard.

- A **result** (:data:`RESULT_IDENTITY`) is one measurement: a model (name and content hash)
  on a runtime (name and version) with one set of settings, of one version (run), batch size
  and host. The same result in two stores (a mirror copy) is one row.
- A **series** (:data:`SERIES_KEY`) is what a nightly follows over time: one model (by name
  and file) on one runtime (by name) with one set of settings on one host, per batch size.
  The runtime's version and the model's content hash are properties of each *point*: upgrading
  ONNX Runtime or editing the model continues the series, and the change is an **event** on it
  (:func:`events`), drawn on the history and named in an alert that coincides with it
  ("onnxruntime 1.31.1 -> 1.32.0"), as asv and Conbench keep one series per benchmark and mark
  where the code under test changed. Before, the version and hash were in the key, so an
  upgrade started a new series without history and no alert could ever fire on it.
- Where one run measured several versions of a runtime (or several contents of a model) side by
  side (``--runtime-versions``), those are not a history: the series is split by them
  (``variant``), as before.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: what makes two rows the same result (the same result in two stores, e.g. a mirror, is one)
RESULT_IDENTITY = ["model", "model_hash", "runtime", "runtime_version", "device",
                   "settings_key", "version", "batch_size", "host"]

#: the properties of a point whose change along a series is an event, and how they are named;
#: ``compile_mode``: how a compiling runtime compiled (torch-compile's AOTInductor package or
#: torch.compile: a warm call of linear.py 0.0024 ms against 0.034 ms, the same model and
#: runtime version, so a history crossing the change steps without any other event)
EVENT_FIELDS = ("runtime_version", "model_hash", "compile_mode")

#: what must be equal for two results to be in one series (``variant``: see :func:`assign`)
SERIES_KEY = ["model", "model_file", "runtime", "device", "host", "cpu_model", "threads",
              "settings_key", "variant", "batch_size"]

#: a series but the batch size: one configuration, drawn as one history plot
GROUP_KEY = [k for k in SERIES_KEY if k != "batch_size"]

#: the series key as far as a failure record knows it (its path and model file; no host, CPU
#: or threads but in the settings): the dashboard's current result of a series is the latest
#: row of this key, a success or a failure
LATEST_KEY = [k for k in SERIES_KEY if k not in ("host", "cpu_model", "threads")]


def norm(value: Any) -> str:
    """A key part: missing (None, NaN) -> "", whole floats as integers (pandas turns integers
    with gaps into floats, numpy's included), anything else as text."""
    if value is None:
        return ""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        f = float(value)  # a Python or numpy float
        if f != f:
            return ""
        if f.is_integer():
            return str(int(f))
    return str(value)


def assign(report: Any) -> Any:
    """``report`` (a DataFrame of report rows) with the series' ``variant`` column filled.

    ``variant`` is "" unless one run (``version``) holds several runtime versions or model
    hashes of one series: then each of them is a series of its own (``runtime_version=...``,
    ``model_hash=...``). Only measured rows (``status`` ``ok``) decide a split: a failure is no
    point of a series. A frame that has ``variant`` already (assigned before, or a part of
    such a frame) is returned as it is, so that the readers of one report (the dashboard calls
    the history, the alerts and the current results on it) split it once and alike. A frame
    without the key's columns gets them empty.
    """
    if "variant" in report.columns:
        return report
    df = report.copy()
    for col in [*SERIES_KEY, *EVENT_FIELDS, "version"]:
        if col not in df.columns:
            df[col] = None
    df["variant"] = ""
    if df.empty:
        return df
    base = [k for k in SERIES_KEY if k != "variant"]
    keys = df[base].map(norm).agg("\x1f".join, axis=1)
    measured = df["status"] == "ok" if "status" in df.columns else keys == keys
    runs = df["version"].map(norm)
    for fld in EVENT_FIELDS:
        vals = df[fld].map(norm)
        per_run = vals[measured].groupby([keys[measured], runs[measured]]).nunique()
        split = {k for (k, _), n in per_run.items() if n > 1}
        if split:
            mask = keys.isin(split)
            df.loc[mask, "variant"] = (df.loc[mask, "variant"] + f"{fld}=" + vals[mask] + ";")
    df["variant"] = df["variant"].str.rstrip(";")
    return df


def key_of(row: Mapping[str, Any], key: Sequence[str] = SERIES_KEY) -> tuple[str, ...]:
    """A row's key (default: its series), normalized: missing -> "", whole floats as
    integers (pandas turns integers with gaps into floats), anything else as text."""
    return tuple(norm(row.get(k)) for k in key)


@dataclass(frozen=True)
class Event:
    """A change of a point property along a series: at point ``index`` (the first point
    with the new value)."""

    index: int
    field: str
    before: str
    after: str
    runtime: str = ""

    @property
    def text(self) -> str:
        """``onnxruntime 1.31.1 -> 1.32.0``, ``model changed (5af07083 -> 1b2c3d4e)``,
        ``torch-compile compiled by jit (torch.compile) -> aot (...)``."""
        if self.field == "runtime_version":
            return f"{self.runtime or 'runtime'} {self.before} -> {self.after}"
        if self.field == "compile_mode":
            return f"{self.runtime or 'runtime'} compiled by {self.before} -> {self.after}"
        return f"model changed ({self.before} -> {self.after})"


def events(points: Any, runtime: str = "") -> list[Event]:
    """The events of one series' points (a frame or records in time order, with
    :data:`EVENT_FIELDS` columns): each change of a runtime version, model hash or compile
    mode from one point to the next (unknown values, e.g. of a damaged or old record, are
    skipped)."""
    rows = points.to_dict("records") if hasattr(points, "to_dict") else list(points)
    out: list[Event] = []
    last: dict[str, str] = {}
    for i, row in enumerate(rows):
        for fld in EVENT_FIELDS:
            value = norm(row.get(fld))
            if not value:
                continue
            if fld in last and last[fld] != value:
                out.append(Event(i, fld, last[fld], value, runtime or norm(row.get("runtime"))))
            last[fld] = value
    return out


def events_between(found: Sequence[Event], start: int, end: int) -> list[Event]:
    """The events at points ``start`` .. ``end`` (inclusive): those an alert from ``start`` to
    ``end`` coincides with."""
    return [e for e in found if start <= e.index <= end]
