"""Generation metrics (issue 37) on constructed timed calls: the formulas to the nanosecond,
N = 1, intervals that contain their estimates, the paired speed-up, and hostile records."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from mlprof.errors import MLProfError
from mlprof.measure.generation.metrics import (
    FORMULAS,
    UNITS,
    Distribution,
    GenerationMetrics,
    Speedup,
    generation_metrics,
    paired_speedup,
    per_call,
)
from mlprof.measure.generation.timing import TimedGeneration

MS = 1_000_000  # ns


def call(token_ms, e2e_ms, batch=2) -> TimedGeneration:
    ns = np.asarray([round(t * MS) for t in token_ms], dtype=np.int64)
    return TimedGeneration(tokens=np.full((batch, ns.size), 5, dtype=np.int64), token_ns=ns,
                           e2e_ns=round(e2e_ms * MS))


def jittered(n_calls: int, ttft_ms: float, gap_ms: float, n: int = 8, batch: int = 2,
             seed: int = 0) -> list[TimedGeneration]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_calls):
        gaps = gap_ms * (1 + 0.2 * rng.random(n - 1))
        times = np.concatenate([[ttft_ms * (1 + 0.2 * rng.random())], gaps]).cumsum()
        out.append(call(times, times[-1] + 0.01, batch))
    return out


def test_the_formulas_on_one_call():
    # TTFT 10 ms, then 2, 2, 3 ms gaps; the call returns 1 ms after the last token
    c = call([10, 12, 14, 17], 18)
    v = per_call([c], batch_size=2, prompt_length=8)
    assert v["ttft_ms"].tolist() == [10.0]
    assert v["e2e_ms"].tolist() == [18.0]
    assert v["tpot_ms"].tolist() == [pytest.approx((18 - 10) / 3)]  # (E2E - TTFT) / (N - 1)
    assert v["itl_ms"].tolist() == [2.0, 2.0, 3.0]
    assert v["prefill_tokens_per_s"].tolist() == [pytest.approx(2 * 8 / 0.010)]  # 1600
    assert v["decode_tokens_per_s"].tolist() == [pytest.approx(2 * 3 / 0.008)]  # 750
    assert set(FORMULAS) == set(UNITS) == set(v)
    assert FORMULAS["tpot_ms"] == "TPOT = (E2E - TTFT) / (N - 1)"


def test_metrics_of_a_point_and_the_step_profile():
    calls = [call([10, 12, 14, 17], 18), call([20, 22, 25, 27], 28), call([30, 33, 35, 38], 40)]
    m = generation_metrics(calls, runtime="torch", batch_size=2, prompt_length=8)
    assert (m.runtime, m.batch_size, m.prompt_length, m.new_tokens, m.n_calls) == \
        ("torch", 2, 8, 4, 3)
    assert m.ttft.p50.value == 20.0 and m.e2e.p50.value == 28.0
    assert m.tpot is not None and m.tpot.p50.value == pytest.approx(8 / 3)
    assert m.itl is not None and m.itl.n == 9 and m.itl.p50.value == 2.0
    assert m.itl_by_step_ms == (2.0, 2.0, 3.0)  # median gap of steps 1, 2, 3
    assert m.ttft.unit == "ms" and m.prefill_tokens_per_s.unit == "tokens/s"
    assert m.tpot.formula == FORMULAS["tpot_ms"]


def test_one_new_token_has_no_decode_metrics():
    calls = [call([10], 10.5), call([11], 11.2)]
    m = generation_metrics(calls, runtime="torch", batch_size=2, prompt_length=8)
    assert m.tpot is None and m.itl is None and m.decode_tokens_per_s is None
    assert m.itl_by_step_ms == ()
    assert set(m.distributions()) == {"ttft_ms", "e2e_ms", "prefill_tokens_per_s"}
    assert GenerationMetrics.from_json(m.to_json()) == m


def test_intervals_contain_their_estimates_and_are_seeded():
    calls = jittered(60, 20.0, 5.0)
    m = generation_metrics(calls, runtime="onnxruntime", batch_size=2, prompt_length=128)
    for d in m.distributions().values():
        for q in (d.p50, d.p90, d.p99):
            assert q.low <= q.value <= q.high
        assert d.p50.value <= d.p90.value <= d.p99.value
    assert m.tpot is not None and m.tpot.p50.high - m.tpot.p50.low < 0.5  # 60 calls: narrow
    again = generation_metrics(calls, runtime="onnxruntime", batch_size=2, prompt_length=128)
    assert again == m
    other = generation_metrics(calls, runtime="onnxruntime", batch_size=2, prompt_length=128,
                               seed=1)
    assert other.ttft.p50.value == m.ttft.p50.value and other.ttft.p50.low != m.ttft.p50.low


def test_json_round_trip():
    m = generation_metrics(jittered(12, 20.0, 5.0), runtime="openvino", batch_size=2,
                           prompt_length=16)
    assert GenerationMetrics.from_json(m.to_json()) == m
    assert Distribution.from_json(m.ttft.to_json()) == m.ttft


@pytest.mark.parametrize("bad", [
    lambda c: c.update(token_ns=np.array([0, 1], dtype=np.int64)),           # TTFT 0
    lambda c: c.update(token_ns=np.array([5, 3], dtype=np.int64)),           # backwards
    lambda c: c.update(e2e_ns=1),                                            # returns early
    lambda c: c.update(token_ns=np.array([5, 6, 7], dtype=np.int64)),        # shape
    lambda c: c.update(tokens=np.zeros((3, 2), dtype=np.int64)),             # batch
    lambda c: c.update(token_ns=np.array([5.0, 6.0])),                       # float clock
])
def test_malformed_calls_are_refused(bad):
    fields = {"tokens": np.zeros((2, 2), dtype=np.int64),
              "token_ns": np.array([5 * MS, 6 * MS], dtype=np.int64), "e2e_ns": 7 * MS}
    bad(fields)
    with pytest.raises(ValueError):
        per_call([TimedGeneration(**fields)], batch_size=2, prompt_length=8)


def test_paired_speedup_from_rounds():
    # runtime B is exactly twice as fast as A in every round, whatever the round's drift
    rounds_a, rounds_b = [], []
    for r in range(8):
        drift = 1 + 0.3 * (r % 3)
        rounds_a.append([call(np.array([10, 14, 18, 22]) * drift, 23 * drift)] * 3)
        rounds_b.append([call(np.array([5, 7, 9, 11]) * drift, 11.5 * drift)] * 3)
    s = paired_speedup(rounds_a, rounds_b, reference="torch", runtime="onnxruntime",
                       metric="tpot_ms", batch_size=2, prompt_length=8)
    assert s.rounds == 8 and s.estimate.value == pytest.approx(2.0)
    assert s.estimate.low <= 2.0 <= s.estimate.high and s.significant
    rate = paired_speedup(rounds_a, rounds_b, reference="torch", runtime="onnxruntime",
                          metric="decode_tokens_per_s", batch_size=2, prompt_length=8)
    assert rate.estimate.value == pytest.approx(2.0)  # rates: B / A, still "B is 2x faster"
    assert Speedup.from_json(s.to_json()) == s
    same = paired_speedup(rounds_a, rounds_a, reference="torch", runtime="torch",
                          metric="ttft_ms", batch_size=2, prompt_length=8)
    assert same.estimate.value == 1.0 and not same.significant
    with pytest.raises(ValueError):
        paired_speedup(rounds_a[:1], rounds_b[:1], reference="a", runtime="b",
                       metric="tpot_ms", batch_size=2, prompt_length=8)
    with pytest.raises(ValueError):
        paired_speedup(rounds_a, rounds_b, reference="a", runtime="b", metric="itl_ms",
                       batch_size=2, prompt_length=8)


def _record() -> dict:
    m = generation_metrics(jittered(12, 20.0, 5.0), runtime="torch", batch_size=2,
                           prompt_length=16)
    return m.to_json()


def _set(path: str, value):
    def change(data: dict) -> None:
        *keys, last = path.split(".")
        for k in keys:
            data = data[k]
        data[last] = value
    return change


def _drop(path: str):
    def change(data: dict) -> None:
        *keys, last = path.split(".")
        for k in keys:
            data = data[k]
        del data[last]
    return change


@pytest.mark.parametrize("change, field", [
    (_set("ttft.p50.value", math.nan), "ttft.p50.value"),
    (_set("ttft.p50.high", math.inf), "ttft.p50.high"),
    (_set("e2e.p90.low", -1.0), "e2e.p90.low"),
    (_set("tpot.p50.value", "1.0"), "tpot.p50.value"),
    (_set("tpot.p50.value", True), "tpot.p50.value"),
    (_set("ttft.p50.low", 1e9), "ttft.p50"),  # interval not containing the value
    (_set("e2e.p50.value", 1e300), "e2e.p50.value"),
    (_set("decode_tokens_per_s.p99.high", 1e30), "decode_tokens_per_s.p99.high"),
    (_set("ttft.metric", "tpot_ms"), "ttft.metric"),
    (_set("ttft.metric", "speed"), "ttft.metric"),
    (_set("ttft.unit", "s"), "ttft.unit"),
    (_set("ttft.n", 0), "ttft.n"),
    (_drop("tpot"), "tpot"),
    (_set("itl", None), "itl"),
    (_set("batch_size", 0), "batch_size"),
    (_set("batch_size", 2.0), "batch_size"),
    (_set("new_tokens", 10**9), "new_tokens"),
    (_set("runtime", "torch\x1b[2J"), "runtime"),
    (_set("itl_by_step_ms", [1.0]), "itl_by_step_ms"),
    (_set("itl_by_step_ms", [1.0] * 6 + [math.nan]), "itl_by_step_ms[6]"),
    (_set("ttft", [1, 2]), "ttft"),
])
def test_hostile_records_are_one_line(change, field):
    data = copy.deepcopy(_record())
    change(data)
    with pytest.raises(MLProfError) as info:
        GenerationMetrics.from_json(data, "generation.json")
    text = str(info.value)
    assert "\n" not in text and text.startswith(f"generation.json: {field}"), text


def test_percentiles_out_of_order_are_refused():
    data = _record()
    data["e2e"]["p90"] = {"value": 0.0, "low": 0.0, "high": 0.0}
    with pytest.raises(MLProfError, match="e2e: percentiles are not in order"):
        GenerationMetrics.from_json(data, "generation.json")


def test_one_new_token_with_decode_metrics_is_refused():
    data = _record()
    data["new_tokens"], data["itl_by_step_ms"] = 1, []
    with pytest.raises(MLProfError, match="tpot: present for new_tokens 1"):
        GenerationMetrics.from_json(data, "generation.json")


def test_hostile_speedups():
    good = {"runtime": "onnxruntime", "reference": "torch", "metric": "tpot_ms", "rounds": 8,
            "speedup": {"value": 2.0, "low": 1.9, "high": 2.1}, "significant": True}
    assert Speedup.from_json(good).significant
    for key, value in (("rounds", 1), ("metric", "x"), ("speedup", {"value": 0.0, "low": 0.0,
                                                                      "high": 0.0})):
        bad = {**good, key: value}
        with pytest.raises(MLProfError) as info:
            Speedup.from_json(bad, "s.json")
        assert str(info.value).startswith(f"s.json: {key}"), str(info.value)
