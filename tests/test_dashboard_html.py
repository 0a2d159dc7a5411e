"""The dashboard's HTML is inert: hostile strings in any store file are shown as text.

A real measurement, then store files next to it as the tasks write them (provenance JSON,
failure records, an ExportOnnx failure, Nightly's experiments JSON), with every string field
set to a hostile string, and directories named with them where a name can hold them. The
dashboard built over that store is opened in Chromium (Playwright): no dialog, no console error,
no injected element or attribute, hovering and clicking the rows runs nothing, and each hostile
string is on the page as text.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from mlprof.report.site import TABLE_COLUMNS
from tests.helpers import FAST, REPO, law_run, open_page

#: each string breaks out of another HTML context (attribute values, text, <script>, URLs,
#: <title>, comments)
HOSTILE = [
    '"><script>alert(1)</script>',
    "' onmouseover='alert(2)",
    "javascript:alert(3)",
    "</script><script>alert(4)</script>",
    "<img src=x onerror=alert(5)>",
    "</title><script>alert(6)</script>",
    "--><script>alert(7)</script><!--",
]

#: CSS classes the dashboard may put on a table cell
CELL_CLASSES = {"num", "msg", "path", "model", "worse", "better", "st-ok", "st-unstable",
                "st-contended", "st-failed", "st-timeout", "st-oom", "st-corrupt",
                "st-needs-network", "st-needs-package", "st-partial", "st-inactive",
                "st-error", "st-regression", "st-improvement", "st-other"}
#: the dashboard's other classes (layout, charts): fixed names, never text from a store
PAGE_CLASSES = {"sortable", "scroll", "meta", "none", "plots", "nights", "tiles", "tile", "bad",
                "warn", "good", "cards", "card", "what", "controls", "grouped", "gstart", "tall",
                "link", "panels", "panel", "cfg", "spark", "hist", "box", "tick", "ttl",
                "mark-regression", "mark-improvement", ""}


def _name(text: str) -> str:
    """``text`` as a directory name (no ``/``)."""
    return text.replace("/", "")


def _hostile_provenance(prov: dict, h: str, version: str) -> dict:
    prov = json.loads(json.dumps(prov))
    for key in ("host", "cpu_model", "runtime_version", "git_commit", "mlprof_version",
                "platform"):
        prov[key] = h
    prov["settings"]["input_data"] = h
    prov["task"].update(model_name=h, model_file=h, version=version)
    prov["model"].update(spec_file=h, name=h, label=h)
    return prov


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _copy_result(src: Path, dst: Path, prov_for, scale: float = 1.0) -> None:
    """The measurement in ``src`` as ``dst``: provenance rewritten, samples scaled."""
    dst.mkdir(parents=True)
    for js in sorted(src.glob("runtime_bs_*.json")):
        _write_json(dst / js.name, prov_for(json.loads(js.read_text())))
        csv = js.with_suffix(".csv")
        lines = csv.read_text().splitlines()
        rows = [",".join([*ln.split(",")[:3], repr(float(ln.split(",")[3]) * scale)])
                for ln in lines[1:]]
        (dst / csv.name).write_text("\n".join([lines[0], *rows]) + "\n")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hostile")
    store = root / "store"
    proc = law_run("MeasureRuntime", "--version", "v1", "--batch-sizes", "1,2", *FAST,
                   store=store)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (real,) = store.glob("MeasureRuntime/*/*/*/v1")
    settings_dir = real.parent
    for i, h in enumerate(HOSTILE):
        # every string field hostile, the version directory named after it, two failures
        version = _name(h)
        _copy_result(real, settings_dir / version,
                     lambda p, h=h, v=version: _hostile_provenance(p, h, v))
        _write_json(settings_dir / version / "_failure_bs_4.json", {
            "task": "MeasureRuntime", "status": h, "message": h, "error": h, "time": h})
        _write_json(settings_dir / version / f"_failure_bs_{8 + i}.json", {
            "task": "MeasureRuntime", "status": "failed", "message": f"bs {8 + i}: {h}",
            "time": "2026-01-01T00:00:00+00:00"})
    # a number that is none: the report makes the branch a corrupt row, its error quoting it
    _copy_result(real, settings_dir / "bad-threads",
                 lambda p: {**_hostile_provenance(p, HOSTILE[0], "bad-threads"),
                            "threads": HOSTILE[1]})
    # hostile directory names: model, runtime and settings
    evil = _name(HOSTILE[4])
    hostile_dirs = (store / "MeasureRuntime" / f"{evil}__0123abcd" / f"onnxruntime-{evil}__cpu"
                    / _name(HOSTILE[1]) / _name(HOSTILE[2]))
    _copy_result(real, hostile_dirs, lambda p: p)
    # a history with a regression, every string of it hostile (alerts table, history plot)
    for n in range(6):
        version = f"n{n}-{_name(HOSTILE[0])}"

        def prov_for(p, version=version, n=n):
            p = _hostile_provenance(p, HOSTILE[3], version)
            p["timestamp"] = f"2026-02-0{n + 1}T00:00:00+00:00"
            return p

        _copy_result(real, settings_dir / version, prov_for, scale=4.0 if n >= 4 else 1.0)
    # an export that failed (a row without batch size)
    _write_json(store / "ExportOnnx" / f"{_name(HOSTILE[0])}__fedcba98" / "onnx-op18-fp32"
                / "v1" / "_failure.json", {"task": "ExportOnnx", "status": HOSTILE[1],
                                          "message": HOSTILE[4], "time": HOSTILE[2]})
    # Nightly's experiments JSON: every field hostile
    experiments = [{"name": h, "title": h, "description": h, "file": h, "status": h,
                    "errors": [h, h], "results": h, "version": h} for h in HOSTILE]
    experiments.append({"title": "odd types", "status": ["ok"], "errors": "not a list",
                        "results": {"a": 1}, "file": None})
    exp_file = root / "experiments.json"
    _write_json(exp_file, experiments)

    import pandas as pd

    from mlprof.report import collect, to_frame
    from mlprof.report.site import build_dashboard

    report = to_frame(collect([store]))
    # the report refuses statuses it does not know (a corrupt row instead); the dashboard is
    # given them anyway, as another report (or a future field) could
    failed = report[report["status"] != "ok"].iloc[0].to_dict()
    injected = [{**failed, "status": h, "error": h, "stage": h, "version": h, "model": h,
                 "path": h} for h in HOSTILE]
    report = pd.concat([report, pd.DataFrame(injected)], ignore_index=True)
    site = root / "site"
    summary = build_dashboard(report, site, experiments=json.loads(exp_file.read_text()),
                              title=HOSTILE[5])
    return {"site": site, "summary": summary, "store": store, "report": report}


def test_the_hostile_store_reaches_every_table(hostile_site: dict) -> None:
    """The fixture is what it claims: hostile statuses, messages, names and an alert."""
    report = hostile_site["report"]
    assert set(HOSTILE) <= set(report["status"])
    assert set(HOSTILE) <= set(report["host"].dropna())
    # through the store: the failure records with hostile statuses are corrupt rows that quote
    # them, and so is the branch whose threads are a hostile string
    corrupt = report[report["status"] == "corrupt"]["error"].tolist()
    assert len(corrupt) >= len(HOSTILE) + 1
    assert any("alert(5)" in e for e in corrupt) and any("threads" in e for e in corrupt)
    summary = hostile_site["summary"]
    assert summary["regressions"] >= 1
    assert len(summary["pages"]) >= 8


def test_statuses_and_kinds_map_to_a_fixed_set_of_classes() -> None:
    from mlprof.report.site.escape import STATE_CLASSES, state_class

    assert state_class("regression") == "st-regression" and state_class("ok") == "st-ok"
    for value in [*HOSTILE, None, 3, ["ok"], "OK", "ok "]:
        assert state_class(value) == "st-other"
    assert {*STATE_CLASSES.values(), "st-other"} <= CELL_CLASSES


def test_html_has_no_raw_hostile_text(hostile_site: dict) -> None:
    """Every page, as bytes: no hostile string unescaped, only the dashboard's own script."""
    site: Path = hostile_site["site"]
    pages = [site / p for p in hostile_site["summary"]["pages"]]
    for page in pages:
        text = page.read_text()
        assert text.count("<script") == 1 and text.count("</script>") == 1, page
        for h in HOSTILE:
            if any(c in h for c in "<>\"'"):  # (javascript:alert(3) is harmless as text)
                assert h not in text, (page, h)
        assert "onmouseover=" not in text.replace("onmouseover=&#x27;", "")
        for cls in re.findall(r'class="([^"]*)"', text):
            assert set(cls.split()) <= CELL_CLASSES | PAGE_CLASSES, (page, cls)
        for href in re.findall(r'(?:href|src)="([^"]*)"', text):
            assert not href.lower().startswith("javascript"), (page, href)
            assert re.fullmatch(r"(\.\./)?(models/|img/)?[A-Za-z0-9._+-]+(#[A-Za-z0-9_-]+)?",
                                href), (page, href)


# -- in Chromium ----------------------------------------------------------------------------


#: every element with an ``on*`` attribute, a ``javascript:`` URL (a link's, an image's: a
#: ``data-*`` attribute holding the text is no URL) or an image not drawn by the dashboard;
#: and the scripts
_INJECTED = """() => {
  const out = [];
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      const url = ["href", "src", "action", "formaction", "xlink:href"].includes(
        a.name.toLowerCase());
      if (a.name.toLowerCase().startsWith("on") || (url && v.startsWith("javascript:"))) {
        out.push(el.tagName + " " + a.name + "=" + a.value);
      }
    }
  }
  for (const img of document.images) {
    if (!/\\/img\\/[A-Za-z0-9._+-]+\\.(png|svg)$/.test(img.src)) { out.push("img " + img.src); }
  }
  out.push("scripts: " + document.scripts.length);
  return out;
}"""


def _poke(page) -> None:
    """Hover every row and cell, click every cell and header (not the links), and send every
    element the events an injected handler would wait for."""
    for row in page.locator("tbody tr").all():
        row.hover()
    for cell in page.locator("td").all():
        cell.dispatch_event("click")
    for head in page.locator("th").all():
        head.click()
    page.evaluate("""() => {
      for (const el of document.querySelectorAll("body *")) {
        for (const t of ["mouseover", "mouseenter", "focus", "click"]) {
          if (t === "click" && el.closest("a")) { continue; }
          el.dispatchEvent(new MouseEvent(t, {bubbles: true}));
        }
      }
    }""")
    page.wait_for_timeout(200)


def _check(browser, path: Path, expect_text: list[str], title: str | None = None) -> None:
    page, problems, dialogs = open_page(browser, path)
    _poke(page)
    assert dialogs == [], (path, dialogs)
    assert problems == [], (path, problems)
    assert page.evaluate(_INJECTED) == ["scripts: 1"], path
    text = page.inner_text("body")
    for h in expect_text:
        assert h in text, (path.name, h)
    if title is not None:
        assert title in page.title()
    page.close()


@pytest.mark.browser
def test_no_script_runs_in_chromium(browser, hostile_site: dict) -> None:
    site: Path = hostile_site["site"]
    # the index: experiments (titles, statuses, messages, descriptions), failures, results
    _check(browser, site / "index.html", HOSTILE, title=HOSTILE[5])
    page, _, _ = open_page(browser, site / "index.html")
    exps = page.inner_text("#experiments-table")
    fails = page.inner_text("#failures-table")
    alerts = page.inner_text("#alerts-table")
    links = sorted(set(page.eval_on_selector_all("a", "as => as.map(a => a.href)")))
    page.close()
    for h in HOSTILE:
        assert exps.count(h) >= 4, h  # title, status, file, message (twice), description
    for h in HOSTILE[:5]:
        assert h in fails, h
    assert "regression" in alerts and HOSTILE[3] in alerts
    # every link stays in the site; every model page is as inert
    model_pages = sorted({u.split("#")[0] for u in links if "/models/" in u})
    assert len(model_pages) == len(hostile_site["summary"]["pages"]) - 1
    for url in links:
        assert url.startswith(site.as_uri() + "/"), url
    for url in model_pages:
        path = Path(url.removeprefix("file://"))
        assert path.is_file()
        page, _, _ = open_page(browser, path)
        prov = page.inner_text("body")
        page.close()
        hostile_here = [h for h in HOSTILE if h in prov]
        assert hostile_here, url  # each page shows some hostile text, as text
        _check(browser, path, hostile_here)


# -- a multi-night store: entry point, filters, regressions, grouped failures ---------------


def _scenario():
    sys.path.insert(0, str(REPO / "benchmarks"))
    import dashboard_scale

    return dashboard_scale, dashboard_scale.Scenario(
        models=3, nights=8, batch_sizes=(1, 8, 64), runtimes=dashboard_scale.RUNTIMES[:2],
        samples=40, regressions=1, improvements=0, unstable=1, contended=1, failing_model=1,
        script_model=2)


@pytest.fixture(scope="module")
def nights_site(tmp_path_factory) -> dict:
    """Eight nights written as MeasureRuntime writes them (benchmarks/dashboard_scale.py; the
    last with a regression, an unstable, a contended and a damaged result, and the same
    failure at two batch sizes), then ``law run Dashboard`` for the last two nights."""
    bench, sc = _scenario()
    store = tmp_path_factory.mktemp("nights") / "store"
    info = bench.write_store(store, sc)
    for night in sc.versions[-2:]:
        current = [night] + ([f"{night}.confirm"] if night == sc.versions[-1] else [])
        proc = law_run("Dashboard", "--version", night, "--current", ",".join(current),
                       "--publish", store=store)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"store": store, "root": store / "dashboard", "info": info, "sc": sc,
            "bench": bench}


def test_failures_group_by_message_and_numbers_are_readable() -> None:
    from mlprof.report.site.failures import failure_message_key, group_failures
    from mlprof.report.site.svg import readable

    rows = [{"status": "failed", "error": f"/s/x/v1/runtime_bs_{b}.json: batch size {b} "
             "needs more memory", "batch_size": b, "model": "m", "version": "v1"}
            for b in (8, 16, 32)]
    rows.append({"status": "failed", "error": "another error", "batch_size": 8, "model": "m"})
    rows += [{"status": "corrupt", "error": "/s/a.csv: is empty", "batch_size": 8},
             {"status": "corrupt", "error": "/s/a.csv: is empty", "batch_size": 8}]
    groups = group_failures(rows)
    assert [(g["count"], g["status"]) for g in groups] == [
        (3, "failed"), (1, "corrupt"), (1, "corrupt"), (1, "failed")]
    assert groups[0]["batch_sizes"] == "8, 16, 32"
    assert failure_message_key(rows[0]["error"]) == (
        "runtime_bs_N.json: batch size N needs more memory")
    assert [readable(v) for v in (69830.2, 0.0001234, 1024.0, 12.3456, 2.5e7)] == [
        "69,830", "0.0001234", "1,024", "12.35", "25,000,000"]


def test_results_csv_has_shown_statuses_and_changes(nights_site: dict) -> None:
    import pandas as pd

    night = nights_site["root"] / nights_site["sc"].versions[-1]
    res = pd.read_csv(night / "results.csv")
    statuses = res["status"].value_counts().to_dict()
    # the unstable point (CV far above 10 %) and the contended one are not "ok"
    assert statuses["unstable"] == 1 and statuses["contended"] == 1, statuses
    assert res.loc[res["status"] == "unstable", "cv"].iloc[0] > 0.5
    assert statuses["corrupt"] == 1 and statuses["failed"] == 2
    (i, rt, bs) = nights_site["info"]["regressions"][0]
    reg = res[(res["model"] == f"synth_m{i:02d}") & (res["runtime"] == rt)
              & (res["batch_size"] == bs)]
    assert reg["change"].iloc[0] > 0.4  # +60 % vs the baseline of the earlier nights
    # labels: the YAML's, a script model's name
    assert set(res["label"].dropna()) >= {"Synthetic DNN 00 (4x64)", "synth_m02"}


@pytest.mark.browser
def test_entry_point_lists_both_nights_and_links_them(browser, nights_site: dict) -> None:
    root: Path = nights_site["root"]
    n5, n6 = nights_site["sc"].versions[-2:]
    page, problems, _ = open_page(browser, root / "index.html")
    assert problems == []
    links = page.eval_on_selector_all("#nights-table a", "as => as.map(a => a.href)")
    assert links == [(root / n6 / "index.html").as_uri(), (root / n5 / "index.html").as_uri()]
    assert n6 in page.inner_text("#latest")
    page.close()
    # latest.html forwards to the newest night
    page, problems, _ = open_page(browser, root / "latest.html")
    page.wait_for_url(f"**/{n6}/index.html")
    assert problems == []
    # previous/next between consecutive nights, both ways
    prev = page.eval_on_selector("#nights a[rel=prev]", "a => a.href")
    assert prev == (root / n5 / "index.html").as_uri()
    assert page.locator("#nights a[rel=next]").count() == 0
    page.goto(prev)
    assert page.eval_on_selector("#nights a[rel=next]", "a => a.href") == (
        root / n6 / "index.html").as_uri()
    page.close()


@pytest.mark.browser
def test_filter_hides_rows(browser, nights_site: dict) -> None:
    page, problems, _ = open_page(browser, nights_site["root"] / nights_site["sc"].versions[-1]
                                  / "index.html")

    def visible() -> list[list[str]]:
        return page.eval_on_selector_all(
            "#results-table tbody tr:not([hidden])",
            "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))")

    total = len(visible())
    assert total == 3 * 2 * 3  # models x runtimes x batch sizes
    page.fill("#filter", "torch")
    rows = visible()
    assert 0 < len(rows) < total and all(r[1] == "torch" for r in rows)
    page.fill("#filter", "synth_m00 TORCH")  # every word, in any cell, any case
    assert {(r[0], r[1]) for r in visible()} == {("synth_m00", "torch")}
    bs = TABLE_COLUMNS.index("batch_size")  # by name: a new column moves the others
    assert sorted(int(r[bs]) for r in visible()) == [1, 8, 64]
    assert page.inner_text("#filter-count").startswith(f"{len(visible())} of {total}")
    page.fill("#filter", "")
    page.select_option("#status-filter", "failures")
    assert sorted(r[TABLE_COLUMNS.index("status")] for r in visible()) == ["corrupt", "failed",
                                                                       "failed"]
    page.select_option("#status-filter", "unstable")
    # the status cell shows the flag's marker with it (and both flags where both are set)
    assert [r[TABLE_COLUMNS.index("status")] for r in visible()] == ["~ unstable"]
    page.select_option("#status-filter", "")
    # a model's "show results" button selects its rows only
    page.click("#models-table button[data-model='synth_m00']")
    assert {r[0] for r in visible()} == {"synth_m00"} and len(visible()) == 6
    # the unstable status has its own colour, not the green of "ok"
    ok_color = page.eval_on_selector("#results-table td.st-ok", "c => getComputedStyle(c).color")
    unstable = page.eval_on_selector("#results-table td.st-unstable",
                                     "c => [getComputedStyle(c).color, "
                                     "getComputedStyle(c).backgroundColor]")
    assert unstable[0] != ok_color and unstable[1] != "rgba(0, 0, 0, 0)"
    assert problems == []
    page.close()


@pytest.mark.browser
def test_regression_links_to_a_history_that_shows_it(browser, nights_site: dict) -> None:
    night = nights_site["root"] / nights_site["sc"].versions[-1]
    (i, rt, bs) = nights_site["info"]["regressions"][0]
    page, problems, _ = open_page(browser, night / "index.html")
    row = page.locator("#alerts-table tbody tr", has_text="regression")
    assert row.count() == 1
    cells = row.locator("td").all_inner_texts()
    assert cells[2] == "step"      # the rule's test that found it
    assert cells[3] == ""          # no runtime upgrade or model edit coincides with it
    assert cells[4] == f"synth_m{i:02d}" and cells[5] == rt and cells[8] == str(bs)
    assert row.locator("svg.spark").count() == 1  # its trend
    row.locator("a", has_text="history").click()
    page.wait_for_load_state("load")
    assert f"models/synth_m{i:02d}__" in page.url and "#h-" in page.url
    target = page.locator(":target")
    assert target.count() == 1
    assert target.locator("text.ttl").text_content() in (f"batch size {bs} [ms]",
                                                         f"batch size {bs} [\u00b5s]")
    assert target.locator("polygon.mark-regression").count() >= 1
    tips = target.locator("circle title").all_text_contents()
    assert any("regression" in t for t in tips), tips
    # the configuration's history plot (PNG) is there too, and the page names the model by
    # its label
    fig = page.locator(f"figure[id^=hist-] img[src*='synth_m{i:02d}']")
    assert fig.count() == 1
    assert page.title() == f"Synthetic DNN {i:02d} ({4 + i % 7}x{64 * (1 + i % 4)})"
    assert images_not_loaded(page) == [] and problems == []
    page.close()


@pytest.mark.browser
def test_failures_are_grouped(browser, nights_site: dict) -> None:
    page, problems, _ = open_page(browser, nights_site["root"] / nights_site["sc"].versions[-1]
                                  / "index.html")
    rows = page.eval_on_selector_all(
        "#failures-table tbody tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))")
    bench = nights_site["bench"]
    same = [r for r in rows if r[4] == bench.FAILURE_MESSAGE]
    assert len(same) == 1 and same[0][0] == "2" and same[0][3] == "8, 64", rows
    assert [r[1] for r in rows].count("corrupt") == 1 and len(rows) == 2
    assert problems == []
    page.close()


def images_not_loaded(page) -> list[str]:
    return page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")


@pytest.mark.browser
def test_every_page_loads_without_errors_and_with_its_images(browser, nights_site: dict
                                                              ) -> None:
    root: Path = nights_site["root"]
    pages = [root / "index.html"] + [p for n in nights_site["sc"].versions[-2:]
                                     for p in [root / n / "index.html",
                                               *sorted((root / n / "models").glob("*.html"))]]
    assert len(pages) == 1 + 2 * 4
    n_images = 0
    for path in pages:
        page, problems, dialogs = open_page(browser, path)
        page.locator("#results-table thead th").nth(6).click() if page.locator(
            "#results-table").count() else None  # sorting runs without errors too
        assert problems == [] and dialogs == [], (path, problems)
        assert images_not_loaded(page) == [], path
        n_images += page.locator("img").count()
        page.close()
    assert n_images >= 2 * 3 * 4  # latency, throughput, distributions (+ speed-up, history)


# -- history panels and trends as a person reads them (issue 21) -----------------------------


def _panel_parts(svg: str) -> tuple[list[float], list[str], float, float]:
    """The drawn points' y (pixels), the y-axis tick labels, and the plot area's top and
    bottom (pixels) of a :func:`~mlprof.report.site.svg.history_panel`."""
    ys = [float(v) for v in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)"', svg)]
    ticks = re.findall(r'class="tick" text-anchor="end" dominant-baseline="middle">([^<]*)<',
                       svg)
    top, height = (float(v) for v in re.search(
        r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"', svg).groups())
    return ys, ticks, top, top + height


def test_history_panel_draws_noise_flat_with_distinct_ticks() -> None:
    """A 0.3 % change at 0.018 ms: the panel's range is PlotHistory's (at least 20 % of the
    level), so the change spans a few pixels, not the panel; tick labels differ and the unit
    is named (µs: no ``0.018 / 0.018``)."""
    from mlprof.report.history import MIN_RELATIVE_SPAN, history_unit, history_y_range
    from mlprof.report.site.svg import history_panel

    values = [0.018, 0.01801, 0.018, 0.018054]  # +0.3 % on the last night
    lo, hi = history_y_range(values)
    assert hi - lo >= MIN_RELATIVE_SPAN * 0.018
    unit, scale = history_unit("median_ms", values)
    assert (unit, scale) == ("\u00b5s", 1000.0)
    svg = history_panel([(f"n{i}", v, False) for i, v in enumerate(values)],
                        title="batch size 1", unit=unit, scale=scale)
    ys, ticks, top, bottom = _panel_parts(svg)
    assert len(ys) == 4
    assert (max(ys) - min(ys)) / (bottom - top) < 0.05  # a wobble, not a cliff
    assert len(ticks) >= 2 and len(set(ticks)) == len(ticks), ticks
    assert all(float(t.replace(",", "")) > 1 for t in ticks), ticks  # in µs: 16, 18, 20
    assert "batch size 1 [\u00b5s]" in svg
    # a real step (+60 %) still fills most of its panel
    step = [1.0, 1.01, 0.99, 1.6]
    ys, ticks, top, bottom = _panel_parts(history_panel(
        [(f"n{i}", v, False) for i, v in enumerate(step)], title="bs 8", unit="ms"))
    assert (max(ys) - min(ys)) / (bottom - top) > 0.6
    assert len(set(ticks)) == len(ticks) >= 2


def test_panel_ticks_are_distinct_at_any_scale() -> None:
    from mlprof.report.history import history_y_range
    from mlprof.report.site.svg import panel_ticks

    for values in ([0.0180, 0.01805], [69830.0, 70000.0], [0.0009, 0.0011], [1.0, 9.0],
                   [1234.5, 1300.0], [5e-5, 5.2e-5]):
        lo, hi = history_y_range(values)
        ticks = panel_ticks(lo, hi, 4)
        labels = [t for _, t in ticks]
        assert 2 <= len(ticks) <= 4 and len(set(labels)) == len(labels), (values, labels)
        assert all(lo <= v <= hi for v, _ in ticks)


def _current_series(site: Path) -> set[tuple[str, str, str]]:
    """(label, runtime, batch size) of every measured current result of ``site`` whose series
    has a successful result (what the front page must show a trend for)."""
    import pandas as pd

    res = pd.read_csv(site / "results.csv")
    measured = res[res["status"].isin(["ok", "unstable", "contended"])]
    rep = pd.read_csv(site / "report.csv")
    ok = rep[rep["status"] == "ok"]
    has = set(zip(ok["model"], ok["runtime"], ok["batch_size"], strict=True))
    return {(str(r.label), str(r.runtime), str(int(r.batch_size)))
            for r in measured.itertuples() if (r.model, r.runtime, r.batch_size) in has}


@pytest.mark.browser
def test_front_page_has_a_trend_for_every_series(browser, nights_site: dict) -> None:
    """asv's grid: a card per series (not only the changed ones), each naming model, runtime
    and batch size in full at 1400 px (nothing cut off), "changed only" hides the others."""
    site = nights_site["root"] / nights_site["sc"].versions[-1]
    expected = _current_series(site)
    page, problems, _ = open_page(browser, site / "index.html")
    page.set_viewport_size({"width": 1400, "height": 1000})
    cards = page.eval_on_selector_all("#trend-cards .card", """cs => cs.map(c => {
        const w = c.querySelector('.what');
        return {text: w.innerText, cut: w.scrollWidth > w.clientWidth + 1
                || c.scrollWidth > c.clientWidth + 1, spark: c.querySelectorAll('svg.spark').length,
                changed: c.dataset.c};
    })""")
    shown = set()
    for c in cards:
        label, rest, bs = c["text"].split("\n")
        shown.add((label, rest.split()[0], bs.removeprefix("batch size ")))
        assert c["spark"] == 1 and not c["cut"], c
    assert len(cards) == len(expected) and shown == expected
    n_changed = sum(c["changed"] == "1" for c in cards)
    assert 0 < n_changed < len(cards)  # the regression is framed, the quiet ones are there
    page.check("#trends-changed")
    assert page.locator("#trend-cards .card:visible").count() == n_changed
    assert problems == []
    page.close()


def test_ad_hoc_dashboard_is_not_latest_on_the_nights_index(nights_site: dict) -> None:
    """``law run Dashboard --version adhoc`` writes its site but leaves the nights' index
    alone; with --publish under a night's version but other options it is refused (exit 40)
    and the night's page stays."""
    store, root = nights_site["store"], nights_site["root"]
    n6 = nights_site["sc"].versions[-1]
    index_before = (root / "index.html").read_text()
    proc = law_run("Dashboard", "--version", "adhoc-21", store=store)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "not on the nights' index" in proc.stdout + proc.stderr
    assert not (root / "adhoc-21").exists()
    assert (root / "index.html").read_text() == index_before
    assert n6 in (root / "latest.html").read_text()
    night_page = (root / n6 / "index.html").read_text()
    proc = law_run("Dashboard", "--version", n6, "--statistic", "p84_ms", "--publish",
                   store=store)
    assert proc.returncode == 40, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "already published from another dashboard" in proc.stdout + proc.stderr
    assert (root / n6 / "index.html").read_text() == night_page
    assert (root / "index.html").read_text() == index_before


def test_current_accepts_a_missing_confirmation(nights_site: dict) -> None:
    """docs/nightly.md's ``--current NIGHT,NIGHT.confirm`` on a quiet night (no ``.confirm``): the
    night's results, one line saying so."""
    import pandas as pd

    store = nights_site["store"]
    n5 = nights_site["sc"].versions[-2]
    from mlprof.results import layout

    assert f"{n5}.confirm" not in layout.versions_in(str(store))
    proc = law_run("Dashboard", "--version", "quiet-21", "--current", f"{n5},{n5}.confirm",
                   store=store)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    notes = [ln for ln in out.splitlines() if ln.startswith("--current:")]
    assert notes == [f"--current: no {n5}.confirm in the stores (nothing needed confirming "
                     f"that night); showing {n5}"], notes
    (site,) = store.glob("Dashboard/*/*/quiet-21/dashboard")
    res = pd.read_csv(site / "results.csv")
    assert len(res) and set(res["version"].dropna()) == {n5}
    # a version that is not a missing confirmation is still an error
    proc = law_run("Dashboard", "--version", "quiet-21", "--current", f"{n5},nope.confirm",
                   store=store)
    assert proc.returncode == 40 and "nope.confirm" in proc.stdout + proc.stderr
