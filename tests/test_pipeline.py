"""The law pipeline end to end: real scheduling, real files, reruns, Ctrl-C, workers."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from mlprof.errors import INTERRUPTED
from tests.helpers import FAST, REPO, files_in
from tests.helpers import law_run as _law_run


def law_run(*args, **kwargs):
    """``tests.helpers.law_run`` with luigi's INFO log (``MLP_VERBOSE=1``): these tests count the
    tasks luigi ran from its "running" lines."""
    kwargs["env"] = {"MLP_VERBOSE": "1", **(kwargs.get("env") or {})}
    return _law_run(*args, **kwargs)


def _ran(proc, family: str) -> int:
    """How many tasks of ``family`` luigi ran."""
    return len(re.findall(rf"\) running +{family}\(", proc.stderr))


@pytest.mark.slow
def test_plot_runtimes_end_to_end_then_rerun_measures_nothing(store):
    proc = law_run("PlotRuntimes", "--version", "e2e", "--batch-sizes", "1,2,4", *FAST,
                   store=store)
    assert proc.returncode == 0, proc.stderr
    assert _ran(proc, "MeasureRuntime") == 4  # 3 branches + the workflow
    files = files_in(store)
    rel = {str(p.relative_to(store)) for p in files}
    pdfs = [p for p in files if p.suffix == ".pdf"]
    assert len(pdfs) == 1 and pdfs[0].name == "runtimes_bs_1_2_4.pdf"
    assert pdfs[0].read_bytes()[:5] == b"%PDF-"
    # the store layout: <Task>/<model>__<hash>/<runtime>-<version>__<device>/<settings>/<version>
    parts = pdfs[0].relative_to(store).parts
    assert parts[0] == "PlotRuntimes"
    assert re.fullmatch(r"dnn_l10u128__[0-9a-f]{8}", parts[1])
    assert re.fullmatch(r"onnxruntime-[0-9.]+__cpu", parts[2])
    assert parts[3] == "calls10_events1_warmup1_mindur0_threads1_input-random"
    assert parts[4] == "e2e"
    for task in ("MeasureRuntime", "MergeRuntimes"):
        assert any(r.startswith(f"{task}/{parts[1]}/{parts[2]}/{parts[3]}/e2e/") for r in rel)

    merge_dir = store / "MergeRuntimes" / Path(*parts[1:5])
    raw = pd.read_csv(merge_dir / "runtimes_bs_1_2_4.csv")
    assert list(raw.columns) == ["batch_size", "event", "call", "runtime_ms"]
    assert raw.groupby("batch_size").size().to_dict() == {1: 10, 2: 10, 4: 10}
    stats = pd.read_csv(merge_dir / "stats_bs_1_2_4.csv")
    assert stats["batch_size"].tolist() == [1, 2, 4]
    assert (stats["median_ms"] > 0).all() and (stats["count"] == 10).all()
    prov = json.loads((merge_dir / "provenance_bs_1_2_4.json").read_text())
    assert [m["settings"]["batch_size"] for m in prov["measurements"]] == [1, 2, 4]

    mtimes = {p: p.stat().st_mtime_ns for p in files}
    t0 = time.monotonic()
    again = law_run("PlotRuntimes", "--version", "e2e", "--batch-sizes", "1,2,4", *FAST,
                    store=store)
    elapsed = time.monotonic() - t0
    assert again.returncode == 0
    assert _ran(again, "MeasureRuntime") == 0 and _ran(again, "PlotRuntimes") == 0
    assert "complete ones were encountered" in again.stderr
    assert {p: p.stat().st_mtime_ns for p in files_in(store)} == mtimes
    print(f"rerun took {elapsed:.2f} s")


@pytest.mark.slow
def test_same_batch_sizes_are_reused_by_a_larger_sweep(store):
    assert law_run("MergeRuntimes", "--version", "v", "--batch-sizes", "1,2", *FAST,
                   store=store).returncode == 0
    proc = law_run("MergeRuntimes", "--version", "v", "--batch-sizes", "1,2,4", *FAST,
                   store=store)
    assert proc.returncode == 0
    assert _ran(proc, "MeasureRuntime") == 2  # only batch size 4 + the workflow


@pytest.mark.slow
def test_plot_multi_runtimes_with_brace_expansion(store):
    proc = law_run("PlotMultiRuntimes", "--version", "multi", "--model-files",
                   "examples/dnn/model_onnx_l{10,20}u128.yaml", "--batch-sizes", "1,8",
                   "--file-types", "pdf,png", *FAST, store=store)
    assert proc.returncode == 0, proc.stderr
    plots = [p for p in files_in(store / "PlotMultiRuntimes")]
    assert sorted(p.suffix for p in plots) == [".pdf", ".png"]
    assert plots[0].stem == "runtimes_dnn_l10u128-dnn_l20u128_bs_1_8"
    merged = [p for p in files_in(store / "MergeRuntimes") if p.name.startswith("stats_")]
    assert sorted(p.parts[-5][:12] for p in merged) == ["dnn_l10u128_", "dnn_l20u128_"]
    assert len(merged) == 2


@pytest.mark.slow
def test_print_status_print_output_and_remove_output(store):
    args = ["--version", "st", "--batch-sizes", "1,2", *FAST]
    status = law_run("PlotRuntimes", *args, "--print-status", "-1", store=store)
    assert status.returncode == 0
    assert "MeasureRuntime" in status.stdout and "absent" in status.stdout
    assert law_run("PlotRuntimes", *args, store=store).returncode == 0
    out = law_run("PlotRuntimes", *args, "--print-output", "0", store=store)
    assert out.returncode == 0
    pdf = [ln.strip() for ln in out.stdout.splitlines() if ln.strip().endswith(".pdf")]
    assert pdf and os.path.exists(pdf[-1].split()[-1].removeprefix("file://"))
    measured = {p: p.stat().st_mtime_ns for p in files_in(store / "MeasureRuntime")}
    # remove the plot only and rerun it: the measurements stay
    rm = law_run("PlotRuntimes", *args, "--remove-output", "0,a,y", store=store)
    assert rm.returncode == 0
    assert _ran(rm, "PlotRuntimes") == 1 and _ran(rm, "MeasureRuntime") == 0
    assert {p: p.stat().st_mtime_ns for p in files_in(store / "MeasureRuntime")} == measured
    # dry mode removes nothing
    law_run("PlotRuntimes", *args, "--remove-output", "-1,d", store=store)
    assert {p: p.stat().st_mtime_ns for p in files_in(store / "MeasureRuntime")} == measured


@pytest.mark.slow
def test_editing_the_model_gives_new_outputs(store, tmp_path):
    import shutil

    from tests.onnx_factory import matmul_model, write_yaml

    matmul_model(tmp_path / "m.onnx", batch="N", units=4)
    y = write_yaml(tmp_path / "m.yaml", "m.onnx", [{"name": "x", "shape": [8]}], name="net")
    args = ["--version", "v", "--model-file", y, "--batch-sizes", "1", *FAST]
    assert law_run("MeasureRuntime", *args, store=store).returncode == 0
    shutil.copy(tmp_path / "m.onnx", tmp_path / "orig.onnx")
    matmul_model(tmp_path / "m.onnx", batch="N", units=5)  # same name, new weights
    proc = law_run("MeasureRuntime", *args, store=store)
    assert proc.returncode == 0 and _ran(proc, "MeasureRuntime") == 2
    model_dirs = sorted(p.name for p in (store / "MeasureRuntime").iterdir())
    assert len(model_dirs) == 2 and all(d.startswith("net__") for d in model_dirs)


@pytest.mark.slow
def test_ctrl_c_leaves_nothing_half_written_and_the_rerun_resumes(store):
    env = dict(os.environ, MLP_STORE=str(store), MLP_VERBOSE="1")  # _ran reads luigi's log
    args = ["law", "run", "MeasureRuntime", "--version", "int", "--batch-sizes", "1,2,4,8",
            "--n-calls", "10", "--warmup", "1", "--min-duration", "1.5"]
    # as in a terminal: a shell runs background jobs with SIGINT ignored, and that would be
    # inherited (a pytest started with `... &` made this law run ignore the Ctrl-C below)
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if any(p.name == "runtime_bs_1.json" for p in files_in(store)):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("first branch never finished")
    # Ctrl-C inside the second measurement: wait until this run holds the measurement lock
    # for batch size 2 (a fixed sleep sometimes landed between two tasks on a busy machine)
    from mlprof.measure.lock import read_holder

    while time.monotonic() < deadline:
        holder = read_holder() or {}
        if holder.get("label", "").endswith("at batch size 2") and "--version int" in str(
                holder.get("command", "")):
            break
        time.sleep(0.02)
    time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C goes to the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, err[-3000:]
    # one line says what happened, no traceback
    assert err.strip().splitlines()[-1] == INTERRUPTED and "Traceback" not in err, err[-3000:]
    after = files_in(store)
    names = sorted(p.name for p in after)
    # only whole branches, never a temp file or a CSV without its JSON
    assert names == ["runtime_bs_1.csv", "runtime_bs_1.json"], names
    first = {p: p.stat().st_mtime_ns for p in after}
    resumed = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert _ran(resumed, "MeasureRuntime") == 4  # 3 missing branches + workflow
    assert {p: p.stat().st_mtime_ns for p in first} == first  # batch size 1 not re-measured
    assert len(files_in(store)) == 8


@pytest.mark.slow
def test_workers_never_run_two_measurements_at_once(store):
    proc = law_run("MergeRuntimes", "--version", "w", "--batch-sizes", "1,2,4,8", "--workers",
                   "2", "--n-calls", "10", "--warmup", "1", "--min-duration", "0.4",
                   store=store)
    assert proc.returncode == 0, proc.stderr
    spans = sorted((json.loads(p.read_text())["started_unix"],
                    json.loads(p.read_text())["finished_unix"])
                   for p in files_in(store / "MeasureRuntime") if p.suffix == ".json")
    assert len(spans) == 4
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end, spans


@pytest.mark.slow
def test_workers_share_one_measurement_server(store):
    """luigi runs each task in a forked process under --workers 2: they all use the server of
    the scheduler process (which imported PyTorch once) instead of starting one each."""
    models = ",".join(str(REPO / p) for p in ("tests/scripts/linear.py",
                                              "models/selftest/mlp.py"))
    proc = law_run("PlotMultiRuntimes", "--version", "w", "--model-files", models,
                   "--runtimes", "torch", "--batch-sizes", "1,2", *FAST, "--workers", "2",
                   store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    provs = [json.loads(p.read_text()) for p in files_in(store / "MeasureRuntime")
             if p.suffix == ".json"]
    assert len(provs) == 4
    servers = {p["parent_pid"] for p in provs}
    workers = {p["pid"] for p in provs}
    assert len(servers) == 1 and len(workers) == 4, (servers, workers)
