"""Report: every measurement of several stores in one table, failures included."""

from __future__ import annotations

import pandas as pd
import pytest

from mlprof.report import REPORT_COLUMNS
from tests.helpers import FAST, REPO, files_in, law_run
from tests.onnx_factory import hardcoded_reshape_model


@pytest.mark.slow
def test_report_over_two_stores_lists_results_and_failures(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert law_run("MeasureRuntime", "--version", "n1", "--batch-sizes", "1,4", *FAST,
                   store=a).returncode == 0
    # a failure that only measuring finds (a corrupt file is refused before anything runs)
    bad = hardcoded_reshape_model(tmp_path / "fixed.onnx", batch=4)
    assert law_run("MeasureRuntime", "--version", "n1", "--batch-sizes", "2", *FAST,
                   "--model-file", str(bad), store=b).returncode != 0
    proc = law_run("Report", "--version", "r1", "--stores", f"{a},{b}", store=tmp_path / "r")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (csv,) = [p for p in files_in(tmp_path / "r") if p.name == "report.csv"]
    (parquet,) = [p for p in files_in(tmp_path / "r") if p.suffix == ".parquet"]
    df = pd.read_csv(csv)
    assert list(df.columns) == REPORT_COLUMNS
    assert len(df) == 3
    ok = df[df["status"] == "ok"]
    assert ok["batch_size"].tolist() == [1, 4]
    assert (ok["model"] == "dnn_l10u128").all() and (ok["runtime"] == "onnxruntime").all()
    assert (ok["median_ms"] > 0).all() and (ok["count"] == 10).all()
    assert ok["cpu_model"].notna().all() and (ok["threads"] == 1).all()
    assert (ok["version"] == "n1").all() and ok["timestamp"].notna().all()
    failed = df[df["status"] == "failed"].iloc[0]
    assert failed["batch_size"] == 2 and "fixed batch dimension of 4" in failed["error"]
    assert failed["model"] == "fixed"
    assert pd.read_parquet(parquet).shape == df.shape


@pytest.mark.slow
def test_history_plot_over_three_versions_without_false_alerts(tmp_path):
    store = tmp_path / "s"
    for v in ("n1", "n2", "n3"):
        assert law_run("MeasureRuntime", "--version", v, "--batch-sizes", "1,8", *FAST,
                       store=store).returncode == 0
    proc = law_run("PlotHistory", "--version", "h1", "--stores", str(store),
                   store=tmp_path / "r")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = files_in(tmp_path / "r")
    pngs = [p for p in out if p.suffix == ".png"]
    assert len(pngs) == 1 and pngs[0].parent.name == "history_median_ms"
    assert pngs[0].read_bytes()[:4] == b"\x89PNG"
    (alerts,) = [p for p in out if p.name == "alerts_median_ms.csv"]
    assert pd.read_csv(alerts).empty  # three runs of one configuration: no alert


def test_plot_history_marks_alerts():
    from mlprof.plotting.history import plot_history

    fig = plot_history({"batch size 1": (["n1", "n2", "n3"], [1.0, 1.01, 1.3])},
                       alerts=[("batch size 1", "n3", "regression")])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["n1", "n2", "n3"]
    marks = [ln for ln in ax.lines if ln.get_marker() == "^"]
    assert len(marks) == 1 and list(marks[0].get_ydata()) == [1.3]


@pytest.mark.slow
def test_discovery_and_export_failures_are_rows(tmp_path):
    """A script that fails before anything is measured still shows up, with its stage."""
    scripts = REPO / "tests" / "scripts"
    store = tmp_path / "s"
    assert law_run("MeasureRuntime", "--version", "n1", "--runtime", "torch", *FAST,
                   "--batch-sizes", "1", "--model-file", str(scripts / "no_model.py"),
                   store=store).returncode != 0
    assert law_run("MeasureRuntime", "--version", "n1", "--batch-sizes", "1", *FAST,
                   "--model-file", str(scripts / "unexportable.py"), store=store
                   ).returncode != 0
    proc = law_run("Report", "--version", "r1", store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (csv,) = store.glob("Report/**/report.csv")
    df = pd.read_csv(csv)
    by_stage = {r["stage"]: r for r in df.to_dict("records")}
    assert set(by_stage) == {"discovery", "export"}
    disc, exp = by_stage["discovery"], by_stage["export"]
    assert disc["status"] == "failed" and disc["model"] == "no_model"
    assert "no_model.py" in disc["error"] and pd.isna(disc["batch_size"])
    from mlprof.runtimes import runtime_info, runtime_names

    # the export failure stops every runtime that measures exports
    stopped = ",".join(n for n in runtime_names() if runtime_info(n).needs_export)
    assert exp["status"] == "failed" and exp["runtime"] == stopped and "onnxruntime" in stopped
    assert exp["model"].startswith("unexportable") and exp["version"] == "n1"
