"""Measurements run in a child process: crashes, hangs and errors cost only that measurement."""

from __future__ import annotations

import os
import time

import faulty
import pytest
from conftest import DNN

from mlprof.errors import MeasurementFailed, MLProfError
from mlprof.measure import MeasureSettings, measure_isolated
from mlprof.measure.isolate import run_isolated


def test_result_and_progress_come_back_from_another_process():
    seen = []
    value, pid = run_isolated(faulty.ok, {"value": 21}, timeout=60,
                              progress=lambda f, m: seen.append((f, m)))
    assert value == 42
    assert pid != os.getpid()
    assert seen == [(0.5, "half way")]


@pytest.mark.parametrize("func, signame", [(faulty.segfault, "SIGSEGV"),
                                           (faulty.abort, "SIGABRT")])
def test_crash_fails_with_the_signal(func, signame):
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(func, {}, timeout=60, label="crashy")
    assert err.value.status == "failed"
    assert f"crashed with {signame}" in str(err.value)
    assert str(err.value).startswith("crashy")


def test_hang_is_killed_after_the_timeout():
    t0 = time.monotonic()
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(faulty.hang, {}, timeout=1.5, label="hangs")
    assert err.value.status == "timeout"
    assert "timed out after 1.5 s" in str(err.value)
    assert time.monotonic() - t0 < 15


def test_timeout_from_environment(monkeypatch):
    monkeypatch.setenv("MLP_TIMEOUT", "1")
    with pytest.raises(MeasurementFailed, match="timed out after 1 s"):
        run_isolated(faulty.hang, {})
    monkeypatch.setenv("MLP_TIMEOUT", "soon")
    with pytest.raises(MLProfError, match="MLP_TIMEOUT: must be a number of seconds"):
        run_isolated(faulty.ok, {"value": 1})


def test_mlprof_error_comes_back_unchanged():
    with pytest.raises(MLProfError) as err:
        run_isolated(faulty.bad_input, {}, timeout=60)
    assert str(err.value) == "/some/file.yaml: model.inputs[0].shape: broken on purpose"


def test_unexpected_error_is_reported_with_its_type():
    with pytest.raises(MeasurementFailed, match="KeyError: 'missing'"):
        run_isolated(faulty.bug, {}, timeout=60)


def test_exit_without_result():
    with pytest.raises(MeasurementFailed, match="exited with code 3 without a result"):
        run_isolated(faulty.exit_silently, {}, timeout=60)


def test_measure_isolated_runs_the_real_harness_in_a_child():
    r = measure_isolated(str(DNN), MeasureSettings(batch_size=2, n_calls=5, warmup=1),
                         timeout=120)
    assert r.samples_ns.size == 5
    assert r.provenance["pid"] != os.getpid()
