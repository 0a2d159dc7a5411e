"""Two versions of ONNX Runtime measured and plotted side by side (cached virtual environments).

The older version is installed from the package registry into ``$MLP_VENVS`` (default
``$MLP_BASE/.venvs``) on first use: about a minute once, then cached.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlprof.errors import MLProfError
from mlprof.measure.venvs import parse_runtime_version
from mlprof.runtimes import runtime_version
from tests.helpers import DNN, FAST, law_run

OLD = "1.20.1"


@pytest.mark.parametrize("value, expected", [
    ("1.20.1", "1.20.1"), (" onnxruntime==1.20.1 ", "1.20.1"), ("1.21.0rc1", "1.21.0rc1"),
])
def test_parse_runtime_version(value: str, expected: str) -> None:
    assert parse_runtime_version("onnxruntime", value) == expected


@pytest.mark.parametrize("runtime, value, message", [
    ("onnxruntime", "torch==2.0", "names 'torch'"),
    ("onnxruntime", "latest!", "not a version"),
    ("onnxruntime", "", "not a version"),
    ("torch", "2.9.1", "supported for onnxruntime"),
])
def test_bad_runtime_versions(runtime: str, value: str, message: str) -> None:
    with pytest.raises(MLProfError, match=message) as info:
        parse_runtime_version(runtime, value)
    assert info.value.field == "--runtime-version"


def test_bad_runtime_versions_on_the_command_line(store) -> None:
    # a model script: both runtimes measure it (onnxruntime its export), so the versions are next
    script = Path(__file__).parent / "scripts" / "linear.py"
    r = law_run("PlotMultiRuntimes", "--version", "v1", "--model-files", str(script),
                "--runtimes", "onnxruntime,torch", "--runtime-versions", "1.20.1", store=store)
    assert r.returncode != 0
    assert "--runtime-versions: '1.20.1': with several runtimes, write runtime==version" in \
        r.stderr + r.stdout
    r = law_run("MeasureRuntime", "--version", "v1", "--runtime-version", "tensorrt==10",
                store=store)
    assert r.returncode != 0
    assert "--runtime-version: 'tensorrt==10' names 'tensorrt'" in r.stderr + r.stdout
    assert not store.exists() or not list(store.rglob("*.csv"))


@pytest.mark.slow
def test_two_onnxruntime_versions_side_by_side(store) -> None:
    installed = runtime_version("onnxruntime")
    assert installed != OLD
    r = law_run("PlotMultiRuntimes", "--version", "v1", "--model-files", str(DNN),
                "--runtime-versions", f"onnxruntime=={OLD},{installed}",
                "--batch-sizes", "1,8", "--file-types", "png", *FAST, store=store, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (plot,) = store.glob("PlotMultiRuntimes/**/*.png")
    assert f"onnxruntime-{OLD}-onnxruntime-{installed}" in plot.name
    # each curve measured with its own version: the old one in its venv, the other in ours
    seen = {}
    for js in store.glob("MeasureRuntime/*/*/*/v1/runtime_bs_8.json"):
        prov = json.loads(js.read_text())
        seen[prov["runtime_version"]] = prov.get("venv")
        assert js.parent.parent.parent.name == f"onnxruntime-{prov['runtime_version']}__cpu"
    assert set(seen) == {OLD, installed}
    assert seen[OLD] and f"onnxruntime-{OLD}" in seen[OLD]
    assert seen[installed] is None
    # the report keeps them apart
    r = law_run("Report", "--version", "r1", store=store)
    assert r.returncode == 0
    (csv,) = store.glob("Report/**/report.csv")
    text = csv.read_text()
    assert f",onnxruntime,{OLD}," in text and f",onnxruntime,{installed}," in text
    # the dashboard: one curve per version, the older one's speed-up vs the newer (reference)
    r = law_run("Dashboard", "--version", "d1", store=store)
    assert r.returncode == 0, r.stderr[-2000:]
    imgs = sorted(p.name for p in store.glob("Dashboard/**/dashboard/img/*.svg"))
    assert any(n.endswith("_speedup.svg") for n in imgs), imgs
    results = (next(store.glob("Dashboard/**/dashboard/results.csv"))).read_text()
    assert results.count(f",onnxruntime,{OLD},") == 2  # batch sizes 1 and 8
