"""The load section of the dashboard: MeasureLoad's answers per load point.

Streams or a server's Poisson arrivals: the chosen operating point's throughput and p99, the
bound, the contended flag with its causes, and the answer in one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mlprof.measure.trust import CONTENDED, NOT_MEASURABLE, row_not_measurable
from mlprof.measure.trust import _causes_text as _causes_text
from mlprof.report.site.table import flag, table_section

LOAD_COLUMNS = ["runtime", "scenario", "config", "events_per_s", "p99_ms", "latency_bound_ms",
                "flags", "answer", "host", "version"]
_LOAD_HEADERS = {"config": "configuration", "events_per_s": "events/s", "p99_ms": "p99 [ms]",
                 "latency_bound_ms": "bound [ms]", "answer": "the answer"}


def current_loads(rows: Sequence[Mapping[str, Any]],
                  versions: Sequence[str] | None = None) -> list[dict]:
    """The MeasureLoad rows to show (:func:`mlprof.report.collect.collect_loads`): those of
    ``versions`` when given, else the newest record of each model, runtime, settings and load
    point (:func:`mlprof.report.load.newest_loads`), each with its ``flags``."""
    from mlprof.report.load import newest_loads

    out = newest_loads(rows, versions)
    for r in out:
        r["flags"] = (f"{CONTENDED} contended: {_causes_text(r)}" if flag(r.get("contended"))
                      else "")
        if row_not_measurable(r):
            r["events_per_s"] = NOT_MEASURABLE
    return out


def loads_html(rows: Sequence[Mapping[str, Any]], model_link=None,
                section_id: str = "load") -> str:
    """MeasureLoad's answers: per load point (a number of streams, or a server search or rate)
    the chosen operating point's throughput and p99, and the answer in one line (empty without
    records)."""
    if not rows:
        return ""
    contended = sum(1 for r in rows if r.get("contended"))
    n = len(rows)
    heading = (f'Load ({n:,} load point{"s" if n != 1 else ""}'
               + (f"; {contended:,} contended" if contended else "") + ")")
    intro = ("MeasureLoad: concurrent streams (throughput and latency per call), or a server "
             "with Poisson arrivals (the highest rate whose percentile meets the bound). A "
             "contended point shared the CPUs with other processes: its answer may be low.")
    return table_section(section_id, heading, intro, rows, LOAD_COLUMNS, _LOAD_HEADERS,
                         model_link)


