"""One MeasureLoad branch in a child process, under the machine-wide measurement lock, as the
harness runs a measurement: the lock covers the whole point (or search).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from mlprof.measure.loadgen.record import LoadResult
from mlprof.measure.loadgen.server import measure_server
from mlprof.measure.loadgen.streams import measure_streams
from mlprof.measure.settings import MeasureSettings


def _measure(model_file: str, settings: MeasureSettings, load: dict[str, Any],
             script_args: tuple[str, ...] = (),
             progress: Callable[[float, str], None] | None = None) -> LoadResult:
    load = dict(load)
    scenario = load.pop("scenario")
    if scenario == "streams":
        return measure_streams(model_file, settings, script_args=script_args,
                               progress=progress, **load)
    return measure_server(model_file, settings, script_args=script_args, progress=progress,
                          **load)


def measure_load_isolated(model_file: str, settings: MeasureSettings, load: dict[str, Any], *,
                          script_args: tuple[str, ...] = (),
                          timeout: float | None = None) -> LoadResult:
    """One MeasureLoad branch (``load``: ``scenario`` and the keyword arguments of
    :func:`measure_streams` or :func:`measure_server`) in a child process, under the
    machine-wide measurement lock, killed after ``timeout`` (default ``$MLP_TIMEOUT``)."""
    from mlprof.measure.harness import _needs_torch
    from mlprof.measure.isolate import run_isolated
    from mlprof.measure.lock import measurement_lock

    label = f"{os.path.basename(model_file)} under load ({load.get('scenario')})"
    with measurement_lock(label) as lock:
        result = run_isolated(_measure, {"model_file": model_file, "settings": settings,
                                         "load": load, "script_args": tuple(script_args)},
                              timeout=timeout, label=label,
                              torch=_needs_torch(model_file, settings.runtime))
    result.provenance["lock_wait_s"] = lock.wait_s
    return result
