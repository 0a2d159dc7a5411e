"""Scheduling stays linear in the number of branches (mlprof/tasks/framework/scale.py, law 0.1.21).

The end-to-end tests run the real ``law`` entry point in a subprocess (through a small driver
that counts ``luigi.task.Task.__eq__`` calls and dumps the scheduler's task graph at exit): a
MeasureRuntime sweep whose branches' outputs exist except for batch size 1, so that luigi checks
and registers every branch and then measures one batch size for real. No timing is asserted.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import law
import law.parameter
import law.util
import pytest

from mlprof.tasks.framework import scale as _scale
from tests.helpers import FAST, REPO

#: runs `law` as the console script does, with counters; dumps what it saw to argv[1]
DRIVER = r"""
import json, os, runpy, shutil, sys

import luigi.task
import luigi.worker

counts = {"task_eq": 0}
_eq = luigi.task.Task.__eq__


def counting_eq(self, other):
    counts["task_eq"] += 1
    return _eq(self, other)


luigi.task.Task.__eq__ = counting_eq
workers = []
_init = luigi.worker.Worker.__init__


def init(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    workers.append(self)


luigi.worker.Worker.__init__ = init

out = sys.argv[1]
sys.argv = ["law", *sys.argv[2:]]
code = 0
try:
    runpy.run_path(shutil.which("law"), run_name="__main__")
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)

import law.parameter
from mlprof.tasks.framework import scale as _scale

(worker,) = workers
state = worker._scheduler._state
graph = {t.id: {"deps": sorted(t.deps), "status": t.status} for t in state.get_active_tasks()}
history = [[t.task_id, s, r] for t, s, r in worker._add_task_history]
mu = law.parameter.make_unique
with open(out, "w") as f:
    json.dump({"counts": counts, "graph": graph, "history": history, "code": code,
               "status": _scale.status(), "history_type": type(worker._add_task_history).__name__,
               "make_unique": mu.__module__ + "." + mu.__name__}, f)
sys.exit(code)
"""


def _branch_dir(store: Path, version: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where MeasureRuntime's branches write with FAST settings (same for any batch sizes)."""
    from mlprof.tasks.runtime import MeasureRuntime

    monkeypatch.setenv("MLP_STORE", str(store))
    wf = MeasureRuntime(version=version, batch_sizes=(1,), n_calls=10, warmup=1,
                        min_duration=0.0)
    directory = Path(wf.req(wf, branch=0).output()["csv"].path).parent
    assert directory.is_relative_to(store)
    return directory


def _sweep(store: Path, n: int, patched: bool, tmp: Path,
           monkeypatch: pytest.MonkeyPatch) -> tuple[dict, str]:
    """``law run MeasureRuntime`` over batch sizes 1..n, all but batch size 1 already done."""
    version = f"scale{n}"
    directory = _branch_dir(store, version, monkeypatch)
    directory.mkdir(parents=True, exist_ok=True)
    for bs in range(2, n + 1):  # tiny but valid results (an empty file would be re-measured)
        (directory / f"runtime_bs_{bs}.csv").write_text(
            f"batch_size,event,call,runtime_ms\n{bs},0,0,0.01\n")
        (directory / f"runtime_bs_{bs}.json").write_text(
            json.dumps({"settings": {"batch_size": bs}, "n_samples": 1}))
    done = (directory / "runtime_bs_2.json").read_text()
    env = dict(os.environ, MLP_STORE=str(store), MLP_BASE=str(REPO),
               LAW_HOME=str(REPO / ".law"), LAW_CONFIG_FILE=str(REPO / "law.cfg"),
               MLP_VERBOSE="1")  # luigi's "Informed scheduler" lines are compared
    env.pop(_scale.DISABLE_ENV, None)
    if not patched:
        env[_scale.DISABLE_ENV] = "1"
    out = tmp / f"dump_{n}_{int(patched)}.json"
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(out), "run", "MeasureRuntime", "--version", version,
         "--batch-sizes", ",".join(map(str, range(1, n + 1))), *FAST],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    dump = json.loads(out.read_text())
    # the one missing batch size was really measured, the others were not touched
    assert (directory / "runtime_bs_1.json").stat().st_size > 0
    assert (directory / "runtime_bs_2.json").read_text() == done
    return dump, log


def _informed(log: str) -> list[str]:
    """luigi's "Informed scheduler" lines (law suppresses repeated ones), in order."""
    return re.findall(r"Informed scheduler that task\s+(\S+)\s+has status\s+(\S+)", log)


@pytest.mark.slow
def test_1000_branches_schedule_without_quadratic_task_comparisons(tmp_path, store,
                                                                  monkeypatch):
    n = 1000
    dump, log = _sweep(store, n, True, tmp_path, monkeypatch)
    if law.__version__ == _scale.LAW_VERSION:
        assert dump["status"]["add_task_history"] and dump["status"]["make_unique"]
    assert dump["history_type"] == "IndexedHistory"
    assert dump["make_unique"] == "mlprof.tasks.framework.scale.fast_make_unique"
    # the workflow and all its branches were registered and the graph is complete
    graph = dump["graph"]
    branches = [tid for tid, t in graph.items() if not t["deps"]]
    workflow = [tid for tid, t in graph.items() if len(t["deps"]) == n]
    assert len(graph) == n + 1 and len(workflow) == 1 and len(branches) == n
    assert set(graph[workflow[0]]["deps"]) == set(branches)
    assert all(tid.startswith("MeasureRuntime_") for tid in graph)
    assert all(t["status"] == "DONE" for t in graph.values())
    assert len(dump["history"]) >= n + 1
    assert len(_informed(log)) >= n + 1
    # law 0.1.21's duplicate check compares each registration with every earlier one:
    # n * (n - 1) / 2 = 499,500 Task.__eq__ calls; patched it is a hash lookup
    assert dump["counts"]["task_eq"] <= n


@pytest.mark.slow
def test_patched_scheduling_identical_to_unpatched_law(tmp_path, monkeypatch):
    n = 60
    dumps, logs = {}, {}
    for patched in (False, True):
        store = tmp_path / f"store{int(patched)}"
        dumps[patched], logs[patched] = _sweep(store, n, patched, tmp_path, monkeypatch)
    plain, fast = dumps[False], dumps[True]
    assert not plain["status"]["applied"] and plain["history_type"] == "list"
    assert plain["make_unique"] == "law.util.make_unique"
    assert fast["history_type"] == "IndexedHistory"
    # the counter sees unpatched law's quadratic duplicate check ...
    assert plain["counts"]["task_eq"] >= n * (n - 1) // 2
    assert fast["counts"]["task_eq"] <= n
    # ... and the patches change nothing else: same task ids, dependencies, statuses,
    # registrations and (duplicate-suppressed) log lines
    assert fast["graph"] == plain["graph"] and len(fast["graph"]) == n + 1
    assert fast["history"] == plain["history"]
    assert _informed(logs[True]) == _informed(logs[False])


class CountingEq:
    """A hashable element that counts how often it is compared with ``==``."""

    calls = 0

    def __init__(self, value: int) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        CountingEq.calls += 1
        return isinstance(other, CountingEq) and other.value == self.value


def test_make_unique_linear_and_same_result_as_law():
    orig = _law_make_unique()
    n = 400
    items = tuple(CountingEq(i) for i in range(n))
    CountingEq.calls = 0
    assert _scale.fast_make_unique(items) == items
    fast_calls = CountingEq.calls
    CountingEq.calls = 0
    assert orig(items) == items
    orig_calls = CountingEq.calls
    assert fast_calls <= n
    assert orig_calls >= n * (n - 1) // 2 - n  # what the patch removes: quadratic comparisons


class _Tuple(tuple):
    """A tuple subclass: law's make_unique keeps the class."""


class _List(list):
    """A list subclass: law's make_unique returns a plain list."""


@pytest.mark.parametrize("make", [
    lambda: (3, 1, 3, 2, 1), lambda: [3, 1, 3, 2, 1], lambda: (), lambda: [],
    lambda: ("b", "a", "b"), lambda: (1, 1.0, True, 2), lambda: [True, 1, 1.0],
    lambda: iter([5, 4, 5]), lambda: range(5), lambda: {"x": 1, "y": 2}.keys(), lambda: "abca",
    lambda: tuple(range(1000, 0, -1)) * 2, lambda: _Tuple((2, 1, 2)), lambda: _List([2, 1, 2]),
])
def test_fast_make_unique_matches_law(make):
    expected = _law_make_unique()(make())
    got = _scale.fast_make_unique(make())
    assert type(got) is type(expected)
    assert got == expected
    assert [type(x) for x in got] == [type(x) for x in expected]


@pytest.mark.parametrize("value", [5, None, ([1], [1])])
def test_fast_make_unique_errors_like_law(value):
    with pytest.raises(TypeError):
        _law_make_unique()(value)
    with pytest.raises(TypeError):
        _scale.fast_make_unique(value)


def _law_make_unique():
    """law's original make_unique (the patch may have replaced the module attribute)."""
    import importlib.util

    spec = importlib.util.find_spec("law.util")
    source = Path(spec.origin).read_text()
    start = source.index("def make_unique(")
    end = source.index("\ndef ", start + 1)
    namespace = {"is_iterable": law.util.is_iterable,
                 "is_lazy_iterable": law.util.is_lazy_iterable}
    exec(compile(source[start:end], spec.origin, "exec"), namespace)
    return namespace["make_unique"]


def test_indexed_history_behaves_like_a_list():
    h = _scale.IndexedHistory()
    h.append(("a", 1))
    h.extend([("b", 2), ("c", 3)])
    h += [("d", 4)]
    assert ("b", 2) in h and ("z", 0) not in h and len(h) == 4 and isinstance(h, list)
    h.remove(("b", 2))
    assert ("b", 2) not in h
    h[0] = ("x", 9)
    assert ("a", 1) not in h and ("x", 9) in h
    del h[0]
    assert ("x", 9) not in h
    assert h.pop() == ("d", 4) and ("d", 4) not in h
    h.insert(0, ("e", 5))
    assert h == [("e", 5), ("c", 3)]
    h.append(["unhashable"])  # falls back to scanning
    assert ["unhashable"] in h and ("c", 3) in h and ("q", 1) not in h
    h.clear()
    assert ("c", 3) not in h and h == []


def test_patches_active_after_the_build_hooks():
    from mlprof.tasks.framework.hooks import install_build_hooks

    install_build_hooks()  # law run, the mlprof command and the API call it (never an import)
    st = _scale.status()
    if os.environ.get(_scale.DISABLE_ENV):
        assert not st["applied"]
        return
    import luigi.worker

    assert st["law_version"] == law.__version__
    if law.__version__ == _scale.LAW_VERSION:
        assert st["applied"] and st["add_task_history"] and st["make_unique"]
        assert getattr(luigi.worker.Worker.__init__, "_mlprof_scale", False)
        assert law.parameter.make_unique is _scale.fast_make_unique
    # applying again changes nothing
    assert _scale.apply() == _scale.status()
