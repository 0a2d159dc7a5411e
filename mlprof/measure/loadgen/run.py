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


def load_timeout(load: LoadSettings, timeout: float | None = None) -> float:
    """The time-out of one MeasureLoad branch: ``timeout`` when given, else ``$MLP_TIMEOUT``.

    A server search runs up to :data:`~mlprof.measure.loadgen.settings.MAX_POINTS` points in
    one child, and this is per point: the search restarts the clock at each point
    (:func:`mlprof.measure.isolate.restart_timeout`). Why per point: the ResNet-18 search of
    docs/load.md (18.8 ms a call at 2 threads on the 2-vCPU VM) takes ~100 s a point at its low
    rates, so one ``$MLP_TIMEOUT`` (600 s) for the whole search ends it after 6 healthy points,
    and a budget for the whole search lets a hung point run for all of it."""
    from mlprof.measure.isolate import default_timeout

    return default_timeout() if timeout is None else timeout


def measure_load_isolated(model_file: str, settings: MeasureSettings, load: LoadSettings, *,
                          script_args: tuple[str, ...] = (),
                          timeout: float | None = None,
                          progress: Callable[[float, str], None] | None = None) -> LoadResult:
    """One MeasureLoad branch (``load``: one point's settings, see
    :meth:`~mlprof.measure.loadgen.settings.LoadSettings.points`) in a child process, under the
    machine-wide measurement lock, killed when a point (or the start) runs past ``timeout``
    (default :func:`load_timeout`). ``progress`` hears the child's reports (default: a log
    line at most every few seconds, :func:`~mlprof.measure.isolate.run_isolated`)."""
    from mlprof.measure.harness import _needs_torch
    from mlprof.measure.isolate import run_isolated
    from mlprof.measure.lock import measurement_lock

    label = f"{os.path.basename(model_file)} under load ({load.scenario})"
    with measurement_lock(label) as lock:
        result = run_isolated(_measure, {"model_file": model_file, "settings": settings,
                                         "load": load, "script_args": tuple(script_args)},
                              timeout=load_timeout(load, timeout), label=label,
                              progress=progress,
                              torch=_needs_torch(model_file, settings.runtime))
    result.provenance["lock_wait_s"] = lock.wait_s
    return result
