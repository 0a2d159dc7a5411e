"""The dashboard built from a fixed store is byte for byte the site it was (issue 39).

Two fixed stores: ``fixtures/store_v1`` (a store of an older mlprof with precision tables and
load records) and the synthetic multi-night store of ``benchmarks/dashboard_scale.py`` (seeded:
alerts, history panels, trend cards, grouped failures, an unstable, a contended and a damaged
result, experiments). Every text file of the built site (HTML, SVG, CSV) is compared with the
golden copy in ``fixtures/dashboard_golden/`` after two normalisations only: the store's
temporary path reads ``{STORE}`` and the build time ``{NOW}``; PNG files (matplotlib's, not
byte-stable across versions) by name.

The golden copy was made by the code before the dashboard became a package
(``mlprof/report/dashboard.py`` at cb0f33c); ``MLP_REGEN_GOLDEN=1`` writes it again (only
after a change of the site that is meant).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = FIXTURES / "dashboard_golden"
_NOW = re.compile(r"generated \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")
_TEXT = (".html", ".svg", ".csv")


def _normalised(path: Path, store: Path) -> str:
    text = path.read_text()
    return _NOW.sub("generated {NOW}", text.replace(str(store), "{STORE}"))


def _build(name: str, store: Path, site: Path, monkeypatch) -> None:
    from mlprof.report import collect, to_frame
    from mlprof.report.collect import collect_generations, collect_loads, collect_precisions
    from mlprof.report.history import NoiseFloors
    from mlprof.report.site import build_dashboard

    monkeypatch.setenv("MLP_STORE", str(store))
    floors = NoiseFloors([store], host="golden-host", fingerprint_id="golden")
    report = to_frame(collect([store]))
    kwargs: dict = {}
    if name == "nights":
        night = sorted({str(v) for v in report["version"] if not str(v).endswith(".confirm")})
        kwargs = {"current_versions": [night[-1], f"{night[-1]}.confirm"],
                  "experiments": [
                      {"title": "corpus", "file": "experiments/corpus.yaml", "status": "ok",
                       "results": 12, "description": "every model"},
                      {"title": "broken <one>", "file": "experiments/b.yaml",
                       "status": "failed", "errors": ["no such model: x", "and 'y'"]}]}
    build_dashboard(report, site, precisions=collect_precisions([store]),
                    loads=collect_loads([store]), generations=collect_generations([store]),
                    floors=floors, **kwargs)


def _store(name: str, root: Path) -> Path:
    store = root / "store"
    if name == "v1":
        shutil.copytree(FIXTURES / "store_v1", store, symlinks=True)
        return store
    sys.path.insert(0, str(REPO / "benchmarks"))
    import dashboard_scale

    sc = dashboard_scale.Scenario(
        models=3, nights=8, batch_sizes=(1, 8, 64), runtimes=dashboard_scale.RUNTIMES[:2],
        samples=30, regressions=1, improvements=1, unstable=1, contended=1, failing_model=1,
        script_model=2)
    dashboard_scale.write_store(store, sc)
    return store


@pytest.mark.parametrize("name", ["v1", "nights"])
def test_dashboard_is_the_golden_site(name: str, tmp_path: Path, monkeypatch) -> None:
    store = _store(name, tmp_path)
    site = tmp_path / "site"
    _build(name, store, site, monkeypatch)
    golden = GOLDEN / name
    built = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    if os.environ.get("MLP_REGEN_GOLDEN") == "1":
        shutil.rmtree(golden, ignore_errors=True)
        for rel in built:
            dst = golden / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if rel.endswith(_TEXT):
                dst.write_text(_normalised(site / rel, store))
        (golden / "FILES.json").write_text(json.dumps(built, indent=1) + "\n")
    assert built == json.loads((golden / "FILES.json").read_text())
    differ = [rel for rel in built if rel.endswith(_TEXT)
              and _normalised(site / rel, store) != (golden / rel).read_text()]
    assert not differ, f"{len(differ)} file(s) differ from {golden}: {differ[:8]}"


def test_the_assets_are_package_data_and_there_is_one_escaper() -> None:
    """A wheel carries every file of ``assets/`` (pyproject's package-data patterns match each:
    the pages read them with importlib.resources, not from the checkout), and no module of the
    site escapes HTML but :mod:`mlprof.report.site.escape`."""
    import fnmatch

    # tomllib is 3.11's; the project supports 3.10: the one line of the table, read as text
    line = re.search(r'^\[tool\.setuptools\.package-data\]\n"mlprof\.report\.site" = (\[.*\])$',
                     (REPO / "pyproject.toml").read_text(), re.M)
    assert line, "pyproject.toml declares the site's assets as package data"
    patterns = json.loads(line.group(1))
    site = REPO / "mlprof" / "report" / "site"
    assets = sorted(p.relative_to(site).as_posix() for p in (site / "assets").iterdir())
    assert assets and all(any(fnmatch.fnmatch(a, p) for p in patterns) for a in assets), assets
    escaping = sorted(p.name for p in site.glob("*.py") if "html.escape" in p.read_text())
    assert escaping == ["escape.py"]
