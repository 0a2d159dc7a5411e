"""A load branch's result and its files: the CSV rows, the points, the provenance; written
and read back checked.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.loadgen.session import _Model
from mlprof.measure.loadgen.settings import MAX_RATE, POINT_FIELDS, SCENARIOS


@dataclass
class LoadResult:
    """One MeasureLoad branch: the rows of its CSV, the points' summaries and the provenance."""

    columns: tuple[str, ...]
    rows: dict[str, np.ndarray]
    points: list[dict[str, Any]]
    provenance: dict[str, Any] = field(default_factory=dict)

    def csv_text(self) -> str:
        """The rows as CSV text (times in ms with microsecond resolution)."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(self.columns)
        cols = [self.rows[c] for c in self.columns]
        for values in zip(*cols, strict=True):
            w.writerow([f"{v:.4f}" if isinstance(v, float | np.floating) else int(v)
                        for v in values])
        return out.getvalue()


def _provenance(m: _Model, load: dict[str, Any]) -> dict[str, Any]:
    from mlprof.measure.harness import _library_versions, events_in_call
    from mlprof.measure.isolate import starter_pid
    from mlprof.measure.sysinfo import peak_rss_mb, system_info
    from mlprof.util import git_commit
    from mlprof.version import __version__

    s = m.settings
    spec = m.resolved.spec
    return {
        "mlprof_version": __version__, "git_commit": git_commit(),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        **system_info(),
        "runtime": s.runtime, "runtime_version": m.runtime_cls.version(),
        "device": s.device, "threads": s.threads,
        "runtime_settings": m.sessions[0].info() if m.sessions else {},
        "precision": {"precision": s.precision},
        "model": {"name": spec.name, "label": spec.label, "spec_file": spec.spec_file,
                  "file": spec.file, "content_hash": spec.content_hash},
        "settings": asdict(s), "batch_size": s.batch_size,
        "events_per_call": events_in_call(s.batch_size, m.resolved.inputs),
        "load": load, "peak_rss_mb": peak_rss_mb(), "pid": os.getpid(),
        "parent_pid": starter_pid(), "library_versions": _library_versions(),
    }


def write_load(result: LoadResult, paths: Mapping[str, str], **extra: Any) -> None:
    """The CSV, then the record (provenance, ``points`` and ``extra``), each atomically."""
    from mlprof.results import records
    from mlprof.util import write_json_atomic, write_text_atomic

    write_text_atomic(paths["csv"], result.csv_text())
    write_json_atomic(paths["json"], records.stamp(
        {**result.provenance, "points": result.points, **extra}, "load"))


def read_load(json_path: str) -> dict[str, Any]:
    """A load record, checked: a JSON object of at most the record size, of a format this code
    reads, whose ``points`` are objects with finite, non-negative numbers where numbers belong;
    a one-line :class:`~mlprof.errors.CorruptResult` naming the file and the field."""
    from mlprof import ingest
    from mlprof.errors import CorruptResult
    from mlprof.results import records

    try:
        rec = ingest.load_json(json_path)
    except MLProfError as e:
        raise CorruptResult(e.message, json_path) from None
    if not isinstance(rec, dict):
        raise CorruptResult("not a JSON object", json_path)
    records.format_version(rec, json_path)
    if rec.get("record") != "load":
        raise CorruptResult(f"record is {rec.get('record')!r}, not 'load'", json_path, "record")
    load = rec.get("load")
    if not isinstance(load, dict) or load.get("scenario") not in SCENARIOS:
        raise CorruptResult("no scenario", json_path, "load.scenario")
    points = rec.get("points")
    if not isinstance(points, list):
        raise CorruptResult("not a list", json_path, "points")
    for i, p in enumerate(points):
        if not isinstance(p, dict):
            raise CorruptResult("not an object", json_path, f"points[{i}]")
        for k in (*POINT_FIELDS, "rate", "streams", "threads", "percentile_ms", "bound_ms",
                  "busy"):
            if k not in p:
                if k in POINT_FIELDS or k == "streams":
                    raise CorruptResult("missing", json_path, f"points[{i}].{k}")
                continue
            v = p[k]
            if v is None and k not in ("events_per_s", "streams"):
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or \
                    not math.isfinite(v) or v < 0 or v > 1e12:
                raise CorruptResult(f"not a finite number >= 0: {v!r}", json_path,
                                    f"points[{i}].{k}")
    search_ = load.get("search")
    if search_ is not None:  # which point is the answer: Report and the plots mark it
        if not isinstance(search_, dict):
            raise CorruptResult("not an object", json_path, "load.search")
        best = search_.get("best_rate")
        if best is not None and (isinstance(best, bool) or not isinstance(best, int | float)
                                 or not math.isfinite(best) or not 0 < best <= MAX_RATE):
            raise CorruptResult(f"not a rate: {best!r}", json_path, "load.search.best_rate")
        at = search_.get("best_point")
        if at is not None and (isinstance(at, bool) or not isinstance(at, int)
                               or not 0 <= at < len(points)):
            raise CorruptResult(f"not the index of one of the {len(points)} points: {at!r}",
                                json_path, "load.search.best_point")
    return rec
