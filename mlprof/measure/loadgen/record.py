"""A load branch's result and its files: the CSV rows, the points, the provenance; written
and read back checked.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.loadgen.session import _Model
from mlprof.runtimes.base import Compiled, compiled_fields


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


def _provenance(m: _Model, load: dict[str, Any],
                compiles: Sequence[Compiled | None] | None = None) -> dict[str, Any]:
    """The load record's header and ``load``, with the compiles of the sessions (``m``'s, or
    ``compiles``: those of sessions in processes of their own)."""
    from mlprof.measure.harness import events_in_call
    from mlprof.measure.provenance import measurement_header

    s = m.settings
    spec = m.resolved.spec
    header = measurement_header(
        started=_dt.datetime.now(_dt.timezone.utc),
        runtime=s.runtime, runtime_version=m.runtime_cls.version(), device=s.device,
        threads=s.threads, runtime_settings=m.sessions[0].info() if m.sessions else {},
        precision={"precision": s.precision},
        model={"name": spec.name, "label": spec.label, "spec_file": spec.spec_file,
               "file": spec.file, "content_hash": spec.content_hash},
        settings=asdict(s), batch_size=s.batch_size,
        events_per_call=events_in_call(s.batch_size, m.resolved.inputs))
    if compiles is None:
        compiles = [rt.compile_record for rt in m.sessions]
    return {**header.to_json(), "load": load, **compiled_fields(compiles)}


def write_load(result: LoadResult, paths: Mapping[str, str], **extra: Any) -> None:
    """The CSV, then the record (provenance, ``points`` and ``extra``), each atomically."""
    from mlprof.results import records
    from mlprof.util import write_json_atomic, write_text_atomic

    write_text_atomic(paths["csv"], result.csv_text())
    write_json_atomic(paths["json"], records.stamp(
        {**result.provenance, "points": result.points, **extra}, "load"))


def read_load(json_path: str) -> dict[str, Any]:
    """A load record, checked: a JSON object of at most the record size whose every field
    :class:`mlprof.results.records.LoadRecord` checks (type and range), of a format this code
    reads, as JSON of this format (an older record upgraded); a one-line
    :class:`~mlprof.errors.CorruptResult` naming the file and the field."""
    from mlprof import ingest
    from mlprof.errors import CorruptResult
    from mlprof.results import records

    try:
        rec = ingest.load_json(json_path)
    except MLProfError as e:
        raise CorruptResult(e.message, json_path) from None
    return records.LoadRecord.from_json(rec, json_path).to_json()
