"""A model's page (``models/<model>__<hash>.html``), titled by the model's label.

Latency, throughput and speed-up vs batch size and the latency distributions
(:mod:`mlprof.report.site.plots`), the history of every configuration
(:mod:`mlprof.report.site.panels`), its alerts, results, precisions, load points, generation
points and provenance. A decoder measured only by MeasureGeneration gets a page with its
generation table alone.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from mlprof.report.site.escape import esc
from mlprof.report.site.generation import generations_html
from mlprof.report.site.index import ALERT_COLUMNS, alert_headers
from mlprof.report.site.load import loads_html
from mlprof.report.site.page import html_page
from mlprof.report.site.panels import history_html
from mlprof.report.site.plots import model_plots
from mlprof.report.site.precision import precisions_html
from mlprof.report.site.series import anchor_of, series_key, settings_parts
from mlprof.report.site.table import TABLE_COLUMNS, html_table
from mlprof.results import records

if TYPE_CHECKING:
    from mlprof.report.site.context import Site

#: the columns of a model page's provenance table
PROVENANCE_COLUMNS = ["runtime", "runtime_version", "batch_size", "status", "host", "cpu_model",
                      "threads", "n_calls", "n_events", "warmup", "min_duration", "input_data",
                      "session_creation_ms", "peak_rss_mb", "version", "timestamp",
                      "git_commit", records.MLPROF_VERSION, "settings_key", "path"]


def _of(frame, model: Any, mhash: Any):
    """The rows of ``frame`` of the model (name and hash; a missing hash matches NaN)."""
    sel = (frame["model"] == model) & (
        frame["model_hash"] == mhash if isinstance(mhash, str) else frame["model_hash"].isna())
    return frame[sel]


def _mine(rows: list[dict], key: tuple) -> list[dict]:
    return [r for r in rows if (r.get("model"), r.get("model_hash")) == key]


def _page_meta(site: Site, model: Any) -> str:
    return f"{esc(model)} &middot; " + site.meta.replace('href="', 'href="../')


def model_page(site: Site, key: tuple, page: str, reference_runtime: str) -> str:
    """The whole page of the model ``key`` (name, hash); writes its plots under ``img/``."""
    model, mhash = key
    slug = os.path.splitext(os.path.basename(page))[0]
    m_alerts = [a for a in site.alerts if a["model"] == model and a["model_hash"] == mhash]
    figs = model_plots(_of(site.current, model, mhash), site.img_dir, slug, reference_runtime)
    history = history_html(_of(site.report, model, mhash), site.series, m_alerts,
                           site.statistic, site.img_dir, slug, site.png_configs)
    rec = [r for r in site.cur if (r["model"], r["model_hash"]) == key]
    mfile = next((r.get("model_file") for r in rec if isinstance(r.get("model_file"), str)), "")
    exports = sorted({settings_parts(r.get("settings_key"))[1] for r in rec} - {""})
    mbody = (f'<section><p><a href="../index.html">&larr; all results</a> &middot; model '
             f"{esc(model)} &middot; hash {esc(mhash)} &middot; {esc(mfile)}"
             + (f" &middot; ONNX export: {esc(', '.join(exports))}" if exports else "")
             + "</p></section>"
             '<section id="plots"><h2>Latency, throughput, speed-up and distributions'
             f'</h2><div class="plots">'
             f'{"".join(figs) or "<p class=none>no successful result to plot</p>"}'
             "</div></section>"
             f'<section id="history"><h2>History of {esc(site.statistic)}</h2><p>One panel '
             "per batch size: dashed the baseline, open points confirming "
             "re-measurements, triangles alerts (red up: regression, green down: "
             f"improvement). Hover a point for its version and value.</p>{history}"
             "</section>"
             '<section id="model-alerts"><h2>Regressions and improvements</h2>'
             + html_table(m_alerts, [c for c in ALERT_COLUMNS if c not in ("trend", "history")],
                          table_id="model-alerts-table", headers=alert_headers(site.statistic),
                          links={"model": lambda r: "#" + anchor_of(series_key(r))},
                          worse_up=site.worse_up, empty="none") + "</section>"
             '<section id="model-results"><h2>Results</h2>'
             + html_table(rec, [c for c in TABLE_COLUMNS if c != "model"] + ["error"],
                          table_id="model-results-table", worse_up=site.worse_up)
             + "</section>"
             + precisions_html(_mine(site.precisions, key), section_id="model-precisions")
             + loads_html(_mine(site.loads, key), section_id="model-load")
             + generations_html(_mine(site.gen_rows, key), section_id="model-generation")
             + '<section id="provenance"><h2>Provenance</h2>'
             + html_table(rec, PROVENANCE_COLUMNS, table_id="provenance-table") + "</section>")
    return html_page(site.labels.get(key, str(model)), _page_meta(site, model), mbody)


def generation_page(site: Site, key: tuple) -> str:
    """The page of a decoder measured only by MeasureGeneration: its generation table."""
    model, mhash = key
    mine = _mine(site.gen_rows, key)
    mfile = next((r.get("model_file") for r in mine if isinstance(r.get("model_file"), str)), "")
    mbody = (f'<section><p><a href="../index.html">&larr; all results</a> &middot; model '
             f"{esc(model)} &middot; hash {esc(mhash)} &middot; {esc(mfile)}</p>"
             "</section>" + generations_html(mine, section_id="model-generation"))
    return html_page(str(model), _page_meta(site, model), mbody)
