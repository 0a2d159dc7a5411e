"""The timing harness: one model, one runtime, one batch size.

What is timed and what is not:

- inputs are built once, before the session exists (never timed);
- session creation is timed once (``session_creation_ms``);
- the first call is timed alone (``first_call_ms``) and never part of the samples;
- ``warmup`` further calls are made untimed;
- each sample is exactly one runtime call (``session.run``), timed with
  ``time.perf_counter_ns`` around it and nothing else, into a preallocated list;
- events are measured in turn, ``n_calls`` calls each; with ``min_duration`` further rounds of
  ``n_calls`` calls per event follow until that many seconds of measuring are reached.

:func:`measure` runs in the current process; :func:`measure_isolated` runs it in a child process
with a timeout (see :mod:`mlprof.measure.isolate`).
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mlprof.errors import MeasurementFailed, MLProfError, is_out_of_memory, out_of_memory_text
from mlprof.measure.settings import MeasureSettings

ProgressFn = Callable[[float, str], None]


@dataclass
class MeasureResult:
    """Raw samples of one measurement plus its provenance record."""

    batch_size: int
    samples_ns: np.ndarray
    events: np.ndarray
    calls: np.ndarray
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def samples_ms(self) -> np.ndarray:
        """The samples in milliseconds."""
        return self.samples_ns.astype(np.float64) / 1e6

    def csv_text(self) -> str:
        """The raw samples as CSV: ``batch_size,event,call,runtime_ms``."""
        bs = self.batch_size
        lines = ["batch_size,event,call,runtime_ms"]
        lines.extend(f"{bs},{e},{c},{ns / 1e6:.6f}" for e, c, ns in
                     zip(self.events.tolist(), self.calls.tolist(), self.samples_ns.tolist(),
                         strict=True))
        return "\n".join(lines) + "\n"


def _timed_block(fn: Callable[..., Any], args: tuple, buf: list[int], start: int,
                 count: int) -> None:
    """The timed loop: ``count`` calls of ``fn(*args)``, each one sample in ``buf``."""
    pc = time.perf_counter_ns
    for k in range(start, start + count):
        t0 = pc()
        fn(*args)
        buf[k] = pc() - t0


def measure(model_file: str, settings: MeasureSettings, script_args: tuple[str, ...] = (),
            progress: ProgressFn | None = None) -> MeasureResult:
    """Measure ``model_file`` with ``settings`` in this process and return the samples.

    ``model_file`` is a YAML or ONNX file for onnxruntime, a model script (``script.py`` or
    ``script.py::HASH``, run with ``script_args``) for the torch runtimes.
    """
    from mlprof import __version__
    from mlprof.measure.inputs import make_feeds
    from mlprof.measure.sysinfo import peak_rss_mb, system_info
    from mlprof.runtimes import get_runtime
    from mlprof.util import git_commit

    started = _dt.datetime.now(_dt.timezone.utc)
    s = settings.validated()
    runtime_cls = get_runtime(s.runtime)
    resolved = runtime_cls.resolve(model_file, tuple(script_args))
    spec = resolved.spec
    rt = runtime_cls(resolved, device=s.device, threads=s.threads)

    feeds = make_feeds(resolved.inputs, s.batch_size, s.n_events, s.input_data, s.seed)

    started_unix = time.time()
    t0 = time.perf_counter_ns()
    rt.load(s.batch_size)
    session_ns = time.perf_counter_ns() - t0
    calls = [rt.bind(feed) for feed in feeds]

    fn, args = calls[0]
    t0 = time.perf_counter_ns()
    try:
        fn(*args)
    except Exception as e:  # the runtime's own error, made one clear line
        if is_out_of_memory(e):
            text = out_of_memory_text(e)
            raise MeasurementFailed(f"out of memory at batch size {s.batch_size}: {text}",
                                    spec.spec_file, status="oom") from None
        explain = getattr(rt, "explain_failure", None)
        msg = explain(e, s.batch_size) if explain else f"first inference failed: {e}"
        raise MLProfError(msg, spec.spec_file) from None
    first_ns = time.perf_counter_ns() - t0

    t0 = time.perf_counter_ns()
    for w in range(s.warmup):
        fn, args = calls[w % len(calls)]
        fn(*args)
    warmup_ns = time.perf_counter_ns() - t0

    # timed rounds: each round makes n_calls calls per event
    n_ev, n_calls = len(calls), s.n_calls
    per_round = n_ev * n_calls
    buf: list[int] = []
    rounds = 0
    min_ns = int(s.min_duration * 1e9)
    last_report = time.monotonic()
    loop_start = time.perf_counter_ns()
    while True:
        base = len(buf)
        buf.extend([0] * per_round)
        for e, (fn, args) in enumerate(calls):
            _timed_block(fn, args, buf, base + e * n_calls, n_calls)
            if progress is not None and time.monotonic() - last_report >= 1.0:
                last_report = time.monotonic()
                elapsed = (time.perf_counter_ns() - loop_start) / 1e9
                done = len(buf) - per_round + (e + 1) * n_calls
                frac = max(min(done / per_round, 1.0) if rounds == 0 else 1.0,
                           elapsed / s.min_duration if s.min_duration else 0.0)
                progress(min(frac, 1.0), f"batch size {s.batch_size}: {done} calls, "
                         f"{elapsed:.1f} s")
        rounds += 1
        if time.perf_counter_ns() - loop_start >= min_ns:
            break
    loop_ns = time.perf_counter_ns() - loop_start
    finished_unix = time.time()

    samples = np.asarray(buf, dtype=np.int64)
    idx = np.arange(samples.size)
    rnd, rem = np.divmod(idx, per_round)
    ev, call = np.divmod(rem, n_calls)
    call = call + rnd * n_calls

    prov = {
        "mlprof_version": __version__,
        "git_commit": git_commit(),
        "timestamp": started.isoformat(timespec="seconds"),
        **system_info(),
        "runtime": s.runtime,
        "runtime_version": runtime_cls.version(),
        "device": s.device,
        "threads": s.threads,
        "runtime_settings": rt.info(),
        "model": {
            "name": spec.name, "label": spec.label, "version": spec.version,
            "spec_file": spec.spec_file, "file": spec.file,
            "file_sha256": spec.model_sha256(), "content_hash": spec.content_hash,
            "opset": resolved.opset, "fixed_batch": resolved.fixed_batch,
            "inputs": [{"name": i.name, "shape": list(i.full_shape(s.batch_size)),
                        "dtype": i.dtype} for i in resolved.inputs],
            "outputs": resolved.outputs,
            "notes": resolved.notes,
        },
        "settings": asdict(s),
        "session_creation_ms": session_ns / 1e6,
        "first_call_ms": first_ns / 1e6,
        "warmup_ms": warmup_ns / 1e6,
        "n_samples": int(samples.size),
        "rounds": rounds,
        "loop_wall_s": loop_ns / 1e9,
        "timed_sum_s": float(samples.sum()) / 1e9,
        "peak_rss_mb": peak_rss_mb(),
        # wall-clock span from session creation to the last timed call
        "started_unix": started_unix,
        "finished_unix": finished_unix,
        "pid": os.getpid(),
        # the process that started this one: the measurement server (forkserver) when isolated
        "parent_pid": os.getppid(),
        "library_versions": _library_versions(),
    }
    return MeasureResult(s.batch_size, samples, ev.astype(np.int64), call.astype(np.int64), prov)


def _library_versions() -> dict[str, str | None]:
    """Versions of what the harness imports and of every runtime's package (None: missing)."""
    from mlprof.runtimes import runtime_packages
    from mlprof.util import dist_version

    dists = dict.fromkeys(("numpy", "onnx", *runtime_packages()))
    return {d: dist_version(d) for d in dists}


def measure_isolated(model_file: str, settings: MeasureSettings, *,
                     script_args: tuple[str, ...] = (), timeout: float | None = None,
                     progress: ProgressFn | None = None,
                     memory_limit: float | None = None) -> MeasureResult:
    """Like :func:`measure`, in a child process that is killed after ``timeout`` seconds or
    above ``memory_limit`` MB of resident memory.

    ``timeout`` defaults to ``$MLP_TIMEOUT`` (600 s), ``memory_limit`` to ``$MLP_MEMORY_LIMIT``
    (80 % of the machine's memory). Crashes, hangs, memory exhaustion and errors in the child
    raise :class:`mlprof.errors.MeasurementFailed` (``status`` ``failed``, ``timeout`` or
    ``oom``) / :class:`MLProfError` with a clear message.
    """
    from mlprof.measure.isolate import run_isolated

    label = f"{os.path.basename(model_file)} at batch size {settings.batch_size}"
    return run_isolated(measure, {"model_file": model_file, "settings": settings,
                                  "script_args": tuple(script_args)},
                        timeout=timeout, progress=progress, label=label,
                        torch=_needs_torch(model_file, settings.runtime),
                        memory_limit=memory_limit)


def _needs_torch(model_file: str, runtime: str) -> bool:
    """Whether the measurement process must import torch: the runtime needs it, or the model is
    a script (whose model is built with torch)."""
    from mlprof.runtimes import runtime_info

    return (runtime_info(runtime).needs_torch
            or model_file.split("::")[0].lower().endswith(".py"))
