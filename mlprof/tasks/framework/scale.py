"""Targeted patches that keep scheduling linear in the number of tasks (law 0.1.21).

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

Upstream: no law issue or fix for either was found (GitHub issue search, Nov 2026). The newest
riga/law ``law/util.py`` available to us still has the quadratic ``make_unique``; the
``law/patches.py`` available is older than the duplicate check. riga/law#197 ("Heavy performance
improvement when starting large RemoteWorkflows") is a different scaling problem (remote
workflows' output checks), not this one. Worth reporting upstream: both fixes are local.

Guard: each patch is applied only when the offending code is present (checked in the byte code
of the installed law's functions), so an upgraded law that fixed them is left alone;
``law.__version__`` is recorded in :func:`status`. ``MLP_NO_SCALE_PATCH=1`` disables both
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

#: the law version these patches were written and measured against
LAW_VERSION = "0.1.21"
#: set to 1 to leave law untouched
DISABLE_ENV = "MLP_NO_SCALE_PATCH"

logger = logging.getLogger("mlprof")

_status: dict[str, Any] = {"applied": False, "add_task_history": False, "make_unique": False,
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


def _names(func: Any) -> set[str]:
    """Names (attributes, globals, methods) used by ``func`` and the functions nested in it.

    Read from the byte code: ``inspect.getsource`` would read and tokenize the module's file on
    every ``law run`` (~7 ms here).
    """
    names: set[str] = set()
    stack = [getattr(func, "__code__", None)]
    while stack:
        code = stack.pop()
        if code is None:
            continue
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return names


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
    _status["applied"] = _status["add_task_history"] or _status["make_unique"]
    if _status["applied"]:
        _status["reason"] = f"offending code found in law {law.__version__}"
    else:
        _status["reason"] = f"offending code not found in law {law.__version__}'s source"
        logger.debug("mlprof.tasks.framework.scale: nothing to patch in law %s", law.__version__)
    return status()


def status() -> dict[str, Any]:
    """Which patches are active: ``applied``, ``add_task_history``, ``make_unique``, ``reason``."""
    return dict(_status)
