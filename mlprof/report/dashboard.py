"""A static HTML dashboard over a report: plain files that open from ``file://``.

No server, no CDN, no ``fetch``: every table is in the HTML, the small charts are inline SVG,
the larger plots PNG (and SVG) files next to the pages, and the little JavaScript there is
(sorting, filtering) is inline. Pages:

- ``index.html``, the front page: counts, experiments and their status, regressions and
  improvements (each with its trend and a link to its history), a trend line per series that
  changed, failures grouped by message with counts, and the results: a table of models (each
  with its counts and worst change) and a filterable, sortable table of every current result
  with its change vs its baseline (also ``results.csv``);
- ``models/<model>__<hash>.html``, titled by the model's label: latency, throughput and
  speed-up vs batch size (speed-ups compare like with like on the measurement settings, so a
  script measured through its ONNX export is compared too; the export is in the caption),
  latency distributions, the history of every configuration (a panel per batch size, the PNG
  history plot where an alert was raised), alerts, results and provenance.

:mod:`mlprof.report.dashboard_archive` publishes each site under ``$MLP_STORE/dashboard/`` with an
index of all nights and links between consecutive ones.

Whatever comes from the stores (names, versions, hosts, messages, statuses) is escaped text;
a status or alert kind only picks one of :data:`STATE_CLASSES`; links point only at the site's
own files (:data:`_SAFE_HREF`).
"""

from __future__ import annotations

import datetime
import html
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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
from mlprof.report.alerts import TRIM, AlertRule
from mlprof.report.dashboard_svg import (
    SPARK_CSS,
    XYCurve,
    box_plot,
    history_panel,
    line_chart,
    readable,
    sparkline,
)
from mlprof.report.history import (
    HIGHER_IS_BETTER,
    NoiseFloors,
    alerts_table,
    history_unit,
    min_detectable_lines,
)
from mlprof.report.nightly import CONFIRM_SUFFIX
from mlprof.results import identity, layout, records
from mlprof.results.identity import SERIES_KEY
from mlprof.runtimes import DEFAULT_RUNTIME
from mlprof.util import short_hash

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
_NUMERIC = {"threads", "batch_size", "median_ms", "fp32_ms", "p16_ms", "p84_ms", "throughput", "cv",
            "value", "baseline", "change", "z", "count", "n_results", "ok", "unstable",
            "contended", "failed", "worst", "n_alerts", "session_creation_ms", "peak_rss_mb",
            "max_rel_error"}
#: a change at least this large (either way) puts a series among the front page's trends
CHANGE_SHOWN = 0.10
#: points of a trend line
TREND_POINTS = 30
#: at most this many history plots (PNG, :mod:`mlprof.plotting.history`) per dashboard: one per
#: configuration with an alert, new alerts first (each costs about a second to draw; the SVG
#: panels show every configuration anyway)
MAX_HISTORY_PNGS = 12
#: statuses of a result that was measured (the others are failures)
MEASURED = ("ok", "unstable", "contended")

#: statuses and alert kinds that have a style; the CSS class of any other value (a store file
#: may hold anything) is ``st-other``: no text from a store ever becomes a class name
STATE_CLASSES = {s: f"st-{s}" for s in (
    "ok", "unstable", "contended", "failed", "timeout", "oom", "corrupt", "error",
    "needs-network", "needs-package", "partial", "inactive", "regression", "improvement")}
#: what a link may point at: a file of the site, as :mod:`mlprof.results.layout` names them, with an
#: anchor of the dashboard's own
_SAFE_HREF = re.compile(r"(?:\.\./)?(?:models/|img/)?[A-Za-z0-9_+-][A-Za-z0-9._+-]*"
                        r"(?:#[A-Za-z0-9_-]+)?")

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:12px 24px}header h1{margin:0;font-size:1.4em}
header .meta{color:#c7cbd4;font-size:.85em;margin-top:4px}header a{color:#9cc3ff}
nav.nights{font-size:.9em;margin-top:6px;color:#c7cbd4}nav.nights a{margin-right:14px}
main{padding:16px 24px;max-width:1500px}
section{background:#fff;border:1px solid #e1e4ea;border-radius:6px;padding:12px 16px;
margin-bottom:16px}
h2{font-size:1.15em;margin:0 0 10px}h3{font-size:1em;margin:14px 0 6px}
table{border-collapse:collapse;width:100%;font-size:.86em}
th,td{border-bottom:1px solid #e8eaef;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f5;position:sticky;top:0;z-index:1}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" \\25B2"}
table.sortable th[aria-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.st-ok{color:#1a7f37}
.st-unstable{color:#7a4d00;background:#fff1c2;font-weight:600}
.st-contended{color:#5a2d91;background:#efe6fb;font-weight:600}
.st-corrupt{color:#fff;background:#7b1c2e;font-weight:600}
.st-failed,.st-timeout,.st-oom,.st-error,.st-regression{color:#c62828;font-weight:600}
.st-needs-network,.st-needs-package{color:#0b5cad;font-weight:600}
.st-improvement{color:#1a7f37;font-weight:600}
.st-inactive,.st-partial,.st-other{color:#9a6700;font-weight:600}
.worse{color:#c62828;font-weight:600}.better{color:#1a7f37;font-weight:600}
.msg{font-family:ui-monospace,monospace;font-size:.92em;white-space:pre-wrap;
word-break:break-word}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plots figure{margin:0;flex:1 1 440px;
max-width:640px}
.plots img{width:100%;border:1px solid #e1e4ea}figcaption{font-size:.85em;color:#555}
.none{color:#666;font-style:italic}.scroll{overflow-x:auto}
.tall{max-height:80vh;overflow:auto}
p.path{font-family:ui-monospace,monospace;font-size:.8em;color:#555;margin:0 0 4px}
td.path{font-family:ui-monospace,monospace;font-size:.85em;word-break:break-all;min-width:20em}
.tiles{display:flex;flex-wrap:wrap;gap:10px}.tile{border:1px solid #e1e4ea;border-radius:6px;
padding:8px 14px;min-width:9em;background:#fff}.tile b{display:block;font-size:1.5em}
.tile.bad b{color:#c62828}.tile.warn b{color:#9a6700}.tile.good b{color:#1a7f37}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:8px}
.card{display:block;border:1px solid #e1e4ea;border-radius:5px;padding:6px 8px;
text-decoration:none;color:inherit;font-size:.82em}.card:hover{border-color:#0072b2}
.card .what{overflow-wrap:anywhere}.card svg{display:block;max-width:100%}
.card.worse{border:2px solid #c62828;color:inherit;font-weight:normal}
.card.better{border:2px solid #1a7f37;color:inherit;font-weight:normal}
#trend-cards.changed-only .card[data-c="0"]{display:none}
.controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:6px 0 8px}
.controls input[type=search]{min-width:22em;padding:4px 6px}
#results-table.grouped tr.gstart td{border-top:2px solid #9aa3b2}
#results-table.grouped tr:not(.gstart) td.model a{color:#8b93a1}
.panels{display:flex;flex-wrap:wrap;gap:4px}.panel{border:2px solid transparent;
border-radius:4px}.panel:target{border-color:#c62828;background:#fff5f5}
figure:target{outline:3px solid #c62828}
.cfg figure{margin:6px 0;max-width:1100px}.cfg figure img{width:100%;height:auto;
border:1px solid #e1e4ea}
svg text.tick{font-size:10px;fill:#4a5160}svg text.ttl{font-size:11px;font-weight:600;
fill:#1d2330}
details summary{cursor:pointer;color:#0b5cad}
button.link{border:0;background:none;color:#0b5cad;cursor:pointer;padding:0;font:inherit}
"""

_JS = """
(function () {
  var tc = document.getElementById("trends-changed");
  if (tc) {
    tc.addEventListener("change", function () {
      document.getElementById("trend-cards").classList.toggle("changed-only", tc.checked);
    });
  }
  function key(row, col) {
    var cell = row.cells[col];
    if (!cell) { return ""; }
    var v = cell.getAttribute("data-v");
    if (v !== null) { var f = parseFloat(v); return isNaN(f) ? Infinity : f; }
    return cell.textContent.trim().toLowerCase();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        table.classList.remove("grouped");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a, col), y = key(b, col);
          if (x === y) { return 0; }
          return (x < y ? -1 : 1) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var table = document.getElementById("results-table");
  var q = document.getElementById("filter");
  if (!table || !q) { return; }
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var text = rows.map(function (r) { return r.textContent.toLowerCase(); });
  var status = document.getElementById("status-filter");
  var changed = document.getElementById("changed-only");
  var count = document.getElementById("filter-count");
  function apply() {
    var terms = q.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var s = status.value, shown = 0;
    rows.forEach(function (r, i) {
      var ok = terms.every(function (w) {
        if (w.indexOf("model=") === 0) {
          return (r.getAttribute("data-m") || "").toLowerCase() === w.slice(6);
        }
        return text[i].indexOf(w) >= 0;
      });
      var st = r.getAttribute("data-s");
      if (ok && s === "failures") { ok = ["ok", "unstable", "contended"].indexOf(st) < 0; }
      else if (ok && s) {
        ok = st === s || (r.getAttribute("data-f") || "").split(" ").indexOf(s) >= 0;
      }
      if (ok && changed.checked) { ok = r.getAttribute("data-c") === "1"; }
      r.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " results shown";
  }
  q.addEventListener("input", apply);
  status.addEventListener("change", apply);
  changed.addEventListener("change", apply);
  document.querySelectorAll("button[data-model]").forEach(function (b) {
    b.addEventListener("click", function () {
      q.value = "model=" + b.getAttribute("data-model");
      apply();
      table.scrollIntoView();
    });
  });
  var regroup = document.getElementById("regroup");
  regroup.addEventListener("click", function () {
    var body = table.tBodies[0];
    rows.slice().sort(function (a, b) {
      return parseInt(a.getAttribute("data-i"), 10) - parseInt(b.getAttribute("data-i"), 10);
    }).forEach(function (r) { body.appendChild(r); });
    table.classList.add("grouped");
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute("aria-sort");
    });
  });
  apply();
})();
"""


def _esc(value: Any) -> str:
    """``value`` as HTML text or attribute value (``&<>"'`` escaped; None and NaN: "")."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return html.escape(str(value), quote=True)


def _href(link: str) -> str | None:
    """``link`` escaped for ``href``/``src``, or None unless it is a file name of the site."""
    return html.escape(link, quote=True) if _SAFE_HREF.fullmatch(link) else None


def state_class(value: Any) -> str:
    """The CSS class of a status or alert kind: one of :data:`STATE_CLASSES`, else
    ``st-other``."""
    return STATE_CLASSES.get(value, "st-other") if isinstance(value, str) else "st-other"


def _number(value: Any) -> float | None:
    """``value`` as a float; None when missing or not a number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if f != f else f


def _flag(value: Any) -> bool:
    """A boolean column's value (True, "True", 1); missing and NaN are False."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    num = _number(value)
    return bool(num) if num is not None else False


def shown_status(row: Mapping[str, Any]) -> str:
    """The status a result is shown with: a measurement that was ``contended`` (other
    processes used the CPUs) or ``unstable`` (CV above 10 %) says so instead of ``ok``: its
    mean and spread should not be quoted. Failures keep their own status."""
    status = row.get("status")
    if status != "ok":
        return status if isinstance(status, str) else str(status)
    if _flag(row.get("contended")):
        return "contended"
    if _flag(row.get("unstable")):
        return "unstable"
    return "ok"


def flag_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many measured rows (:data:`MEASURED` statuses) are ``ok`` (no flag), ``unstable``
    and ``contended``: each flag counted on its own, so that a row with both counts in both,
    as its status cell shows both (:func:`status_html`); the card said "0 unstable, 8
    contended" while every row had a CV of thousands of per cent, the contended status hiding
    the other."""
    measured = [r for r in rows if r.get("status") in MEASURED]
    return {"ok": sum(1 for r in measured if not (_flag(r.get("unstable"))
                                                 or _flag(r.get("contended")))),
            "unstable": sum(1 for r in measured if _flag(r.get("unstable"))),
            "contended": sum(1 for r in measured if _flag(r.get("contended")))}


def status_html(row: Mapping[str, Any]) -> str | None:
    """The status cell of a measured row, escaped: both flags, never one hiding the other, a
    contended one with its causes (``~ unstable · ! contended: cpu-wait``); None for a row
    that is not measured (a failure keeps its status text)."""
    if row.get("status") not in MEASURED:
        return None
    parts = []
    if _flag(row.get("unstable")):
        parts.append(f"{UNSTABLE} unstable")
    if _flag(row.get("contended")):
        parts.append(f"{CONTENDED} contended: {_causes_text(row)}")
    return _esc(" · ".join(parts) or "ok")


def _cv_html(row: Mapping[str, Any]) -> str | None:
    """A CV above 100 % as outlier-driven (:func:`mlprof.measure.trust.cv_text`)."""
    cv = _number(row.get("cv"))
    if cv is None or cv <= CV_OUTLIER_DRIVEN:
        return None
    return (f'<span title="a few calls far slower than the rest drive the standard '
            f'deviation; the median ignores them">{_esc(cv_text(cv))}</span>')


def _median_html(row: Mapping[str, Any]) -> str | None:
    """:data:`~mlprof.measure.trust.NOT_MEASURABLE` instead of a contended median whose calls
    spread more than :data:`~mlprof.measure.trust.BAND_MAX_RATIO` (min to p95)."""
    if not row_not_measurable(row):
        return None
    band = band_of(row)
    tip = (f"calls from {readable(band[0], 3)} to {readable(band[1], 3)} ms (min to p95) "
           "while the machine was disturbed" if band else "")
    return f'<span title="{_esc(tip)}">{_esc(NOT_MEASURABLE)}</span>'


#: cells drawn from their whole row (in every table that has the column; None: as usual)
_ROW_CELLS = {"status": status_html, "cv": _cv_html, "median_ms": _median_html}


def _fmt(col: str, value: Any) -> str:
    """Display text of a table cell: numbers readable (no e-notation, thousands separated),
    anything that should be a number and is not: as it is (a version "1.30" stays text)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    num = _number(value)
    numeric_value = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool)
    if num is None or not (col in _NUMERIC or numeric_value):
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


def _precision_of(settings_key: Any) -> str:
    """The precision a result's settings segment names (fp32 when none)."""
    from mlprof.results.layout import parse_settings_segment

    try:
        parsed = parse_settings_segment(str(settings_key or ""))
    except ValueError:
        return "fp32"
    key = parsed.get("precision")
    export = parsed.get("export")
    return key.precision if key is not None else export.precision if export else "fp32"


def _precision_text(precision: Any) -> str:
    """`` · int8-dynamic`` on a card (escaped), nothing at fp32 or when not known."""
    text = str(precision or "")
    return f" &middot; {_esc(text)}" if text and text not in ("fp32", "nan", "None") else ""


def _cell(col: str, value: Any, link: str | None = None, *, worse_up: bool = True,
          raw: str | None = None) -> str:
    """One ``<td>``; ``raw`` is trusted HTML made here (a sparkline) instead of the value."""
    text = raw if raw is not None else _esc(_fmt(col, value))
    href = _href(link) if link else None
    if href:
        text = f'<a href="{href}">{text}</a>'
    cls = []
    attrs = ""
    if col in _NUMERIC:
        cls.append("num")
        num = _number(value)
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


def _table(rows: Sequence[Mapping], cols: Sequence[str], *, table_id: str,
           sortable: bool = True, headers: Mapping[str, str] | None = None,
           links: Mapping[str, Any] | None = None, raw: Mapping[str, Any] | None = None,
           row_attrs: Any = None, table_class: str = "", empty: str = "none",
           worse_up: bool = True, titles: Mapping[str, str] | None = None) -> str:
    """A table of ``rows``; ``links[col](row)`` a link for a cell, ``raw[col](row)`` trusted
    HTML for it, ``row_attrs(i, row)`` trusted attributes (and class) of a row."""
    if not rows:
        return f'<p class="none" id="{table_id}-empty">{_esc(empty)}</p>'
    headers = {**HEADERS, **(headers or {})}
    links, raw, titles = links or {}, raw or {}, titles or {}
    head = "".join(
        f"<th{' title=' + chr(34) + _esc(titles[c]) + chr(34) if c in titles else ''}>"
        f"{_esc(headers.get(c, c))}</th>" for c in cols)
    body = []
    for i, r in enumerate(rows):
        cells = "".join(_cell(c, r.get(c), links[c](r) if c in links else None,
                              worse_up=worse_up, raw=raw[c](r) if c in raw else
                              _ROW_CELLS[c](r) if c in _ROW_CELLS else None)
                        for c in cols)
        attrs = row_attrs(i, r) if row_attrs else ""
        body.append(f"<tr{attrs}>{cells}</tr>")
    classes = " ".join(c for c in ("sortable" if sortable else "", table_class) if c)
    cls = f' class="{classes}"' if classes else ""
    return (f'<div class="scroll"><table id="{table_id}"{cls}><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _page(title: str, meta: str, body: str, nav: str = "") -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_esc(title)}</title><style>{_CSS}{SPARK_CSS}</style></head><body>"
            f"<header><h1>{_esc(title)}</h1><div class=\"meta\">{meta}</div>"
            f'<nav class="nights" id="nights">{nav}</nav></header>'
            f"<main>{body}</main><script>{_JS}</script></body></html>\n")


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


# -- series: one configuration and batch size over time ---------------------------------------


#: a key part, normalized as every reader of results normalizes it
_norm = identity.norm


def series_key(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The :data:`~mlprof.results.identity.SERIES_KEY` of a row, normalized
    (:func:`mlprof.results.identity.key_of`)."""
    return identity.key_of(row)


def _base_version(version: str) -> str:
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


def build_series(report, statistic: str) -> dict[tuple[str, ...], Series]:
    """Every series of ``report``'s successful results (by timestamp), keyed by
    :func:`series_key`."""
    out: dict[tuple[str, ...], Series] = {}
    if report.empty:
        return out
    ok = identity.assign(report[report["status"] == "ok"])
    ok = ok.assign(_ts=ok["timestamp"].fillna("").astype(str)).sort_values("_ts",
                                                                          kind="stable")
    cols = [*SERIES_KEY, "runtime_version", "model_hash", "version", "_ts", statistic]
    n = len(SERIES_KEY)
    for rec in ok[cols].itertuples(index=False, name=None):
        value = _number(rec[-1])
        if value is None:
            continue
        s = out.setdefault(tuple(_norm(v) for v in rec[:n]), Series())
        s.runtime = str(rec[SERIES_KEY.index("runtime")])
        s.runtime_versions.append(_norm(rec[n]))
        s.model_hashes.append(_norm(rec[n + 1]))
        s.versions.append(str(rec[-3]))
        s.timestamps.append(rec[-2])
        s.values.append(value)
    return out


def baseline_of(s: Series, version: str, timestamp: str, window: int) -> float | None:
    """The baseline of a result: the alert rule's level (the 10 % trimmed mean) of up to
    ``window`` earlier results of its series, other nights only (a confirming re-measurement
    of the same night is no baseline). None without any."""
    night = _base_version(version)
    past = [v for ver, ts, v in zip(s.versions, s.timestamps, s.values, strict=True)
            if ts < timestamp and _base_version(ver) != night][-window:]
    if not past:
        return None
    arr = np.sort(np.asarray(past, dtype=float))
    k = int(TRIM * len(arr))
    return float(arr[k:len(arr) - k].mean())


def _cfg_id(key: tuple[str, ...]) -> str:
    """The anchor of a configuration (the series key without the batch size) on its page."""
    return short_hash(*key[:-1])


def _anchor(key: tuple[str, ...]) -> str:
    """The anchor of a series' history panel: ``h-<configuration>-bs<N>``."""
    return f"h-{_cfg_id(key)}-bs{layout.path_safe(key[-1], 12)}"


# -- failures ----------------------------------------------------------------------------------

_BS_TEXT = re.compile(r"(?<![A-Za-z])(batch[ _]size|bs)([ _=:]*)\d+", re.IGNORECASE)
_ABS_PATH = re.compile(r"(?<![\w.])/(?:[^\s/:'\"]+/)+([^\s/:'\"]+)")


def failure_message_key(message: str) -> str:
    """A failure's message with what differs between batch sizes and places taken out
    (``batch size 128`` -> ``batch size N``, ``/a/b/runtime_bs_8.csv`` -> ``runtime_bs_N.csv``):
    the same failure at several batch sizes or versions is one group."""
    text = _ABS_PATH.sub(lambda m: m.group(1), str(message or ""))
    return _BS_TEXT.sub(lambda m: f"{m.group(1)}{m.group(2)}N", text).strip()


def group_failures(failures: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Failures grouped by status, cause and message (:func:`failure_message_key`), largest
    group first. A damaged record (``corrupt``) is one group of its own: each names the file to
    repair. Each group has ``count``, ``status``, ``cause``, ``message`` (the first one's,
    unchanged), ``batch_sizes``, ``versions`` and ``rows``."""
    groups: dict[tuple, dict] = {}
    for i, r in enumerate(failures):
        status = r.get("status")
        status = status if isinstance(status, str) else str(status)
        message = str(r.get("error") if isinstance(r.get("error"), str) else "")
        cause = r.get("cause") if isinstance(r.get("cause"), str) else ""
        detail = r.get("cause_detail") if isinstance(r.get("cause_detail"), str) else ""
        if status == "corrupt":
            key: tuple = ("corrupt", i)
            cause = ""  # the status says it
        else:
            key = (status, cause, detail, failure_message_key(message))
        g = groups.setdefault(key, {"status": status, "cause": ": ".join(
            p for p in (cause, detail) if p), "message": message, "rows": []})
        g["rows"].append(r)
    out = []
    for g in groups.values():
        sizes = sorted({int(b) for b in (_number(r.get("batch_size")) for r in g["rows"])
                        if b is not None})
        g["count"] = len(g["rows"])
        g["batch_sizes"] = ", ".join(map(str, sizes))
        g["versions"] = sorted({str(r.get("version")) for r in g["rows"]
                                if r.get("version") is not None})
        out.append(g)
    out.sort(key=lambda g: (-g["count"], g["status"], g["message"]))
    return out


# -- the site ----------------------------------------------------------------------------------


def _model_labels(current) -> dict[tuple[str, str], str]:
    """``{(model, hash): label}``: the label of the model the user named (the report's
    ``label``, from :func:`mlprof.results.records.model_identity`: a YAML's label, a script
    model's name; never an export's spec, which is called ``model``), else the model's name."""
    labels: dict[tuple[str, str], str] = {}
    ok = current[current["status"] == "ok"]
    for (model, mhash), g in ok.groupby(["model", "model_hash"], sort=False, dropna=False):
        given = [v.strip() for v in g.get("label", []) if isinstance(v, str) and v.strip()]
        labels[(model, mhash)] = given[-1] if given else str(model)
    return labels


def _settings_parts(settings_key: Any) -> tuple[str, str]:
    """``(measurement settings, export settings)`` of a settings segment (export: "" for a
    model measured as it is)."""
    parts = str(settings_key or "").split("__", 1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _curve_label(row: Mapping[str, Any], vary: set[str], common: set[str]) -> str:
    """A legend label: runtime and version, then only what differs between the curves."""
    parts = [f"{row['runtime']} {row['runtime_version']}".strip()]
    if "device" in vary:
        parts.append(str(row["device"]))
    if "threads" in vary:
        parts.append(f"{_fmt('threads', row['threads'])} threads")
    if "settings_key" in vary:  # only what differs, e.g. "calls20 warmup1"
        tokens = [t for t in re.split(r"_+", str(row["settings_key"])) if t not in common]
        parts.append(" ".join(tokens)[:40])
    return ", ".join(p for p in parts if p.strip())


def _version_key(version: str) -> tuple:
    """Sort key of a version string: 1.9.0 < 1.20.1 < 1.31.1 (numbers compared as numbers)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in re.split(r"[.+-]", version))


def _figure(src: str, caption: str, fid: str = "") -> str:
    href = _href(src)
    if not href:
        return ""
    ident = f' id="{fid}"' if fid else ""
    return (f'<figure{ident}><img src="{href}" alt="{_esc(caption)}" decoding="async">'
            f"<figcaption>{_esc(caption)}</figcaption></figure>")


def _model_plots(rows, img_dir: str, slug: str, reference_runtime: str) -> list[str]:
    """The model's plots as ``<figure>`` HTML, each an SVG file (:mod:`dashboard_svg`: cheap
    at the corpus scale): latency, throughput and speed-up vs batch size and the latency
    distributions."""
    from mlprof.measure.results import CorruptResult, read_branch

    ok = rows[rows["status"] == "ok"]
    if ok.empty:
        return []
    group_cols = ["runtime", "runtime_version", "device", "threads", "settings_key"]
    vary = {c for c in ("device", "threads", "settings_key") if ok[c].nunique() > 1}
    token_sets = [set(re.split(r"_+", str(k))) for k in ok["settings_key"].unique()]
    common = set.intersection(*token_sets) if token_sets else set()
    curves: list[tuple[str, Any, dict]] = []  # (label, stats, first row)
    samples: dict[str, dict[int, np.ndarray]] = {}
    for _, g in ok.groupby(group_cols, sort=True, dropna=False):
        g = g.sort_values("batch_size")
        first = g.iloc[0].to_dict()
        label = _curve_label(first, vary, common)
        curves.append((label, g, first))
        per = {}
        for r in g.itertuples():
            branch = layout.parse_branch_file(str(r.path))
            if branch is None:
                continue
            csv_path = os.path.join(os.path.dirname(str(r.path)),
                                    layout.branch_files(branch[0])["csv"])
            try:  # validated like every result (changed since the report was read?)
                per[int(r.batch_size)] = read_branch(csv_path, str(r.path))[0]
            except (CorruptResult, OSError):
                continue
        if per:
            samples[label] = per
    out: list[str] = []

    def save(svg: str, name: str, caption: str) -> None:
        if svg:
            fname = f"{slug}_{name}.svg"
            with open(os.path.join(img_dir, fname), "w") as f:
                f.write(svg)
            out.append(_figure("../img/" + fname, caption, f"plot-{name}"))

    def col(g, name: str) -> list[float]:
        return [v if v is not None else math.nan for v in map(_number, g[name])]

    def untrusted(g) -> list[bool]:
        return [_flag(u) or _flag(c) for u, c in zip(g["unstable"], g["contended"],
                                                     strict=True)]

    lat, thr = [], []
    for label, g, _ in curves:
        bs = col(g, "batch_size")
        # per event: the events per call (1 for a model without a batch dimension; the batch
        # size in reports from before the column)
        ev = col(g, "events_per_call") if "events_per_call" in g else bs
        ev = [e if e == e else b for b, e in zip(bs, ev, strict=True)]  # NaN: an older row
        per = [lambda v, d=d: v / d for d in ev]
        lat.append(XYCurve(label, bs, [f(v) for f, v in zip(per, col(g, "median_ms"),
                                                            strict=True)],
                           [f(v) for f, v in zip(per, col(g, "p16_ms"), strict=True)],
                           [f(v) for f, v in zip(per, col(g, "p84_ms"), strict=True)],
                           untrusted(g)))
        thr.append(XYCurve(label, bs, col(g, "throughput"), open=untrusted(g)))
    save(line_chart(lat, x_label="batch size", y_label="latency per event [ms] (median, "
                    "16-84% band)", title="latency per event vs batch size"), "latency",
         "Latency per event vs batch size (median, 16-84% band)")
    save(line_chart(thr, x_label="batch size", y_label="throughput [events/s]",
                    title="throughput vs batch size"), "throughput",
         "Throughput vs batch size (events/s, the results table's column)")
    # speed-up: like with like on the *measurement* settings (device, threads, calls, ...);
    # a script measured through its ONNX export differs only in the export, which the
    # caption names
    refs = [(label, g, first) for label, g, first in curves
            if first["runtime"] == reference_runtime]
    refs.sort(key=lambda t: _version_key(str(t[2]["runtime_version"])))
    if refs:
        rlabel, rg, rfirst = refs[-1]

        def same(first: Mapping[str, Any]) -> bool:
            return (str(first["device"]) == str(rfirst["device"])
                    and _norm(first["threads"]) == _norm(rfirst["threads"])
                    and _settings_parts(first["settings_key"])[0]
                    == _settings_parts(rfirst["settings_key"])[0])

        ref = dict(zip(col(rg, "batch_size"), col(rg, "median_ms"), strict=True))
        spd, used = [], [(rlabel, rfirst)]
        for label, g, first in curves:
            if label == rlabel or not same(first):
                continue
            pts = [(b, ref[b] / m) for b, m in zip(col(g, "batch_size"), col(g, "median_ms"),
                                                   strict=True)
                   if b in ref and m and m > 0 and math.isfinite(ref[b])]
            if pts:
                spd.append(XYCurve(label, [b for b, _ in pts], [v for _, v in pts]))
                used.append((label, first))
        if spd:
            exports = sorted({f"{f['runtime']} {_settings_parts(f['settings_key'])[1]}"
                              for _, f in used if _settings_parts(f["settings_key"])[1]})
            caption = (f"Speed-up vs {rlabel} (reference): its median latency / the curve's; "
                       "same device, threads and measurement settings")
            if exports:
                caption += "; measured on the ONNX export: " + ", ".join(exports)
            save(line_chart(spd, x_label="batch size", y_label=f"speed-up vs {rlabel}",
                            y_log=False, reference=1.0, reference_label=f"{rlabel} "
                            "(reference)", title="speed-up vs the reference runtime"),
                 "speedup", caption)
    if samples:
        svg = box_plot(samples)
        if svg:
            save(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" '
                             'font-family="system-ui,sans-serif" ', 1), "distributions",
                 "Latency per call: distribution per batch size (box 16-84%, median, "
                 "whiskers 1-99%)")
    return out


def _history_html(model_report, series: Mapping[tuple, Series], alerts: Sequence[dict],
                  statistic: str, img_dir: str, slug: str, png_configs: set[tuple]) -> str:
    """Every configuration of the model over time: a panel per batch size (anchors
    ``h-<configuration>-bs<N>``, the targets of the alert links), and the PNG history plot of
    :mod:`mlprof.plotting.history` where an alert was raised."""
    def order(k: tuple[str, ...]) -> tuple:
        bs = _number(k[-1])
        return (k[:-1], bs if bs is not None else math.inf, k[-1])

    keys = sorted({series_key(r) for r in model_report[model_report["status"] == "ok"]
                   .to_dict("records")}, key=order)
    configs: dict[tuple, list[tuple]] = {}
    for k in keys:
        if k in series:
            configs.setdefault(k[:-1], []).append(k)
    blocks = []
    for n, (ckey, skeys) in enumerate(configs.items()):
        panels = []
        for k in skeys:
            s = series[k]
            if len(s.values) < 2:
                continue  # a single point is no history (the results table has it)
            base = baseline_of(s, s.versions[-1], s.timestamps[-1], AlertRule().window)
            unit, scale = history_unit(statistic, s.values)  # µs below 0.1 ms, as PlotHistory
            panels.append(f'<div class="panel" id="{_anchor(k)}">' + history_panel(
                s.points(), title=f"batch size {k[-1]}", unit=unit, baseline=base,
                alerts=s.alerts, events=s.events(), scale=scale) + "</div>")
        if not panels:
            continue
        cfg = dict(zip(SERIES_KEY, (*ckey, ""), strict=True))
        seen = [v for k in skeys for v in series[k].runtime_versions if v]
        cfg["runtime_version"] = seen[-1] if len(set(seen)) <= 1 else \
            f"{series[skeys[0]].runtime_versions[0]} -> {seen[-1]}"
        precision = _precision_of(cfg["settings_key"])
        head = (f"{cfg['runtime']} {cfg['runtime_version']} on {cfg['device']}, "
                f"{cfg['threads']} thread(s), {precision}, host {cfg['host']} "
                f"({cfg['cpu_model']})")
        fig = ""
        c_alerts = [a for a in alerts if series_key(a)[:-1] == ckey]
        if c_alerts and ckey in png_configs:
            fig = _history_png(model_report, c_alerts, statistic, img_dir, slug, n, cfg)
        blocks.append(f'<div class="cfg" id="cfg-{_cfg_id((*ckey, ""))}"><h3>{_esc(head)}</h3>'
                      f'<p class="path">{_esc(cfg["settings_key"])}</p>{fig}'
                      f'<div class="panels">{"".join(panels)}</div></div>')
    if not blocks:
        return '<p class="none">no configuration has more than one result yet</p>'
    return "".join(blocks)


def _history_png(model_report, c_alerts: Sequence[dict], statistic: str, img_dir: str,
                 slug: str, n: int, cfg: Mapping[str, str]) -> str:
    """The history plot (PNG) of one configuration with alerts."""
    from mlprof.plotting import save_figure, use_backend
    from mlprof.plotting.history import plot_history
    from mlprof.report.history import history_groups

    plt = use_backend()
    ckey = series_key(c_alerts[0])[:-1]
    for g, lines, marks in history_groups(model_report, list(c_alerts), statistic,
                                          min_points=2):
        if tuple(_norm(g.get(k)) for k in SERIES_KEY[:-1]) != ckey:
            continue
        fig = plot_history(lines, statistic=statistic, alerts=marks, events=g["events"],
                           top_right_label=(
            f"{g['runtime']} {g['runtime_version']}, {g['device']}, {g['threads']} thr"))
        fname = f"{slug}_history{n}.png"
        try:
            save_figure(fig, [os.path.join(img_dir, fname)])
        finally:
            plt.close(fig)
        what = "; ".join(f"{a.get('kind')} at batch size {_norm(a.get('batch_size'))} from "
                         f"{a.get('first_version')}" for a in c_alerts)
        return _figure("../img/" + fname, f"History of {statistic}, "
                       f"{cfg['runtime']} {cfg['runtime_version']}: {what}",
                       f"hist-{_cfg_id((*ckey, ''))}")
    return ""


def build_dashboard(report, out_dir: str | os.PathLike, *,
                    current_versions: Sequence[str] | None = None,
                    experiments: Sequence[dict] | None = None,
                    reference_runtime: str = DEFAULT_RUNTIME, statistic: str = "median_ms",
                    rule: AlertRule | None = None, title: str = "mlprof dashboard",
                    plots: bool = True, precisions: Sequence[Mapping[str, Any]] = (),
                    loads: Sequence[Mapping[str, Any]] = (),
                    generations: Sequence[Mapping[str, Any]] = (),
                    floors: NoiseFloors | None = None) -> dict[str, Any]:
    """Write the dashboard for ``report`` (a DataFrame of :func:`mlprof.report.to_frame`).

    ``experiments`` are status dicts (title, file, status, errors, ...) as written by the
    nightly run; ``precisions`` the rows of ComparePrecisions tables
    (:func:`mlprof.report.collect.collect_precisions`) and ``loads`` the MeasureLoad records
    (:func:`mlprof.report.collect.collect_loads`), ``generations`` the MeasureGeneration rows
    (:func:`mlprof.report.collect.collect_generations`), shown on the front page and each
    model's page (a decoder measured only by MeasureGeneration gets a page of its own);
    ``plots=False`` leaves out the matplotlib history plots of configurations with an alert
    (every other chart is SVG, drawn here). ``floors``: where the hosts' noise records are
    (:class:`mlprof.report.history.NoiseFloors`; the configured store by default): every
    page's header states the minimum detectable change of the results'
    hosts, and alerts fire only above 2 x their floor.
    Returns a summary: counts of results, failures and alerts, the pages and what the archive
    (:mod:`mlprof.report.dashboard_archive`) lists.
    """
    rule = rule or AlertRule()
    report = identity.assign(report)
    out_dir = os.fspath(out_dir)
    img_dir = os.path.join(out_dir, "img")
    os.makedirs(os.path.join(out_dir, "models"), exist_ok=True)
    os.makedirs(img_dir, exist_ok=True)
    worse_up = statistic not in HIGHER_IS_BETTER
    current = current_results(report, current_versions)
    series = build_series(report, statistic)
    floors = NoiseFloors() if floors is None else floors
    alerts_df = alerts_table(report, statistic, rule, floors)
    alerts = alerts_df.to_dict("records")
    current_set = set(current_versions or [])
    for a in alerts:
        a["new"] = "yes" if (a["version"] in current_set or a["first_version"] in current_set
                             ) else ""
        s = series.get(series_key(a))
        if s is not None and a["version"] in s.versions:
            s.alerts[s.versions.index(a["version"])] = str(a["kind"])
    alerts.sort(key=lambda a: (a["new"] != "yes", str(a["version"])), reverse=False)
    png_configs: set[tuple] = set()
    for a in sorted(alerts, key=lambda a: (a["new"] != "yes", -abs(_number(a["change"]) or 0))):
        if plots and len(png_configs) < MAX_HISTORY_PNGS:
            png_configs.add(series_key(a)[:-1])

    # one page per model (name and hash), titled by its label
    labels = _model_labels(current) if len(current) else {}
    model_pages: dict[tuple[str, str], str] = {}
    for (model, mhash), _rows in current.groupby(["model", "model_hash"], sort=True,
                                                 dropna=False):
        model_pages[(model, mhash)] = layout.model_page(
            model, mhash if isinstance(mhash, str) and mhash else None)

    # decoders measured only by MeasureGeneration: a page with their generation table
    gen_rows = current_generations(generations, current_versions)
    gen_pages = {(r.get("model"), r.get("model_hash")): layout.model_page(
        str(r.get("model")), r.get("model_hash") if isinstance(r.get("model_hash"), str)
        and r.get("model_hash") else None) for r in gen_rows
        if (r.get("model"), r.get("model_hash")) not in model_pages}

    def model_link(r: Mapping[str, Any], anchor: str = "") -> str | None:
        key = (r.get("model"), r.get("model_hash"))
        page = model_pages.get(key) or gen_pages.get(key)
        return page + (f"#{anchor}" if page and anchor else "") if page else None

    # the current results, each with its shown status and its change vs baseline
    cur = current.to_dict("records")
    for r in cur:
        r["status"] = shown_status(r)
        r["label"] = labels.get((r.get("model"), r.get("model_hash")), r.get("model"))
        r["baseline"] = r["change"] = None
        s = series.get(series_key(r)) if r["status"] in MEASURED else None
        value = _number(r.get(statistic))
        if s is not None and value is not None:
            base = baseline_of(s, str(r.get("version")), str(r.get("timestamp") or ""),
                               rule.window)
            if base:
                r["baseline"], r["change"] = base, value / base - 1
    pd_current = current.assign(status=[r["status"] for r in cur],
                                change=[r["change"] for r in cur],
                                baseline=[r["baseline"] for r in cur],
                                label=[r["label"] for r in cur])
    for c in CSV_COLUMNS:
        if c not in pd_current:
            pd_current[c] = None
    pd_current[CSV_COLUMNS].to_csv(os.path.join(out_dir, "results.csv"), index=False)
    report.to_csv(os.path.join(out_dir, "report.csv"), index=False)
    alerts_df.to_csv(os.path.join(out_dir, "alerts.csv"), index=False)

    failures = [r for r in cur if r["status"] not in MEASURED]
    # damaged records, current or not, are listed until they are measured again
    listed = {r["path"] for r in failures}
    failures += [r for r in report[report["status"] == "corrupt"].to_dict("records")
                 if r["path"] not in listed]
    exp_rows = []
    for e in experiments or []:
        if not isinstance(e, dict):
            continue
        errors = e.get("errors") or []
        errors = [errors] if isinstance(errors, str) else errors
        exp_rows.append({"title": e.get("title") or e.get("name"), "file": e.get("file"),
                         "status": e.get("status"), "results": e.get("results", ""),
                         "message": "; ".join(map(str, errors)) if isinstance(
                             errors, (list, tuple)) else str(errors),
                         "description": e.get("description", "")})
    exp_failures = [{"title": e["title"], "file": e["file"], "status": e["status"],
                     "message": e["message"]} for e in exp_rows
                    if e["status"] not in ("ok", "inactive") and e["message"]]

    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    versions = ", ".join(current_versions) if current_versions else "latest of each result"
    hosts = sorted({str(h) for h in current.get("host", []) if isinstance(h, str)})
    commits = sorted({str(c) for c in current.get("git_commit", []) if isinstance(c, str)})
    meta = (f"generated {now} &middot; results: {_esc(versions)} &middot; "
            f"host(s): {_esc(', '.join(hosts) or '-')} &middot; mlprof commit(s): "
            f"{_esc(', '.join(c[:10] for c in commits) or '-')} &middot; "
            '<a href="results.csv">results.csv</a> &middot; <a href="report.csv">report.csv</a>'
            ' &middot; <a href="alerts.csv">alerts.csv</a>'
            # what a change must exceed to be told from the host's noise (issue 36)
            + "".join(f"<br>{_esc(t)}" for t in min_detectable_lines(current, floors)))
    n_reg = sum(1 for a in alerts if a["kind"] == "regression")
    n_imp = sum(1 for a in alerts if a["kind"] == "improvement")
    new_reg = sum(1 for a in alerts if a["kind"] == "regression" and a["new"])
    new_imp = sum(1 for a in alerts if a["kind"] == "improvement" and a["new"])
    counts = flag_counts(cur)
    groups = group_failures(failures)

    def trend(key: tuple[str, ...], tip: str, width: int = 120, height: int = 28) -> str:
        s = series.get(key)
        if s is None or not s.values:
            return ""
        n0 = max(0, len(s.values) - TREND_POINTS)
        base = baseline_of(s, s.versions[-1], s.timestamps[-1], rule.window)
        return sparkline(s.values[n0:], baseline=base, worse_up=worse_up, title=tip,
                         marks={i - n0: k for i, k in s.alerts.items() if i >= n0},
                         width=width, height=height)

    body = [_tiles(counts, len(cur), new_reg, n_reg, new_imp, n_imp, groups, exp_rows)]
    if experiments is not None:
        body.append('<section id="experiments"><h2>Experiments</h2>' + _table(
            exp_rows, ["title", "status", "results", "file", "message", "description"],
            table_id="experiments-table", empty="no experiment files") + "</section>")
    alert_cols = ["new", "kind", "test", "event", "model", "runtime", "runtime_version",
                  "threads", "batch_size", "first_version", "version", "baseline", "value",
                  "change", "trend", "z", "host", "history"]
    alert_headers = {"first_version": "from version", "version": "confirmed by",
                     "event": "coincides with",
                     "baseline": f"baseline {statistic}", "value": statistic,
                     "history": "history"}
    body.append(
        f'<section id="regressions"><h2>Regressions ({n_reg}, {new_reg} new) and improvements '
        f'({n_imp}, {new_imp} new)</h2><p>Robust rule: trimmed mean and noise (residuals of a '
        f'line) of up to {rule.window} earlier results (a change &ge; '
        f'{100 * rule.short_z * rule.prior_noise:g}% while fewer than {rule.short_history}), '
        f'then the mean of {rule.persist} to {rule.max_run} agreeing points beyond a '
        f'Student-t threshold (|z| &ge; {rule.z_min:g} for a regression, '
        f'{rule.z_improvement:g} for an improvement, with a long history), each &ge; '
        f'{rule.z_each:g} noise units and change &ge; {100 * rule.min_change:g}%; or a rising '
        f'trend over {rule.trend_min} to {rule.trend_window} results (|z| &ge; '
        f'{rule.trend_z:g}); a run with an unusually wide spread counts only beyond '
        f'{100 * rule.neighbour_max:g}% slower; confirmed by the next point or a '
        f're-measurement; statistic {_esc(statistic)}. The change must also exceed 2 x '
        f"the noise floor of the series' host where it is calibrated; "
        f"{_esc(floors.summary(rule))}. "
        "Each row links to its history.</p>"
        + _table(alerts, alert_cols, table_id="alerts-table", headers=alert_headers,
                 links={"model": lambda r: model_link(r, _anchor(series_key(r))),
                        "history": lambda r: model_link(r, _anchor(series_key(r))),
                        # the history across the upgrade or edit: both sides, one click
                        "event": lambda r: model_link(r, _anchor(series_key(r)))
                        if r.get("event") else None},
                 raw={"trend": lambda r: trend(series_key(r), f"{r['model']} "
                                               f"{r['runtime']} bs {_norm(r['batch_size'])}"),
                      "history": lambda r: "history"},
                 worse_up=worse_up, empty="no regressions or improvements") + "</section>")
    body.append(_trends_html(cur, series, trend, model_link, worse_up))
    body.append(_failures_html(exp_failures, groups, model_link))
    body.append(_results_html(cur, labels, model_pages, model_link, statistic, worse_up))
    prec = current_precisions(precisions, current_versions)
    body.append(_precisions_html(prec, model_link=model_link))
    load_rows = current_loads(loads, current_versions)
    body.append(_loads_html(load_rows, model_link=model_link))
    body.append(_generations_html(gen_rows, model_link=model_link))
    with open(os.path.join(out_dir, "index.html"), "w") as f:
        f.write(_page(title, meta, "".join(body)))

    # model pages
    prov_cols = ["runtime", "runtime_version", "batch_size", "status", "host", "cpu_model",
                 "threads", "n_calls", "n_events", "warmup", "min_duration", "input_data",
                 "session_creation_ms", "peak_rss_mb", "version", "timestamp", "git_commit",
                 records.MLPROF_VERSION, "settings_key", "path"]
    by_model: dict[tuple, list[dict]] = {}
    for r in cur:
        by_model.setdefault((r["model"], r["model_hash"]), []).append(r)
    for (model, mhash), page in model_pages.items():
        sel = (current["model"] == model) & (
            current["model_hash"] == mhash if isinstance(mhash, str)
            else current["model_hash"].isna())
        rows = current[sel]
        slug = os.path.splitext(os.path.basename(page))[0]
        rsel = (report["model"] == model) & (
            report["model_hash"] == mhash if isinstance(mhash, str)
            else report["model_hash"].isna())
        model_report = report[rsel]
        m_alerts = [a for a in alerts if a["model"] == model and a["model_hash"] == mhash]
        figs = _model_plots(rows, img_dir, slug, reference_runtime)
        history = _history_html(model_report, series, m_alerts, statistic, img_dir, slug,
                                png_configs)
        rec = by_model.get((model, mhash), [])
        label = labels.get((model, mhash), str(model))
        mfile = next((r.get("model_file") for r in rec if isinstance(r.get("model_file"), str)),
                     "")
        exports = sorted({_settings_parts(r.get("settings_key"))[1] for r in rec} - {""})
        mbody = (f'<section><p><a href="../index.html">&larr; all results</a> &middot; model '
                 f"{_esc(model)} &middot; hash {_esc(mhash)} &middot; {_esc(mfile)}"
                 + (f" &middot; ONNX export: {_esc(', '.join(exports))}" if exports else "")
                 + "</p></section>"
                 '<section id="plots"><h2>Latency, throughput, speed-up and distributions'
                 f'</h2><div class="plots">'
                 f'{"".join(figs) or "<p class=none>no successful result to plot</p>"}'
                 "</div></section>"
                 f'<section id="history"><h2>History of {_esc(statistic)}</h2><p>One panel '
                 "per batch size: dashed the baseline, open points confirming "
                 "re-measurements, triangles alerts (red up: regression, green down: "
                 f"improvement). Hover a point for its version and value.</p>{history}"
                 "</section>"
                 '<section id="model-alerts"><h2>Regressions and improvements</h2>'
                 + _table(m_alerts, [c for c in alert_cols if c not in ("trend", "history")],
                          table_id="model-alerts-table", headers=alert_headers,
                          links={"model": lambda r: "#" + _anchor(series_key(r))},
                          worse_up=worse_up, empty="none") + "</section>"
                 '<section id="model-results"><h2>Results</h2>'
                 + _table(rec, [c for c in TABLE_COLUMNS if c != "model"] + ["error"],
                          table_id="model-results-table", worse_up=worse_up) + "</section>"
                 + _precisions_html([r for r in prec if (r.get("model"), r.get(
                     "model_hash")) == (model, mhash)], section_id="model-precisions")
                 + _loads_html([r for r in load_rows if (r.get("model"), r.get(
                     "model_hash")) == (model, mhash)], section_id="model-load")
                 + _generations_html([r for r in gen_rows if (r.get("model"), r.get(
                     "model_hash")) == (model, mhash)], section_id="model-generation")
                 + '<section id="provenance"><h2>Provenance</h2>'
                 + _table(rec, prov_cols, table_id="provenance-table") + "</section>")
        with open(os.path.join(out_dir, page), "w") as f:
            f.write(_page(label, f"{_esc(model)} &middot; " + meta.replace('href="',
                                                                            'href="../'), mbody))
    for (model, mhash), page in gen_pages.items():
        mine = [r for r in gen_rows if (r.get("model"), r.get("model_hash")) == (model, mhash)]
        mfile = next((r.get("model_file") for r in mine if isinstance(r.get("model_file"), str)),
                     "")
        mbody = (f'<section><p><a href="../index.html">&larr; all results</a> &middot; model '
                 f"{_esc(model)} &middot; hash {_esc(mhash)} &middot; {_esc(mfile)}</p>"
                 "</section>" + _generations_html(mine, section_id="model-generation"))
        with open(os.path.join(out_dir, page), "w") as f:
            f.write(_page(str(model), f"{_esc(model)} &middot; " + meta.replace(
                'href="', 'href="../'), mbody))
    return {"results": len(cur), "failures": len(failures) + len(exp_failures),
            "failure_groups": len(groups) + len(exp_failures),
            "regressions": n_reg, "improvements": n_imp, "new_regressions": new_reg,
            "new_improvements": new_imp, "counts": counts, "generated": now,
            "current": list(current_versions or []), "title": title,
            "alerts": alerts, "generation": len(gen_rows),
            "pages": ["index.html", *model_pages.values(), *gen_pages.values()]}


def _tiles(counts: Mapping[str, int], n: int, new_reg: int, n_reg: int, new_imp: int,
           n_imp: int, groups: Sequence[dict], exp_rows: Sequence[dict]) -> str:
    n_fail = sum(g["count"] for g in groups)
    tiles = [("results", f"{n:,}", f"{counts['ok']:,} ok, {counts['unstable']:,} unstable, "
              f"{counts['contended']:,} contended", "warn" if counts["unstable"]
              + counts["contended"] else "good"),
             ("regressions", f"{new_reg}", f"new ({n_reg} in the history)",
              "bad" if new_reg else "good"),
             ("improvements", f"{new_imp}", f"new ({n_imp} in the history)", ""),
             ("failures", f"{n_fail:,}", f"in {len(groups)} group(s)", "bad" if n_fail
              else "good")]
    if exp_rows:
        bad = sum(1 for e in exp_rows if e["status"] not in ("ok", "inactive"))
        tiles.append(("experiments", f"{len(exp_rows)}", f"{bad} not ok", "bad" if bad
                      else "good"))
    return ('<section id="summary"><div class="tiles">' + "".join(
        f'<div class="tile {cls}"><b>{_esc(v)}</b>{_esc(name)}: {_esc(sub)}</div>'
        for name, v, sub, cls in tiles) + "</div></section>")


def _trends_html(cur: Sequence[dict], series: Mapping[tuple, Series], trend, model_link,
                 worse_up: bool) -> str:
    """A small trend line for every current series with a history (asv's grid): one card per
    model, runtime and batch size, in that order, each named in full (nothing cut off) with
    its change vs its baseline. Cards of series that alerted or moved by at least
    :data:`CHANGE_SHOWN` are framed in the change's colour (class ``worse``/``better``) and
    ``data-c="1"``, which the "changed only" box filters on.

    Why every series, not only those that changed: a reader checks that a series they care
    about is quiet by seeing it, and a series that did not move is an answer too.
    """
    rows = []
    for r in cur:
        key = series_key(r)
        s = series.get(key)
        if s is None or r["status"] not in MEASURED or not s.values:
            continue
        bs = _number(r.get("batch_size"))
        rows.append(((str(r["label"]), str(r["model"]), str(r["runtime"]),
                      str(r.get("runtime_version") or ""), str(r.get("threads") or ""),
                      bs if bs is not None else math.inf, str(r.get("settings_key") or "")),
                     r, key, s))
    rows.sort(key=lambda t: t[0])
    cards, n_changed = [], 0
    for _, r, key, s in rows:
        alerted = bool(s.alerts) and max(s.alerts) >= len(s.values) - 3
        change = r.get("change")
        changed = alerted or (change is not None and abs(change) >= CHANGE_SHOWN)
        n_changed += changed
        ctext, ccls = "", ""
        if change is not None:
            ctext = f"{100 * change:+.1f}%"
            ccls = ("worse" if (change > 0) == worse_up else "better") if abs(
                change) >= 0.05 else ""
        elif len(s.values) < 2:
            ctext = "first result"
        href = _href(model_link(r, _anchor(key)) or "")
        inner = (f'<div class="what"><b>{_esc(r["label"])}</b><br>{_esc(r["runtime"])} '
                 f'{_esc(r["runtime_version"])} &middot; {_esc(_norm(r.get("threads")))} '
                 f'thread(s){_precision_text(r.get("precision"))}<br>batch size '
                 f'<b>{_esc(_norm(r["batch_size"]))}</b></div>'
                 f'{trend(key, "", width=200, height=34)} '
                 + (f'<span class="{ccls}">' if ccls else "<span>") + f"{_esc(ctext)}</span>")
        cls = "card" + (f" {ccls or 'worse'}" if changed else "")
        attrs = f'class="{cls}" data-c="{1 if changed else 0}"'
        cards.append(f'<a {attrs} href="{href}">{inner}</a>' if href
                     else f'<div {attrs}>{inner}</div>')
    return (f'<section id="trends"><h2>Trends of every series ({len(cards):,}; {n_changed:,} '
            f"changed)</h2><p>One card per model, runtime, threads and batch size: its last "
            f"{TREND_POINTS} results (dashed: its baseline; the y range is at least 20% of "
            f"the level, so noise stays flat), the change of the current result vs its "
            f"baseline. Framed: alerted or moved by &ge; {100 * CHANGE_SHOWN:g}%. Click for "
            'its history.</p><p class="controls"><label><input type="checkbox" '
            'id="trends-changed"> changed only</label></p>'
            + ('<div class="cards" id="trend-cards">' + "".join(cards) + "</div>" if cards
               else '<p class="none">no series measured yet</p>') + "</section>")


#: the columns of the precision tables (ComparePrecisions) on the dashboard
PRECISION_COLUMNS = ["runtime", "batch_size", "precision", "fp32_ms", "median_ms", "speedup",
                     "ci", "verdict", "flags", "max_rel_error", "top1", "why", "version"]
_PRECISION_HEADERS = {"fp32_ms": "fp32 median [ms]", "speedup": "speed-up vs fp32",
                      "ci": "95% CI", "flags": "disturbed rounds", "top1": "top-1 agreement",
                      "why": "why not faster (operator time per call)"}


def current_precisions(rows: Sequence[Mapping[str, Any]],
                       versions: Sequence[str] | None = None) -> list[dict]:
    """The ComparePrecisions rows to show (:func:`mlprof.report.collect.collect_precisions`):
    those of ``versions`` when given, else the newest table's row of each model, runtime,
    settings, batch size and precision; sorted for reading (the precisions in the order of
    THE precision table, :mod:`mlprof.runtimes.precisions`). Each has its ``flags``: how many
    of its rounds were disturbed and by what (``! 3 of 20: cpu-wait, gc``), and its speed-up
    reads "not measurable now" where those rounds' interval spans more than 10x."""
    from mlprof.measure.interleave import disturbed_text
    from mlprof.runtimes.precisions import order as precision_order

    chosen: dict[tuple, dict] = {}
    for r in rows:
        if versions and r.get("version") not in versions:
            continue
        key = (r.get("model"), r.get("model_hash"), r.get("runtime"), r.get("settings_key"),
               r.get("batch_size"), r.get("precision"))
        if key not in chosen or (r.get("mtime") or 0) >= (chosen[key].get("mtime") or 0):
            chosen[key] = dict(r)
    fp32 = {k[:5]: r.get("median_ms") for k, r in chosen.items() if k[5] == "fp32"}
    out = sorted((r for k, r in chosen.items() if k[5] != "fp32"),  # fp32 is the reference
                 key=lambda r: (str(r.get("model")), str(r.get("runtime")),
                                int(r.get("batch_size") or 0), precision_order(r.get("precision")),
                                str(r.get("precision"))))
    for r in out:
        r["fp32_ms"] = fp32.get((r.get("model"), r.get("model_hash"), r.get("runtime"),
                                 r.get("settings_key"), r.get("batch_size")))
        r["ci"] = f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
        r["gain"], r["speedup"] = r["speedup"], f"{r['speedup']:.2f}x"
        if row_not_measurable({**r, "contended": bool(r.get("disturbed_rounds"))}):
            r["speedup"] = NOT_MEASURABLE
        # the rounds that named a cause, and which (a table of an older mlprof: empty)
        r["flags"] = (f"{CONTENDED} {disturbed_text(r)}" if r.get("disturbed_rounds")
                      and r.get("rounds") else "")
        top1 = r.get("top1_agreement")
        r["top1"] = "" if top1 is None else f"{top1:.3f}"
        if r.get("error_note"):  # an infinite error is an answer: "inf", "NaN outputs differ"
            from mlprof.model.precision import NONFINITE

            r["max_rel_error"] = NONFINITE.get(str(r["error_note"]), "inf")
    return out


def _precisions_html(rows: Sequence[Mapping[str, Any]], model_link=None,
                     section_id: str = "precisions") -> str:
    """Lower precisions against fp32: speed-up with its interval, error, and where a precision
    gains less than 1.2x the operators that account for it (empty without tables)."""
    if not rows:
        return ""
    cols = (["model"] if model_link else []) + PRECISION_COLUMNS
    from mlprof.report.precision import SLOW_GAIN

    slow = sum(1 for r in rows if (_number(r.get("gain")) or 0) < SLOW_GAIN)
    return (f'<section id="{section_id}"><h2>Precisions against fp32 ({len(rows):,}; '
            f"{slow:,} gain less than {SLOW_GAIN:g}x)</h2><p>ComparePrecisions: the "
            "speed-up of each precision over fp32 in interleaved rounds with its 95% "
            "bootstrap interval, its error against fp32 on the same inputs (of the largest "
            "fp32 output value), and where it gains less than 1.2x the operator types that "
            "account for the difference "
            "(profiles of both diffed).</p>"
            + _table(rows, cols, table_id=f"{section_id}-table", headers=_PRECISION_HEADERS,
                     links={"model": model_link} if model_link else None)
            + "</section>")


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
        r["flags"] = (f"{CONTENDED} contended: {_causes_text(r)}" if _flag(r.get("contended"))
                      else "")
        if row_not_measurable(r):
            r["events_per_s"] = NOT_MEASURABLE
    return out


def _loads_html(rows: Sequence[Mapping[str, Any]], model_link=None,
                section_id: str = "load") -> str:
    """MeasureLoad's answers: per load point (a number of streams, or a server search or rate)
    the chosen operating point's throughput and p99, and the answer in one line (empty without
    records)."""
    if not rows:
        return ""
    cols = (["model"] if model_link else []) + LOAD_COLUMNS
    contended = sum(1 for r in rows if r.get("contended"))
    n = len(rows)
    return (f'<section id="{section_id}"><h2>Load ({n:,} load point{"s" if n != 1 else ""}'
            + (f"; {contended:,} contended" if contended else "") + ")</h2><p>MeasureLoad: "
            "concurrent streams (throughput and latency per call), or a server with Poisson "
            "arrivals (the highest rate whose percentile meets the bound). A contended point "
            "shared the CPUs with other processes: its answer may be low.</p>"
            + _table(rows, cols, table_id=f"{section_id}-table", headers=_LOAD_HEADERS,
                     links={"model": model_link} if model_link else None)
            + "</section>")


#: the columns of the generation table (one row per decoder, runtime and point)
GENERATION_COLUMNS = ["runtime", "runtime_version", "shown_point", "ttft", "tpot", "decode",
                      "speedup", "agreement", "flags", "tpot_history", "host", "version"]
_GENERATION_HEADERS = {"shown_point": "prompt, batch", "ttft": "TTFT ms [95% CI]",
                       "tpot": "TPOT ms [95% CI]", "decode": "decode tok/s [95% CI]",
                       "speedup": "TPOT speed-up", "agreement": "tokens agree",
                       "tpot_history": "TPOT history"}


def current_generations(rows: Sequence[Mapping[str, Any]],
                        versions: Sequence[str] | None = None) -> list[dict]:
    """The MeasureGeneration rows to show (:func:`mlprof.report.collect.collect_generations`):
    those of ``versions`` when given, else the newest of each series
    (:func:`mlprof.report.generation.newest_generations`), each with its figures as text
    (median and 95 % interval), its agreement, ``flags`` (contended and what disturbed it, as
    the other tables show it) and the history of its TPOT over every version in ``rows``."""
    from mlprof.report.generation import _with_interval, newest_generations, series_history

    out = newest_generations(rows, versions)
    for r in out:
        r["_history"] = series_history(rows, r)  # before a shown column replaces a key part
        r["shown_point"] = (f"{r.get('prompt_length')}, {r.get('batch_size')} "
                            f"({r.get('new_tokens')} new)")
        r["ttft"] = _with_interval(r.get("ttft_ms"), r.get("ttft_ms_low"), r.get("ttft_ms_high"),
                                   ".3g")
        r["tpot"] = _with_interval(r.get("tpot_ms"), r.get("tpot_ms_low"), r.get("tpot_ms_high"),
                                   ".3g")
        r["decode"] = _with_interval(r.get("decode_tokens_per_s"),
                                     r.get("decode_tokens_per_s_low"),
                                     r.get("decode_tokens_per_s_high"), ".0f")
        r["speedup"] = "reference" if r.get("runtime") == r.get("reference") else \
            _with_interval(r.get("speedup_tpot"), r.get("speedup_tpot_low"),
                           r.get("speedup_tpot_high"), ".2f")
        agree = _number(r.get("agreement"))
        errors = _number(r.get("agreement_errors"))
        r["agreement"] = "reference" if r.get("runtime") == r.get("reference") else (
            "-" if agree is None else f"{100 * agree:.1f} %"
            + (f" ({int(errors)} errors)" if errors is not None else ""))
        r["flags"] = (f"{CONTENDED} contended: {_causes_text(r)}" if _flag(r.get("contended"))
                      else "")
    return out


def _generations_html(rows: Sequence[Mapping[str, Any]], model_link=None,
                      section_id: str = "generation") -> str:
    """MeasureGeneration's points: per decoder, runtime, prompt length and batch size the
    median TTFT, TPOT and decode tokens/s with their 95 % intervals, the TPOT speed-up against
    the reference runtime, the teacher-forced agreement, the contended flag and a sparkline of
    the TPOT over versions (empty without records)."""
    if not rows:
        return ""

    def history(r: Mapping[str, Any]) -> str:
        versions, values, events = r.get("_history") or ([], [], [])
        if len(values) < 2:
            return "-"
        tip = (f"TPOT ms of {r.get('model')} {r.get('runtime')} {r.get('shown_point')}: "
               + ", ".join(f"{v} {x:.3g}" for v, x in zip(versions[-TREND_POINTS:],
                                                         values[-TREND_POINTS:], strict=True))
               + (f"; {'; '.join(events)}" if events else ""))
        return sparkline(values[-TREND_POINTS:], baseline=float(np.median(values[:-1])),
                         worse_up=True, title=tip)

    cols = (["model"] if model_link else []) + GENERATION_COLUMNS
    contended = sum(1 for r in rows if _flag(r.get("contended")))
    n = len(rows)
    return (f'<section id="{section_id}"><h2>Generation ({n:,} runtime point'
            f'{"s" if n != 1 else ""}' + (f"; {contended:,} contended" if contended else "")
            + ")</h2><p>MeasureGeneration: a decoder generating a fixed number of tokens per "
            "call, runtimes in interleaved rounds. TTFT: call start to the first token "
            "sampled; TPOT = (E2E - TTFT)/(N - 1); decode tokens/s = batch x (N - 1)/(E2E - "
            "TTFT); medians with bootstrap 95 % intervals. Tokens agree: the share of "
            "teacher-forced steps whose token is the reference runtime's (errors only where "
            "the reference's margin exceeds 10x the logit difference). A contended point "
            "shared the CPUs with other processes. Generation.csv of Report has every "
            "version.</p>"
            + _table(rows, cols, table_id=f"{section_id}-table", headers=_GENERATION_HEADERS,
                     links={"model": model_link} if model_link else None,
                     raw={"tpot_history": history})
            + "</section>")


def _failures_html(exp_failures: Sequence[dict], groups: Sequence[dict], model_link) -> str:
    def where(g: dict) -> str:
        items = []
        for r in g["rows"][:40]:
            link = _href(model_link(r) or "")
            name = _esc(r.get("model"))
            name = f'<a href="{link}">{name}</a>' if link else name
            bs = _number(r.get("batch_size"))
            items.append(f"<li>{name} {_esc(r.get('runtime'))} {_esc(r.get('runtime_version'))}"
                         + (f" bs <b>{int(bs)}</b>" if bs is not None else "")
                         + f" ({_esc(r.get('version'))})</li>")
        more = len(g["rows"]) - len(items)
        if more > 0:
            items.append(f"<li>and {more} more (results.csv has them all)</li>")
        lst = "<ul>" + "".join(items) + "</ul>"
        return lst if len(g["rows"]) <= 3 else (
            f"<details><summary>{len(g['rows'])} results</summary>{lst}</details>")

    return ('<section id="failures"><h2>Failures</h2>'
            + _table(exp_failures, ["title", "file", "status", "message"],
                     table_id="experiment-failures-table", empty="no experiment failed")
            + "<p>Measurement failures, grouped by status, cause and message (batch sizes and "
            "paths taken out); damaged records one by one.</p>"
            + _table(groups, ["count", "status", "cause", "batch_sizes", "message", "where"],
                     table_id="failures-table", raw={"where": where},
                     empty="no measurement failed")
            + "</section>")


def _results_html(cur: Sequence[dict], labels, model_pages, model_link, statistic: str,
                  worse_up: bool) -> str:
    models = []
    for model, mhash in model_pages:
        rows = [r for r in cur if r["model"] == model and r["model_hash"] == mhash]
        changes = [r["change"] for r in rows if r.get("change") is not None]
        worst = (max(changes) if worse_up else min(changes)) if changes else None
        models.append({"model": model, "model_hash": mhash, "label": labels.get(
            (model, mhash), model), "n_results": len(rows),
            **flag_counts(rows),
            "failed": sum(1 for r in rows if r["status"] not in MEASURED), "worst": worst})
    models_table = _table(
        models, ["label", "model", "n_results", "ok", "unstable", "contended", "failed",
                 "worst", "show"], table_id="models-table",
        headers={"label": "model", "model": "name", "show": ""},
        links={"label": lambda r: model_link(r)},
        raw={"show": lambda r: f'<button class="link" data-model="{_esc(r["model"])}">show '
             "results</button>"}, worse_up=worse_up, empty="no results")
    prev = [None]

    def attrs(i: int, r: Mapping[str, Any]) -> str:
        start = (r["model"], r["model_hash"]) != prev[0]
        prev[0] = (r["model"], r["model_hash"])
        changed = r.get("change") is not None and abs(r["change"]) >= CHANGE_SHOWN
        flags = " ".join(f for f in ("unstable", "contended") if _flag(r.get(f)))
        return (f' data-i="{i}" data-s="{_esc(r["status"])}" data-m="{_esc(r["model"])}" '
                f'data-f="{flags}" data-c="{int(changed)}"'
                + (' class="gstart"' if start else ""))

    statuses = sorted({r["status"] for r in cur}, key=lambda s: (
        s not in MEASURED, MEASURED.index(s) if s in MEASURED else 0, s))
    options = "".join(f'<option value="{_esc(s)}">{_esc(s)}</option>' for s in statuses)
    controls = (
        '<div class="controls"><input type="search" id="filter" placeholder="filter: words '
        'all rows must contain (model, runtime, status, version...)" aria-label="filter">'
        '<select id="status-filter" aria-label="status"><option value="">all statuses'
        f'</option><option value="failures">failures</option>{options}</select>'
        '<label><input type="checkbox" id="changed-only"> changed only (&ge; '
        f'{100 * CHANGE_SHOWN:g}%)</label><button id="regroup">group by model</button>'
        '<span id="filter-count"></span></div>')
    table = _table(cur, TABLE_COLUMNS, table_id="results-table", table_class="grouped",
                   links={"model": lambda r: model_link(r)}, row_attrs=attrs,
                   worse_up=worse_up, empty="no results",
                   titles={"change": f"change of {statistic} vs its baseline: the trimmed "
                           "mean of up to 20 earlier results of the same series",
                           "status": "~ unstable: CV > 10 %; ! contended: something "
                           "disturbed the measurement, and what (docs/noise.md); both when "
                           "both"})
    return (f'<section id="results"><h2>Results ({len(cur):,})</h2>'
            f"<h3>Models ({len(models)})</h3>"
            f'<div class="scroll tall">{models_table}</div>'
            "<h3>All results</h3><p>Grouped by model; click a column to sort, type to filter. "
            "Latencies per call in ms; throughput in events/s; change: of "
            f"{_esc(statistic)} vs the baseline of its series. "
            '<a href="results.csv">results.csv</a> has these rows.</p>'
            + (controls if cur else "") + table + "</section>")
