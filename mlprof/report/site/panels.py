"""The history panels of a model's page and the trend lines of the front page (inline SVG).

Every configuration of a model over time: a panel per batch size (anchor
``h-<configuration>-bs<N>``, the target of the alert links) with its baseline, confirming
re-measurements, alerts and events (runtime upgrades, model edits), and the PNG history plot
of :mod:`mlprof.plotting.history` where an alert was raised (at most
:data:`MAX_HISTORY_PNGS`: each costs about a second to draw).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from mlprof.report.alerts import AlertRule
from mlprof.report.history import history_unit
from mlprof.report.site.escape import esc
from mlprof.report.site.page import figure_html
from mlprof.report.site.series import (
    Series,
    anchor_of,
    baseline_of,
    cfg_id,
    norm,
    series_key,
)
from mlprof.report.site.svg import history_panel, sparkline
from mlprof.report.site.table import number, precision_of
from mlprof.results.identity import SERIES_KEY

if TYPE_CHECKING:
    from mlprof.report.site.context import Site

#: points of a trend line
TREND_POINTS = 30
#: at most this many history plots (PNG, :mod:`mlprof.plotting.history`) per dashboard: one per
#: configuration with an alert, new alerts first (each costs about a second to draw; the SVG
#: panels show every configuration anyway)
MAX_HISTORY_PNGS = 12


def history_html(model_report, series: Mapping[tuple, Series], alerts: Sequence[dict],
                  statistic: str, img_dir: str, slug: str, png_configs: set[tuple]) -> str:
    """Every configuration of the model over time: a panel per batch size (anchors
    ``h-<configuration>-bs<N>``, the targets of the alert links), and the PNG history plot of
    :mod:`mlprof.plotting.history` where an alert was raised."""
    def order(k: tuple[str, ...]) -> tuple:
        bs = number(k[-1])
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
            panels.append(f'<div class="panel" id="{anchor_of(k)}">' + history_panel(
                s.points(), title=f"batch size {k[-1]}", unit=unit, baseline=base,
                alerts=s.alerts, events=s.events(), scale=scale) + "</div>")
        if not panels:
            continue
        cfg = dict(zip(SERIES_KEY, (*ckey, ""), strict=True))
        seen = [v for k in skeys for v in series[k].runtime_versions if v]
        cfg["runtime_version"] = seen[-1] if len(set(seen)) <= 1 else \
            f"{series[skeys[0]].runtime_versions[0]} -> {seen[-1]}"
        precision = precision_of(cfg["settings_key"])
        head = (f"{cfg['runtime']} {cfg['runtime_version']} on {cfg['device']}, "
                f"{cfg['threads']} thread(s), {precision}, host {cfg['host']} "
                f"({cfg['cpu_model']})")
        fig = ""
        c_alerts = [a for a in alerts if series_key(a)[:-1] == ckey]
        if c_alerts and ckey in png_configs:
            fig = _history_png(model_report, c_alerts, statistic, img_dir, slug, n, cfg)
        blocks.append(f'<div class="cfg" id="cfg-{cfg_id((*ckey, ""))}"><h3>{esc(head)}</h3>'
                      f'<p class="path">{esc(cfg["settings_key"])}</p>{fig}'
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
        if tuple(norm(g.get(k)) for k in SERIES_KEY[:-1]) != ckey:
            continue
        fig = plot_history(lines, statistic=statistic, alerts=marks, events=g["events"],
                           top_right_label=(
            f"{g['runtime']} {g['runtime_version']}, {g['device']}, {g['threads']} thr"))
        fname = f"{slug}_history{n}.png"
        try:
            save_figure(fig, [os.path.join(img_dir, fname)])
        finally:
            plt.close(fig)
        what = "; ".join(f"{a.get('kind')} at batch size {norm(a.get('batch_size'))} from "
                         f"{a.get('first_version')}" for a in c_alerts)
        return figure_html("../img/" + fname, f"History of {statistic}, "
                       f"{cfg['runtime']} {cfg['runtime_version']}: {what}",
                       f"hist-{cfg_id((*ckey, ''))}")
    return ""




def trend(site: Site, key: tuple[str, ...], tip: str, width: int = 120, height: int = 28) -> str:
    """The sparkline of the series ``key``: its last :data:`TREND_POINTS` values, its baseline
    dashed, its alerts marked ("" for a series without values)."""
    s = site.series.get(key)
    if s is None or not s.values:
        return ""
    n0 = max(0, len(s.values) - TREND_POINTS)
    base = baseline_of(s, s.versions[-1], s.timestamps[-1], site.rule.window)
    return sparkline(s.values[n0:], baseline=base, worse_up=site.worse_up, title=tip,
                     marks={i - n0: k for i, k in s.alerts.items() if i >= n0},
                     width=width, height=height)
