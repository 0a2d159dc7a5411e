"""FLOPs from the ONNX graph, the GEMM peak, the stats columns and the efficiency plot (issue 14).

The FLOP counts are checked against hand computations from the example models' layer sizes
(multiply-add = 2 FLOPs, bias/activation/pooling/softmax as mlprof.model.flops counts them).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlprof.errors import MLProfError
from mlprof.measure.stats import STAT_COLUMNS, summarize
from mlprof.model.flops import file_cost, graph_cost
from tests.helpers import DNN, FAST, REPO, files_in, law_run

CNN = REPO / "examples" / "cnn" / "model_onnx_cnn.yaml"


def dnn_hand(n: int) -> tuple[int, int, int]:
    """(FLOPs, parameter bytes, activation bytes) of the DNN 10x128 (64 inputs, 8 outputs):
    Gemm 64->128, nine Gemm 128->128, Gemm 128->8, a ReLU after each of the first ten and a
    Softmax."""
    layers = [(64, 128)] + [(128, 128)] * 9 + [(128, 8)]
    gemm = sum(2 * n * k * m + n * m for k, m in layers)  # multiply-adds + bias
    relu = 10 * n * 128
    softmax = n * 8
    params = 4 * sum(k * m + m for k, m in layers)
    acts = 4 * n * (64 + 10 * 128 * 2 + 8 + 8)  # input, 10 Gemm + 10 Relu, last Gemm, Softmax
    return gemm + relu + softmax, params, acts


def cnn_hand(n: int) -> int:
    """Conv(1->8, 3x3, pad 1) on 28x28, ReLU, MaxPool 2, Conv(8->16, 3x3) on 14x14, ReLU,
    MaxPool 2, Flatten, Gemm 784->64, ReLU, Gemm 64->10, Softmax."""
    conv0 = 2 * n * 8 * 28 * 28 * (1 * 3 * 3) + n * 8 * 28 * 28
    conv1 = 2 * n * 16 * 14 * 14 * (8 * 3 * 3) + n * 16 * 14 * 14
    relus = n * (8 * 28 * 28 + 16 * 14 * 14 + 64)
    pools = n * (8 * 14 * 14 + 16 * 7 * 7) * 4  # a 2x2 window per output element
    gemms = (2 * n * 784 * 64 + n * 64) + (2 * n * 64 * 10 + n * 10)
    return conv0 + conv1 + relus + pools + gemms + n * 10


@pytest.mark.parametrize("n", [1, 7, 256])
def test_dnn_flops_match_the_hand_computation(n):
    cost = file_cost(str(DNN), n)
    flop, params, acts = dnn_hand(n)
    assert flop == 315_920 * n  # the number in the docs
    assert cost.complete and cost.uncounted == []
    assert cost.flop == flop and cost.gflop_per_call == pytest.approx(flop / 1e9)
    assert cost.param_bytes == params == 631_840
    assert cost.activation_bytes == acts
    assert cost.by_op["Relu"] == 10 * 128 * n and cost.by_op["Softmax"] == 8 * n


@pytest.mark.parametrize("n", [1, 32])
def test_cnn_flops_match_the_hand_computation(n):
    cost = file_cost(str(CNN), n)
    assert cnn_hand(n) == 694_484 * n
    assert cost.complete and cost.flop == cnn_hand(n)
    assert cost.by_op["Conv"] == (2 * 8 * 784 * 9 + 8 * 784 + 2 * 16 * 196 * 72 + 16 * 196) * n
    assert cost.by_op["Flatten"] == 0


def test_batched_matmul_unknown_ops_and_unknown_shapes_are_recorded():
    """A batched MatMul is 2*B*M*N*K; an op type not counted leaves gflop_per_call empty."""
    w = numpy_helper.from_array(np.ones((3, 5, 7), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]),
         helper.make_node("Det", ["sq"], ["d"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 4, 5]),
              helper.make_tensor_value_info("sq", TensorProto.FLOAT, ["k", 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("d", TensorProto.FLOAT, None)], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    cost = graph_cost(model, 2, {"sq": (6, 2, 2)})
    assert cost.by_op["MatMul"] == 2 * 2 * 3 * 4 * 7 * 5
    assert not cost.complete and cost.gflop_per_call is None
    assert cost.counted_nodes == 1 and cost.n_nodes == 2
    assert "Det" in cost.uncounted[0] and "not counted" in cost.uncounted[0]
    assert cost.record()["gflop_counted"] == pytest.approx(2 * 2 * 3 * 4 * 7 * 5 / 1e9)


def test_stats_columns_hold_flops_and_achieved_rate():
    samples = np.array([2.0, 1.0, 4.0, 3.0, 5.0])  # median 3 ms
    row = summarize(samples, 8, gflop_per_call=0.6)
    assert {"gflop_per_call", "gflops_per_s"} <= set(STAT_COLUMNS) <= set(row)
    assert row["gflops_per_s"] == pytest.approx(0.6 / 3e-3)
    empty = summarize(samples, 8)
    assert math.isnan(empty["gflop_per_call"]) and math.isnan(empty["gflops_per_s"])


def test_peak_microbenchmark_is_positive_with_its_spread():
    from mlprof.measure.peak import measure_peak_isolated

    rec = measure_peak_isolated("onnxruntime", 1, sizes=(128, 256), target_s=0.02)
    assert rec["peak_gflops"] > 0 and math.isfinite(rec["peak_gflops"])
    assert math.isfinite(rec["spread"]) and rec["spread"] >= 0
    assert [s["n"] for s in rec["sizes"]] == [128, 256]
    assert all(len(s["gflops"]) >= 5 for s in rec["sizes"])
    assert rec["peak_gflops"] == max(s["median_gflops"] for s in rec["sizes"])
    assert rec["threads"] == 1 and rec["runtime"] == "onnxruntime" and rec["host"]


def test_peak_refuses_a_runtime_without_benchmark():
    from mlprof.measure.peak import check_peak_runtime

    with pytest.raises(MLProfError, match="--y-axis: the peak microbenchmark exists"):
        check_peak_runtime("tensorflow", "--y-axis")


@pytest.mark.slow
def test_efficiency_plot_of_the_dnn_on_onnxruntime(store):
    proc = law_run("PlotRuntimes", "--version", "eff", "--batch-sizes", "1,16", "--y-axis",
                   "efficiency", "--file-types", "png", *FAST, store=store)
    assert proc.returncode == 0, proc.stderr
    files = files_in(store)
    (png,) = [p for p in files if p.suffix == ".png"]
    assert png.name == "runtimes_bs_1_16__efficiency.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    (peak_file,) = [p for p in files if p.name == "peak.json"]
    assert peak_file.relative_to(store).parts[0] == "MeasurePeak"
    peak = json.loads(peak_file.read_text())["peak_gflops"]
    assert peak > 0
    (stats_file,) = [p for p in files if p.name.startswith("stats_")]
    stats = pd.read_csv(stats_file)
    assert list(stats.columns) == STAT_COLUMNS
    assert stats["gflop_per_call"].tolist() == pytest.approx([315_920e-9, 16 * 315_920e-9])
    assert np.allclose(stats["gflops_per_s"],
                       stats["gflop_per_call"] / (stats["median_ms"] / 1e3), rtol=1e-5)
    prov = json.loads(stats_file.with_name(stats_file.name.replace("stats_", "provenance_")
                                           .replace(".csv", ".json")).read_text())
    assert [c["complete"] for c in prov["cost"]] == [True, True]
    # the peak was measured before the merge? then it is recorded; otherwise why not
    assert "peak_gflops" in prov["peak"]
    # a second plot with the default latency axis is another file; the peak is not re-measured
    again = law_run("PlotRuntimes", "--version", "eff", "--batch-sizes", "1,16",
                    "--file-types", "png", *FAST, store=store)
    assert again.returncode == 0, again.stderr
    assert "running   MeasurePeak" not in again.stderr
    assert {p.name for p in files_in(store) if p.suffix == ".png"} == {
        "runtimes_bs_1_16__efficiency.png", "runtimes_bs_1_16.png"}


def test_efficiency_refuses_latency_axis_options(store):
    proc = law_run("PlotRuntimes", "--version", "eff", "--y-axis", "efficiency", "--y-max",
                   "2", *FAST, store=store)
    assert proc.returncode != 0
    assert "--y-max: applies to latency plots only" in proc.stderr


def test_a_sweep_reads_its_graph_once_and_again_when_the_graph_changes(tmp_path, monkeypatch):
    """file_cost at each batch size of a sweep loads the ONNX graph once (MergeRuntimes asks
    per batch size), and again when the spec's graph file changed (its identity: inode, size,
    modification time)."""
    import os
    import shutil

    from mlprof.model import flops

    for name in (DNN.name, "model_onnx_l10u128.onnx"):
        shutil.copy(DNN.parent / name, tmp_path / name)
    spec = str(tmp_path / DNN.name)
    loads = []
    real = flops.load_onnx
    monkeypatch.setattr(flops, "load_onnx", lambda s: loads.append(s.file) or real(s))
    costs = [file_cost(spec, n).flop for n in (1, 2, 4)]
    assert costs == [315_920 * n for n in (1, 2, 4)] and len(loads) == 1
    graph = tmp_path / "model_onnx_l10u128.onnx"
    st = graph.stat()
    os.utime(graph, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert file_cost(spec, 8).flop == 315_920 * 8 and len(loads) == 2
