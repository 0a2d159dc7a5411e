"""One MeasureLoad branch in a child process, under the machine-wide measurement lock, as the
harness runs a measurement: the lock covers the whole point (or search).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from mlprof.measure.loadgen.record import LoadResult
from mlprof.measure.loadgen.server import measure_server
from mlprof.measure.loadgen.settings import LoadSettings
from mlprof.measure.loadgen.streams import measure_streams
from mlprof.measure.settings import MeasureSettings


def _measure(model_file: str, settings: MeasureSettings, load: LoadSettings,
             script_args: tuple[str, ...] = (),
             progress: Callable[[float, str], None] | None = None) -> LoadResult:
    measure = measure_streams if load.scenario == "streams" else measure_server
    return measure(model_file, settings, load, script_args=script_args, progress=progress)


def measure_load_isolated(model_file: str, settings: MeasureSettings, load: LoadSettings, *,
                          script_args: tuple[str, ...] = (),
                          timeout: float | None = None) -> LoadResult:
    """One MeasureLoad branch (``load``: one point's settings, see
    :meth:`~mlprof.measure.loadgen.settings.LoadSettings.points`) in a child process, under the
    machine-wide measurement lock, killed after ``timeout`` (default ``$MLP_TIMEOUT``)."""
    from mlprof.measure.harness import _needs_torch
    from mlprof.measure.isolate import run_isolated
    from mlprof.measure.lock import measurement_lock

    label = f"{os.path.basename(model_file)} under load ({load.scenario})"
    with measurement_lock(label) as lock:
        result = run_isolated(_measure, {"model_file": model_file, "settings": settings,
                                         "load": load, "script_args": tuple(script_args)},
                              timeout=timeout, label=label,
                              torch=_needs_torch(model_file, settings.runtime))
    result.provenance["lock_wait_s"] = lock.wait_s
    return result
