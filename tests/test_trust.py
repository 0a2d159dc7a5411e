"""A changed parameter never gets an old result (issue 9's two command sequences, as a user
runs them with `law run`)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import FAST, files_in, law_run

pytest.importorskip("torch", reason="exporting a model script needs PyTorch")

SCRIPT = "models/selftest/linear.py"


def _svg_env(tmp_path) -> dict:
    """Plots as SVG with text as text (so a test can read the labels)."""
    rc = tmp_path / "mplrc"
    rc.mkdir()
    (rc / "matplotlibrc").write_text("svg.fonttype: none\n")
    return {"MATPLOTLIBRC": str(rc)}


@pytest.mark.slow
def test_fp16_is_exported_measured_and_plotted_apart_from_fp32(store, tmp_path):
    args = ["--version", "v1", "--model-files", SCRIPT, "--runtimes", "onnxruntime",
            "--batch-sizes", "1,2", "--file-types", "svg", *FAST]
    env = _svg_env(tmp_path)
    first = law_run("PlotMultiRuntimes", *args, store=store, env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    second = law_run("PlotMultiRuntimes", *args, "--precisions", "fp16", store=store, env=env)
    assert second.returncode == 0, second.stderr[-2000:]

    exports = {p.parent.parent.name: p for p in files_in(store / "ExportOnnx")
               if p.name == "export.json"}
    assert sorted(exports) == ["onnx-op18-fp16", "onnx-op18-fp32"], sorted(exports)
    assert json.loads(exports["onnx-op18-fp16"].read_text())["precision"] == "fp16"
    import onnx

    fp16 = onnx.load(str(exports["onnx-op18-fp16"].parent / "model.onnx"))
    assert any(t.data_type == onnx.TensorProto.FLOAT16 for t in fp16.graph.initializer)

    branches = [p for p in files_in(store / "MeasureRuntime") if p.name == "runtime_bs_1.json"]
    settings = sorted(p.parent.parent.name.rsplit("__", 1)[1] for p in branches)
    assert settings == ["onnx-op18-fp16", "onnx-op18-fp32"], settings
    for p in branches:
        prov = json.loads(p.read_text())
        assert prov["export"]["precision"] == p.parent.parent.name[-4:]

    plots = [p for p in files_in(store / "PlotMultiRuntimes") if p.suffix == ".svg"]
    assert len(plots) == 2 and plots[0].read_bytes() != plots[1].read_bytes()
    assert {p.parent.parent.name.rsplit("__", 1)[1] for p in plots} == {"onnx-op18-fp16",
                                                                       "onnx-op18-fp32"}


@pytest.mark.slow
def test_a_new_label_draws_a_new_plot_and_measures_nothing(store, tmp_path):
    args = ["--version", "l1", "--batch-sizes", "1,2", "--file-types", "svg", *FAST]
    env = _svg_env(tmp_path)
    first = law_run("PlotRuntimes", *args, store=store, env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    measured = {p: p.stat().st_mtime_ns for p in files_in(store / "MeasureRuntime")}
    second = law_run("PlotRuntimes", *args, "--model-label", "New <label>", store=store, env=env)
    assert second.returncode == 0, second.stderr[-2000:]
    assert {p: p.stat().st_mtime_ns for p in files_in(store / "MeasureRuntime")} == measured

    plots = sorted((p for p in files_in(store / "PlotRuntimes") if p.suffix == ".svg"),
                   key=lambda p: len(p.name))
    assert [p.name.startswith("runtimes_bs_1_2") for p in plots] == [True, True]
    old, new = (p.read_text() for p in plots)
    assert "New &lt;label&gt;" in new and "New &lt;label&gt;" not in old
    # the corner names the runtime version the results were measured with
    prov = json.loads(next(p for p in files_in(store / "MergeRuntimes")
                           if p.name.startswith("provenance_")).read_text())
    version = prov["measurements"][0]["runtime_version"]
    assert f"onnxruntime {version}" in new
