"""The dashboard's tables: cells formatted for reading, shown statuses and flags, sortable tables.

A number is shown readable (no e-notation, thousands separated, a change as ``+12.3%``) with
its value in ``data-v`` for sorting; a measured row's status cell names both its flags (``~
unstable · ! contended: cpu-wait``), never one hiding the other; every text is escaped
(:mod:`mlprof.report.site.escape`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlprof.measure.trust import (
    CONTENDED,
    CV_OUTLIER_DRIVEN,
    NOT_MEASURABLE,
    UNSTABLE,
    band_of,
    cv_text,
    row_not_measurable,
)
from mlprof.measure.trust import _causes_text as _causes_text
from mlprof.report.site.escape import esc, safe_href, state_class
from mlprof.report.site.svg import readable
from mlprof.results import records

#: columns of the results table; ``status`` is the shown status (:func:`shown_status`) and
#: ``change`` the change of the dashboard's statistic vs its baseline (:func:`baseline_of`)
TABLE_COLUMNS = ["model", "runtime", "runtime_version", "device", "threads", "precision",
                 "batch_size", "median_ms", "p16_ms", "p84_ms", "throughput", "cv",
                 "max_rel_error", "status", "version", "change"]
#: columns of results.csv: the table's, and what a script reading it needs besides
CSV_COLUMNS = [*TABLE_COLUMNS, "baseline", "label", "model_hash", "settings_key", "host",
               "timestamp", "error", "max_abs_error", "top1_agreement", "isa"]
#: column headers shown instead of the CSV names
HEADERS = {"runtime_version": "runtime version", "batch_size": "batch size",
           "median_ms": "median [ms]", "p16_ms": "p16 [ms]", "p84_ms": "p84 [ms]",
           "throughput": "throughput [events/s]", "cv": "CV", "first_version": "from version",
           "session_creation_ms": "session creation [ms]", "peak_rss_mb": "peak RSS [MB]",
           "settings_key": "settings", "cpu_model": "CPU", "min_duration": "min duration [s]",
           "git_commit": "git commit", records.MLPROF_VERSION: "mlprof", "change": "change",
           "n_results": "results", "worst": "largest change", "trend": "trend",
           "count": "count", "batch_sizes": "batch sizes", "where": "where",
           "n_alerts": "alerts", "max_rel_error": "error vs fp32"}
NUMERIC = {"threads", "batch_size", "median_ms", "fp32_ms", "p16_ms", "p84_ms", "throughput", "cv",
            "value", "baseline", "change", "z", "count", "n_results", "ok", "unstable",
            "contended", "failed", "worst", "n_alerts", "session_creation_ms", "peak_rss_mb",
            "max_rel_error"}
#: statuses of a result that was measured (the others are failures)
MEASURED = ("ok", "unstable", "contended")


def number(value: Any) -> float | None:
    """``value`` as a float; None when missing or not a number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if f != f else f


def flag(value: Any) -> bool:
    """A boolean column's value (True, "True", 1); missing and NaN are False."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    num = number(value)
    return bool(num) if num is not None else False


def shown_status(row: Mapping[str, Any]) -> str:
    """The status a result is shown with: a measurement that was ``contended`` (other
    processes used the CPUs) or ``unstable`` (CV above 10 %) says so instead of ``ok``: its
    mean and spread should not be quoted. Failures keep their own status."""
    status = row.get("status")
    if status != "ok":
        return status if isinstance(status, str) else str(status)
    if flag(row.get("contended")):
        return "contended"
    if flag(row.get("unstable")):
        return "unstable"
    return "ok"


def flag_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many measured rows (:data:`MEASURED` statuses) are ``ok`` (no flag), ``unstable``
    and ``contended``: each flag counted on its own, so that a row with both counts in both,
    as its status cell shows both (:func:`status_html`); the card said "0 unstable, 8
    contended" while every row had a CV of thousands of per cent, the contended status hiding
    the other."""
    measured = [r for r in rows if r.get("status") in MEASURED]
    return {"ok": sum(1 for r in measured if not (flag(r.get("unstable"))
                                                 or flag(r.get("contended")))),
            "unstable": sum(1 for r in measured if flag(r.get("unstable"))),
            "contended": sum(1 for r in measured if flag(r.get("contended")))}


def status_html(row: Mapping[str, Any]) -> str | None:
    """The status cell of a measured row, escaped: both flags, never one hiding the other, a
    contended one with its causes (``~ unstable · ! contended: cpu-wait``); None for a row
    that is not measured (a failure keeps its status text)."""
    if row.get("status") not in MEASURED:
        return None
    parts = []
    if flag(row.get("unstable")):
        parts.append(f"{UNSTABLE} unstable")
    if flag(row.get("contended")):
        parts.append(f"{CONTENDED} contended: {_causes_text(row)}")
    return esc(" · ".join(parts) or "ok")


def _cv_html(row: Mapping[str, Any]) -> str | None:
    """A CV above 100 % as outlier-driven (:func:`mlprof.measure.trust.cv_text`)."""
    cv = number(row.get("cv"))
    if cv is None or cv <= CV_OUTLIER_DRIVEN:
        return None
    return (f'<span title="a few calls far slower than the rest drive the standard '
            f'deviation; the median ignores them">{esc(cv_text(cv))}</span>')


def _median_html(row: Mapping[str, Any]) -> str | None:
    """:data:`~mlprof.measure.trust.NOT_MEASURABLE` instead of a contended median whose calls
    spread more than :data:`~mlprof.measure.trust.BAND_MAX_RATIO` (min to p95)."""
    if not row_not_measurable(row):
        return None
    band = band_of(row)
    tip = (f"calls from {readable(band[0], 3)} to {readable(band[1], 3)} ms (min to p95) "
           "while the machine was disturbed" if band else "")
    return f'<span title="{esc(tip)}">{esc(NOT_MEASURABLE)}</span>'


#: cells drawn from their whole row (in every table that has the column; None: as usual)
ROW_CELLS = {"status": status_html, "cv": _cv_html, "median_ms": _median_html}


def fmt(col: str, value: Any) -> str:
    """Display text of a table cell: numbers readable (no e-notation, thousands separated),
    anything that should be a number and is not: as it is (a version "1.30" stays text)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    num = number(value)
    numeric_value = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool)
    if num is None or not (col in NUMERIC or numeric_value):
        return str(value)
    if col in ("change", "worst"):
        return f"{100 * num:+.1f}%"
    if col == "max_rel_error" and num == float("inf"):  # an answer (outputs overflow, NaN)
        return "inf"
    if col in ("cv", "max_rel_error"):  # max_rel_error: of the output's largest fp32 value
        return f"{100 * num:.1f}%" if col == "cv" or num >= 1e-3 else f"{100 * num:.2g}%"
    if col == "z":
        return f"{num:+.1f}"
    if col == "batch_size" and num.is_integer():
        return str(int(num))
    if col in ("threads", "count", "n_results", "ok", "unstable", "contended", "failed",
               "n_alerts") and num.is_integer():
        return f"{int(num):,}"
    return readable(num, 4)


def precision_of(settings_key: Any) -> str:
    """The precision a result's settings segment names (fp32 when none)."""
    from mlprof.results.layout import parse_settings_segment

    try:
        parsed = parse_settings_segment(str(settings_key or ""))
    except ValueError:
        return "fp32"
    key = parsed.get("precision")
    export = parsed.get("export")
    return key.precision if key is not None else export.precision if export else "fp32"


def precision_text(precision: Any) -> str:
    """`` · int8-dynamic`` on a card (escaped), nothing at fp32 or when not known."""
    text = str(precision or "")
    return f" &middot; {esc(text)}" if text and text not in ("fp32", "nan", "None") else ""


def html_cell(col: str, value: Any, link: str | None = None, *, worse_up: bool = True,
          raw: str | None = None) -> str:
    """One ``<td>``; ``raw`` is trusted HTML made here (a sparkline) instead of the value."""
    text = raw if raw is not None else esc(fmt(col, value))
    href = safe_href(link) if link else None
    if href:
        text = f'<a href="{href}">{text}</a>'
    cls = []
    attrs = ""
    if col in NUMERIC:
        cls.append("num")
        num = number(value)
        attrs = ' data-v="NaN"' if num is None else f' data-v="{num!r}"'
        if col in ("change", "worst") and num is not None and abs(num) >= 0.05:
            cls.append("worse" if (num > 0) == worse_up else "better")
    if col in ("status", "kind"):
        cls.append(state_class(value))
    if col in ("error", "message", "description"):
        cls.append("msg")
    if col in ("path", "settings_key", "file"):
        cls.append("path")
    if col == "model":
        cls.append("model")
    c = f' class="{" ".join(cls)}"' if cls else ""
    return f"<td{c}{attrs}>{text}</td>"


def table_section(section_id: str, heading: str, intro: str, rows: Sequence[Mapping],
                  cols: Sequence[str], headers: Mapping[str, str], model_link: Any = None) -> str:
    """A dashboard section of one table (load points, precisions): ``<section id>``, the
    ``heading`` and ``intro`` (trusted HTML), the table of ``rows`` with ``cols``, led by a
    ``model`` column linking to each model's page when ``model_link`` is given (the index
    page) and without it on a model's own page."""
    cols = (["model"] if model_link else []) + list(cols)
    return (f'<section id="{section_id}"><h2>{heading}</h2><p>{intro}</p>'
            + html_table(rows, cols, table_id=f"{section_id}-table", headers=headers,
                         links={"model": model_link} if model_link else None)
            + "</section>")


def html_table(rows: Sequence[Mapping], cols: Sequence[str], *, table_id: str,
           sortable: bool = True, headers: Mapping[str, str] | None = None,
           links: Mapping[str, Any] | None = None, raw: Mapping[str, Any] | None = None,
           row_attrs: Any = None, table_class: str = "", empty: str = "none",
           worse_up: bool = True, titles: Mapping[str, str] | None = None) -> str:
    """A table of ``rows``; ``links[col](row)`` a link for a cell, ``raw[col](row)`` trusted
    HTML for it, ``row_attrs(i, row)`` trusted attributes (and class) of a row."""
    if not rows:
        return f'<p class="none" id="{table_id}-empty">{esc(empty)}</p>'
    headers = {**HEADERS, **(headers or {})}
    links, raw, titles = links or {}, raw or {}, titles or {}
    head = "".join(
        f"<th{' title=' + chr(34) + esc(titles[c]) + chr(34) if c in titles else ''}>"
        f"{esc(headers.get(c, c))}</th>" for c in cols)
    body = []
    for i, r in enumerate(rows):
        cells = "".join(html_cell(c, r.get(c), links[c](r) if c in links else None,
                              worse_up=worse_up, raw=raw[c](r) if c in raw else
                              ROW_CELLS[c](r) if c in ROW_CELLS else None)
                        for c in cols)
        attrs = row_attrs(i, r) if row_attrs else ""
        body.append(f"<tr{attrs}>{cells}</tr>")
    classes = " ".join(c for c in ("sortable" if sortable else "", table_class) if c)
    cls = f' class="{classes}"' if classes else ""
    return (f'<div class="scroll"><table id="{table_id}"{cls}><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')

