"""What every page of one dashboard shares: the current results, series, alerts and pages.

:func:`prepare` derives it once from the report (series and alerts from
:mod:`mlprof.report.history`, the current result of each series, each with its shown status and
its change vs its baseline), and each section module reads it from the :class:`Site`.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlprof.report import history
from mlprof.report.alerts import AlertRule
from mlprof.report.history import HIGHER_IS_BETTER, NoiseFloors, alerts_table, min_detectable_lines
from mlprof.report.site.escape import esc
from mlprof.report.site.failures import group_failures
from mlprof.report.site.generation import current_generations
from mlprof.report.site.load import current_loads
from mlprof.report.site.panels import MAX_HISTORY_PNGS
from mlprof.report.site.precision import current_precisions
from mlprof.report.site.series import (
    Series,
    baseline_of,
    build_series,
    current_results,
    model_labels,
    series_key,
)
from mlprof.report.site.table import MEASURED, number, shown_status
from mlprof.results import identity, layout


@dataclass
class Site:
    """One dashboard's data, derived once (:func:`prepare`) and read by every section."""

    report: Any
    current: Any
    out_dir: str
    statistic: str
    rule: AlertRule
    floors: NoiseFloors
    title: str
    current_versions: list[str]
    series: dict[tuple[str, ...], Series]
    alerts_df: Any
    alerts: list[dict]
    png_configs: set[tuple] = field(default_factory=set)
    labels: dict[tuple, str] = field(default_factory=dict)
    model_pages: dict[tuple, str] = field(default_factory=dict)
    gen_pages: dict[tuple, str] = field(default_factory=dict)
    #: the current results as dicts, each with ``status`` (shown), ``label``, ``baseline``
    #: and ``change``
    cur: list[dict] = field(default_factory=list)
    gen_rows: list[dict] = field(default_factory=list)
    precisions: list[dict] = field(default_factory=list)
    loads: list[dict] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)
    groups: list[dict] = field(default_factory=list)
    exp_rows: list[dict] = field(default_factory=list)
    exp_failures: list[dict] = field(default_factory=list)
    now: str = ""
    meta: str = ""

    @property
    def worse_up(self) -> bool:
        """Whether a higher value of the statistic is worse (latency: yes; throughput: no)."""
        return self.statistic not in HIGHER_IS_BETTER

    @property
    def img_dir(self) -> str:
        return os.path.join(self.out_dir, "img")

    def model_link(self, r: Mapping[str, Any], anchor: str = "") -> str | None:
        """The page of ``r``'s model (with ``#anchor``), None for a model without one."""
        key = (r.get("model"), r.get("model_hash"))
        page = self.model_pages.get(key) or self.gen_pages.get(key)
        return page + (f"#{anchor}" if page and anchor else "") if page else None

    def kind_counts(self) -> dict[str, int]:
        """Regressions and improvements, all and new (of the current versions)."""
        def n(kind: str, new: bool = False) -> int:
            return sum(1 for a in self.alerts if a["kind"] == kind and (a["new"] or not new))

        return {"regressions": n("regression"), "improvements": n("improvement"),
                "new_regressions": n("regression", True),
                "new_improvements": n("improvement", True)}


def prepare(report, out_dir: str, *, current_versions: Sequence[str] | None,
            experiments: Sequence[dict] | None, statistic: str, rule: AlertRule, title: str,
            plots: bool, precisions: Sequence[Mapping[str, Any]],
            loads: Sequence[Mapping[str, Any]], generations: Sequence[Mapping[str, Any]],
            floors: NoiseFloors | None) -> Site:
    """The :class:`Site` of ``report``: alerts (``new`` when of ``current_versions``) marked
    on their series, the pages, the current rows with their changes, failures grouped."""
    report = identity.assign(report)
    floors = NoiseFloors() if floors is None else floors
    frames = history.series(report, statistic) if not report.empty else {}
    alerts_df = alerts_table(report, statistic, rule, floors, frames=frames)
    site = Site(report=report, current=current_results(report, current_versions),
                out_dir=out_dir, statistic=statistic, rule=rule, floors=floors, title=title,
                current_versions=list(current_versions or []),
                series=build_series(report, statistic, frames), alerts_df=alerts_df,
                alerts=alerts_df.to_dict("records"))
    _mark_alerts(site, plots)
    _pages(site, generations, current_versions)
    _current_rows(site)
    site.precisions = current_precisions(precisions, current_versions)
    site.loads = current_loads(loads, current_versions)
    site.failures = [r for r in site.cur if r["status"] not in MEASURED]
    # damaged records, current or not, are listed until they are measured again
    listed = {r["path"] for r in site.failures}
    site.failures += [r for r in report[report["status"] == "corrupt"].to_dict("records")
                      if r["path"] not in listed]
    site.groups = group_failures(site.failures)
    site.exp_rows = experiment_rows(experiments)
    site.exp_failures = [{"title": e["title"], "file": e["file"], "status": e["status"],
                          "message": e["message"]} for e in site.exp_rows
                         if e["status"] not in ("ok", "inactive") and e["message"]]
    site.now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    site.meta = _meta(site)
    return site


def _mark_alerts(site: Site, plots: bool) -> None:
    """Each alert ``new`` or not, marked on its series; new ones first; the configurations
    whose history gets a PNG plot (at most :data:`MAX_HISTORY_PNGS`, new and large first)."""
    current_set = set(site.current_versions)
    for a in site.alerts:
        a["new"] = "yes" if (a["version"] in current_set or a["first_version"] in current_set
                             ) else ""
        s = site.series.get(series_key(a))
        if s is not None and a["version"] in s.versions:
            s.alerts[s.versions.index(a["version"])] = str(a["kind"])
    site.alerts.sort(key=lambda a: (a["new"] != "yes", str(a["version"])), reverse=False)
    for a in sorted(site.alerts, key=lambda a: (a["new"] != "yes",
                                                -abs(number(a["change"]) or 0))):
        if plots and len(site.png_configs) < MAX_HISTORY_PNGS:
            site.png_configs.add(series_key(a)[:-1])


def _pages(site: Site, generations: Sequence[Mapping[str, Any]],
           current_versions: Sequence[str] | None) -> None:
    """One page per model (name and hash), titled by its label; a page of its own for a decoder
    measured only by MeasureGeneration."""
    current = site.current
    site.labels = model_labels(current) if len(current) else {}
    for (model, mhash), _rows in current.groupby(["model", "model_hash"], sort=True,
                                                 dropna=False):
        site.model_pages[(model, mhash)] = layout.model_page(
            model, mhash if isinstance(mhash, str) and mhash else None)
    site.gen_rows = current_generations(generations, current_versions)
    site.gen_pages = {(r.get("model"), r.get("model_hash")): layout.model_page(
        str(r.get("model")), r.get("model_hash") if isinstance(r.get("model_hash"), str)
        and r.get("model_hash") else None) for r in site.gen_rows
        if (r.get("model"), r.get("model_hash")) not in site.model_pages}


def _current_rows(site: Site) -> None:
    """The current results, each with its shown status and its change vs its baseline."""
    site.cur = site.current.to_dict("records")
    for r in site.cur:
        r["status"] = shown_status(r)
        r["label"] = site.labels.get((r.get("model"), r.get("model_hash")), r.get("model"))
        r["baseline"] = r["change"] = None
        s = site.series.get(series_key(r)) if r["status"] in MEASURED else None
        value = number(r.get(site.statistic))
        if s is not None and value is not None:
            base = baseline_of(s, str(r.get("version")), str(r.get("timestamp") or ""),
                               site.rule.window)
            if base:
                r["baseline"], r["change"] = base, value / base - 1


def experiment_rows(experiments: Sequence[dict] | None) -> list[dict]:
    """Nightly's experiment statuses as table rows (a field of any type is shown as text)."""
    rows = []
    for e in experiments or []:
        if not isinstance(e, dict):
            continue
        errors = e.get("errors") or []
        errors = [errors] if isinstance(errors, str) else errors
        rows.append({"title": e.get("title") or e.get("name"), "file": e.get("file"),
                     "status": e.get("status"), "results": e.get("results", ""),
                     "message": "; ".join(map(str, errors)) if isinstance(
                         errors, (list, tuple)) else str(errors),
                     "description": e.get("description", "")})
    return rows


def _meta(site: Site) -> str:
    """The header line of every page: when, which versions, hosts, commits, the CSVs and what
    a change must exceed to be told from the hosts' noise (issue 36)."""
    versions = ", ".join(site.current_versions) or "latest of each result"
    current = site.current
    hosts = sorted({str(h) for h in current.get("host", []) if isinstance(h, str)})
    commits = sorted({str(c) for c in current.get("git_commit", []) if isinstance(c, str)})
    return (f"generated {site.now} &middot; results: {esc(versions)} &middot; "
            f"host(s): {esc(', '.join(hosts) or '-')} &middot; mlprof commit(s): "
            f"{esc(', '.join(c[:10] for c in commits) or '-')} &middot; "
            '<a href="results.csv">results.csv</a> &middot; <a href="report.csv">report.csv</a>'
            ' &middot; <a href="alerts.csv">alerts.csv</a>'
            + "".join(f"<br>{esc(t)}" for t in min_detectable_lines(current, site.floors)))
