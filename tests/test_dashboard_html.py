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
from pathlib import Path

import pytest
from conftest import FAST, law_run, open_page

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
CELL_CLASSES = {"num", "msg", "path", "st-ok", "st-failed", "st-timeout", "st-oom", "st-corrupt",
                "st-partial", "st-inactive", "st-error", "st-regression", "st-improvement",
                "st-other"}


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
    from mlprof.report.dashboard import build_dashboard

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
    from mlprof.report.dashboard import STATE_CLASSES, state_class

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
            assert set(cls.split()) <= CELL_CLASSES | {"sortable", "scroll", "meta", "none",
                                                        "plots"}, (page, cls)
        for href in re.findall(r'(?:href|src)="([^"]*)"', text):
            assert not href.lower().startswith("javascript"), (page, href)
            assert re.fullmatch(r"(\.\./)?(models/|img/)?[A-Za-z0-9._+-]+", href), (page, href)


# -- in Chromium ----------------------------------------------------------------------------


#: every element with an ``on*`` attribute, a ``javascript:`` URL or an image not drawn by
#: the dashboard; and the scripts
_INJECTED = """() => {
  const out = [];
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.toLowerCase().startsWith("on") || v.startsWith("javascript:")) {
        out.push(el.tagName + " " + a.name + "=" + a.value);
      }
    }
  }
  for (const img of document.images) {
    if (!/\\/img\\/[A-Za-z0-9._+-]+\\.png$/.test(img.src)) { out.push("img " + img.src); }
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
    model_pages = [u for u in links if "/models/" in u]
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
