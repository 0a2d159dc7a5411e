"""A static HTML dashboard over a report: plain files that open from ``file://``.

No server, no CDN, no ``fetch``: every table is in the HTML, every plot a PNG next to it, the
little JavaScript there is (sortable tables) is inline. Pages:

- ``index.html``: experiments and their status, regressions and improvements, failures with
  their messages, and a sortable table of the current results (also ``results.csv``);
- ``models/<model>.html``: per model, latency and throughput vs batch size, latency
  distributions, speed-up vs the reference runtime, history, alerts and the provenance of each
  result.
"""

from __future__ import annotations

import datetime
import html
import os
import re
from collections.abc import Iterable, Sequence
from typing import Any

from mlprof import layout
from mlprof.report.alerts import AlertRule
from mlprof.report.history import alerts_table, history_groups
from mlprof.runtimes import DEFAULT_RUNTIME

#: what identifies a result in the store's layout (present for failures too)
RESULT_KEY = ["model", "model_hash", "runtime", "runtime_version", "device", "settings_key",
              "batch_size"]
#: columns of the results table (and results.csv)
TABLE_COLUMNS = ["model", "runtime", "runtime_version", "device", "threads", "batch_size",
                 "median_ms", "p16_ms", "p84_ms", "throughput", "cv", "status", "version",
                 "timestamp"]
#: column headers shown instead of the CSV names
HEADERS = {"runtime_version": "runtime version", "batch_size": "batch size",
           "median_ms": "median [ms]", "p16_ms": "p16 [ms]", "p84_ms": "p84 [ms]",
           "throughput": "throughput [1/s]", "cv": "CV", "first_version": "from version",
           "session_creation_ms": "session creation [ms]", "peak_rss_mb": "peak RSS [MB]",
           "settings_key": "settings", "cpu_model": "CPU", "min_duration": "min duration [s]",
           "git_commit": "git commit", "mlprof_version": "mlprof"}
_NUMERIC = {"threads", "batch_size", "median_ms", "p16_ms", "p84_ms", "throughput", "cv"}

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:1.4em}
header .meta{color:#c7cbd4;font-size:.85em;margin-top:4px}
header a{color:#9cc3ff}
main{padding:16px 24px;max-width:1500px}
section{background:#fff;border:1px solid #e1e4ea;border-radius:6px;padding:12px 16px;
margin-bottom:16px}
h2{font-size:1.15em;margin:0 0 10px}
table{border-collapse:collapse;width:100%;font-size:.86em}
th,td{border-bottom:1px solid #e8eaef;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f5;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" \\25B2"}
table.sortable th[aria-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.st-ok{color:#1a7f37}.st-failed,.st-timeout,.st-oom,.st-corrupt,.st-error,.st-regression{
color:#c62828;font-weight:600}
.st-improvement{color:#1a7f37;font-weight:600}.st-inactive,.st-partial,.st-other{color:#9a6700;
font-weight:600}
.msg{font-family:ui-monospace,monospace;font-size:.92em;white-space:pre-wrap;
word-break:break-word}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plots figure{margin:0;flex:1 1 440px;
max-width:640px}
.plots img{width:100%;border:1px solid #e1e4ea}figcaption{font-size:.85em;color:#555}
.none{color:#666;font-style:italic}.scroll{overflow-x:auto}
td.path{font-family:ui-monospace,monospace;font-size:.85em;word-break:break-all;min-width:20em}
"""

_JS = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var key = function (row) {
        var cell = row.cells[col];
        var v = cell.getAttribute("data-v");
        if (v !== null) { var f = parseFloat(v); return isNaN(f) ? Infinity : f; }
        return cell.textContent.trim().toLowerCase();
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === y) { return 0; }
        return (x < y ? -1 : 1) * (asc ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


#: statuses and alert kinds that have a style; the CSS class of any other value (a store file
#: may hold anything) is ``st-other``: no text from a store ever becomes a class name
STATE_CLASSES = {s: f"st-{s}" for s in (
    "ok", "failed", "timeout", "oom", "corrupt", "error", "partial", "inactive", "regression",
    "improvement")}
#: what a link may point at: a file of the site, as :mod:`mlprof.layout` names them
_SAFE_HREF = re.compile(r"(?:\.\./)?(?:models/|img/)?[A-Za-z0-9_+-][A-Za-z0-9._+-]*")


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


def _fmt(col: str, value: Any) -> str:
    """Display text of a table cell (a value that should be a number and is not: as it is)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    num = _number(value)
    if num is not None:
        if col in ("median_ms", "p16_ms", "p84_ms", "value", "baseline", "throughput"):
            return f"{num:.4g}"
        if col == "change":
            return f"{100 * num:+.1f}%"
        if col == "cv":
            return f"{100 * num:.1f}%"
        if col == "z":
            return f"{num:+.1f}"
        if col in ("threads", "batch_size") and num.is_integer():
            return str(int(num))
        if isinstance(value, float):
            return f"{value:.4g}"
    return str(value)


def _cell(col: str, value: Any, link: str | None = None) -> str:
    text = _esc(_fmt(col, value))
    href = _href(link) if link else None
    if href:
        text = f'<a href="{href}">{text}</a>'
    cls = []
    attrs = ""
    if col in _NUMERIC or col in ("value", "baseline", "change", "z"):
        cls.append("num")
        num = _number(value)
        attrs = ' data-v="NaN"' if num is None else f' data-v="{num!r}"'
    if col in ("status", "kind"):
        cls.append(state_class(value))
    if col in ("error", "message", "description"):
        cls.append("msg")
    if col in ("path", "settings_key", "file"):
        cls.append("path")
    c = f' class="{" ".join(cls)}"' if cls else ""
    return f"<td{c}{attrs}>{text}</td>"


def _table(rows: Sequence[dict], cols: Sequence[str], *, table_id: str, sortable: bool = True,
           headers: dict[str, str] | None = None, links: dict[str, Any] | None = None,
           empty: str = "none") -> str:
    if not rows:
        return f'<p class="none" id="{table_id}-empty">{_esc(empty)}</p>'
    headers = {**HEADERS, **(headers or {})}
    links = links or {}
    head = "".join(f"<th>{_esc(headers.get(c, c))}</th>" for c in cols)
    body = []
    for r in rows:
        cells = "".join(_cell(c, r.get(c), links[c](r) if c in links else None) for c in cols)
        body.append(f"<tr>{cells}</tr>")
    cls = ' class="sortable"' if sortable else ""
    return (f'<div class="scroll"><table id="{table_id}"{cls}><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _page(title: str, meta: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
            f"<header><h1>{_esc(title)}</h1><div class=\"meta\">{meta}</div></header>"
            f"<main>{body}</main><script>{_JS}</script></body></html>\n")


def current_results(report, versions: Iterable[str] | None = None):
    """The current result of each configuration and batch size.

    With ``versions``, only results of those versions count; of several (a result and its
    confirming re-measurement), the latest is current. Without, the latest of all.
    """
    df = report
    versions = list(versions or [])
    if versions:
        df = df[df["version"].isin(versions)]
    if df.empty:
        return df.copy()
    df = df.assign(_ts=df["timestamp"].fillna(""))
    df = df.sort_values("_ts", kind="stable")
    latest = df.groupby(RESULT_KEY, dropna=False, sort=False).tail(1)
    return latest.drop(columns="_ts").sort_values(
        ["model", "runtime", "runtime_version", "settings_key", "batch_size"],
        kind="stable", ignore_index=True)


def _curve_label(row: dict, vary: set[str], common: set[str] = frozenset()) -> str:
    parts = [f"{row['runtime']} {row['runtime_version']}"]
    if "device" in vary:
        parts.append(str(row["device"]))
    if "threads" in vary:
        parts.append(f"{_fmt('threads', row['threads'])} thr")
    if "settings_key" in vary:  # only what differs, e.g. "calls20 warmup1"
        tokens = re.split(r"_+", str(row["settings_key"]))
        parts.append(" ".join(t for t in tokens if t not in common)[:40])
    return ", ".join(parts)


def _version_key(version: str) -> tuple:
    """Sort key of a version string: 1.9.0 < 1.20.1 < 1.31.1 (numbers compared as numbers)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in re.split(r"[.+-]", version))


def _model_plots(rows, report, alerts, model_slug: str, img_dir: str,
                 reference_runtime: str, statistic: str) -> list[tuple[str, str]]:
    """Write the model's plots; ``[(file name, caption)]``."""
    from mlprof.measure.results import CorruptResult, read_branch
    from mlprof.plotting import Curve, plot_runtimes, save_figure
    from mlprof.plotting.dashboard import plot_distributions, plot_speedup, plot_throughput
    from mlprof.plotting.history import plot_history

    out: list[tuple[str, str]] = []
    ok = rows[rows["status"] == "ok"]
    group_cols = ["runtime", "runtime_version", "device", "threads", "settings_key"]
    vary = {c for c in ("device", "threads", "settings_key") if ok[c].nunique() > 1}
    curves, samples, curve_rt = [], {}, []
    token_sets = [set(re.split(r"_+", str(k))) for k in ok["settings_key"].unique()]
    common = set.intersection(*token_sets) if token_sets else set()
    for _, g in ok.groupby(group_cols, sort=True, dropna=False):
        g = g.sort_values("batch_size")
        label = _curve_label(g.iloc[0].to_dict(), vary, common)
        curves.append(Curve(label, g))
        curve_rt.append(g.iloc[0]["runtime"])
        per = {}
        for r in g.itertuples():
            branch = layout.parse_branch_file(str(r.path))
            if branch is None:
                continue
            csv_path = os.path.join(os.path.dirname(str(r.path)),
                                    layout.branch_files(branch[0])["csv"])
            try:  # validated like every result (changed since the report was read?)
                per[int(r.batch_size)] = read_branch(csv_path, str(r.path))[0]
            except CorruptResult:
                continue
        if per:
            samples[label] = per

    def save(fig, name: str, caption: str) -> None:
        fname = f"{model_slug}_{name}.png"
        save_figure(fig, [os.path.join(img_dir, fname)])
        out.append((fname, caption))

    if curves:
        save(plot_runtimes(curves, x_log=True), "latency",
             "Latency per event vs batch size (median, 16-84% band)")
        save(plot_throughput(curves), "throughput", "Throughput vs batch size")
        # the reference: the reference runtime (its newest version when several are measured)
        refs = [(i, c) for i, (c, rt) in enumerate(zip(curves, curve_rt, strict=True))
                if rt == reference_runtime]
        refs.sort(key=lambda t: _version_key(str(t[1].stats.iloc[0]["runtime_version"])))
        ref = [refs[-1][1]] if refs else []
        # like with like: the same device, threads and settings as the reference
        same = ("device", "threads", "settings_key")
        others = [c for c in curves if ref and c is not ref[0] and all(
            str(c.stats.iloc[0][k]) == str(ref[0].stats.iloc[0][k]) for k in same)]
        if ref and others:
            try:
                save(plot_speedup(ref[0], others), "speedup",
                     f"Speed-up vs {ref[0].label} (reference)")
            except ValueError:
                pass
    if samples:
        save(plot_distributions(samples), "distributions",
             "Latency per call distributions per batch size")
    # history: the statistic over versions, one plot per configuration with > 1 version
    model_report = report[(report["model"] == rows.iloc[0]["model"])
                          & (report["model_hash"] == rows.iloc[0]["model_hash"])]
    for i, (g, lines, marks) in enumerate(history_groups(model_report, alerts, statistic,
                                                         min_points=2)):
        fig = plot_history(lines, statistic=statistic, alerts=marks,
                           top_right_label=f"{g['runtime']} {g['runtime_version']}, "
                           f"{g['device']}, {g['threads']} thr")
        save(fig, f"history{i}", f"History of {statistic} over versions: {g['runtime']} "
             f"{g['runtime_version']} on {g['host']} ({g['settings_key']})")
    return out


def build_dashboard(report, out_dir: str | os.PathLike, *,
                    current_versions: Sequence[str] | None = None,
                    experiments: Sequence[dict] | None = None,
                    reference_runtime: str = DEFAULT_RUNTIME, statistic: str = "median_ms",
                    rule: AlertRule | None = None, title: str = "mlprof dashboard",
                    plots: bool = True) -> dict[str, Any]:
    """Write the dashboard for ``report`` (a DataFrame of :func:`mlprof.report.to_frame`).

    ``experiments`` are status dicts (title, file, status, errors, ...) as written by the
    nightly run. Returns a summary: counts of results, failures and alerts, and the pages.
    """
    out_dir = os.fspath(out_dir)
    os.makedirs(os.path.join(out_dir, "models"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "img"), exist_ok=True)
    current = current_results(report, current_versions)
    alerts_df = alerts_table(report, statistic, rule)
    alerts = alerts_df.to_dict("records")
    current_set = set(current_versions or [])
    for a in alerts:
        a["new"] = "yes" if (a["version"] in current_set or a["first_version"] in current_set
                             ) else ""
    alerts.sort(key=lambda a: (a["new"] != "yes", str(a["version"])), reverse=False)

    # the files behind the tables
    table_rows = current[TABLE_COLUMNS].to_dict("records") if len(current) else []
    current[TABLE_COLUMNS].to_csv(os.path.join(out_dir, "results.csv"), index=False)
    report.to_csv(os.path.join(out_dir, "report.csv"), index=False)
    alerts_df.to_csv(os.path.join(out_dir, "alerts.csv"), index=False)

    # one page per model (name and hash)
    model_pages: dict[tuple[str, str], str] = {}
    for (model, mhash), _rows in current.groupby(["model", "model_hash"], sort=True,
                                                 dropna=False):
        model_pages[(model, mhash)] = layout.model_page(
            model, mhash if isinstance(mhash, str) and mhash else None)

    def model_link(r: dict, prefix: str = "") -> str | None:
        page = model_pages.get((r.get("model"), r.get("model_hash")))
        return prefix + page if page else None

    cur_by_row = current.to_dict("records")
    link_rows = []
    for r, full in zip(table_rows, cur_by_row, strict=True):
        link_rows.append({**r, "model_hash": full["model_hash"]})

    failures = [r for r in cur_by_row if r["status"] != "ok"]
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
            ' &middot; <a href="alerts.csv">alerts.csv</a>')
    n_reg = sum(1 for a in alerts if a["kind"] == "regression")
    n_imp = sum(1 for a in alerts if a["kind"] == "improvement")
    alert_cols = ["new", "kind", "model", "runtime", "runtime_version", "threads", "batch_size",
                  "first_version", "version", "baseline", "value", "change", "z", "host"]
    alert_headers = {"first_version": "from version", "version": "confirmed by",
                     "baseline": f"baseline {statistic}", "value": statistic}
    body = []
    if experiments is not None:
        body.append('<section id="experiments"><h2>Experiments</h2>' + _table(
            exp_rows, ["title", "status", "results", "file", "message", "description"],
            table_id="experiments-table", empty="no experiment files") + "</section>")
    r = rule or AlertRule()
    body.append(f'<section id="regressions"><h2>Regressions ({n_reg}) and improvements '
                f'({n_imp})</h2><p>Robust rule: trimmed mean and noise (residuals of a line) of '
                f'up to {r.window} earlier results (a change &ge; '
                f'{100 * r.short_z * r.prior_noise:g}% while fewer than {r.short_history}), '
                f'then the mean of {r.persist} to {r.max_run} points beyond a Student-t '
                f'threshold (|z| &ge; {r.z_min:g} for a long history), each &ge; '
                f'{r.z_each:g} noise units and change &ge; {100 * r.min_change:g}%, '
                f'confirmed by the next point or a re-measurement; statistic '
                f'{_esc(statistic)}.</p>'
                + _table(alerts, alert_cols, table_id="alerts-table", headers=alert_headers,
                         links={"model": lambda r: model_link(r)},
                         empty="no regressions or improvements") + "</section>")
    body.append('<section id="failures"><h2>Failures</h2>'
                + _table(exp_failures, ["title", "file", "status", "message"],
                         table_id="experiment-failures-table", empty="no experiment failed")
                + _table(failures, ["model", "stage", "runtime", "runtime_version",
                                    "batch_size", "status", "error", "version"],
                         table_id="failures-table", links={"model": lambda r: model_link(r)},
                         empty="no measurement failed")
                + "</section>")
    body.append(f'<section id="results"><h2>Results ({len(table_rows)})</h2>'
                '<p>Click a column to sort. Latencies per call in ms; throughput in events/s '
                'at the mean latency. <a href="results.csv">results.csv</a> has these rows.</p>'
                + _table(link_rows, TABLE_COLUMNS, table_id="results-table",
                         links={"model": lambda r: model_link(r)}, empty="no results")
                + "</section>")
    with open(os.path.join(out_dir, "index.html"), "w") as f:
        f.write(_page(title, meta, "".join(body)))

    # model pages
    prov_cols = ["runtime", "runtime_version", "batch_size", "status", "host", "cpu_model",
                 "threads", "n_calls", "n_events", "warmup", "min_duration", "input_data",
                 "session_creation_ms", "peak_rss_mb", "version", "timestamp", "git_commit",
                 "mlprof_version", "settings_key", "path"]
    for (model, mhash), page in model_pages.items():
        rows = current[(current["model"] == model) & (current["model_hash"] == mhash)]
        mslug = os.path.splitext(os.path.basename(page))[0]
        figs = _model_plots(rows, report, [a for a in alerts if a["model"] == model
                                           and a["model_hash"] == mhash],
                            mslug, os.path.join(out_dir, "img"), reference_runtime,
                            statistic) if plots else []
        rec = rows.to_dict("records")
        m_alerts = [a for a in alerts if a["model"] == model and a["model_hash"] == mhash]
        fig_html = "".join(
            f'<figure><img src="{_href("../img/" + fn)}" alt="{_esc(cap)}">'
            f"<figcaption>{_esc(cap)}</figcaption></figure>" for fn, cap in figs
            if _href("../img/" + fn))
        mfile = next((r.get("model_file") for r in rec if isinstance(r.get("model_file"), str)),
                     "")
        mbody = (f'<section><p><a href="../index.html">&larr; all results</a> &middot; model '
                 f"hash {_esc(mhash)} &middot; {_esc(mfile)}</p></section>"
                 f'<section id="plots"><h2>Plots</h2><div class="plots">'
                 f'{fig_html or "<p class=none>no successful result to plot</p>"}</div>'
                 "</section>"
                 '<section id="model-alerts"><h2>Regressions and improvements</h2>'
                 + _table(m_alerts, alert_cols, table_id="model-alerts-table",
                          headers=alert_headers, empty="none") + "</section>"
                 '<section id="model-results"><h2>Results</h2>'
                 + _table(rec, [c for c in TABLE_COLUMNS if c != "model"] + ["error"],
                          table_id="model-results-table") + "</section>"
                 '<section id="provenance"><h2>Provenance</h2>'
                 + _table(rec, prov_cols, table_id="provenance-table") + "</section>")
        with open(os.path.join(out_dir, page), "w") as f:
            f.write(_page(f"{model} ({mhash})", meta.replace('href="', 'href="../'), mbody))
    return {"results": len(table_rows), "failures": len(failures) + len(exp_failures),
            "regressions": n_reg, "improvements": n_imp,
            "new_regressions": sum(1 for a in alerts if a["kind"] == "regression"
                                   and a["new"]),
            "alerts": alerts, "pages": ["index.html", *model_pages.values()]}
