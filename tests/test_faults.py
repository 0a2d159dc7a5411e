"""Faulty models (hang, segfault, memory bomb) cost only their own results.

A sweep over five models, three of them faulty, runs as one ``law run`` (the wrapper task
``tests/faulty_models/sweep.py``) with a short ``MLP_TIMEOUT`` and a small ``MLP_MEMORY_LIMIT``:
the two good models get complete results, each faulty one a failure with its own status and a
clear message in the Report, and nothing is left half-written.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers import DNN, REPO, files_in, law_run

FAULTY = REPO / "tests" / "faulty_models"
LINEAR = REPO / "tests" / "scripts" / "linear.py"
SETTINGS = ["--n-calls", "10", "--warmup", "1", "--min-duration", "0"]
TIMEOUT_S, LIMIT_MB = 20, 1536
#: every faulty model misbehaves at the second batch size only
BATCH_SIZES = (1, 32)


def _env(**extra: str) -> dict[str, str]:
    """The environment of a sweep: the wrapper task importable, luigi's log on (the tests read
    its execution summary), plus ``extra``."""
    path = os.pathsep.join(p for p in (str(FAULTY), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path, "MLP_VERBOSE": "1", **extra}


def _half_written(store: Path) -> list[str]:
    """Everything in ``store`` that is not a complete output or a failure record."""
    problems = []
    for p in files_in(store):
        if p.name.startswith(".") or ".tmp" in p.name:
            problems.append(f"temporary file {p}")
        m = re.fullmatch(r"runtime_bs_(\d+)\.(csv|json)", p.name)
        if m:
            pair = p.with_suffix(".json" if m[2] == "csv" else ".csv")
            if not pair.exists():
                problems.append(f"{p} without {pair.name}")
            if (p.parent / f"_failure_bs_{m[1]}.json").exists():
                problems.append(f"{p} next to a failure record")
        if p.suffix == ".json":
            json.loads(p.read_text())  # complete, parseable
    return problems


@pytest.mark.slow
def test_sweep_with_three_faulty_models_gives_two_results_and_three_clear_failures(
        store, tmp_path):
    from tests.faulty_models.faulty_onnx import expand_bomb

    bomb = expand_bomb(tmp_path / "expand_bomb.onnx", mb_per_row=100)  # 3.2 GB at batch 32
    models = [(str(DNN), "onnxruntime"), (str(LINEAR), "torch"),
              (str(FAULTY / "hang.py"), "torch"), (str(FAULTY / "segfault.py"), "torch"),
              (bomb, "onnxruntime")]
    proc = law_run("sweep.FaultSweep", "--version", "f1",
                   "--batch-sizes", ",".join(map(str, BATCH_SIZES)), *SETTINGS,
                   "--model-files", ",".join(m for m, _ in models),
                   "--runtimes", ",".join(rt for _, rt in models), store=store, timeout=400,
                   env=_env(MLP_TIMEOUT=str(TIMEOUT_S), MLP_MEMORY_LIMIT=str(LIMIT_MB)))
    log = proc.stderr + proc.stdout
    # the scheduler survived all three and says so: tasks failed (30), the rest ran
    assert proc.returncode == 30, log[-4000:]
    assert "2 MergeRuntimes(...)" in log and "3 failed" in log, log[-3000:]

    # two good results, complete
    stats = sorted(p for p in files_in(store / "MergeRuntimes") if p.name.startswith("stats_"))
    # a script calling one model is named by that model everywhere (issue 35)
    assert [p.relative_to(store).parts[1].split("__")[0] for p in stats] == \
        ["dnn_l10u128", "linear-ee07f9c5"]
    for p in stats:
        df = pd.read_csv(p)
        assert df["batch_size"].tolist() == list(BATCH_SIZES)
        assert (df["count"] == 10).all() and (df["median_ms"] > 0).all()
        assert (df["throughput"] > 0).all()

    # nothing half-written
    assert _half_written(store) == []

    # measurements never overlapped, the faulty ones' good batch size included
    spans = sorted((d["started_unix"], d["finished_unix"]) for d in
                   (json.loads(p.read_text()) for p in files_in(store / "MeasureRuntime")
                    if p.name.startswith("runtime_bs_") and p.suffix == ".json"))
    assert len(spans) == 7
    assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:], strict=False)), spans

    # the Report shows every branch: 7 ok, 3 failures with their status and message
    rep = law_run("Report", "--version", "r1", "--stores", str(store), store=tmp_path / "r")
    assert rep.returncode == 0, rep.stderr[-3000:]
    (csv,) = [p for p in files_in(tmp_path / "r") if p.name == "report.csv"]
    df = pd.read_csv(csv)
    assert len(df) == 10
    status = {(r.model.split("-")[0], r.batch_size): r.status for r in df.itertuples()}
    assert status == {(m, bs): ("ok" if bs == 1 or m in ("dnn_l10u128", "linear") else
                                {"hang": "timeout", "segfault": "failed",
                                 "expand_bomb": "oom"}[m])
                      for m in ("dnn_l10u128", "linear", "hang", "segfault", "expand_bomb")
                      for bs in BATCH_SIZES}, df[["model", "batch_size", "status", "error"]]
    errors = {r.model.split("-")[0]: r.error for r in df.itertuples() if r.status != "ok"}
    assert re.fullmatch(rf"hang\.py::[0-9a-f]{{8}} at batch size 32: timed out after "
                        rf"{TIMEOUT_S} s \(MLP_TIMEOUT\); the measurement process was killed",
                        errors["hang"]), errors
    assert re.fullmatch(r"segfault\.py::[0-9a-f]{8} at batch size 32: the measurement process "
                        r"crashed with SIGSEGV", errors["segfault"]), errors
    assert re.fullmatch(rf"expand_bomb\.onnx at batch size 32: exceeded the memory limit of "
                        rf"{LIMIT_MB} MB \(MLP_MEMORY_LIMIT\): \d+ MB resident; the "
                        rf"measurement process was killed", errors["expand_bomb"]), errors
    ok = df[df["status"] == "ok"]
    assert ok["median_ms"].gt(0).all() and ok["error"].isna().all()
    # the ok rows of the bomb stayed under the limit, as measured by the child itself
    assert ok["peak_rss_mb"].lt(LIMIT_MB).all(), ok[["model", "peak_rss_mb"]]


@pytest.mark.slow
def test_workers_run_discoveries_in_parallel(store):
    scripts = [str(LINEAR), str(FAULTY / "segfault.py")]
    proc = law_run("sweep.FaultSweep", "--version", "p1", "--discover-only",
                   "--model-files", ",".join(scripts), "--workers", "2", store=store,
                   timeout=300, env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    # luigi logs "running" when a task starts and "done" when it ends, in order
    events = re.findall(r"\) (running|done) +DiscoverModels\(", proc.stderr)
    assert events == ["running", "running", "done", "done"], proc.stderr[-3000:]
    assert len([p for p in files_in(store) if p.name == "manifest.json"]) == 2
