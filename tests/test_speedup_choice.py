"""PlotSpeedup's automatic choice of runtimes and what PlotThroughput and PlotSpeedup print
(issue 21).

Without ``--runtimes`` PlotSpeedup compares every installed runtime that can measure the model,
as the registry says (a script: ONNX Runtime and OpenVINO on its export, PyTorch eager and
compiled on the script), and its title says which and why. At the end of ``law run`` each task
prints its own quantity: events per second, speed-ups (and why there is no interval).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mlprof.measure.stats import read_stats_csv, speedups_table, write_stats_csv
from mlprof.runtimes import runtimes_measuring
from tests.helpers import DNN, FAST, REPO, files_in, law_run

SCRIPT = str(REPO / "models" / "selftest" / "linear.py")


def _svg_text(path: Path) -> str:
    import html

    return re.sub(r"\s+", " ", " ".join(html.unescape(t) for t in
                                        re.findall(r">([^<>]*)<", path.read_text())))


def test_the_registry_names_every_runtime_that_measures_a_script():
    installed, missing = runtimes_measuring(["script"])
    # openvino measures a script through its ONNX export, as onnxruntime does
    assert {"onnxruntime", "openvino", "torch", "torch-compile"} <= set(installed) | set(missing)
    assert "tensorflow" not in installed + missing and "tfaot" not in installed + missing
    onnx, _ = runtimes_measuring(["onnx"])
    assert "torch" not in onnx and "openvino" in onnx


def test_speedup_without_runtimes_on_a_script_chooses_openvino_too():
    from mlprof.tasks.plotting import PlotSpeedup

    task = PlotSpeedup(version="v", model_files=(SCRIPT,))
    assert task.resolved_runtimes[0] == "onnxruntime"
    assert set(task.resolved_runtimes) == {"onnxruntime", "openvino", "torch", "torch-compile"}
    title = task.choice_text()
    assert title.startswith("runtimes: every installed one that measures a Python model script")
    assert all(rt in title for rt in task.resolved_runtimes)
    # given runtimes: no automatic choice, no such title
    assert PlotSpeedup(version="v", model_files=(SCRIPT,),
                       runtimes=("onnxruntime", "torch")).choice_text() is None
    dnn = PlotSpeedup(version="v", model_files=(str(DNN),))
    assert dnn.resolved_runtimes == ("onnxruntime", "openvino")


def _stats_file(path: Path, medians: dict[int, float], contended: set[int] = frozenset()
                ) -> Path:
    from mlprof.measure.stats import summarize

    rows = []
    for bs, med in medians.items():
        import numpy as np

        row = summarize(np.full(20, med), bs)
        row["contended"] = bs in contended
        rows.append(row)
    write_stats_csv(path, rows)
    return path


def test_speedup_table_divides_the_references_median_and_marks_either_point(tmp_path):
    ref = _stats_file(tmp_path / "ref.csv", {1: 1.0, 16: 4.0, 64: 8.0})
    other = _stats_file(tmp_path / "other.csv", {1: 0.5, 16: 5.0}, contended={16})
    text = speedups_table([("torch", ref, other)], "onnxruntime")
    lines = text.splitlines()
    assert lines[0].startswith("speed-up vs onnxruntime (its median latency / median latency")
    assert lines[1].split() == ["batch", "size", "torch", "[x]"]
    row = {ln.split()[0]: ln.split()[1:] for ln in lines[3:] if ln.split()[0].isdigit()}
    assert row["1"] == ["2.000"] and row["16"] == ["0.800", "!"]
    assert "64" not in row  # no point of the curve at 64
    assert "no confidence interval" in text and "--interleave" in text


@pytest.mark.slow
def test_throughput_task_prints_events_per_second(store: Path):
    r = law_run("PlotThroughput", "--version", "v1", "--model-files", str(DNN),
                "--batch-sizes", "1,64", "--file-types", "png", *FAST, store=store)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert "throughput at the median latency" in out and "median latency per batch" not in out
    assert "dnn_l10u128 onnxruntime [events/s]" in out
    (stats_file,) = [p for p in files_in(store) if p.name.startswith("stats_")]
    stats = read_stats_csv(stats_file)
    for bs, tp in zip(stats["batch_size"], stats["throughput"], strict=True):
        line = next(ln for ln in out.splitlines() if ln.split()[:1] == [str(int(bs))])
        assert float(line.split()[1]) == pytest.approx(tp, rel=1e-3)
    assert "throughput_bs_1_64.png" in out


@pytest.mark.slow
def test_speedup_without_runtimes_on_a_script_plots_and_prints_openvino(store: Path):
    """The acceptance run: PlotSpeedup on models/selftest/linear.py without --runtimes has an
    openvino curve, a title naming the runtimes chosen and why, and prints the speed-ups."""
    r = law_run("PlotSpeedup", "--version", "v1", "--model-files", SCRIPT, "--batch-sizes",
                "1,16", "--file-types", "svg", *FAST, store=store, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    (svg,) = [p for p in files_in(store / "PlotSpeedup") if p.suffix == ".svg"]
    assert svg.name.startswith("speedup_vs-onnxruntime_auto_")
    assert "openvino" in svg.name
    text = _svg_text(svg)
    assert "runtimes: every installed one that measures a Python model script" in text
    assert "onnxruntime, torch, torch-compile, openvino" in text
    out = r.stdout
    assert "speed-up vs onnxruntime" in out and "median latency per batch" not in out
    header = next(ln for ln in out.splitlines() if ln.startswith("batch size"))
    assert header.split() == ["batch", "size", "torch", "[x]", "torch-compile", "[x]",
                              "openvino", "[x]"], header
