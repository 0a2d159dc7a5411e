"""What ``law run`` (and the API) check once before scheduling anything: that results can be
saved and that the measurement lock can be taken.

Both used to be found out by each branch in turn, after its measurement (a read-only store:
exit 30 and a 50-line traceback per branch) or by spinning (a dangling link at the lock path).
Here each is one line naming the store or the lock and its variable (``MLP_STORE``,
``MLP_LOCK_DIR``, ``MLP_NO_LOCK``), and ``law run`` exits 40 with nothing measured
(:mod:`mlprof.tasks.framework.cmdline` calls :func:`preflight` before it builds the root task).
"""

from __future__ import annotations

from typing import Any

from mlprof.measure.lock import check_lock
from mlprof.results.writable import check_store_writable


def preflight() -> None:
    """Raise a one-line :class:`~mlprof.errors.MLProfError` if the store cannot take results
    (read-only, full, not a directory) or the measurement lock cannot be used (a link, FIFO or
    foreign file at its path, a relative ``MLP_LOCK_DIR``, an unknown ``MLP_NO_LOCK``), or
    ``MLP_FRESH_PROCESS`` has a value it does not take."""
    from mlprof.measure.settings import fresh_process

    check_store_writable()
    check_lock()
    fresh_process()


def inspects_only(known_args: Any) -> bool:
    """Whether the command line asks law only to look (``--print-status``, ``--print-deps``,
    ``--print-output``, ``--fetch-output``, ``--remove-output``): then nothing is measured and
    a read-only store may be inspected, so :func:`preflight` is not run."""
    import law

    return any(getattr(known_args, name, None) not in (None, "", (), [])
               for name in law.Task.interactive_params)


#: set by :mod:`mlprof.tasks.framework.cmdline` when the command line only looks
#: (:func:`inspects_only`)
_inspecting = False


def mark_inspecting(value: bool) -> None:
    """Record whether this process's ``law run`` only looks (called once per command line)."""
    global _inspecting
    _inspecting = bool(value)


def inspecting() -> bool:
    """Whether this process's ``law run`` only looks (``--print-status`` and friends): then no
    measurement server is started ahead of time. law's ``--print-status`` calls a workflow's
    ``workflow_requires``, where MeasureRuntime and ProfileRuntime start it so that its imports
    (onnxruntime, numpy, onnx: 0.41 s of imports here) overlap with scheduling; for a look at
    the store that was a second process importing a runtime for nothing."""
    return _inspecting
