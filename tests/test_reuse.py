"""A measurement process that stays for the next point (run_isolated's ``reuse``): the same
process for the same key, a new one after anything that did not end cleanly, nothing left
when the caller exits, and every record saying how many measurements its process ran before."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time

import pytest

from mlprof.errors import MeasurementFailed
from mlprof.measure import isolate
from mlprof.measure.isolate import retire_kept, run_isolated
from mlprof.measure.proctree import alive
from tests import faulty
from tests.helpers import DNN, FAST, REPO, branch_provenances, law_run
from tests.test_isolate import _alive_with


def _gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


@pytest.fixture(autouse=True)
def _no_worker_kept():
    retire_kept()
    yield
    retire_kept()


def test_the_same_key_runs_in_the_same_process_another_key_ends_it():
    _, first = run_isolated(faulty.ok, {"value": 1}, reuse="a")
    value, again = run_isolated(faulty.ok, {"value": 2}, reuse="a")
    assert (value, again) == (4, first)  # the second call's own result, the same worker
    _, other = run_isolated(faulty.ok, {"value": 3}, reuse="b")
    assert other != first and _gone(first)  # never two: the old one ended first
    _, fresh = run_isolated(faulty.ok, {"value": 3})  # no key: a new one, and ours ends
    assert fresh not in (first, other) and _gone(other)
    assert isolate._KEPT is None


def test_without_a_key_every_call_gets_a_new_process():
    pids = {run_isolated(faulty.ok, {"value": 1})[1] for _ in range(3)}
    assert len(pids) == 3
    assert isolate._KEPT is None


@pytest.mark.parametrize("func, kwargs, error", [
    (faulty.bug, {}, MeasurementFailed),  # failed: its state is not trusted again
    (faulty.thread_and_return, {}, None),  # a thread of the last job would run beside the next
    (faulty.spawn_and_return, {"marker": "<marker>"}, None),  # and so would a process
])
def test_a_job_that_did_not_end_cleanly_ends_its_process(func, kwargs, error):
    import uuid

    marker = f"mlprof-test-{uuid.uuid4().hex[:12]}"
    kwargs = {k: marker if v == "<marker>" else v for k, v in kwargs.items()}
    _, before = run_isolated(faulty.ok, {"value": 1}, reuse="k")
    if error is not None:
        with pytest.raises(error):
            run_isolated(func, kwargs, reuse="k")
    else:
        run_isolated(func, kwargs, reuse="k")
    assert _gone(before)
    assert isolate._KEPT is None
    assert not _alive_with(marker)
    _, after = run_isolated(faulty.ok, {"value": 1}, reuse="k")
    assert after != before


def test_a_kept_process_that_hangs_is_killed_after_the_timeout():
    _, kept = run_isolated(faulty.ok, {"value": 1}, reuse="h")
    t0 = time.monotonic()
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(faulty.hang, {}, timeout=1.5, label="hangs", reuse="h")
    assert err.value.status == "timeout" and "timed out after 1.5 s" in str(err.value)
    assert time.monotonic() - t0 < 15
    assert _gone(kept) and isolate._KEPT is None


def test_each_job_counts_its_own_peak_memory():
    pid, big = run_isolated(faulty.allocate, {"mb": 300}, reuse="m")
    same, small = run_isolated(faulty.allocate, {"mb": 1}, reuse="m")
    assert same == pid
    assert big > 300 and small < big - 250, (big, small)


def test_memory_an_earlier_job_freed_is_not_in_the_next_ones_peak():
    """Freed heap memory a job leaves resident (holes between 64 kB pieces it keeps) is given
    back between jobs (``malloc_trim``), so the next job's peak is its own: without
    that, ONNX Runtime's later points of a sweep on a 47 MB model counted 25-45 MB more than
    in a new process."""
    pid, big = run_isolated(faulty.allocate_in_pieces, {"mb": 300}, reuse="h")
    same, small = run_isolated(faulty.allocate, {"mb": 1}, reuse="h")
    assert same == pid
    assert big > 300 and small < big - 250, (big, small)


def _pid_of_a_call_by_a_caller_that_exits(tmp_path, options: str) -> int:
    """The pid of the process of ``run_isolated(faulty.ok, {'value': 1}, <options>)``, called
    by a new Python process that then exits (as soon as the call returned)."""
    script = tmp_path / "caller.py"
    script.write_text(
        "from mlprof.measure.isolate import run_isolated\n"
        "from tests import faulty\n"
        "if __name__ == '__main__':\n"
        f"    print(run_isolated(faulty.ok, {{'value': 1}}, {options})[1], flush=True)\n")
    r = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.split()[-1])


def test_nothing_outlives_the_caller(tmp_path):
    """The kept process ends with the process that kept it (at exit, no call needed)."""
    assert _gone(_pid_of_a_call_by_a_caller_that_exits(tmp_path, "reuse='x'"), 5)


@pytest.mark.slow  # two law runs of three points
@pytest.mark.parametrize("runtime, model", [
    ("onnxruntime", DNN),
    pytest.param("openvino", DNN, marks=pytest.mark.skipif(
        importlib.util.find_spec("openvino") is None, reason="OpenVINO is not installed"))])
def test_a_sweep_measures_its_points_in_one_process_unless_told_otherwise(tmp_path, runtime,
                                                                          model):
    """PlotRuntimes on each runtime that keeps its process: the points share a process, each
    record counts the measurements before it; MLP_FRESH_PROCESS=1 gives each point a new one.
    (OpenVINO's telemetry thread once kept every point in a new process: see
    tests/test_tf_openvino.py.)"""
    for fresh, store in (("", tmp_path / "reused"), ("1", tmp_path / "fresh")):
        r = law_run("PlotRuntimes", "--version", "ru", "--model-file", str(model),
                    "--runtime", runtime, "--batch-sizes", "1,2,4", *FAST, store=store,
                    env={"MLP_FRESH_PROCESS": fresh})
        assert r.returncode == 0, r.stderr[-3000:]
        provs = branch_provenances(store)
        pids = [provs[bs]["pid"] for bs in (1, 2, 4)]
        earlier = [provs[bs]["earlier_in_process"] for bs in (1, 2, 4)]
        if fresh:
            assert len(set(pids)) == 3 and earlier == [0, 0, 0]
        else:
            assert len(set(pids)) == 1 and earlier == [0, 1, 2]
            assert _gone(pids[0], 5)  # ended with law run


def test_an_unknown_fresh_process_value_is_one_line_before_measuring(tmp_path):
    store = tmp_path / "store"
    r = law_run("MeasureRuntime", "--version", "fp", "--batch-sizes", "1", *FAST, store=store,
                env={"MLP_FRESH_PROCESS": "maybe"})
    assert r.returncode == 40, r.stderr[-2000:]
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if "mlprof error" in ln]
    assert len(lines) == 1 and "MLP_FRESH_PROCESS: 'maybe' is not a value it takes" in lines[0]
    assert not (store / "MeasureRuntime").exists()


def test_the_apis_build_ends_the_process_its_points_shared(store):
    """The API (a notebook: the interpreter lives on) runs its points in one process too, and
    that process ends with the build, not with the interpreter."""
    import mlprof

    (res,) = mlprof.benchmark_files(str(DNN), runtimes=["ort"], batch_sizes=[1, 2],
                                    n_calls=10, warmup=1, min_duration=0)
    runs = res.provenance["measurements"]
    assert [m["earlier_in_process"] for m in runs] == [0, 1]
    assert isolate._KEPT is None and _gone(runs[0]["pid"], 5)


def test_a_call_that_ends_later_is_ended_before_the_next_process_starts():
    """``end_later``: the call returns at once, its process is left to :func:`settle`,
    which the next call runs before it starts its own: never two side by side."""
    _, first = run_isolated(faulty.ok, {"value": 1}, end_later=True)
    # not waited for yet: its supervisor, once it exits, stays a zombie until then
    supervisors = [p.pid for _, p, _, _ in isolate._ENDING]
    assert len(supervisors) == 1
    seen = run_isolated(faulty.others_alive, {"pids": [first, *supervisors]})
    assert seen == [] and isolate._ENDING == []
    # a call without it, and a failed one with it, end before they return
    run_isolated(faulty.ok, {"value": 1})
    with pytest.raises(MeasurementFailed):
        run_isolated(faulty.bug, {}, end_later=True)
    assert isolate._ENDING == []
    _, last = run_isolated(faulty.ok, {"value": 1}, end_later=True)
    isolate.settle()
    assert isolate._ENDING == [] and not alive(last)


def test_a_call_that_ends_later_does_not_outlive_the_caller(tmp_path):
    """Its end is waited for at the caller's exit at the latest."""
    pid = _pid_of_a_call_by_a_caller_that_exits(tmp_path, "end_later=True")
    assert not alive(pid)  # gone when the caller was, no waiting


def test_what_comes_next_is_imported_while_the_server_starts(tmp_path):
    """``warm``: imported while this process waits for the server's start; once the server
    serves, there is no wait to fill and nothing is imported ahead."""
    script = tmp_path / "warm.py"
    script.write_text(
        "import sys\n"
        "from mlprof.measure.isolate import run_isolated\n"
        "from tests import faulty\n"
        "if __name__ == '__main__':\n"
        "    assert 'wave' not in sys.modules and 'tabnanny' not in sys.modules\n"
        "    run_isolated(faulty.ok, {'value': 1}, warm=('wave', 'no_such_module_here'))\n"
        "    first = 'wave' in sys.modules\n"
        "    run_isolated(faulty.ok, {'value': 1}, warm=('tabnanny',))\n"
        "    print(first, 'tabnanny' in sys.modules)\n")
    r = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[-2:] == ["True", "False"]


def test_keep_false_runs_in_the_kept_worker_and_keeps_it_no_longer():
    """``keep=False``: the call runs in the kept worker for its key (whose function named what
    to import while it waited), which then ends; without a kept worker, a new process."""
    assert run_isolated(faulty.imported, {"name": "wave"})[0] is False  # not preloaded
    _, first = run_isolated(faulty.ok_then_import, {"value": 1}, reuse="k")
    assert isolate.kept_for("k") and not isolate.kept_for("other")
    seen, pid = run_isolated(faulty.imported, {"name": "wave"}, reuse="k", keep=False)
    assert (seen, pid) == (True, first) and isolate._KEPT is None and _gone(first)
    _, fresh = run_isolated(faulty.ok, {"value": 1}, reuse="k", keep=False)
    assert fresh != first and isolate._KEPT is None
