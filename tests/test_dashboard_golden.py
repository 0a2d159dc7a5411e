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

import itertools
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


def _generations(versions: list[str]) -> list[dict]:
    """MeasureGeneration rows as :func:`mlprof.report.collect.collect_generations` gives them:
    a decoder measured by nothing else (a page of its own) and a model that has a page, two
    runtimes, three versions (a history), one point contended, a runtime upgraded."""
    rows = []
    for model, mhash in (("tiny_dec", "0badc0de"), ("synth_m00", "d141eb06")):
        for n, (runtime, scale) in itertools.product(range(3), (("onnxruntime", 1.0),
                                                                ("torch", 1.7))):
            tpot = 2.0 * scale * (1 + 0.05 * n)
            rows.append({
                "model": model, "model_file": f"/models/{model}.py", "model_hash": mhash,
                "runtime": runtime, "runtime_version": "1.2" if n < 2 else "1.3",
                "device": "cpu", "host": "bench-host", "cpu_model": "Synthetic CPU",
                "threads": 1, "settings_key": "tokens4", "point": "p16_bs1",
                "prompt_length": 16, "batch_size": 1, "new_tokens": 4,
                "ttft_ms": 5.0 * scale, "ttft_ms_low": 4.8 * scale, "ttft_ms_high": 5.3 * scale,
                "tpot_ms": tpot, "tpot_ms_low": 0.95 * tpot, "tpot_ms_high": 1.05 * tpot,
                "decode_tokens_per_s": 1000 / tpot, "decode_tokens_per_s_low": 950 / tpot,
                "decode_tokens_per_s_high": 1050 / tpot, "reference": "onnxruntime",
                "speedup_tpot": 1 / scale, "speedup_tpot_low": 0.9 / scale,
                "speedup_tpot_high": 1.1 / scale, "agreement": 1.0 if scale == 1 else 0.97,
                "agreement_errors": 0 if scale == 1 else 1,
                "contended": n == 2 and runtime == "torch",
                "contended_causes": "cpu-wait" if n == 2 and runtime == "torch" else "",
                "version": versions[n], "timestamp": f"2026-11-0{n + 1}T00:00:00+00:00",
                "mtime": float(n)})
    return rows


def _build(name: str, store: Path, site: Path, monkeypatch) -> None:
    from mlprof.report import collect, to_frame
    from mlprof.report.collect import collect_generations, collect_loads, collect_precisions
    from mlprof.report.history import NoiseFloors
    from mlprof.report.site import build_dashboard

    monkeypatch.setenv("MLP_STORE", str(store))
    floors = NoiseFloors([store], host="golden-host", fingerprint_id="golden")
    report = to_frame(collect([store]))
    kwargs: dict = {}
    generations = collect_generations([store])
    if name == "nights":
        night = sorted({str(v) for v in report["version"] if not str(v).endswith(".confirm")})
        generations = _generations(night[-3:])
        kwargs = {"current_versions": [night[-1], f"{night[-1]}.confirm"],
                  "experiments": [
                      {"title": "corpus", "file": "experiments/corpus.yaml", "status": "ok",
                       "results": 12, "description": "every model"},
                      {"title": "broken <one>", "file": "experiments/b.yaml",
                       "status": "failed", "errors": ["no such model: x", "and 'y'"]}]}
    build_dashboard(report, site, precisions=collect_precisions([store]),
                    loads=collect_loads([store]), generations=generations,
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
