"""The front page of the dashboard (``index.html``): counts, alerts, trends, failures, results.

Counts of results, regressions, failures and experiments; the experiments and their status;
regressions and improvements, each with its trend and a link to its history; a trend line per
series (asv's grid); failures grouped by message; a table of models and a filterable, sortable
table of every current result with its change vs its baseline (also ``results.csv``); then the
precision, load and generation sections.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mlprof.report.site.escape import esc, safe_href
from mlprof.report.site.failures import failures_html
from mlprof.report.site.generation import generations_html
from mlprof.report.site.load import loads_html
from mlprof.report.site.panels import TREND_POINTS, trend
from mlprof.report.site.precision import precisions_html
from mlprof.report.site.series import anchor_of, norm, series_key
from mlprof.report.site.table import (
    MEASURED,
    TABLE_COLUMNS,
    flag,
    flag_counts,
    html_table,
    number,
    precision_text,
)

if TYPE_CHECKING:
    from mlprof.report.site.context import Site

#: the columns of the alerts tables (the model page's without ``trend`` and ``history``)
ALERT_COLUMNS = ["new", "kind", "test", "event", "model", "runtime", "runtime_version",
                 "threads", "batch_size", "first_version", "version", "baseline", "value",
                 "change", "trend", "z", "host", "history"]


def alert_headers(statistic: str) -> dict[str, str]:
    """The headers of the alerts tables' columns."""
    return {"first_version": "from version", "version": "confirmed by",
            "event": "coincides with", "baseline": f"baseline {statistic}", "value": statistic,
            "history": "history"}


def index_body(site: Site, with_experiments: bool) -> str:
    """The front page's sections, in reading order."""
    body = [tiles_html(site)]
    if with_experiments:
        body.append('<section id="experiments"><h2>Experiments</h2>' + html_table(
            site.exp_rows, ["title", "status", "results", "file", "message", "description"],
            table_id="experiments-table", empty="no experiment files") + "</section>")
    body += [alerts_html(site), trends_html(site),
             failures_html(site.exp_failures, site.groups, site.model_link),
             results_html(site), precisions_html(site.precisions, model_link=site.model_link),
             loads_html(site.loads, model_link=site.model_link),
             generations_html(site.gen_rows, model_link=site.model_link)]
    return "".join(body)


def alerts_html(site: Site) -> str:
    """Regressions and improvements: the rule in one paragraph, then a row per alert with its
    trend, linked to its history panel."""
    rule, statistic, k = site.rule, site.statistic, site.kind_counts()

    def link(r: dict) -> str | None:
        return site.model_link(r, anchor_of(series_key(r)))

    return (
        f'<section id="regressions"><h2>Regressions ({k["regressions"]}, '
        f'{k["new_regressions"]} new) and improvements ({k["improvements"]}, '
        f'{k["new_improvements"]} new)</h2><p>Robust rule: trimmed mean and noise (residuals of a '
        f'line) of up to {rule.window} earlier results (a change &ge; '
        f'{100 * rule.short_z * rule.prior_noise:g}% while fewer than {rule.short_history}), '
        f'then the mean of {rule.persist} to {rule.max_run} agreeing points beyond a '
        f'Student-t threshold (|z| &ge; {rule.z_min:g} for a regression, '
        f'{rule.z_improvement:g} for an improvement, with a long history), each &ge; '
        f'{rule.z_each:g} noise units and change &ge; {100 * rule.min_change:g}%; or a rising '
        f'trend over {rule.trend_min} to {rule.trend_window} results (|z| &ge; '
        f'{rule.trend_z:g}); a run with an unusually wide spread counts only beyond '
        f'{100 * rule.neighbour_max:g}% slower; confirmed by the next point or a '
        f're-measurement; statistic {esc(statistic)}. The change must also exceed 2 x '
        f"the noise floor of the series' host where it is calibrated; "
        f"{esc(site.floors.summary(rule))}. "
        "Each row links to its history.</p>"
        + html_table(site.alerts, ALERT_COLUMNS, table_id="alerts-table",
                     headers=alert_headers(statistic),
                     links={"model": link, "history": link,
                            # the history across the upgrade or edit: both sides, one click
                            "event": lambda r: link(r) if r.get("event") else None},
                     raw={"trend": lambda r: trend(site, series_key(r), f"{r['model']} "
                                                   f"{r['runtime']} bs {norm(r['batch_size'])}"),
                          "history": lambda r: "history"},
                     worse_up=site.worse_up, empty="no regressions or improvements")
        + "</section>")


#: a change at least this large (either way) puts a series among the front page's trends
CHANGE_SHOWN = 0.10


def tiles_html(site: Site) -> str:
    """The counts at the top: results and their flags, new regressions and improvements,
    failures and experiments not ok."""
    counts, n, groups, exp_rows = flag_counts(site.cur), len(site.cur), site.groups, site.exp_rows
    k = site.kind_counts()
    n_reg, new_reg = k["regressions"], k["new_regressions"]
    n_imp, new_imp = k["improvements"], k["new_improvements"]
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
        f'<div class="tile {cls}"><b>{esc(v)}</b>{esc(name)}: {esc(sub)}</div>'
        for name, v, sub, cls in tiles) + "</div></section>")


def trends_html(site: Site) -> str:
    """A small trend line for every current series with a history (asv's grid): one card per
    model, runtime and batch size, in that order, each named in full (nothing cut off) with
    its change vs its baseline. Cards of series that alerted or moved by at least
    :data:`CHANGE_SHOWN` are framed in the change's colour (class ``worse``/``better``) and
    ``data-c="1"``, which the "changed only" box filters on.

    Why every series, not only those that changed: a reader checks that a series they care
    about is quiet by seeing it, and a series that did not move is an answer too.
    """
    cur, series, model_link, worse_up = site.cur, site.series, site.model_link, site.worse_up
    rows = []
    for r in cur:
        key = series_key(r)
        s = series.get(key)
        if s is None or r["status"] not in MEASURED or not s.values:
            continue
        bs = number(r.get("batch_size"))
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
        href = safe_href(model_link(r, anchor_of(key)) or "")
        inner = (f'<div class="what"><b>{esc(r["label"])}</b><br>{esc(r["runtime"])} '
                 f'{esc(r["runtime_version"])} &middot; {esc(norm(r.get("threads")))} '
                 f'thread(s){precision_text(r.get("precision"))}<br>batch size '
                 f'<b>{esc(norm(r["batch_size"]))}</b></div>'
                 f'{trend(site, key, "", width=200, height=34)} '
                 + (f'<span class="{ccls}">' if ccls else "<span>") + f"{esc(ctext)}</span>")
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



def results_html(site: Site) -> str:
    """The results: a table of models (each with its counts and worst change) and a
    filterable, sortable table of every current result with its change vs its baseline."""
    cur, labels, model_link, worse_up = site.cur, site.labels, site.model_link, site.worse_up
    statistic = site.statistic
    models = []
    for model, mhash in site.model_pages:
        rows = [r for r in cur if r["model"] == model and r["model_hash"] == mhash]
        changes = [r["change"] for r in rows if r.get("change") is not None]
        worst = (max(changes) if worse_up else min(changes)) if changes else None
        models.append({"model": model, "model_hash": mhash, "label": labels.get(
            (model, mhash), model), "n_results": len(rows),
            **flag_counts(rows),
            "failed": sum(1 for r in rows if r["status"] not in MEASURED), "worst": worst})
    models_table = html_table(
        models, ["label", "model", "n_results", "ok", "unstable", "contended", "failed",
                 "worst", "show"], table_id="models-table",
        headers={"label": "model", "model": "name", "show": ""},
        links={"label": lambda r: model_link(r)},
        raw={"show": lambda r: f'<button class="link" data-model="{esc(r["model"])}">show '
             "results</button>"}, worse_up=worse_up, empty="no results")
    prev: list[tuple | None] = [None]

    def attrs(i: int, r: Mapping[str, Any]) -> str:
        start = (r["model"], r["model_hash"]) != prev[0]
        prev[0] = (r["model"], r["model_hash"])
        changed = r.get("change") is not None and abs(r["change"]) >= CHANGE_SHOWN
        flags = " ".join(f for f in ("unstable", "contended") if flag(r.get(f)))
        return (f' data-i="{i}" data-s="{esc(r["status"])}" data-m="{esc(r["model"])}" '
                f'data-f="{flags}" data-c="{int(changed)}"'
                + (' class="gstart"' if start else ""))

    statuses = sorted({r["status"] for r in cur}, key=lambda s: (
        s not in MEASURED, MEASURED.index(s) if s in MEASURED else 0, s))
    options = "".join(f'<option value="{esc(s)}">{esc(s)}</option>' for s in statuses)
    controls = (
        '<div class="controls"><input type="search" id="filter" placeholder="filter: words '
        'all rows must contain (model, runtime, status, version...)" aria-label="filter">'
        '<select id="status-filter" aria-label="status"><option value="">all statuses'
        f'</option><option value="failures">failures</option>{options}</select>'
        '<label><input type="checkbox" id="changed-only"> changed only (&ge; '
        f'{100 * CHANGE_SHOWN:g}%)</label><button id="regroup">group by model</button>'
        '<span id="filter-count"></span></div>')
    table = html_table(cur, TABLE_COLUMNS, table_id="results-table", table_class="grouped",
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
            f"{esc(statistic)} vs the baseline of its series. "
            '<a href="results.csv">results.csv</a> has these rows.</p>'
            + (controls if cur else "") + table + "</section>")
