"""A model has one name wherever it is shown, taken from the model the user named, never from
an export's spec (issue 20: the dashboard titled every model script "model", the name of its
exported ``model.onnx``)."""

from __future__ import annotations

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
    from mlprof.report.dashboard import build_dashboard

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
