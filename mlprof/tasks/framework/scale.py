"""Targeted patches of law 0.1.21 and luigi that keep scheduling linear and cheap per task.

Why: scheduling a sweep of N tasks with law 0.1.21 grows faster than N. Measured with cProfile
on ``law run MeasureRuntime --batch-sizes 1,...,N`` (N branches whose outputs are missing, up to
the end of scheduling), two functions of law account for the super-linear part:

1. ``law.patches.patch_worker_add_task`` wraps luigi's ``Worker._add_task`` (called whenever a
   task is registered with the scheduler) and, only to silence repeated "Informed scheduler" log
   lines, tests ``(task, status, runnable) in self._add_task_history``. That history is a plain
   list that luigi appends to on every call, so the test scans every earlier entry: N^2 / 2
   ``Task.__eq__`` calls for N tasks (500,500 at N = 1000, 13 % of the profiled time).
   Luigi itself never searches the list. Fix: the worker's history becomes a list that also
   keeps a set of its entries, so ``in`` is a hash lookup (same answer: ``Task.__hash__`` and
   ``Task.__eq__`` both use the class and the task id).

2. ``law.util.make_unique`` sorts with ``key=obj.index``: O(n^2) per call. ``CSVParameter``
   with ``unique=True`` calls it on every ``serialize`` (task id, repr, summary), and every
   branch of a workflow carries the workflow's CSV parameters, e.g. all N batch sizes of
   MeasureRuntime: O(N^2) per task, O(N^3) for the sweep (3 million ``tuple.index`` calls at
   N = 1000, 35 % of the profiled time). Fix: an O(n) version with the same result (first
   occurrences, in order, same sequence type, ``TypeError`` for unhashable elements as before).

Together they made up 23 of the 50 CPU seconds that scheduling 1000 pending branches took
(benchmarks/scheduling.py). What is left grows with N only where it must: every branch really
carries all N batch sizes in its parameters (its task id and repr serialize them).

Per task (issue 38: at most 3 ms of CPU per task, 1,000 vs 100 branches at most 1.05x), six more,
each described where it is defined: a new task's parameter values computed once instead of twice
(:func:`_patch_param_values_once`, -15 to -20 % CPU per branch), law's attribute lookup of every
task through its proxy logic only for the names a proxy forwards
(:func:`_patch_proxy_getattribute`: 1.8 -> 0.8 us per attribute, ~800 per branch), luigi's
``Task.get_params`` kept per class (:func:`_patch_get_params`; ``dir(cls)`` on every call was 40 %
of the profiled time), law's ``multi_match`` answering plain names by a set
(:func:`_patch_multi_match`, 25 %), luigi's config lookup skipping absent sections
(:func:`_patch_config_sections`, 12 %) and law's CSV serialization of a long tuple kept
(:func:`_patch_csv_serialize`: every branch carries all N batch sizes, O(N) per task).
Three more keep what is left of that O(N) per task out: luigi's description of a new task's
arguments, formatted on every call for its error messages only (:func:`_patch_exc_desc`: the
``repr`` of all N sizes, 114 us per branch at N = 1,000), the instance-cache key hashed once
(:class:`_HashedKey`) and law's ``flatten`` in one pass (:func:`_patch_flatten`; its
``sum`` of lists is O(N^2) over a workflow's N outputs). In-process (``wf.req(wf,
branch=b)``, ``to_str_params``, ``complete``, ``repr``; interleaved, least of 20), 1,000 vs
100 branches per branch: 1.146x before the first two, 1.044x with the first, 1.012x with
both (no output collection there: ``flatten`` is timed apart, in its docstring).
``benchmarks/scheduling.py`` (the scheduling's own CPU per task, N = 100 and 1,000): unpatched 8.1
and 19.8 ms pending, 7.3 and 11.2 ms complete; patched 1.5 and 1.5 ms pending, 1.5 and 2.0 ms
complete (of which ~0.8-0.9 ms validate the branch's result files, mlprof.measure.results). And one
for start-up: luigi builds one argparse parser of every task's parameters per ``law run`` instead
of two (:func:`_patch_parse_once`).

Upstream: no law issue or fix for either was found (GitHub issue search, Nov 2026). The newest
riga/law ``law/util.py`` available to us still has the quadratic ``make_unique``; the
``law/patches.py`` available is older than the duplicate check. riga/law#197 ("Heavy performance
improvement when starting large RemoteWorkflows") is a different scaling problem (remote
workflows' output checks), not this one. Worth reporting upstream: both fixes are local.

Guard: each patch is applied only when the offending code is present (checked in the byte code
of the installed law's functions), so an upgraded law that fixed them is left alone;
``law.__version__`` is recorded in :func:`status`. ``MLP_NO_SCALE_PATCH=1`` disables them all
(for A/B measurements, ``benchmarks/scheduling.py``). Applied once, when ``law run`` or the
``mlprof`` command starts or the API schedules tasks (:mod:`mlprof.tasks.framework.hooks`), never on
import.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Iterable
from typing import Any

from mlprof.tasks.framework.scale_luigi import (
    _names,
    _patch_config_sections,
    _patch_exc_desc,
    _patch_get_params,
    _patch_param_values_once,
    _patch_parse_once,
)

#: the law version these patches were written and measured against
LAW_VERSION = "0.1.21"
#: set to 1 to leave law untouched
DISABLE_ENV = "MLP_NO_SCALE_PATCH"

logger = logging.getLogger("mlprof")

_status: dict[str, Any] = {"applied": False, "add_task_history": False, "make_unique": False,
                           "flatten": False,
                           "parse_once": False, "get_params": False,
                           "multi_match": False, "config_sections": False,
                           "csv_serialize": False, "proxy_getattribute": False,
                           "param_values_once": False, "exc_desc": False,
                           "law_version": None, "reason": "not applied yet"}


class IndexedHistory(list):
    """A list that also keeps a set of its (hashable) entries: ``x in history`` is O(1).

    Luigi's worker only appends to its ``_add_task_history`` and reads it for the execution
    summary; every other mutation rebuilds the index, unhashable entries fall back to a scan.
    """

    def __init__(self, items: Iterable = ()) -> None:
        super().__init__(items)
        self._reindex()

    def _reindex(self) -> None:
        self._index: set | None = set()
        for item in self:
            self._add(item)

    def _add(self, item: Any) -> None:
        if self._index is not None:
            try:
                self._index.add(item)
            except TypeError:  # unhashable: answer by scanning from now on
                self._index = None

    def __contains__(self, item: object) -> bool:
        if self._index is not None:
            try:
                return item in self._index
            except TypeError:
                pass
        return list.__contains__(self, item)

    def append(self, item: Any) -> None:
        """Append ``item`` and index it."""
        list.append(self, item)
        self._add(item)

    def extend(self, items: Iterable) -> None:
        """Extend by ``items`` and index them."""
        items = list(items)
        list.extend(self, items)
        for item in items:
            self._add(item)

    def __iadd__(self, items: Iterable):
        self.extend(items)
        return self


def _reindexing(name: str):
    """A list method that rebuilds the index after mutating the list."""
    method = getattr(list, name)

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        self._reindex()
        return result

    return wrapper


for _name in ("insert", "remove", "pop", "clear", "__setitem__", "__delitem__", "__imul__"):
    setattr(IndexedHistory, _name, _reindexing(_name))
del _name


def fast_make_unique(obj: Any) -> list | tuple:
    """``law.util.make_unique`` in O(n): unique elements in order of first appearance.

    Same contract as law's: a tuple stays a tuple (of the same class), a list or any other
    iterable becomes a list, a non-iterable or an unhashable element raises ``TypeError``; of
    equal elements (``1``, ``1.0``, ``True``) the first is kept.
    """
    import law.util

    if not isinstance(obj, (list, tuple)):
        if not law.util.is_iterable(obj) and not law.util.is_lazy_iterable(obj):
            raise TypeError("object is neither list, tuple, nor generic iterable")
        obj = list(obj)
    unique = list(dict.fromkeys(obj))
    return obj.__class__(unique) if isinstance(obj, tuple) else unique


def fast_flatten(*structs: Any, **kwargs: Any) -> list:
    """``law.util.flatten`` in O(n): the leaves of nested dicts (their values), lists, tuples,
    sets and lazy iterables, in the same order.

    Same contract as law's: one argument is flattened, several are flattened as a tuple of
    them, none give ``[]``; ``flatten_dict``, ``flatten_list``, ``flatten_tuple`` and
    ``flatten_set`` (default true) keep an object of that type whole when false; a lazy
    iterable is always flattened; anything else is a leaf.
    """
    if not structs:
        return []
    flags = (bool(kwargs.get("flatten_dict", True)), bool(kwargs.get("flatten_list", True)),
             bool(kwargs.get("flatten_tuple", True)), bool(kwargs.get("flatten_set", True)))
    out: list = []
    _flatten_into(structs[0] if len(structs) == 1 else structs, out, flags)
    return out


def _flatten_into(struct: Any, out: list, flags: tuple[bool, bool, bool, bool]) -> None:
    """Append the leaves of ``struct`` to ``out`` (:func:`fast_flatten`; law's order of tests)."""
    import law.util

    seq: Iterable | None
    if isinstance(struct, dict):
        seq = struct.values() if flags[0] else None
    elif isinstance(struct, list):
        seq = struct if flags[1] else None
    elif isinstance(struct, tuple):
        seq = struct if flags[2] else None
    elif isinstance(struct, set):
        seq = struct if flags[3] else None
    elif law.util.is_lazy_iterable(struct):
        seq = struct
    else:
        seq = None
    if seq is None:
        out.append(struct)
        return
    for obj in seq:
        _flatten_into(obj, out, flags)


def _patch_add_task_history() -> bool:
    """Make ``Worker._add_task_history`` an :class:`IndexedHistory` (if law scans it)."""
    import law.patches
    import luigi.worker

    # law reads the history only for its duplicate check (luigi never does)
    if "_add_task_history" not in _names(law.patches.patch_worker_add_task):
        return False
    init_orig = luigi.worker.Worker.__init__
    if getattr(init_orig, "_mlprof_scale", False):
        return True

    @functools.wraps(init_orig)
    def __init__(self, *args, **kwargs):
        init_orig(self, *args, **kwargs)
        self._add_task_history = IndexedHistory(self._add_task_history)

    __init__._mlprof_scale = True
    luigi.worker.Worker.__init__ = __init__
    return True


def _patch_make_unique() -> bool:
    """Replace ``law.util.make_unique`` (and its imports in loaded law modules) if quadratic."""
    import law.util

    orig = law.util.make_unique
    if orig is fast_make_unique:
        return True
    if "index" not in _names(orig):  # sorted(..., key=obj.index)
        return False
    for name, module in list(sys.modules.items()):
        if (name == "law" or name.startswith("law.")) and \
                getattr(module, "make_unique", None) is orig:
            module.make_unique = fast_make_unique
    return True


def _patch_flatten() -> bool:
    """Replace ``law.util.flatten`` (and its imports in loaded law modules) if quadratic.

    law joins the flattened parts with ``sum(..., [])``, which copies the list built so far at
    every part: O(n^2) for n parts. A workflow's output collection flattens the outputs of all
    its N branches (``TargetCollection.__init__``): 0.40 ms for 100 branches of two files, 7.06
    ms for 1,000 (4 -> 7 us per branch, timeit here); :func:`fast_flatten` appends in one pass.
    """
    import law.util

    orig = law.util.flatten
    if orig is fast_flatten:
        return True
    if "sum" not in _names(orig):  # law joins the parts some other way: leave it alone
        return False
    for name, module in list(sys.modules.items()):
        if (name == "law" or name.startswith("law.")) and \
                getattr(module, "flatten", None) is orig:
            setattr(module, "flatten", fast_flatten)  # noqa: B010  (mypy: module attribute)
    return True


#: multi_match's patterns split into plain names and the rest, per (patterns, regex)
_SPLIT: dict[tuple[frozenset, Any], tuple[frozenset, tuple]] = {}
_GLOB = frozenset("*?[")


def _plain(pattern: str, regex: Any) -> bool:
    """Whether ``pattern`` matches exactly one name, itself, in law's ``multi_match``."""
    if pattern.startswith("!") or not _GLOB.isdisjoint(pattern):
        return False
    return not (regex is None and pattern.startswith("^") and pattern.endswith("$"))


def _patch_multi_match() -> bool:
    """Answer law's ``multi_match(name, patterns, any)`` for plain names by a set lookup.

    law's ``Task.req_params`` tests every parameter name of a task against its exclusion
    patterns one by one with ``fnmatch`` (``multi_match``): ~54 names x ~24 patterns per
    ``req()``, 388,932 ``fnmatch`` calls for 300 branches (~25 % of the profiled scheduling
    time). Nearly every pattern is a plain name, which ``fnmatch`` matches only by itself (on
    POSIX: ``normcase`` changes nothing, only ``*?[`` are special). So for ``mode=any`` the
    plain names are a set and only the other patterns (globs, ``!`` negations, ``^...$``
    regexes) go through law's function: the same answer.
    """
    import law.util

    orig = law.util.multi_match
    if getattr(orig, "_mlprof_scale", False):
        return True
    if os.name != "posix" or "fnmatch" not in _names(orig):
        return False

    @functools.wraps(orig)
    def multi_match(name, patterns, mode=any, regex=None, skip_negation=False):
        if mode is not any or regex not in (None, False) or skip_negation \
                or not isinstance(name, str) or not isinstance(patterns, (set, frozenset, list,
                                                                         tuple)):
            return orig(name, patterns, mode, regex, skip_negation)
        try:
            key = (frozenset(patterns), regex)
            split = _SPLIT.get(key)
        except TypeError:  # unhashable patterns: law's way
            return orig(name, patterns, mode, regex, skip_negation)
        if split is None:
            if not all(isinstance(p, str) for p in key[0]):
                return orig(name, patterns, mode, regex, skip_negation)
            plain = frozenset(p for p in key[0] if _plain(p, regex))
            split = (plain, tuple(p for p in key[0] if p not in plain))
            if len(_SPLIT) < 4096:
                _SPLIT[key] = split
        if name in split[0]:
            return True
        return bool(split[1]) and orig(name, split[1], mode, regex, skip_negation)

    multi_match._mlprof_scale = True  # type: ignore[attr-defined]
    for mod_name, module in list(sys.modules.items()):
        if (mod_name == "law" or mod_name.startswith("law.")) and \
                getattr(module, "multi_match", None) is orig:
            setattr(module, "multi_match", multi_match)  # noqa: B010
    return True


#: CSV serializations of long int or str tuples, per (parameter, value)
_CSV: dict[tuple[Any, tuple], str] = {}
#: the same per (id(parameter), id(value)), holding both objects
_CSV_SEEN: dict[tuple[int, int], tuple[Any, tuple, str]] = {}


def _patch_csv_serialize() -> bool:
    """Serialize a long tuple of a law ``CSVParameter`` once, not on every call.

    Every branch of a workflow carries the workflow's CSV parameters: each of the N branches of
    ``MeasureRuntime --batch-sizes 1,...,N`` holds all N batch sizes, and luigi and law
    serialize them several times per task (task id, ``to_str_params`` for the scheduler,
    ``repr``): O(N) Python work per task, so scheduling grows as N^2 (the ``grew by`` figure of
    ``benchmarks/scheduling.py``). The string depends only on the parameter and the value;
    for a tuple of only ints or only strs, equal tuples give equal strings, so the result is
    kept per (parameter, tuple): hashing and comparing a tuple happen in C. Other values
    (floats: ``0.0 == -0.0``; mixed types: ``1 == True``), short tuples and failures go
    through law's own serialize each time.
    """
    import law.parameter

    cls = law.parameter.CSVParameter
    orig = cls.serialize
    if getattr(orig, "_mlprof_scale", False):
        return True

    @functools.wraps(orig)
    def serialize(self, value):
        if type(value) is not tuple or len(value) < 8:
            return orig(self, value)
        # the same tuple object again (a task serializes its own value ~8 times): no O(N) work
        # at all (the entry holds the tuple, so its id is not reused meanwhile)
        seen = _CSV_SEEN.get((id(self), id(value)))
        if seen is not None and seen[0] is self and seen[1] is value:
            return seen[2]
        kinds = set(map(type, value))
        if len(kinds) != 1 or not kinds <= {int, str}:
            return orig(self, value)
        result = _serialize_kept(self, value)
        if len(_CSV_SEEN) >= 1024:
            _CSV_SEEN.clear()
        _CSV_SEEN[(id(self), id(value))] = (self, value, result)
        return result

    def _serialize_kept(self, value):
        key = (self, value)
        try:
            return _CSV[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable parameter object
            return orig(self, value)
        result = orig(self, value)
        if len(_CSV) >= 1024:
            _CSV.clear()
        _CSV[key] = result
        return result

    serialize._mlprof_scale = True  # type: ignore[attr-defined]
    setattr(cls, "serialize", serialize)  # noqa: B010
    return True


def _patch_proxy_getattribute() -> bool:
    """Look up a law task's attributes that no proxy forwards without law's proxy logic.

    law's ``ProxyAttributeTask.__getattribute__`` runs for every attribute of every law task
    (mlprof's and luigi's code alike read ``self.x`` ~800 times per branch while it is made,
    requested and checked): it reads ``self._proxy_attribute_task_init`` (a second call of
    itself) and calls ``get_proxy_attribute``, which forwards only ``requires``, ``output``,
    ``complete`` and ``run`` (to a workflow's proxy) and ``input``, ``output`` and ``run`` (to a
    sandbox's) and otherwise returns ``super(ProxyAttributeTask, task).__getattribute__(attr)``.
    Every other name goes that last way directly here: the same lookup, one Python call
    instead of three (~25 % of the profiled CPU time of scheduling after the patches above).
    """
    import law.task.proxy as proxy

    cls = proxy.ProxyAttributeTask
    orig = cls.__dict__.get("__getattribute__")
    if orig is None:
        return False
    if getattr(orig, "_mlprof_scale", False):
        return True
    forwarded = [getattr(proxy, name, None) for name in ("_forward_workflow_attributes",
                                                          "_forward_sandbox_attributes")]
    if not all(isinstance(f, set) for f in forwarded) \
            or "get_proxy_attribute" not in _names(orig):
        return False
    workflow_attrs, sandbox_attrs = forwarded  # law's own sets: a change to them is seen

    @functools.wraps(orig)
    def __getattribute__(self, attr, proxy=None):
        if attr in workflow_attrs or attr in sandbox_attrs:
            return orig(self, attr, proxy)
        return super(cls, self).__getattribute__(attr)

    __getattribute__._mlprof_scale = True  # type: ignore[attr-defined]
    setattr(cls, "__getattribute__", __getattribute__)  # noqa: B010
    return True


def apply() -> dict[str, Any]:
    """Apply the patches (once; no-op when ``$MLP_NO_SCALE_PATCH`` is set). Returns :func:`status`.

    Called by :func:`mlprof.tasks.framework.hooks.install_build_hooks`.
    """
    import law

    _status["law_version"] = law.__version__
    if os.environ.get(DISABLE_ENV, "").strip() not in ("", "0"):
        _status.update(applied=False, reason=f"disabled by ${DISABLE_ENV}")
        return status()
    _status["add_task_history"] = _patch_add_task_history()
    _status["make_unique"] = _patch_make_unique()
    _status["flatten"] = _patch_flatten()
    _status["parse_once"] = _patch_parse_once()
    _status["get_params"] = _patch_get_params()
    _status["multi_match"] = _patch_multi_match()
    _status["config_sections"] = _patch_config_sections()
    _status["csv_serialize"] = _patch_csv_serialize()
    _status["proxy_getattribute"] = _patch_proxy_getattribute()
    _status["param_values_once"] = _patch_param_values_once()
    _status["exc_desc"] = _patch_exc_desc()
    _status["applied"] = any(_status[k] for k in (
        "add_task_history", "make_unique", "flatten", "parse_once", "get_params", "multi_match",
        "config_sections", "csv_serialize", "proxy_getattribute", "param_values_once",
        "exc_desc"))
    if _status["applied"]:
        _status["reason"] = f"offending code found in law {law.__version__}"
    else:
        _status["reason"] = f"offending code not found in law {law.__version__}'s source"
        logger.debug("mlprof.tasks.framework.scale: nothing to patch in law %s", law.__version__)
    return status()


def status() -> dict[str, Any]:
    """Which patches are active: ``applied``, one flag per patch (``add_task_history``,
    ``make_unique``, ``flatten``, ``parse_once``, ``get_params``, ``multi_match``,
    ``config_sections``, ``csv_serialize``, ``proxy_getattribute``, ``param_values_once``,
    ``exc_desc``),
    ``law_version`` and ``reason``."""
    return dict(_status)
