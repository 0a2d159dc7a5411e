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
from mlprof.tasks.framework import scale_luigi
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


def _law_flatten():
    """law's original flatten (the patch may have replaced the module attribute)."""
    import importlib.util

    spec = importlib.util.find_spec("law.util")
    source = Path(spec.origin).read_text()
    start = source.index("def flatten(")
    end = source.index("\ndef ", start + 1)
    namespace = {"is_lazy_iterable": law.util.is_lazy_iterable}
    exec(compile(source[start:end], spec.origin, "exec"), namespace)
    return namespace["flatten"]


class _Dict(dict):
    """A dict subclass: flattened like a dict."""


@pytest.mark.parametrize("make, args, kwargs", [
    (lambda: {"a": {"csv": 1, "json": [2, (3, {4})]}, "b": 5}, 1, {}),
    (lambda: [[1, [2, [3, [4]]]], (), [], {}, "ab", b"cd", None], 1, {}),
    (lambda: {i: {"csv": f"c{i}", "json": f"j{i}"} for i in range(300)}, 1, {}),
    (lambda: [(1, 2), [3], {4: 5}, {6}], 1, {"flatten_tuple": False}),
    (lambda: [(1, 2), [3, [4]], {4: [5]}, {6}], 1, {"flatten_list": 0}),
    (lambda: [(1, 2), [3], {4: [5]}, {6}], 1, {"flatten_dict": False}),
    (lambda: [(1, 2), [3], {4: 5}, frozenset({6}), {7}], 1, {"flatten_set": False}),
    (lambda: (x for x in [[1], (2, 3)]), 1, {}), (lambda: map(int, "12"), 1, {}),
    (lambda: {"x": range(3), "y": (y for y in [[4]])}, 1, {}), (lambda: _Dict(a=[1], b=2), 1, {}),
    (lambda: 7, 1, {}), (lambda: [1, [2]], 2, {}), (lambda: [1, [2]], 0, {}),
    (lambda: [1, (2,)], 3, {"flatten_tuple": False}),
])
def test_fast_flatten_matches_law(make, args, kwargs):
    """The same leaves, in the same order, as law's flatten (its flags, several arguments,
    none, lazy iterables, leaves that are strings, bytes or None)."""
    expected = _law_flatten()(*[make() for _ in range(args)], **kwargs)
    got = _scale.fast_flatten(*[make() for _ in range(args)], **kwargs)
    assert type(got) is list and got == expected


def test_fast_flatten_linear_where_laws_is_quadratic():
    """A workflow's output collection of N branches: law's flatten copies the list built so far
    at every branch (sum of lists), fast_flatten appends; counted, not timed, through a list
    subclass whose ``__add__`` counts the elements copied."""
    copied = [0]

    class Counting(list):
        def __add__(self, other):
            copied[0] += len(self) + len(other)
            return Counting(list.__add__(self, other))

    import importlib.util

    spec = importlib.util.find_spec("law.util")
    source = Path(spec.origin).read_text()
    start = source.index("def flatten(")
    end = source.index("\ndef ", start + 1)
    # law's function, with its start value of sum() a counting list
    text = source[start:end].replace("sum((flatten(obj, **kwargs) for obj in seq), [])",
                                     "sum((flatten(obj, **kwargs) for obj in seq), Counting())")
    assert "Counting()" in text, "law's flatten changed: revisit _patch_flatten"
    namespace = {"is_lazy_iterable": law.util.is_lazy_iterable, "Counting": Counting}
    exec(compile(text, spec.origin, "exec"), namespace)
    n = 1000
    outputs = {i: {"csv": f"c{i}", "json": f"j{i}"} for i in range(n)}
    assert namespace["flatten"](outputs) == _scale.fast_flatten(outputs)
    assert copied[0] >= n * n  # ~2N per part for N parts: quadratic


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
        from law.target import collection

        assert st["flatten"] and collection.flatten is _scale.fast_flatten
    # applying again changes nothing
    assert _scale.apply() == _scale.status()


# ---- the per-task patches (issue 38): same answers as law's and luigi's own code ----------


def _applied():
    from mlprof.tasks.framework.hooks import install_build_hooks

    install_build_hooks()
    if not _scale.status()["applied"]:
        pytest.skip("patches disabled ($MLP_NO_SCALE_PATCH) or nothing to patch in this law")


@pytest.mark.parametrize("name, patterns, kwargs", [
    ("version", {"version", "workflow"}, {}), ("branch", {"version", "workflow"}, {}),
    ("branches", {"branch*"}, {}), ("batch_sizes", ["b?tch_sizes"], {}),
    ("x", {"!x"}, {}), ("y", ("!x", "z"), {}), ("ab", {"[ab]b"}, {}),
    ("abc", {"^a.c$"}, {}), ("abc", {"^a.c$"}, {"regex": False}), ("a.c", {"^a.c$"}, {}),
    ("n", set(), {}), ("n", "n", {}), ("n", ["n", "m"], {"mode": all}),
    ("n", ["n", "m"], {"mode": any, "skip_negation": True}), ("a", {"a"}, {"regex": True}),
])
def test_multi_match_same_answer_as_law(name, patterns, kwargs):
    _applied()
    fast = law.util.multi_match
    orig = fast.__wrapped__
    assert fast(name, patterns, **kwargs) == orig(name, patterns, **kwargs)
    from law.task import base as law_task_base

    assert law_task_base.multi_match is fast  # where req_params calls it


def test_get_params_kept_per_class_and_emptied_when_a_parameter_changes():
    _applied()
    import luigi

    class ScaleProbe(luigi.Task):
        a = luigi.Parameter(default="1")
        b = luigi.IntParameter(default=2)

    first = ScaleProbe.get_params()
    assert [n for n, _ in first] == ["a", "b"]
    first.append(("junk", None))  # callers get their own list
    assert [n for n, _ in ScaleProbe.get_params()] == ["a", "b"]
    ScaleProbe.c = luigi.Parameter(default="3")
    ScaleProbe.c.__set_name__(ScaleProbe, "c")  # what class creation does (luigi needs it)
    assert [n for n, _ in ScaleProbe.get_params()] == ["a", "b", "c"]
    del ScaleProbe.a
    assert [n for n, _ in ScaleProbe.get_params()] == ["b", "c"]
    assert ScaleProbe(b=5).b == 5 and ScaleProbe().c == "3"


@pytest.mark.parametrize("value", [
    tuple(range(1, 20)), tuple(str(i) for i in range(20)), tuple(float(i) for i in range(20)),
    (0.0,) * 10, (-0.0,) * 10, (1, True, 1, 1, 1, 1, 1, 1, 1), (True, 1, 1, 1, 1, 1, 1, 1, 1),
    (1, 2), (),
])
def test_csv_serialize_same_as_law(value):
    _applied()
    ints = law.CSVParameter(cls=luigi_param("IntParameter"))
    anything = law.CSVParameter()
    for param in (ints, anything):
        for _ in range(2):  # the second call is answered from the cache
            assert param.serialize(value) == law.CSVParameter.serialize.__wrapped__(param, value)


def luigi_param(name: str):
    import luigi

    return getattr(luigi, name)


@pytest.mark.parametrize("args", [
    ["PlotRuntimes", "--version", "v1", "--batch-sizes", "1,2"],
    ["MeasureRuntime", "--version", "v1", "--MeasureRuntime-n-calls", "7", "--workers", "2"],
    ["PlotRuntimes", "--PlotRuntimes-version", "v1", "--local-scheduler"],
])
def test_one_parser_per_law_run_parses_as_luigi(args):
    _applied()
    import luigi.cmdline_parser

    import mlprof.tasks.plotting  # noqa: F401  (registers the tasks)

    cls = luigi.cmdline_parser.CmdlineParser
    fast, plain = object.__new__(cls), object.__new__(cls)
    cls.__init__(fast, args)
    cls.__init__.__wrapped__(plain, args)
    assert vars(fast.known_args) == vars(plain.known_args)
    assert fast.cmdline_args == plain.cmdline_args == args


def test_proxy_lookup_same_as_laws(monkeypatch, store):
    _applied()
    import law.task.proxy

    from mlprof.tasks.runtime import MeasureRuntime

    monkeypatch.setenv("MLP_STORE", str(store))
    wf = MeasureRuntime(version="p1", batch_sizes=(1, 2), n_calls=10, warmup=1,
                        min_duration=0.0)
    branch = wf.req(wf, branch=1)
    fast = law.task.proxy.ProxyAttributeTask.__getattribute__
    orig = fast.__wrapped__
    for task in (wf, branch):
        for attr in ("output", "complete", "requires", "run", "version", "batch_sizes",
                     "branch", "_proxy_attribute_task_init", "task_id"):
            a, b = fast(task, attr), orig(task, attr)
            assert a == b, (task, attr)
    # a workflow's output is its proxy's (the collection), a branch's its own files
    assert set(wf.output()) != set(branch.output()) and "csv" in branch.output()


def test_a_new_task_computes_its_parameter_values_once():
    _applied()
    import law
    import luigi

    calls = []

    class ScaleValues(law.Task):
        a = luigi.Parameter(default="x")
        n = luigi.IntParameter(default=1)

        @classmethod
        def modify_param_values(cls, params):
            calls.append(dict(params))
            return params

        def run(self):
            pass

    first = ScaleValues(a="y")
    assert (first.a, first.n) == ("y", 1) and len(calls) == 1  # luigi's way: 2
    assert ScaleValues(a="y") is first and len(calls) == 2  # the cache key needs them
    other = ScaleValues(a="z", n=3)
    assert (other.a, other.n) == ("z", 3) and other is not first and len(calls) == 3
    values = dict(ScaleValues.get_param_values(ScaleValues.get_params(), (), {"a": "q"}))
    assert (values["a"], values["n"]) == ("q", 1) and len(calls) == 4  # any other call computes


@pytest.mark.filterwarnings("ignore:Parameter \"a\" with value \"v\" is not of type string")
def test_parameter_values_skip_the_repr_of_arguments_and_errors_keep_luigis_message():
    """luigi formats every argument of a new task into a description only its errors use: the
    patched call makes no ``repr`` of them (counted), and a failing call still raises luigi's
    own exception with its own message (arguments listed)."""
    _applied()
    import law
    import luigi
    import luigi.parameter

    reprs = [0]

    class Value:
        def __str__(self) -> str:
            return "v"

        def __repr__(self) -> str:
            reprs[0] += 1
            return "Value()"

    class ScaleRepr(law.Task):
        a = luigi.Parameter(default="x")
        n = luigi.IntParameter(default=1)

        def run(self):
            pass

    task = ScaleRepr(a=Value(), n=2)
    assert task.n == 2 and isinstance(task.a, Value)
    assert reprs[0] == 0  # luigi's own get_param_values: one repr per new task at least
    with pytest.raises(luigi.parameter.UnknownParameterException,
                       match=r"ScaleRepr\[args=\(\), kwargs=\{.*'nope': 5.*\}\]: unknown "
                             "parameter nope"):
        ScaleRepr(a="y", nope=5)
    with pytest.raises(luigi.parameter.UnknownParameterException,
                       match=r"ScaleRepr\[args=\('p', 'p', .*takes at most"):
        luigi.Task.get_param_values.__func__(ScaleRepr, ScaleRepr.get_params(), ("p",) * 99, {})
    assert _scale.status()["exc_desc"]


def test_instance_cache_key_hashes_once_and_equals_luigis_key():
    """The cache key of a new task: equal to and hashed like luigi's plain tuple (each finds
    the other in a dict), unhashable values refused as by ``hash``."""
    plain = (int, (("batch_sizes", tuple(range(1, 1001))), ("version", "v")))
    key = scale_luigi._HashedKey(plain)
    assert key == plain and hash(key) == hash(plain)
    assert {plain: 1}[key] == 1 and {key: 2}[plain] == 2
    with pytest.raises(TypeError):
        scale_luigi._HashedKey((int, (("a", [1]),)))
