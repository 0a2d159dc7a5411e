"""A model has one name wherever it is shown, taken from the model the user named, never from
an export's spec (issue 20: the dashboard titled every model script "model", the name of its
exported ``model.onnx``)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from mlprof.results.records import ModelIdentity, model_identity
from tests.helpers import REPO, mlprof_run

pytest.importorskip("torch", reason="model scripts need PyTorch")


def test_a_format_0_record_of_an_export_is_named_by_its_task():
    """Records written before ``model_identity`` existed read as the model the task named."""
    prov = {"model": {"name": "model", "label": "model", "spec_file": "/s/ExportOnnx/model.onnx"},
            "task": {"model_name": "linear", "model_file": "/m/linear.py"}}
    assert model_identity(prov, "linear", "5af07083") == ModelIdentity(
        "linear", "linear", "/m/linear.py", "5af07083")
    # a YAML model measured as it is keeps its label
    prov = {"model": {"name": "dnn", "label": "DNN 10x128", "spec_file": "/m/dnn.yaml"},
            "task": {"model_name": "dnn", "model_file": "/m/dnn.yaml"}}
    assert model_identity(prov).label == "DNN 10x128"
    # format 1 says it itself
    prov["model_identity"] = {"name": "dnn", "label": "my DNN", "file": "/m/dnn.yaml",
                              "hash": "01234567"}
    assert model_identity(prov).label == "my DNN"


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_a_dashboard_of_the_selftest_scripts_names_every_model(tmp_path: Path) -> None:
    store = tmp_path / "store"
    env = {**os.environ, "MLP_STORE": str(store), "MLP_BASE": str(REPO)}
    proc = mlprof_run("corpus", str(REPO / "models" / "selftest"), "--runtimes",
                      "onnxruntime,torch", "--n-calls", "5", "--warmup", "1", "--version",
                      "names", env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    from mlprof.report import collect, to_frame
    from mlprof.report.site import build_dashboard

    report = to_frame(collect([store]))
    ok = report[report["status"] == "ok"]
    assert set(ok["runtime"]) == {"onnxruntime", "torch"}
    assert len(ok) >= 20
    # every row is named by its script: <script>-<hash> of the model in it
    for r in ok.to_dict("records"):
        script = Path(str(r["model_file"]).split("::")[0]).stem
        assert r["model"].startswith(script + "-"), r
        assert r["label"] == r["model"], r
    out = tmp_path / "site"
    build_dashboard(report, out, plots=False)
    pages = sorted((out / "models").glob("*.html"))
    assert len(pages) == ok["model"].nunique()
    names = set(ok["model"])
    for page in pages:
        text = page.read_text()
        (title,) = re.findall(r"<title>(.*?)</title>", text)[:1]
        assert title in names, (page.name, title)
    index = (out / "index.html").read_text()
    links = re.findall(r'<a href="models/[^"#]+(?:#[^"]*)?">([^<]*)</a>', index)
    assert links and "model" not in links
    assert set(links) <= names | {"history"}, set(links) - names


@pytest.mark.slow  # a real law run (discovery, export, measurement, plot): 15-30 s here
def test_a_script_model_has_one_segment_in_every_family(store: Path) -> None:
    """Issue 35, exact keys: after ``law run PlotRuntimes`` of a script that calls one model,
    named without ``::HASH``, every directory that names the model names it
    ``<stem>-<model hash>__<hash>``, as ``script.py::HASH`` does, and the dashboard's page too;
    only the discovery is named by the script as a whole (``<stem>__<hash>``, as a plot of all
    the models of a several-model script is)."""
    import hashlib

    from mlprof.report import collect, to_frame
    from mlprof.report.site import build_dashboard
    from mlprof.results import layout
    from mlprof.tasks.plotting import PlotMultiRuntimes
    from mlprof.tasks.runtime import MergeRuntimes
    from tests.helpers import law_run

    script = REPO / "models" / "selftest" / "linear.py"
    args = ["--n-calls", "20", "--min-duration", "0", "--warmup", "2", "--batch-sizes", "1"]
    proc = law_run("PlotRuntimes", "--version", "v1", "--model-file", str(script), *args,
                   store=store, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    segments: dict[str, set[str]] = {}
    for path in store.rglob("*"):
        if path.is_file():
            parsed = layout.parse_result_path(str(path), str(store))
            segments.setdefault(parsed.task, set()).add(parsed.segments["model"])
    discovery = segments.pop("DiscoverModels")
    assert set(segments) == {"ExportOnnx", "MeasureRuntime", "MergeRuntimes", "PlotRuntimes"}
    (one,) = set().union(*segments.values())
    (manifest,) = store.glob("DiscoverModels/*/*/v1/manifest.json")
    (model,) = json.loads(manifest.read_text())["models"]
    name, model_hash = one.split("__")
    assert name == f"linear-{model['hash']}"
    # the discovery: the script's stem and the hash of its content, arguments and depth
    content = hashlib.sha256(script.read_bytes()).hexdigest()
    assert discovery == {layout.model_segment("linear", layout.script_model_hash(content, (), 0))}

    # script.py::HASH is the same model, in the same directory; so is a plot of several runtimes
    settings = dict(n_calls=20, min_duration=0.0, warmup=2, batch_sizes=(1,))
    merge = MergeRuntimes(version="v1", model_file=f"{script}::{model['hash']}", **settings)
    assert layout.parse_result_path(merge.local_path(), str(store)).segments["model"] == one
    assert merge.complete()
    multi = PlotMultiRuntimes(version="v1", model_files=(str(script),), **settings)
    assert layout.parse_result_path(multi.local_path(), str(store)).segments["model"] == one

    # the records and the dashboard's page
    report = to_frame(collect([store]))
    assert set(zip(report["model"], report["model_hash"], strict=True)) == {(name, model_hash)}
    build_dashboard(report, store.parent / "site", plots=False)
    assert [p.name for p in (store.parent / "site" / "models").glob("*.html")] == [one + ".html"]


def test_a_script_whose_discovery_failed_before_scheduling_is_not_measured_under_its_name(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the discovery a task makes before it builds its paths fails, the paths name the
    script, and the task refuses to measure its one model under them once the discovery works
    (the next run names it by the model): a model never gets a second name."""
    from mlprof.errors import MLProfError
    from mlprof.tasks import discover
    from mlprof.tasks.runtime import MergeRuntimes

    def fail(task):
        raise MLProfError("timed out", task.model_spec.file)

    monkeypatch.setattr(discover, "_ONLY", {})
    monkeypatch.setattr(discover, "_discover", fail)
    script = REPO / "models" / "selftest" / "linear.py"
    merge = MergeRuntimes(version="fallback", model_file=str(script))
    assert merge.model_segment().startswith("linear__")

    class Found:
        def selected(self, single=False):
            return [{"hash": "ee07f9c5"}]

    with pytest.raises(MLProfError, match="found only after this task's paths were chosen"):
        merge.the_model(Found())
