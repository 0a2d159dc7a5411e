"""The dashboard's one entry point: :func:`build_dashboard` wires the sections into a site.

It derives the data once (:func:`mlprof.report.site.context.prepare`), writes the CSVs, the
front page (:mod:`~mlprof.report.site.index`) and one page per model
(:mod:`~mlprof.report.site.model`), and returns the summary that the Dashboard task prints and
the archive (:mod:`~mlprof.report.site.archive`) lists.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from mlprof.progress import Progress
from mlprof.report.alerts import AlertRule
from mlprof.report.history import NoiseFloors
from mlprof.report.site.context import Site, prepare
from mlprof.report.site.index import index_body
from mlprof.report.site.model import generation_page, model_page
from mlprof.report.site.page import html_page
from mlprof.report.site.table import CSV_COLUMNS, flag_counts
from mlprof.runtimes import DEFAULT_RUNTIME


def build_dashboard(report, out_dir: str | os.PathLike, *,
                    current_versions: Sequence[str] | None = None,
                    experiments: Sequence[dict] | None = None,
                    reference_runtime: str = DEFAULT_RUNTIME, statistic: str = "median_ms",
                    rule: AlertRule | None = None, title: str = "mlprof dashboard",
                    plots: bool = True, precisions: Sequence[Mapping[str, Any]] = (),
                    loads: Sequence[Mapping[str, Any]] = (),
                    generations: Sequence[Mapping[str, Any]] = (),
                    floors: NoiseFloors | None = None,
                    progress: Progress | None = None) -> dict[str, Any]:
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
    page's header states the minimum detectable change of the results' hosts, and alerts fire
    only above 2 x their floor. Returns a summary: counts of results, failures and alerts, the
    pages and what the archive (:mod:`mlprof.report.site.archive`) lists. ``progress`` hears
    the phases and the pages written (:func:`mlprof.progress.speaking`).
    """
    rep = progress or Progress(None)
    out_dir = os.fspath(out_dir)
    os.makedirs(os.path.join(out_dir, "models"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "img"), exist_ok=True)
    rep.phase(f"history, alerts and series of {len(report):,} rows")
    site = prepare(report, out_dir, current_versions=current_versions, experiments=experiments,
                   statistic=statistic, rule=rule or AlertRule(), title=title, plots=plots,
                   precisions=precisions, loads=loads, generations=generations, floors=floors)
    rep.phase("writing the CSVs")
    _write_csvs(site)
    rep.phase("writing the front page")
    _write(site, "index.html", html_page(title, site.meta, index_body(site, experiments
                                                                      is not None)))
    n_pages = len(site.model_pages) + len(site.gen_pages)
    rep.phase(f"writing the model pages (0 of {n_pages})")
    for k, (key, page) in enumerate(site.model_pages.items(), 1):
        _write(site, page, model_page(site, key, page, reference_runtime))
        rep.update(f"writing the model pages ({k} of {n_pages})")
    for k, (key, page) in enumerate(site.gen_pages.items(), len(site.model_pages) + 1):
        _write(site, page, generation_page(site, key))
        rep.update(f"writing the model pages ({k} of {n_pages})")
    return {"results": len(site.cur), "failures": len(site.failures) + len(site.exp_failures),
            "failure_groups": len(site.groups) + len(site.exp_failures), **site.kind_counts(),
            "counts": flag_counts(site.cur), "generated": site.now,
            "current": site.current_versions, "title": title, "alerts": site.alerts,
            "generation": len(site.gen_rows),
            "pages": ["index.html", *site.model_pages.values(), *site.gen_pages.values()]}


def _write(site: Site, page: str, text: str) -> None:
    with open(os.path.join(site.out_dir, page), "w") as f:
        f.write(text)


def _write_csvs(site: Site) -> None:
    """``results.csv`` (the current results as shown: status, change, baseline, label),
    ``report.csv`` (every row of the report) and ``alerts.csv``."""
    cur = site.cur
    shown = site.current.assign(status=[r["status"] for r in cur],
                                change=[r["change"] for r in cur],
                                baseline=[r["baseline"] for r in cur],
                                label=[r["label"] for r in cur])
    for c in CSV_COLUMNS:
        if c not in shown:
            shown[c] = None
    shown[CSV_COLUMNS].to_csv(os.path.join(site.out_dir, "results.csv"), index=False)
    site.report.to_csv(os.path.join(site.out_dir, "report.csv"), index=False)
    site.alerts_df.to_csv(os.path.join(site.out_dir, "alerts.csv"), index=False)
