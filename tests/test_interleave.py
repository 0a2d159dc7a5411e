"""Interleaved comparisons (issue 14, item 4): the bootstrap interval of paired rounds, the same
model twice (no difference), 10 vs 20 layers (a difference), a law run of
PlotMultiRuntimes --interleave, and configurations that cannot share a process."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DNN, REPO, law_run

from mlprof.errors import MLProfError
from mlprof.measure import MeasureSettings
from mlprof.measure.interleave import (
    Config,
    bootstrap_ci,
    comparison_rows,
    measure_interleaved_isolated,
    read_table,
)

DNN20 = REPO / "examples" / "dnn" / "model_onnx_l20u128.yaml"
AOT = REPO / "examples" / "dnn" / "model_tfaot_l10u128.yaml"
FAST = MeasureSettings(batch_size=1, n_calls=30, warmup=5, min_duration=0)


def test_bootstrap_interval_of_synthetic_paired_rounds():
    # both sides drift together by +-20 % from round to round; B is always 10 % slower: the
    # paired ratios are exactly 1/1.1, so the interval is that point and excludes 1
    drift = 1 + 0.2 * np.sin(np.arange(12))
    a, b = drift * 1.0, drift * 1.1
    est, low, high = bootstrap_ci(a / b)
    assert est == pytest.approx(1 / 1.1) and low == pytest.approx(est) == high
    # symmetric noise around 1: the interval holds the median, contains 1, is reproducible
    ratios = [0.97, 1.02, 0.99, 1.03, 1.0, 0.98, 1.01, 1.04, 0.96, 1.0]
    est, low, high = bootstrap_ci(ratios)
    assert est == 1.0 and low < 1.0 < high and low >= 0.96 and high <= 1.04
    assert bootstrap_ci(ratios) == (est, low, high)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0])


def _compare(files, bs: int, rounds: int = 12):
    configs = [Config(f"m{i}", str(f), "onnxruntime", f"m{i}") for i, f in enumerate(files)]
    return comparison_rows(measure_interleaved_isolated(
        configs, MeasureSettings(batch_size=bs, n_calls=30, warmup=5, min_duration=0), rounds))


@pytest.mark.parametrize("bs", [1, 8])
def test_the_same_model_twice_is_not_significant(bs):
    # a 95 % interval misses 1 in ~5 % of identical comparisons (measured: 95 of 100 runs of
    # 12 rounds contained it), so three independent comparisons, at least two containing 1:
    # this fails by chance in <1 % of runs, and always if the intervals were biased or narrow
    runs = [_compare([DNN, DNN], bs) for _ in range(3)]
    assert all(ref["verdict"] == "reference" for ref, _ in runs)
    inside = [o for _, o in runs if o["ci_low"] <= 1.0 <= o["ci_high"]]
    assert len(inside) >= 2, [o for _, o in runs]
    assert all(o["verdict"] == "not significant" and not o["significant"] for o in inside)


@pytest.mark.parametrize("bs", [1, 8])
def test_twenty_layers_are_significantly_slower_than_ten(bs):
    _, deep = _compare([DNN, DNN20], bs)
    assert deep["ci_high"] < 1.0 and deep["significant"] and deep["verdict"] == "slower", deep


def test_plot_multi_runtimes_interleave_law_run(store):
    proc = law_run("PlotMultiRuntimes", "--version", "il", "--model-files",
                   "examples/dnn/model_onnx_l{10,20}u128.yaml", "--batch-sizes", "1,8",
                   "--n-calls", "30", "--warmup", "5", "--interleave", "6",
                   "--file-types", "png", store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (plot,) = (store / "PlotMultiRuntimes").rglob("*.png")
    assert plot.name == "speedup_il6_dnn_l10u128-dnn_l20u128_bs_1_8.png"
    (table,) = (store / "CompareInterleaved").rglob("speedup_*.csv")
    rows = read_table(str(table))
    assert [(r["batch_size"], r["verdict"]) for r in rows] == [
        (1, "reference"), (1, "slower"), (8, "reference"), (8, "slower")]
    assert all(r["rounds"] == 6 for r in rows)
    import json

    (prov,) = (store / "CompareInterleaved").rglob("provenance_*.json")
    assert json.loads(prov.read_text())["interleaved"] is True
    assert not (store / "MergeRuntimes").exists()  # no independent curves were measured


def test_a_configuration_that_cannot_share_a_process_is_refused(store):
    from mlprof.tasks.plotting import PlotMultiRuntimes

    with pytest.raises(MLProfError) as e:
        PlotMultiRuntimes(version="v", model_files=(str(AOT),), interleave=4)
    assert "tfaot" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(MLProfError, match="own virtual environments") as e:
        PlotMultiRuntimes(version="v", model_files=(str(DNN),), interleave=4,
                          runtime_versions=("1.20.1",))
    assert "\n" not in str(e.value)


def test_the_api_compares_interleaved(store, monkeypatch):
    """mlprof.compare_interleaved: the same table as the task, through the API (10 vs 20
    layers: a difference whose interval excludes 1), cached in the store like law runs."""
    import mlprof

    monkeypatch.setenv("MLP_STORE", str(store))
    table = mlprof.compare_interleaved([DNN, DNN20], batch_sizes=[8], rounds=10, n_calls=30,
                                       warmup=5, version="api-il")
    assert list(table["verdict"]) == ["reference", "slower"]
    deep = table.iloc[1]
    assert deep["ci_high"] < 1.0 and bool(deep["significant"])
    assert list(store.rglob("speedup_*il10*.csv"))
    with pytest.raises(MLProfError, match="min_duration"):
        mlprof.compare_interleaved([DNN], min_duration=1.0)
