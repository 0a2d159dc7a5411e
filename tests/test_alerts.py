"""The robust alert rule on constructed histories."""

from __future__ import annotations

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
