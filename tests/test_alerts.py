"""The robust alert rule on constructed histories."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlprof.report.alerts import AlertRule, detect


def noise(n: int, seed: int, level: float = 1.0, rel: float = 0.02) -> np.ndarray:
    """Steady measurements: ``level`` with ``rel`` relative Gaussian noise."""
    return level * (1 + rel * np.random.default_rng(seed).standard_normal(n))


@pytest.mark.parametrize("seed", range(50))
def test_steady_noise_gives_no_alert(seed):
    assert detect(noise(60, seed)) == []


def test_the_old_one_sigma_rule_would_fire_on_the_same_noise():
    x = noise(60, 0)
    fired = sum(abs(x[i] - x[:i].mean()) > x[:i].std() for i in range(5, len(x)))
    assert fired > 10  # why Relay's rule was useless
    assert detect(x) == []


def test_a_ten_percent_step_is_a_regression():
    x = np.concatenate([noise(20, 1), noise(10, 2, level=1.10)])
    alerts = detect(x)
    assert len(alerts) == 1
    a = alerts[0]
    assert a.kind == "regression" and a.start == 20 and a.index == 21
    assert a.change == pytest.approx(0.10, abs=0.03) and a.z >= 4


def test_a_single_outlier_does_not_persist():
    x = noise(30, 3)
    x[20] *= 1.5
    assert detect(x) == []


def test_improvements_are_reported_apart():
    x = np.concatenate([noise(15, 4), noise(5, 5, level=0.8)])
    (a,) = detect(x)
    assert a.kind == "improvement" and a.change < -0.15
    # for throughput, higher is better: the same step up is an improvement
    y = np.concatenate([noise(15, 4), noise(5, 5, level=1.2)])
    assert detect(y, higher_is_worse=False)[0].kind == "improvement"


def test_small_but_significant_changes_below_min_change_do_not_alert():
    x = np.concatenate([noise(20, 6, rel=0.001), noise(5, 7, level=1.03, rel=0.001)])
    assert detect(x) == []  # z is huge, but 3 % < 5 %
    assert len(detect(x, AlertRule(min_change=0.02))) == 1


def test_thresholds_are_configurable_and_too_little_history_is_silent():
    x = np.concatenate([noise(20, 8), noise(3, 9, level=1.15)])
    assert detect(x, AlertRule(persist=4)) == []
    assert len(detect(x, AlertRule(persist=3))) == 1
    assert detect([1.0, 1.2, 1.3]) == []


def test_a_step_alerts_once_and_the_new_level_becomes_normal():
    x = np.concatenate([noise(20, 10), noise(30, 11, level=1.2)])
    assert len(detect(x)) == 1


def _report(values, host="a", runtime_version="1.0"):
    import pandas as pd

    n = len(values)
    return pd.DataFrame({
        "status": "ok", "model": "m", "model_hash": "h", "runtime": "onnxruntime",
        "runtime_version": runtime_version, "device": "cpu", "host": host, "cpu_model": "x",
        "threads": 1, "settings_key": "s", "batch_size": 1,
        "version": [f"nightly-{i:02d}" for i in range(n)],
        "timestamp": [f"2026-11-{i + 1:02d}T00:00:00+00:00" for i in range(n)],
        "median_ms": values})


def test_alerts_table_compares_only_like_with_like():
    import pandas as pd

    from mlprof.report.history import alerts_table, series

    steady = noise(10, 12)
    slow = np.concatenate([noise(8, 13), noise(2, 14, level=1.25)])
    # a slower host's results are another series, not a regression
    other_host = _report(noise(10, 15, level=1.5), host="b")
    df = pd.concat([_report(steady), other_host], ignore_index=True)
    assert len(series(df)) == 2
    assert alerts_table(df).empty
    table = alerts_table(_report(slow))
    assert table["kind"].tolist() == ["regression"]
    assert table["test"].tolist() == ["step"]       # the test that found it
    assert table["version"].tolist() == ["nightly-09"]
    assert table["first_version"].tolist() == ["nightly-08"]


def test_the_third_run_alerts_once_confirmed():
    """Two earlier runs, then a slow run and its confirming re-measurement."""
    (a,) = detect([1.0, 1.01, 1.9, 1.85])
    assert (a.kind, a.start, a.index) == ("regression", 2, 3)
    assert detect([1.0, 1.01, 1.9, 1.0]) == []     # not confirmed
    # two or three points cannot tell how noisy a configuration is: on the test VM, runs
    # seconds apart with nothing changed gave +43 % then +23 %; 55 % is not enough yet, 65 % is
    assert detect([0.266, 0.247, 0.365, 0.316]) == []
    assert detect([1.0, 1.01, 1.55, 1.55]) == []
    assert len(detect([1.0, 1.01, 1.65, 1.65])) == 1
    # with a longer history the measured noise decides: 12 % on a quiet series alerts (with
    # six earlier points; five leave the noise estimate 3 degrees of freedom, and the
    # Student-t threshold of ~19 noise units needs ~17 % there)
    assert len(detect([1.0, 1.01, 0.99, 1.0, 1.01, 1.0, 1.12, 1.12])) == 1
    assert len(detect([1.0, 1.01, 0.99, 1.0, 1.01, 1.18, 1.18])) == 1


@pytest.mark.parametrize("seed", range(200))
def test_short_noisy_histories_stay_silent(seed):
    assert detect(noise(4, seed, rel=0.025)) == []


def test_candidates_are_the_last_version_beyond_the_thresholds():
    from mlprof.report.history import candidates

    df = _report([1.0, 1.01, 1.8])
    (c,) = candidates(df, "nightly-02")
    assert c["kind"] == "regression" and c["change"] == pytest.approx(0.8, rel=0.02)
    assert candidates(df, "nightly-01") == []  # not the last point of its series
    assert candidates(_report([1.0, 1.01, 1.02]), "nightly-02") == []
    # with a long history (the measured noise decides; one point, nothing to agree with)
    (c,) = candidates(_report([*noise(10, 33), 1.5]), "nightly-10")
    assert c["kind"] == "regression"


# --- the targets of issue 14 on simulated runs (benchmarks/alerts.py has the full table) ---

def _runs(n_series, seed, noise, *, step=0.0, drift=0.0, outliers=0.0, calls=50):
    """Per-run median, p16, p84 and count of 40 simulated runs (see benchmarks/alerts.py)."""
    rng = np.random.default_rng(seed)
    t = np.arange(40)
    level = np.where(t >= 20, 1 + step, 1.0) * (1 + drift * np.clip(t - 9, 0, None))
    run = level * (1 + noise * rng.standard_normal((n_series, 40)))
    c = np.exp(0.1 * rng.standard_normal((n_series, 40, calls)))
    if outliers:
        hit = rng.random((n_series, 40)) < outliers
        slow = rng.uniform(0.3, 1.0, (n_series, 40, 1)) * rng.uniform(0.5, 1.5, c.shape)
        c *= np.where(hit[..., None], 1 + slow, 1.0)
    p16, med, p84 = np.percentile(run[..., None] * c, [16, 50, 84], axis=-1)
    return [(med[i], p16[i], p84[i], np.full(40, calls)) for i in range(n_series)]


def _alerts(r):
    med, p16, p84, count = r
    return detect(med, p16=p16, p84=p84, count=count)


@pytest.mark.parametrize(("noise", "outliers"), [(0.03, 0), (0.05, 0), (0.10, 0), (0.05, 0.1)])
def test_steady_series_rarely_alert(noise, outliers):
    series = _runs(150, 21, noise, outliers=outliers)
    assert sum(bool(_alerts(r)) for r in series) <= 4    # measured 0.5-0.6 % on 2000 series


def test_a_20_percent_step_at_5_percent_noise_is_caught_within_two_runs():
    hits = 0
    for r in _runs(100, 22, 0.05, step=0.20):
        a = _alerts(r)
        hits += bool(a) and a[0].index <= 22 and a[0].kind == "regression"
    assert hits >= 80              # measured 90 % on 2000 series (benchmarks/alerts.py)


@pytest.mark.parametrize("noise", [0.03, 0.05])
def test_a_drift_of_3_percent_per_run_alerts_within_10_runs(noise):
    hits = sum(any(a.kind == "regression" and 10 <= a.index <= 19 for a in _alerts(r))
               for r in _runs(100, 23, noise, drift=0.03))
    assert hits >= 80              # measured 99.9 % and 91 % on 2000 series


def test_a_disturbed_run_neither_counts_for_nor_against():
    rng = np.random.default_rng(24)
    med = 1 + 0.03 * rng.standard_normal(30)
    p16, p84 = med * 0.9, med * 1.1
    med[20:22] *= 1.6           # two slow runs in a row, as a noisy neighbour makes them ...
    assert len(detect(med)) == 1
    p16[20:22] *= 0.8           # ... with their own spread far wider than usual: not a change
    p84[20:22] *= 1.6
    count = np.full(30, 200)
    assert detect(med, p16=p16, p84=p84, count=count) == []


def test_t_quantile_tends_to_the_normal_one():
    from mlprof.report.alerts import t_quantile

    assert t_quantile(3.7, 1e9) == pytest.approx(3.7)
    assert t_quantile(3.7, 18) > t_quantile(3.7, 38) > 3.7
    assert t_quantile(2.326, 10) == pytest.approx(2.764, rel=0.01)  # Student t, 99 %, 10 dof


# --- each run's own spread: one noisy run, a neighbour, a machine that got slower ---

#: batch size 512 of tests/test_nightly.py's regression scenario as measured on the test VM
#: (pytest run 250): two quiet nights, then n3 and its confirming re-measurement beside eight
#: busy loops on 2 cores (median, relative spread (p84 - p16) / median, calls)
HOG_NIGHTS = [(4.876, 0.009, 210), (4.914, 0.040, 210), (20.979, 0.576, 50), (20.948, 0.765, 50)]


def _spread(runs):
    med = np.array([r[0] for r in runs])
    rel = np.array([r[1] for r in runs])
    return med, {"p16": med * (1 - rel / 2), "p84": med * (1 + rel / 2),
                 "count": np.array([r[2] for r in runs])}


def test_a_machine_that_got_much_slower_alerts_although_its_runs_are_disturbed():
    med, spread = _spread(HOG_NIGHTS)
    (a,) = detect(med, **spread)
    assert (a.kind, a.start, a.index) == ("regression", 2, 3) and a.change > 1
    # one such run, then a quiet one again: nothing
    med2, spread2 = _spread([*HOG_NIGHTS[:3], HOG_NIGHTS[0]])
    assert detect(med2, **spread2) == []
    # the same slowdown within what a neighbour can do (2x: 4.9 -> 8.8 ms) is not a change
    # yet: those runs' calls were slowed unevenly (their spread is 15-60x the quiet one)
    med3, spread3 = _spread([*HOG_NIGHTS[:2], (8.8, 0.576, 50), (8.8, 0.765, 50)])
    assert detect(med3, **spread3) == []
    # ... unless it lasts (here with a longer quiet history: 6 nights then 5 slow ones)
    quiet = [(4.9 * (1 + 0.01 * k), 0.02, 200) for k in (0, 1, -1, 0, 1, -1)]
    slow = [(8.8 * (1 + 0.01 * k), 0.6, 50) for k in (0, 1, -1, 0, 1)]
    med4, spread4 = _spread(quiet + slow)
    assert detect(med4[:-1], **{k: v[:-1] for k, v in spread4.items()}) == []
    (b,) = detect(med4, **spread4)
    assert b.kind == "regression" and b.start == 6 and b.index == 10


def test_a_disturbed_run_that_is_faster_still_counts():
    """A neighbour only slows calls: a disturbed run that is faster is an improvement."""
    quiet = [(1.0 + 0.01 * k, 0.05, 200) for k in (0, 1, -1, 0, 1, -1, 0, 1)]
    med, spread = _spread(quiet + [(0.7, 0.3, 200), (0.7, 0.3, 200)])
    (a,) = detect(med, **spread)
    assert a.kind == "improvement" and a.start == 8


def test_the_points_of_a_step_must_agree():
    """A big outlier and a barely higher run are not a step (their mean would pass)."""
    x = noise(30, 31)
    x[28:] = [1.2, 1.03]
    assert detect(x) == []
    assert len(detect(x, AlertRule(z_agree=0, z_each=0))) == 1
    x[28:] = [1.12, 1.1]
    assert len(detect(x)) == 1


def test_a_slow_drift_is_caught_by_the_trend_test():
    rng = np.random.default_rng(32)
    x = 1 + 0.01 * rng.standard_normal(30)
    x[10:] += 0.005 * np.arange(1, 21)       # +0.5 % per run: each run hides in the noise
    (a,) = detect(x)
    assert (a.test, a.kind, a.index) == ("trend", "regression", 20)
    # the step test alone sees it 6 runs later, when the level is far off
    assert detect(x, AlertRule(trend_z=0))[0].index == 26
    assert detect(1 + 0.01 * rng.standard_normal(30)) == []


def test_alerts_table_uses_each_run_spread():
    """The report's p16/p84/count reach the rule: two disturbed runs within the neighbour
    allowance alert from medians alone, not with their spread."""
    from mlprof.report.history import alerts_table

    med = np.array([1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.6, 1.62])
    rel = np.array([0.05] * 6 + [0.6, 0.6])
    df = _report(med)
    assert alerts_table(df)["kind"].tolist() == ["regression"]
    df["p16_ms"], df["p84_ms"], df["count"] = med * (1 - rel / 2), med * (1 + rel / 2), 200
    assert alerts_table(df).empty
    # the throughput follows the same runs: its spread is still the calls' (relative to the
    # median latency)
    df["throughput"] = 1000 / med
    assert alerts_table(df, "throughput").empty
    df["p16_ms"], df["p84_ms"] = med * 0.975, med * 1.025   # not disturbed: a real change
    assert alerts_table(df, "throughput")["kind"].tolist() == ["regression"]


def test_a_big_step_measured_twice_alerts_on_a_very_steady_history():
    """Two runs 5x slower and 2 % apart, after nights steadier than that (noise at the 0.2 %
    floor, as the nightly test's copied nights are): one step, not two disagreeing outliers.
    The fresh-clone CI's nightly test missed exactly this before points within min_change of
    their own level counted as agreeing."""
    values = [1.0] * 5 + [5.0, 5.1]
    p16 = [0.98] * 5 + [4.9, 5.0]
    p84 = [1.02] * 5 + [5.1, 5.2]
    (alert,) = detect(values, p16=p16, p84=p84, count=[200] * 7)
    assert alert.kind == "regression" and alert.index == 6 and alert.change > 3
    # a big outlier next to an ordinary run still is not a step
    assert detect([1.0] * 5 + [1.0, 1.9], p16=p16[:5] + [0.98, 1.86],
                  p84=p84[:5] + [1.02, 1.94], count=[200] * 7) == []


def test_two_runs_each_far_beyond_the_thresholds_alert_even_when_they_disagree():
    """A night 4.2x slower and its confirmation 4.7x slower (12 % apart, beyond what their own
    spreads allow), after five identical nights: each alone is a candidate, so the two are a
    step (benchmarks/alerts.py's +300 % step rows: confirmed by the next run in 99.4-99.8 % of
    series, 60-82 % while agreement was required); an outlier next to an ordinary run still is
    not a step."""
    values = [1.0] * 5 + [4.2, 4.7]
    p16 = [0.95] * 5 + [4.1, 4.6]
    p84 = [1.05] * 5 + [4.3, 4.8]
    spread = {"p16": p16, "p84": p84, "count": [200] * 7}
    (alert,) = detect(values, **spread)
    assert alert.kind == "regression" and (alert.start, alert.index) == (5, 6)
    # agreement is what rejected them before: with a neighbour allowance beyond 4.7x the
    # bypass does not apply, and the two disagree
    assert detect(values, AlertRule(neighbour_max=5.0), **spread) == []
    # an ordinary run next to a 4x slower one is not a step
    assert detect([1.0] * 5 + [1.06, 4.0], **spread) == []
    x = noise(30, 31)
    x[28:] = [1.2, 1.03]      # the second alone is within the noise: no step
    assert detect(x) == []


def test_a_candidate_read_from_a_float_column_is_measured_again(tmp_path: Path) -> None:
    """The CI of 7f08694 failed here: one failure record with batch size ``abc`` made the
    report's ``batch_size`` column float, and the confirmation asked luigi for ``int('1.0')``."""
    from mlprof.report.nightly import rerun_params
    from mlprof.tasks.runtime import MeasureRuntime

    record = tmp_path / "runtime_bs_8.json"
    record.write_text(json.dumps({"task": {"params": {
        "version": "n1", "model_file": "examples/dnn/model_onnx_l10u128.yaml",
        "batch_sizes": "1,8", "branch": "1"}}}))
    candidate = {"path": str(record), "batch_size": np.float64(8.0)}
    params = rerun_params(candidate, "n1.confirm")
    assert params is not None and params["batch_sizes"] == "8" and "branch" not in params
    task = MeasureRuntime.from_str_params(params)
    assert task.batch_sizes == (8,) and task.version == "n1.confirm"
    assert rerun_params({**candidate, "batch_size": 8.5}, "n1.confirm") is None


def test_series_keys_hold_integer_batch_sizes_beside_failure_rows() -> None:
    import pandas as pd

    from mlprof.report.history import series

    report = pd.DataFrame({"status": ["ok", "failed"], "model": ["m", "m"],
                           "runtime": ["onnxruntime"] * 2, "batch_size": [8.0, float("nan")],
                           "version": ["n1", "n1"], "timestamp": [1.0, 2.0],
                           "median_ms": [1.0, float("nan")]})
    (key,) = series(report)
    assert "8" in [str(k) for k in key] and "8.0" not in [str(k) for k in key]
