"""Events per call (issue 20, item 4): a model without a batch dimension processes one event
per call at every batch size, and every rate mlprof derives (throughput, time per event) divides
by the events per call, never by the batch size."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlprof.measure.results import events_per_call, merge_branches, read_provenance
from mlprof.measure.stats import read_stats_csv, summarize, throughput
from tests.helpers import DNN, FAST, REPO, branch_provenances, files_in, law_run

NO_BATCH = str(REPO / "models" / "selftest" / "no_batch.py")


def _stats_file(store: Path) -> Path:
    (stats,) = [p for p in files_in(store / "MergeRuntimes") if p.name.startswith("stats_")]
    return stats


def _branches(store: Path) -> list[dict[str, str]]:
    jsons = sorted((p for p in files_in(store / "MeasureRuntime")
                    if p.name.startswith("runtime_bs_") and p.suffix == ".json"),
                   key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [{"csv": str(p.with_suffix(".csv")), "json": str(p)} for p in jsons]


def test_throughput_divides_events_per_call_not_batch_size():
    """The arithmetic: one event per call at batch size 8 is 1000 / median events/s."""
    samples = np.array([0.5, 0.5, 0.5])
    assert summarize(samples, 8)["throughput"] == pytest.approx(16000.0)  # batched: 8 / call
    row = summarize(samples, 8, events_per_call=1)
    assert row["events_per_call"] == 1 and row["throughput"] == pytest.approx(2000.0)
    assert throughput(1, 0.5) == pytest.approx(2000.0)
    # a record from before the field: its batch size (as the throughput was computed then)
    assert events_per_call({"settings": {"batch_size": 8}}) == 8
    assert events_per_call({"settings": {"batch_size": 8}, "events_per_call": 1}) == 1


@pytest.mark.slow
def test_no_batch_model_on_onnxruntime_has_one_event_per_call(store):
    """The acceptance test: no_batch.py on onnxruntime at batch sizes 1 and 8, through
    ``law run MergeRuntimes``; every place that shows a throughput agrees that it is
    events_per_call (1) per median call."""
    proc = law_run("MergeRuntimes", "--version", "e1", "--model-file", NO_BATCH, "--runtime",
                   "onnxruntime", "--batch-sizes", "1,8", *FAST, store=store, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "no input has a batch dimension" in proc.stderr

    provs = branch_provenances(store)
    assert sorted(provs) == [1, 8]
    assert {bs: p["events_per_call"] for bs, p in provs.items()} == {1: 1, 8: 1}

    st = read_stats_csv(_stats_file(store))
    assert st["batch_size"].tolist() == [1, 8]
    assert st["events_per_call"].tolist() == [1, 1]
    # as written in the file (not recomputed on reading)
    import pandas as pd

    raw = pd.read_csv(_stats_file(store))
    for frame in (st, raw):
        for thr, med in zip(frame["throughput"], frame["median_ms"], strict=True):
            assert thr == pytest.approx(1.0 / (med / 1e3), rel=1e-5)

    # the Report's rows (read from the branches) and the API's result say the same
    from mlprof.report.collect import collect

    rows = {r["batch_size"]: r for r in collect([store]) if r["status"] == "ok"}
    assert sorted(rows) == [1, 8]
    for r in rows.values():
        assert r["events_per_call"] == 1
        assert r["throughput"] == pytest.approx(1000.0 / r["median_ms"])

    import mlprof

    (result,) = mlprof.benchmark_files(NO_BATCH, runtimes=["ort"], batch_sizes=[1, 8],
                                       version="e1", n_calls=10, warmup=1, min_duration=0)
    s = result.stats
    assert s["events_per_call"].tolist() == [1, 1]
    assert np.allclose(s["throughput"], 1000.0 / s["median_ms"])
    assert {"unstable", "contended", "flags"} <= set(s.columns)


@pytest.mark.slow
def test_batched_model_has_batch_size_events_per_call_and_old_records_read_so(store,
                                                                               tmp_path):
    """A model with a batch dimension: events_per_call is the batch size. A branch written
    before the field existed reads the same (events per call = its batch size)."""
    proc = law_run("MergeRuntimes", "--version", "e2", "--model-file", str(DNN),
                   "--batch-sizes", "1,4", *FAST, store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    provs = branch_provenances(store)
    assert {bs: p["events_per_call"] for bs, p in provs.items()} == {1: 1, 4: 4}
    st = read_stats_csv(_stats_file(store))
    assert st["events_per_call"].tolist() == [1, 4]
    assert np.allclose(st["throughput"], st["batch_size"] * 1000.0 / st["median_ms"],
                       rtol=1e-5)

    branches = _branches(store)
    new = merge_branches(branches, {k: str(tmp_path / f"new.{k}") for k in
                                    ("raw", "stats", "provenance")}, {})
    for b in branches:  # as written before this change: no events_per_call
        prov = json.loads(Path(b["json"]).read_text())
        del prov["events_per_call"]
        Path(b["json"]).write_text(json.dumps(prov))
    old = merge_branches(branches, {k: str(tmp_path / f"old.{k}") for k in
                                    ("raw", "stats", "provenance")}, {})
    assert [r["events_per_call"] for r in old] == [1, 4]
    assert [r["throughput"] for r in old] == [r["throughput"] for r in new]
    # a stats file without the column reads as the batch size too
    path = tmp_path / "old.stats"
    lines = path.read_text().splitlines()
    keep = [i for i, c in enumerate(lines[0].split(",")) if c != "events_per_call"]
    path.write_text("\n".join(",".join(ln.split(",")[i] for i in keep) for ln in lines) + "\n")
    again = read_stats_csv(path)
    assert again["events_per_call"].tolist() == [1, 4]
    assert np.allclose(again["throughput"], [r["throughput"] for r in new])

    # a damaged field is refused like every other
    prov = json.loads(Path(branches[0]["json"]).read_text())
    prov["events_per_call"] = 0
    Path(branches[0]["json"]).write_text(json.dumps(prov))
    from mlprof.errors import CorruptResult

    with pytest.raises(CorruptResult, match="events_per_call is 0"):
        read_provenance(branches[0]["json"])


def test_time_per_event_divides_events_per_call():
    """The latency plot per event of a no-batch model draws the call's latency at every batch
    size (not latency / batch size)."""
    from mlprof.plotting.runtimes import Curve, plot_runtimes, use_backend

    stats = {"batch_size": np.array([1, 8]), "median_ms": np.array([2.0, 2.0]),
             "p16_ms": np.array([1.9, 1.9]), "p84_ms": np.array([2.1, 2.1]),
             "events_per_call": np.array([1, 1])}
    fig = plot_runtimes([Curve("a", stats)], bs_normalized=True)
    ys = [list(ln.get_ydata()) for ln in fig.axes[0].get_lines() if len(ln.get_xdata()) == 2]
    assert [2.0, 2.0] in ys, ys
    use_backend().close(fig)
    batched = {k: v for k, v in stats.items() if k != "events_per_call"}  # older statistics
    fig = plot_runtimes([Curve("a", batched)], bs_normalized=True)
    ys = [list(ln.get_ydata()) for ln in fig.axes[0].get_lines() if len(ln.get_xdata()) == 2]
    assert [2.0, 0.25] in ys, ys
    use_backend().close(fig)
