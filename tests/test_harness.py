"""The timing harness, input generation and statistics, on real ONNX Runtime sessions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mlprof.errors import MLProfError
from mlprof.measure import MeasureSettings, measure
from mlprof.measure.inputs import make_feeds
from mlprof.measure.stats import STAT_COLUMNS, compute_stats, summarize
from mlprof.model import InputSpec
from tests.helpers import DNN
from tests.onnx_factory import hardcoded_reshape_model, identity_model, matmul_model


def test_samples_events_and_calls():
    r = measure(str(DNN), MeasureSettings(batch_size=4, n_calls=7, n_events=3, warmup=2,
                                          min_duration=0))
    assert r.samples_ns.size == 21
    assert (r.samples_ns > 0).all()
    # events in turn, n_calls each
    assert r.events.tolist() == [0] * 7 + [1] * 7 + [2] * 7
    assert r.calls.tolist() == list(range(7)) * 3
    p = r.provenance
    assert p["settings"]["batch_size"] == 4 and p["threads"] == 1
    assert p["runtime"] == "onnxruntime" and p["runtime_version"] not in (None, "unknown")
    assert p["runtime_settings"]["intra_op_num_threads"] == 1
    assert len(p["model"]["file_sha256"]) == 64
    for key in ("session_creation_ms", "first_call_ms", "peak_rss_mb", "cpu_model", "host",
                "timestamp", "mlprof_version", "git_commit"):
        assert key in p
    assert p["session_creation_ms"] > 0 and p["first_call_ms"] > 0
    assert p["timed_sum_s"] == pytest.approx(r.samples_ns.sum() / 1e9)
    assert p["model"]["inputs"] == [{"name": "input_0", "shape": [4, 64], "dtype": "float32"}]


def test_min_duration_adds_whole_rounds_until_reached():
    r = measure(str(DNN), MeasureSettings(batch_size=1, n_calls=5, n_events=2, warmup=0,
                                          min_duration=0.2))
    assert r.provenance["loop_wall_s"] >= 0.2
    assert r.samples_ns.size % 10 == 0 and r.samples_ns.size > 10
    rounds = r.provenance["rounds"]
    assert r.samples_ns.size == rounds * 10
    # the call index keeps counting over rounds, per event
    assert r.calls[r.events == 1].tolist() == list(range(5 * rounds))


def test_csv_text_has_header_and_one_row_per_sample():
    r = measure(str(DNN), MeasureSettings(batch_size=2, n_calls=3, warmup=0, min_duration=0))
    lines = r.csv_text().splitlines()
    assert lines[0] == "batch_size,event,call,runtime_ms"
    assert len(lines) == 4
    assert lines[1].startswith("2,0,0,")


@pytest.mark.parametrize("kind", ["random", "incremental", "zeros", "ones"])
def test_all_input_kinds_and_dtypes_run(tmp_path, kind):
    path = identity_model(tmp_path / "m.onnx", [
        ("f32", "float32", ["N", 3]), ("f16", "float16", ["N", 2]), ("i32", "int32", ["N", 4]),
        ("i64", "int64", ["N", 2]), ("b", "bool", ["N", 5])])
    r = measure(path, MeasureSettings(batch_size=8, n_calls=3, warmup=1, input_data=kind,
                                      min_duration=0))
    assert r.samples_ns.size == 3
    assert {i["name"]: i["dtype"] for i in r.provenance["model"]["inputs"]} == {
        "f32": "float32", "f16": "float16", "i32": "int32", "i64": "int64", "b": "bool"}


def test_input_kinds_generate_what_they_say():
    specs = [InputSpec("x", (3,), "float32"), InputSpec("i", (2,), "int64"),
             InputSpec("b", (2,), "bool")]
    zeros = make_feeds(specs, 4, 1, "zeros")[0]
    assert all(not a.any() for a in zeros.values())
    ones = make_feeds(specs, 4, 1, "ones")[0]
    assert (ones["x"] == 1).all() and ones["b"].all()
    inc = make_feeds(specs, 2, 2, "incremental")
    assert inc[0]["x"].ravel().tolist() == [0, 1, 2, 3, 4, 5]
    assert inc[1]["x"].ravel().tolist() == [6, 7, 8, 9, 10, 11]
    rnd = make_feeds(specs, 4, 2, "random")
    assert rnd[0]["x"].shape == (4, 3) and rnd[0]["x"].dtype == np.float32
    assert not np.array_equal(rnd[0]["x"], rnd[1]["x"])  # distinct events
    assert rnd[0]["i"].dtype == np.int64 and rnd[0]["b"].dtype == np.bool_
    # seeded: the same inputs every time
    assert np.array_equal(make_feeds(specs, 4, 1, "random")[0]["x"], rnd[0]["x"])


def test_input_file_rows_wrap_and_cast(tmp_path):
    f = tmp_path / "in.npz"
    np.savez(f, x=np.arange(9, dtype=np.float64).reshape(3, 3))
    feeds = make_feeds([InputSpec("x", (3,), "float32")], 2, 2, str(f))
    assert feeds[0]["x"].dtype == np.float32
    assert feeds[0]["x"][:, 0].tolist() == [0, 3]
    assert feeds[1]["x"][:, 0].tolist() == [6, 0]  # wraps around


def test_fixed_batch_dimension_is_made_symbolic_where_the_graph_allows(tmp_path):
    path = matmul_model(tmp_path / "m.onnx", batch=4)
    r = measure(path, MeasureSettings(batch_size=16, n_calls=3, warmup=0, min_duration=0))
    assert r.provenance["runtime_settings"]["batch_dim_made_symbolic"] is True
    assert r.provenance["model"]["inputs"][0]["shape"] == [16, 8]
    r4 = measure(path, MeasureSettings(batch_size=4, n_calls=3, warmup=0, min_duration=0))
    assert r4.provenance["runtime_settings"]["batch_dim_made_symbolic"] is False


def test_fixed_batch_dimension_that_the_graph_needs_fails_clearly(tmp_path):
    path = hardcoded_reshape_model(tmp_path / "m.onnx", batch=4)
    assert measure(path, MeasureSettings(batch_size=4, n_calls=2, warmup=0,
                                         min_duration=0)).samples_ns.size == 2
    with pytest.raises(MLProfError) as err:
        measure(path, MeasureSettings(batch_size=2, n_calls=2, warmup=0, min_duration=0))
    msg = str(err.value)
    assert msg.startswith(path)
    assert "fixed batch dimension of 4" in msg and "batch size 2" in msg
    assert "\n" not in msg


def test_stats_match_numpy():
    rng = np.random.default_rng(1)
    x = rng.lognormal(size=1000)
    row = summarize(x, 8)
    assert row["count"] == 1000
    assert row["median_ms"] == pytest.approx(np.median(x))
    assert row["p16_ms"] == pytest.approx(np.percentile(x, 16))
    assert row["p99_ms"] == pytest.approx(np.percentile(x, 99))
    assert row["std_ms"] == pytest.approx(np.std(x, ddof=1))
    assert row["cv"] == pytest.approx(np.std(x, ddof=1) / np.mean(x))
    assert row["throughput"] == pytest.approx(8 * 1000 / np.median(x))
    assert row["unstable"] is True  # lognormal(1): CV far above 10%


def test_compute_stats_one_row_per_batch_size_and_flags_instability():
    steady = np.full(100, 2.0) + np.linspace(-0.01, 0.01, 100)
    noisy = np.concatenate([np.full(90, 1.0), np.full(10, 5.0)])
    raw = pd.DataFrame({"batch_size": [1] * 100 + [2] * 100, "event": 0,
                        "call": list(range(100)) * 2,
                        "runtime_ms": np.concatenate([steady, noisy])})
    stats = compute_stats(raw)
    assert list(stats.columns) == STAT_COLUMNS
    assert stats["batch_size"].tolist() == [1, 2]
    assert stats["unstable"].tolist() == [False, True]
    assert stats.loc[1, "median_ms"] == 1.0


def test_random_masks_are_zeros_and_ones_and_other_integers_are_not():
    """An attention mask is 0/1 by definition (OPT's position ids are its cumulative sum:
    values up to 7 ran past its 2,050 positions); token ids keep the wider range."""
    from mlprof.model.spec import InputSpec

    specs = [InputSpec("input_ids", (128,), "int64"), InputSpec("attention_mask", (128,), "int64")]
    feed = make_feeds(specs, 8, 1, "random")[0]
    assert set(np.unique(feed["attention_mask"])) == {0, 1}
    assert feed["input_ids"].max() > 1
