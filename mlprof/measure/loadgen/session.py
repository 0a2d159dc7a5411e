"""The model side of a load point: a resolved model, its sessions and first call, and the
helpers every scenario's timing uses (CPU time, sleeping until a due time, latency
percentiles).
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlprof.measure.settings import MeasureSettings


def _fmt_ms(ms: float | None) -> str:
    """``12.3 ms`` (three significant digits), ``-`` for none."""
    return "-" if ms is None else f"{ms:.3g} ms"


def _pct(values: np.ndarray, p: float) -> float | None:
    return float(np.percentile(values, p)) if values.size else None


def latency_summary(latency_ms: np.ndarray) -> dict[str, float | None]:
    """Median, p90, p99, p99.9, mean and max of latencies in ms."""
    return {"p50_ms": _pct(latency_ms, 50), "p90_ms": _pct(latency_ms, 90),
            "p99_ms": _pct(latency_ms, 99), "p999_ms": _pct(latency_ms, 99.9),
            "mean_ms": float(latency_ms.mean()) if latency_ms.size else None,
            "max_ms": float(latency_ms.max()) if latency_ms.size else None}


@dataclass
class _Model:
    """A resolved model and what builds sessions of it."""

    runtime_cls: Any
    resolved: Any
    settings: MeasureSettings
    sessions: list[Any] = field(default_factory=list)

    def session(self, batch_size: int) -> Any:
        rt = self.runtime_cls(self.resolved, device=self.settings.device,
                              threads=self.settings.threads)
        rt.configure(self.settings)
        rt.load(batch_size)
        self.sessions.append(rt)
        return rt

    def call(self, rt: Any, batch_size: int, event: int = 0) -> tuple[Callable[..., Any], tuple]:
        from mlprof.measure.inputs import make_feeds

        s = self.settings
        feeds = make_feeds(self.resolved.inputs, batch_size, 1, s.input_data, s.seed + event)
        return rt.bind(feeds[0])


def _open(model_file: str, settings: MeasureSettings, script_args: tuple[str, ...]) -> _Model:
    from mlprof.runtimes import get_runtime

    s = settings.validated()
    runtime_cls = get_runtime(s.runtime)
    return _Model(runtime_cls, runtime_cls.resolve(model_file, tuple(script_args)), s)


def _first_call(fn: Callable[..., Any], args: tuple, spec_file: str, bs: int,
                rt: Any = None, phase: Callable[[str], None] | None = None) -> None:
    """The first call of a session, after the session's compile where its runtime compiles on
    the first event's call (:meth:`Runtime.compile <mlprof.runtimes.base.Runtime.compile>`,
    once per session: a shared session's later calls find it compiled; ``phase`` hears what
    the compile does; without ``rt``, the call alone); a failure of either is one line
    (:func:`mlprof.measure.harness.first_call_error`, as the harness's).

    Why the compile: torch-compile's call is the AOTInductor package, which the compile
    loads or builds; without it every load point of torch-compile failed at its first call
    (``'NoneType' object has no attribute 'boxed_run'``)."""
    from mlprof.measure.harness import first_call_error

    try:
        if rt is not None:
            rt.compile(fn, args, phase=phase)
        fn(*args)
    except Exception as e:  # the runtime's own error, made one clear line
        raise first_call_error(e, rt, bs, spec_file) from None


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _sleep_until(t_ns: int, pc: Callable[[], int] = time.perf_counter_ns) -> int:
    """Sleep until ``perf_counter_ns() >= t_ns``, the last 0.2 ms spinning; the time woken.

    Why spin: a Linux sleep overshoots by 60-100 µs, and ``time.sleep(0)`` (to hand the GIL
    over while waiting) took 57 µs per call on this machine, ``os.sched_yield()`` 0.8 µs but
    20-30 µs at the 99th percentile; a plain loop on ``perf_counter_ns`` wakes 44 ns late at
    the median, 0.2-0.4 ms at the 99th (measured: 300 waits of 0.05-5 ms each). The other
    workers get the GIL at :func:`serve`'s short switch interval.
    """
    left = t_ns - pc()
    if left > 400_000:
        time.sleep((left - 200_000) / 1e9)
    now = pc()
    while now < t_ns:
        now = pc()
    return now
