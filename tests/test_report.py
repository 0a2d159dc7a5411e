"""Report: every measurement of several stores in one table, failures included."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import FAST, files_in, law_run

from mlprof.report import REPORT_COLUMNS

pytestmark = pytest.mark.slow


def test_report_over_two_stores_lists_results_and_failures(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert law_run("MeasureRuntime", "--version", "n1", "--batch-sizes", "1,4", *FAST,
                   store=a).returncode == 0
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not onnx")
    assert law_run("MeasureRuntime", "--version", "n1", "--batch-sizes", "2", *FAST,
                   "--model-file", str(bad), store=b).returncode != 0
    proc = law_run("Report", "--version", "r1", "--stores", f"{a},{b}", store=tmp_path / "r")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (csv,) = [p for p in files_in(tmp_path / "r") if p.suffix == ".csv"]
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
    assert failed["batch_size"] == 2 and "not a valid ONNX model" in failed["error"]
    assert failed["model"] == "bad"
    assert pd.read_parquet(parquet).shape == df.shape
