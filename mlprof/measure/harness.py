"""The timing harness: one model, one runtime, one batch size.

What is timed and what is not:

- inputs are built once, before the session exists (never timed);
- session creation is timed once (``session_creation_ms``);
- a compiling runtime compiles before the first call (``compile_s``, and ``compile_cache``:
  whether the store's cache had the compiled code, :meth:`Runtime.compile
  <mlprof.runtimes.base.Runtime.compile>`), never part of the samples nor of the first call;
- the first call is timed alone (``first_call_ms``) and never part of the samples;
- ``warmup`` further calls are made untimed;
- each sample is exactly one runtime call (``session.run``), timed with
  ``time.perf_counter_ns`` around it and nothing else, into a preallocated list;
- events are measured in turn, ``n_calls`` calls each; with ``min_duration`` further rounds of
  ``n_calls`` calls per event follow until that many seconds of measuring are reached;
- an event's calls run in blocks of about :data:`BLOCK_S` seconds (sized from the calls before);
  between two blocks, never inside one, the harness reads the clock and reports progress: calls
  made, seconds elapsed and an estimate of the seconds left (:mod:`mlprof.progress`).

:func:`measure` runs in the current process; :func:`measure_isolated` runs it in a child process
with a timeout (see :mod:`mlprof.measure.isolate`).
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlprof.errors import MeasurementFailed, MLProfError, is_out_of_memory, out_of_memory_text
from mlprof.measure.provenance import library_versions as _library_versions  # noqa: F401
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
        n = len(self.samples_ns)
        if len(self.events) != n or len(self.calls) != n:
            raise ValueError(f"{n} samples, {len(self.events)} events, {len(self.calls)} calls")
        # one %-format of all rows: half the time of a formatted line per row (7 vs 15 ms for
        # 27,000 rows here); the same text
        cells: list[Any] = [None] * (3 * n)
        cells[0::3] = self.events.tolist()
        cells[1::3] = self.calls.tolist()
        cells[2::3] = (self.samples_ns / 1e6).tolist()
        return "batch_size,event,call,runtime_ms\n" + \
            (f"{int(self.batch_size)},%d,%d,%.6f\n" * n) % tuple(cells)


#: the calls of an event run in blocks of about this many seconds; between two blocks (never
#: inside one) the harness reads the clock and reports progress (see mlprof.progress)
BLOCK_S = 0.25


def _timed_block(fn: Callable[..., Any], args: tuple, buf: list[int], start: int,
                 count: int) -> None:
    """The timed loop: ``count`` calls of ``fn(*args)``, each one sample in ``buf``."""
    pc = time.perf_counter_ns
    for k in range(start, start + count):
        t0 = pc()
        fn(*args)
        buf[k] = pc() - t0


def _block_calls(elapsed_ns: float, calls: int) -> int:
    """How many calls make a block of about :data:`BLOCK_S` seconds, when ``calls`` calls took
    ``elapsed_ns``."""
    return max(1, int(BLOCK_S * 1e9 * calls / max(elapsed_ns, 1.0)))


def _calls(n: int) -> str:
    """``1 call``, ``1234 calls``."""
    return f"{n} call" if n == 1 else f"{n} calls"


def _rounds_needed(per_call_ns: float, per_round: int, min_ns: int, started: int) -> int:
    """Rounds the timed loop will make at ``per_call_ns`` per call: whole rounds until
    ``min_ns`` are reached, at least ``started`` (the rounds begun so far)."""
    round_ns = per_call_ns * per_round
    return max(started, 1, int(-(-min_ns // round_ns)) if round_ns > 0 else 1)


def first_call_error(exc: BaseException, rt: Any, batch_size: int,
                     spec_file: str) -> MLProfError:
    """The one-line error for a failed first call of a session (the harness's and the load
    scenarios'): out of memory (status ``oom``), else the runtime's own explanation
    (``explain_failure``: a graph with a fixed batch dimension says so), else the error's
    first line."""
    if is_out_of_memory(exc):
        return MeasurementFailed(f"out of memory at batch size {batch_size}: "
                                 f"{out_of_memory_text(exc)}", spec_file, status="oom")
    explain = getattr(rt, "explain_failure", None)
    if explain is not None:
        return MLProfError(explain(exc, batch_size), spec_file)
    text = str(exc).strip()
    return MLProfError(f"first inference at batch size {batch_size} failed: "
                       f"{text.splitlines()[0][:300] if text else type(exc).__name__}",
                       spec_file)


def measure(model_file: str, settings: MeasureSettings, script_args: tuple[str, ...] = (),
            progress: ProgressFn | None = None, reference_file: str | None = None
            ) -> MeasureResult:
    """Measure ``model_file`` with ``settings`` in this process and return the samples.

    ``model_file`` is a YAML or ONNX file for onnxruntime, a model script (``script.py`` or
    ``script.py::HASH``, run with ``script_args``) for the torch runtimes.

    ``progress(fraction, message)`` hears what the measurement does (``creating the session``,
    ``compiling with torch.compile``, ``1234 calls, 12.3 s elapsed, ~3.2 s
    left``) at least every :data:`mlprof.progress.STALL` seconds, from between blocks of
    timed calls or, during a longer call, from a watcher thread (:class:`Progress`).

    ``reference_file``: at a precision other than fp32, the fp32 model whose outputs on the
    first event's inputs the measured model's are compared with, after the timed calls
    (:func:`mlprof.model.precision.output_error`, recorded under ``precision`` in the
    provenance).
    """
    from mlprof.measure.causes import loop_drift_pct
    from mlprof.measure.contention import environment
    from mlprof.measure.inputs import make_feeds
    from mlprof.measure.provenance import measurement_header
    from mlprof.progress import Progress
    from mlprof.runtimes import get_runtime

    started = _dt.datetime.now(_dt.timezone.utc)
    s = settings.validated()
    runtime_cls = get_runtime(s.runtime)
    reporting = progress is not None
    pc = time.perf_counter_ns
    with Progress(progress) as rep:
        rep.phase("loading the model")
        resolved = runtime_cls.resolve(model_file, tuple(script_args))
        spec = resolved.spec
        rt = runtime_cls(resolved, device=s.device, threads=s.threads)
        rt.configure(s)

        feeds = make_feeds(resolved.inputs, s.batch_size, s.n_events, s.input_data, s.seed)

        rep.phase("creating the session")
        started_unix = time.time()
        t0 = pc()
        rt.load(s.batch_size)
        session_ns = pc() - t0
        calls = [rt.bind(feed) for feed in feeds]

        compiled, first_ns = _first_call(rt, calls[0], s, spec.spec_file, rep)

        n_calls = s.n_calls
        per_round = len(calls) * n_calls
        min_ns = int(s.min_duration * 1e9)
        warmup_ns, block = _warm_up(calls, s.warmup, first_ns, per_round, min_ns, rep,
                                    reporting)
        loop = _timed_rounds(calls, n_calls, min_ns, block, rep, reporting)
        finished_unix = time.time()
        precision: dict[str, Any] = {"precision": s.precision}
        if reference_file and s.precision != "fp32":
            rep.phase("comparing the outputs with fp32")
            precision["error"] = _error_vs_fp32(runtime_cls, rt, reference_file, feeds[0], s,
                                                tuple(script_args))
            precision["reference_file"] = reference_file
        rep.phase(f"{_calls(loop.calls)} measured", 1.0)

    samples = np.asarray(loop.buf, dtype=np.int64)
    ev, call = _sample_index(samples.size, per_round, n_calls)

    header = measurement_header(
        started=started, runtime=s.runtime, runtime_version=runtime_cls.version(),
        device=s.device, threads=s.threads, runtime_settings=rt.info(), precision=precision,
        model=_model_record(resolved, s.batch_size),
        settings=s, events_per_call=events_in_call(s.batch_size, resolved.inputs),
        # what else used the CPUs during the timed loop: mlprof.measure.contention
        environment=environment(loop.cpu_before, loop.cpu_after,
                                loop_drift_pct=loop_drift_pct(samples)))
    prov = {
        # the versions, the machine, the model, the settings, the environment, the process
        # (the process that started this measurement, parent_pid: the measurement server
        # (forkserver) when isolated, one for all measurements of a run, also under --workers)
        **header.to_json(),
        "session_creation_ms": session_ns / 1e6,
        "first_call_ms": first_ns / 1e6,
        # what compiling took and whether the store's cache had it (compiling runtimes only)
        **({"compile_s": compiled.seconds, "compile_cache": compiled.cache}
           if compiled is not None else {}),
        "warmup_ms": warmup_ns / 1e6,
        "n_samples": int(samples.size),
        "rounds": loop.rounds,
        "loop_wall_s": loop.loop_ns / 1e9,
        "timed_sum_s": float(samples.sum()) / 1e9,
        # wall-clock span from session creation to the last timed call
        "started_unix": started_unix,
        "finished_unix": finished_unix,
    }
    return MeasureResult(s.batch_size, samples, ev, call, prov)


def _first_call(rt: Any, call: tuple[Callable[..., Any], tuple], s: MeasureSettings,
                spec_file: str, rep: Any) -> tuple[Any, int]:
    """``(compiled, first call ns)``: a compiling runtime compiles with the first event's call
    here, before the timed first call, and says what it took and whether its cache in the
    store had it (``compiled``; None for other runtimes); then the first call, timed alone. A
    failure of either is one clear line (:func:`first_call_error`)."""
    from mlprof.runtimes import runtime_info

    compiler = runtime_info(s.runtime).compiler
    fn, args = call
    if compiler and not rt.announces_compile:
        rep.phase(f"compiling with {compiler}")
    try:
        compiled = rt.compile(fn, args, phase=rep.phase)
    except Exception as e:
        raise first_call_error(e, rt, s.batch_size, spec_file) from None
    rep.phase("first call", now=False)  # reported if it lasts: Progress.phase
    t0 = time.perf_counter_ns()
    try:
        fn(*args)
    except Exception as e:  # the runtime's own error, made one clear line
        raise first_call_error(e, rt, s.batch_size, spec_file) from None
    return compiled, time.perf_counter_ns() - t0


def _warm_up(calls: list[tuple[Callable[..., Any], tuple]], warmup: int, first_ns: int,
             per_round: int, min_ns: int, rep: Any, reporting: bool) -> tuple[int, int]:
    """The untimed warm-up calls (events in turn), in blocks as the timed loop, reporting in
    between; ``(warm-up ns, the first timed block's calls)``."""
    pc = time.perf_counter_ns
    n_ev = len(calls)
    if warmup:
        rep.phase(f"warm-up: 0 of {warmup} calls")
    block = _block_calls(first_ns, 1)
    w = 0
    t0 = pc()
    while w < warmup:
        count = min(block, warmup - w)
        for i in range(w, w + count):
            fn, args = calls[i % n_ev]
            fn(*args)
        w += count
        now = pc()
        block = _block_calls(now - t0, w)
        if reporting:
            per_call = (now - t0) / w
            left_ns = ((warmup - w) * per_call
                       + _rounds_needed(per_call, per_round, min_ns, 1) * per_round
                       * per_call)
            rep.update(f"warm-up: {w} of {warmup} calls", left_ns / 1e9)
    warmup_ns = pc() - t0
    if warmup:
        block = _block_calls(warmup_ns, warmup)
    return warmup_ns, block


@dataclass
class _Loop:
    """What the timed rounds left: the samples (ns, in call order), the rounds, the calls,
    the loop's wall time and the CPU counters around it."""

    buf: list[int]
    rounds: int
    calls: int
    loop_ns: int
    cpu_before: Any
    cpu_after: Any


def _timed_rounds(calls: list[tuple[Callable[..., Any], tuple]], n_calls: int, min_ns: int,
                  block: int, rep: Any, reporting: bool) -> _Loop:
    """The timed rounds: each round makes ``n_calls`` calls per event, in blocks of about
    :data:`BLOCK_S` seconds (:func:`_timed_block`), until a round ends after ``min_ns``.

    Between two blocks (never inside one) the clock is read and progress reported; the CPU
    counters are read around the loop, never inside it (:mod:`mlprof.measure.contention`),
    and Python's GC pauses inside it are counted (:mod:`mlprof.measure.causes`). Moved out of
    :func:`measure` as it was (benchmarks/fidelity.py: the harness's medians within 1 % of a
    bare loop's, before and after)."""
    from mlprof.measure.causes import gc_watch
    from mlprof.measure.contention import snapshot

    pc = time.perf_counter_ns
    rep.phase("measuring")
    per_round = len(calls) * n_calls
    buf: list[int] = []
    rounds = 0
    k = 0  # calls made (the next sample's index)
    gc_pauses = gc_watch()
    cpu_before = snapshot()
    loop_start = mark = pc()
    while True:
        buf.extend([0] * per_round)
        for fn, args in calls:
            end = k + n_calls
            while k < end:
                count = min(block, end - k)
                _timed_block(fn, args, buf, k, count)
                k += count
                now = pc()
                block = _block_calls(now - mark, count)
                mark = now
                if reporting:
                    loop_ns = now - loop_start
                    per_call = loop_ns / k
                    need = _rounds_needed(per_call, per_round, min_ns, rounds + 1)
                    left_ns = (need * per_round - k) * per_call
                    rep.update(_calls(k), left_ns / 1e9, loop_ns / (loop_ns + left_ns))
        rounds += 1
        if mark - loop_start >= min_ns:
            break
    loop_ns = pc() - loop_start
    cpu_after = snapshot()
    gc_pauses.stop()
    return _Loop(buf, rounds, k, loop_ns, cpu_before, cpu_after)


def _sample_index(n: int, per_round: int, n_calls: int) -> tuple[np.ndarray, np.ndarray]:
    """(event, call) of each of ``n`` samples in call order: a round is ``n_calls`` calls of
    each event in turn; a call counts on across rounds."""
    idx = np.arange(n)
    rnd, rem = np.divmod(idx, per_round)
    ev, call = np.divmod(rem, n_calls)
    return ev.astype(np.int64), (call + rnd * n_calls).astype(np.int64)


def _model_record(resolved: Any, batch_size: int) -> dict[str, Any]:
    """The ``model`` of a measurement's header: the files, their hashes, and the inputs as
    fed at ``batch_size``."""
    spec = resolved.spec
    return {
        "name": spec.name, "label": spec.label, "version": spec.version,
        "spec_file": spec.spec_file, "file": spec.file,
        "file_sha256": spec.model_sha256(), "content_hash": spec.content_hash,
        "opset": resolved.opset, "fixed_batch": resolved.fixed_batch,
        "inputs": [{"name": i.name, "shape": list(i.full_shape(batch_size)),
                    "dtype": i.dtype} for i in resolved.inputs],
        "outputs": resolved.outputs,
        "notes": resolved.notes,
    }


def _error_vs_fp32(runtime_cls: Any, rt: Any, reference_file: str, feed: dict, s: Any,
                   script_args: tuple[str, ...]) -> dict[str, Any]:
    """The measured model's error against its fp32 reference on ``feed``, both run by the same
    runtime (a session of the reference is made for this, after the timed calls)."""
    from dataclasses import replace

    from mlprof.model.precision import as_arrays, output_error

    fn, args = rt.bind(feed)
    got = as_arrays(fn(*args))
    ref_rt = runtime_cls(runtime_cls.resolve(reference_file, script_args), device=s.device,
                         threads=s.threads)
    ref_rt.configure(replace(s, precision="fp32"))
    ref_rt.load(s.batch_size)
    rfn, rargs = ref_rt.bind(feed)
    return output_error(as_arrays(rfn(*rargs)), got)


def measure_isolated(model_file: str, settings: MeasureSettings, *,
                     script_args: tuple[str, ...] = (), timeout: float | None = None,
                     progress: ProgressFn | None = None,
                     memory_limit: float | None = None,
                     reference_file: str | None = None, reuse: bool = False) -> MeasureResult:
    """Like :func:`measure`, in a child process that is killed after ``timeout`` seconds or
    above ``memory_limit`` MB of resident memory.

    ``timeout`` defaults to ``$MLP_TIMEOUT`` (600 s), ``memory_limit`` to ``$MLP_MEMORY_LIMIT``
    (80 % of the machine's memory). Crashes, hangs, memory exhaustion and errors in the child
    raise :class:`mlprof.errors.MeasurementFailed` (``status`` ``failed``, ``timeout`` or
    ``oom``) / :class:`MLProfError` with a clear message.

    The whole measurement holds the machine-wide measurement lock
    (:func:`mlprof.measure.lock.measurement_lock`): it first waits, saying so in the log, while
    another mlprof process measures; the time waited is recorded as ``lock_wait_s`` in the
    provenance (None with ``MLP_NO_LOCK=1``) and is not part of ``timeout``.

    ``reuse``: where the runtime allows it (:attr:`RuntimeInfo.reuses_process
    <mlprof.runtimes.RuntimeInfo.reuses_process>`) and ``MLP_FRESH_PROCESS`` does not forbid
    it, the next call for the same model, runtime and settings but the batch size runs in
    the same measurement process (:func:`~mlprof.measure.isolate.run_isolated`'s ``reuse``;
    ``earlier_in_process`` in the provenance counts the measurements it ran before).
    """
    from mlprof.measure.isolate import run_isolated
    from mlprof.measure.lock import measurement_lock

    label = f"{os.path.basename(model_file)} at batch size {settings.batch_size}"
    torch = _needs_torch(model_file, settings.runtime)
    key = None
    if reuse and reuses_process(settings.runtime):
        s = settings
        key = ("measure", model_file, tuple(script_args), reference_file, torch, s.runtime,
               s.device, s.threads, s.precision)
    with measurement_lock(label) as lock:
        result = run_isolated(measure, {"model_file": model_file, "settings": settings,
                                        "script_args": tuple(script_args),
                                        "reference_file": reference_file},
                              timeout=timeout, progress=progress, label=label, torch=torch,
                              memory_limit=memory_limit, reuse=key)
    result.provenance["lock_wait_s"] = lock.wait_s
    return result


def events_in_call(batch_size: int, inputs: Any) -> int:
    """The events one call processes: the batch size, or 1 when no input has a batch dimension
    (every batch size then measures the model's own shapes); throughputs and times per event
    divide by it. ``inputs``: the resolved model's input specs (their ``batched`` flags)."""
    return batch_size if any(i.batched for i in inputs) else 1


def reuses_process(runtime: str) -> bool:
    """Whether measurements on ``runtime`` may share a measurement process (its
    :attr:`~mlprof.runtimes.RuntimeInfo.reuses_process`), unless ``MLP_FRESH_PROCESS`` asks
    for a new process for every measurement (``1``, ``true``, ``yes``, ``on``)."""
    from mlprof.measure.settings import fresh_process
    from mlprof.runtimes import runtime_info

    return runtime_info(runtime).reuses_process and not fresh_process()


def _needs_torch(model_file: str, runtime: str) -> bool:
    """Whether the measurement process must import torch: the runtime needs it, or the model is
    a script (whose model is built with torch)."""
    from mlprof.runtimes import runtime_info

    return (runtime_info(runtime).needs_torch
            or model_file.split("::")[0].lower().endswith(".py"))
