"""How much one node delivers: concurrent streams, and a server with random arrivals (no law).

Two scenarios, MLPerf's names in brackets:

* **streams** (MultiStream, as a CMSSW job with N streams): ``streams`` callers at once, each
  calling the model back to back at one batch size and timing each call; threads of one
  process, each with its own session (``sessions="each"``) or all sharing one
  (``"shared"``, CMSSW's way: one ONNX Runtime session per job), or processes, each with its
  own session (``"process"``). Every runtime mlprof measures releases the GIL inside its
  call (ONNX Runtime, OpenVINO, PyTorch, TensorFlow), so threads' calls overlap; what they
  cannot overlap is the Python around each call, and each hand-over of the GIL wakes a
  sleeping thread. For the example DNN (17 us calls on this 2-core VM) 2 threads delivered
  41,000 events/s against one thread's 53,000; processes have no GIL between them, as
  CMSSW's streams (C++ threads) have none.
  Throughput is the sum of each stream's calls over its own timed span (no tail is counted
  twice), the CPU time is the process's (every thread's) over the timed window.

* **server** (Server): requests of one batch-size-``b`` input arrive at Poisson times at a
  target rate (open loop: an arrival never waits for an answer). ``workers`` instances take
  them from one queue; with ``max_batch`` > 1 a worker waits up to ``max_wait_ms`` after the
  oldest queued request for more and runs them as one call (TF Serving's and Triton's dynamic
  batching), padded to the next allowed size (powers of two up to ``max_batch``, and
  ``max_batch``: each is its own session, loaded before the clock starts).
  A request's latency runs from its *scheduled* arrival, never from when it was picked up (no
  coordinated omission). The arrival times are drawn before the run, so there is no generator
  thread: the worker forming a batch sleeps until the next due time, and how late it wakes is
  recorded as the generator's lateness (``lateness_us``).

  A point's verdict follows MLPerf LoadGen's early-stopping idea: with ``n`` requests of which
  ``k`` took longer than the bound, the percentile is *met* when ``P(Bin(n, q) <= k) <= 1 -
  confidence`` (``q = 1 - percentile/100``), *missed* when ``P(Bin(n, q) >= k) <= 1 -
  confidence``, else *undecided* (counted as not met). At p99 and 99 % confidence a point
  needs at least 459 requests to be met at all (:func:`min_requests`). :func:`search` looks for
  the highest rate that is met, doubling up and halving down to bracket it, then bisecting on
  a log scale to ``tolerance``; the points inside the bracket plan :data:`DECISIVE_FACTOR`
  times as many requests, since a server's overs come in clumps.

Why not MLCommons LoadGen itself: LoadGen issues each query from its own C++ thread into a
Python callback, so a Python server pays the GIL hand-over per query on top of LoadGen's own
cost; with arrival times drawn in advance the worker that would pick the query up is the one
that waits for it, which removes a thread and a hand-over per request. The lateness of that
wake-up is measured and written with every point.

:func:`measure_load_isolated` runs a point (or a search) in a child process under the
machine-wide measurement lock, as the harness does; the lock covers the whole point.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as _dt
import io
import math
import os
import pickle
import resource
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.settings import MeasureSettings

#: scenarios of MeasureLoad
SCENARIOS = ("streams", "server")
#: how streams get their sessions
SESSIONS = ("each", "shared", "process")
#: at most this many streams or server workers (each holds a session and a thread)
MAX_STREAMS = 64
#: request rates (per second) a server point may ask for
MAX_RATE = 1_000_000.0
#: latency bounds (ms) a search may ask for
MAX_BOUND_MS = 60_000.0
#: percentiles a search may ask for (above 99.99 no run of this tool's length can claim one)
PERCENTILE_RANGE = (50.0, 99.99)
#: dynamic batching: at most this many requests per call, waiting at most this long (ms)
MAX_BATCH = 1024
MAX_WAIT_MS = 1000.0
#: at most this many requests per server point, calls per stream (memory: 40 bytes each)
MAX_REQUESTS = 1_000_000
#: the confidence of a verdict (MLPerf's early stopping uses 99 %)
CONFIDENCE = 0.99
#: a server point ends after this many seconds (or twice its planned requests' time) even if
#: undecided: a search that goes down to low rates must not take hours
MAX_POINT_S = 120.0
#: a search stops bisecting when the highest met and lowest missed rate are this close
TOLERANCE = 0.05
#: and after this many points in all
MAX_POINTS = 16
#: once a met and a missed rate bracket the answer, each point of the search plans this many
#: times the requests its percentile needs at least (459 -> 1,836 at p99). A server's overs
#: come in clumps, one per long busy period: ResNet-18 near its answer had 25 overs in 6
#: clumps of up to 10 in 4,200 requests. With 459 requests a point is met only with no over at
#: all, so one busy period decides it; with 1,836 it is met with up to 8 overs, a few clumps.
#: ResNet-18 at p99 <= 100 ms, four searches each, interleaved: factor 1 answered 49.6-73.3
#: events/s at a load (rate x mean call) of 0.51-0.80, factor 4 68.4-80.2 at 0.70-0.77
#: (``benchmarks/load_search.py --factors 1,4``; docs/load.md "How well it holds")
DECISIVE_FACTOR = 4

#: the GIL's switch interval while serving (s): see :func:`serve`
SWITCH_INTERVAL_S = 2e-5

#: the columns of a streams point's CSV (one row per timed call)
STREAM_COLUMNS = ("stream", "call", "start_ms", "latency_ms", "events")
#: the columns of a server point's CSV (one row per completed request)
#: (``point``: the index of the point in the record's ``points``; a search can measure a rate
#: twice, see :func:`search`)
SERVER_COLUMNS = ("point", "rate", "request", "arrival_ms", "start_ms", "end_ms", "latency_ms",
                  "batch")
#: what a load record's summary must hold per point
POINT_FIELDS = ("events_per_s", "p50_ms", "p99_ms")


def _positive(value: float, field_: str, upper: float, unit: str = "") -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise MLProfError(f"not a number: {value!r}", field=field_) from None
    if not math.isfinite(v) or v <= 0:
        raise MLProfError(f"must be > 0{unit}, got {value}", field=field_)
    if v > upper:
        raise MLProfError(f"must be at most {upper:g}{unit}, got {value}", field=field_)
    return v


def check_streams(streams: Sequence[int], field_: str = "--streams") -> tuple[int, ...]:
    """The stream (or worker) counts, each 1 to :data:`MAX_STREAMS`, without repeats."""
    out = []
    for s in streams:
        if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= MAX_STREAMS:
            raise MLProfError(f"must be whole numbers from 1 to {MAX_STREAMS}, got {s}",
                              field=field_)
        if s not in out:
            out.append(s)
    if not out:
        raise MLProfError("give at least one", field=field_)
    return tuple(out)


def check_rates(rates: Sequence[float]) -> tuple[float, ...]:
    """Request rates per second, each > 0 and at most :data:`MAX_RATE`."""
    return tuple(_positive(r, "--rates", MAX_RATE, "/s") for r in rates)


def check_bound(bound_ms: float) -> float:
    """A latency bound in ms: > 0 and at most :data:`MAX_BOUND_MS`."""
    return _positive(bound_ms, "--latency-bound-ms", MAX_BOUND_MS, " ms")


def check_percentile(p: float) -> float:
    """A percentile within :data:`PERCENTILE_RANGE`."""
    lo, hi = PERCENTILE_RANGE
    try:
        v = float(p)
    except (TypeError, ValueError):
        raise MLProfError(f"not a number: {p!r}", field="--percentile") from None
    if not (math.isfinite(v) and lo <= v <= hi):
        raise MLProfError(f"must be from {lo:g} to {hi:g}, got {p}", field="--percentile")
    return v


def check_batching(max_batch: int, max_wait_ms: float) -> tuple[int, float]:
    """Dynamic batching: ``max_batch`` 1 to :data:`MAX_BATCH`, ``max_wait_ms`` 0 to
    :data:`MAX_WAIT_MS` (0 with ``max_batch`` 1: no batching)."""
    if isinstance(max_batch, bool) or not isinstance(max_batch, int) or \
            not 1 <= max_batch <= MAX_BATCH:
        raise MLProfError(f"must be 1 to {MAX_BATCH}, got {max_batch}", field="--max-batch")
    try:
        w = float(max_wait_ms)
    except (TypeError, ValueError):
        raise MLProfError(f"not a number: {max_wait_ms!r}", field="--max-wait-ms") from None
    if not (math.isfinite(w) and 0 <= w <= MAX_WAIT_MS):
        raise MLProfError(f"must be 0 to {MAX_WAIT_MS:g} ms, got {max_wait_ms}",
                          field="--max-wait-ms")
    return max_batch, w


def allowed_batches(max_batch: int) -> list[int]:
    """The call sizes a dynamic batch is padded to: powers of two below ``max_batch``, and
    ``max_batch`` (TF Serving's ``allowed_batch_sizes``)."""
    out = [1]
    while out[-1] * 2 < max_batch:
        out.append(out[-1] * 2)
    if max_batch > 1:
        out.append(max_batch)
    return out


# --- the verdict ---------------------------------------------------------------------------------


def _log_binom_pmf(k: int, n: int, q: float) -> float:
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(q) + (n - k) * math.log1p(-q))


def _tail(k: int, n: int, q: float, step: int) -> float:
    """The binomial probabilities from ``k`` away from the mode (``step`` -1: down to 0, +1: up
    to ``n``), summed until a term no longer changes the sum: each term is the last one times
    a ratio below 1 there, so a few dozen terms do where the plain sum took up to ``n``."""
    term = math.exp(_log_binom_pmf(k, n, q))
    total, i = 0.0, k
    while 0 <= i <= n and term > 0.0:
        total += term
        if term < total * 1e-17:
            break
        term *= ((n - i) / (i + 1) * q / (1 - q)) if step > 0 else (i / (n - i + 1) * (1 - q) / q)
        i += step
    return total


def binom_cdf(k: int, n: int, q: float) -> float:
    """``P(Bin(n, q) <= k)``, from the smaller tail.

    Why not the plain sum: the server's stop rule evaluates this every 32 requests inside a
    worker, at ``n`` up to four times the planned requests; summing up to ``n`` log-space
    terms took milliseconds there, time the requests waiting behind it were charged."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if k <= n * q:
        return min(1.0, _tail(k, n, q, -1))
    return max(0.0, 1.0 - _tail(k + 1, n, q, +1))


def verdict(n: int, overs: int, percentile: float, confidence: float = CONFIDENCE) -> str:
    """``met``, ``missed`` or ``undecided``: whether ``n`` requests of which ``overs`` exceeded
    the bound show, at ``confidence``, that the ``percentile`` stays under it (see the module
    docstring)."""
    q = 1.0 - percentile / 100.0
    alpha = 1.0 - confidence
    if n <= 0:
        return "undecided"
    if binom_cdf(overs, n, q) <= alpha:
        return "met"
    if 1.0 - binom_cdf(overs - 1, n, q) <= alpha:
        return "missed"
    return "undecided"


def min_requests(percentile: float, confidence: float = CONFIDENCE) -> int:
    """The fewest requests that can show ``percentile`` met (none of them over the bound):
    ``ceil(log(1 - confidence) / log(percentile/100))``; 459 at p99 and 99 %."""
    return int(math.ceil(math.log(1.0 - confidence) / math.log(percentile / 100.0) - 1e-9))


# --- results -------------------------------------------------------------------------------------


@dataclass
class LoadResult:
    """One MeasureLoad branch: the rows of its CSV, the points' summaries and the provenance."""

    columns: tuple[str, ...]
    rows: dict[str, np.ndarray]
    points: list[dict[str, Any]]
    provenance: dict[str, Any] = field(default_factory=dict)

    def csv_text(self) -> str:
        """The rows as CSV text (times in ms with microsecond resolution)."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(self.columns)
        cols = [self.rows[c] for c in self.columns]
        for values in zip(*cols, strict=True):
            w.writerow([f"{v:.4f}" if isinstance(v, float | np.floating) else int(v)
                        for v in values])
        return out.getvalue()


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


# --- the model side ------------------------------------------------------------------------------


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
                rt: Any = None) -> None:
    """The first call of a session; its failure is one line
    (:func:`mlprof.measure.harness.first_call_error`, as the harness's)."""
    from mlprof.measure.harness import first_call_error

    try:
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


# --- streams -------------------------------------------------------------------------------------


def run_streams(calls: Sequence[tuple[Callable[..., Any], tuple]], duration_s: float,
                min_calls: int, warmup: int, events: int, max_calls: int = MAX_REQUESTS,
                thread_context: Callable[[], Any] = contextlib.nullcontext
                ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Call each of ``calls`` (one per stream) back to back in its own thread, all starting
    together after ``warmup`` untimed calls each, until ``duration_s`` have passed and each made
    ``min_calls`` (at most ``max_calls``); the CSV rows and the point's summary.
    ``thread_context()`` is entered in each stream's thread (the runtime's
    :meth:`~mlprof.runtimes.base.Runtime.thread_context`)."""
    pc = time.perf_counter_ns
    n = len(calls)
    barrier = threading.Barrier(n + 1)
    starts: list[list[int]] = [[] for _ in range(n)]
    ends: list[list[int]] = [[] for _ in range(n)]
    errors: list[BaseException] = []
    t0_box: list[int] = []

    def worker(i: int) -> None:
        with thread_context():
            run(i)

    def run(i: int) -> None:
        fn, args = calls[i]
        try:
            for _ in range(warmup):
                fn(*args)
        except BaseException as e:  # reported by the caller, after the barrier
            errors.append(e)
        barrier.wait()
        if errors:
            return
        deadline = t0_box[0] + int(duration_s * 1e9)
        st, en = starts[i], ends[i]
        k = 0
        try:
            while k < max_calls:
                a = pc()
                fn(*args)
                b = pc()
                st.append(a)
                en.append(b)
                k += 1
                if b >= deadline and k >= min_calls:
                    break
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    from mlprof.measure.contention import environment, snapshot

    before = snapshot()
    cpu0 = _cpu_s()
    t0_box.append(pc())
    barrier.wait()
    for t in threads:
        t.join()
    wall_s = (pc() - t0_box[0]) / 1e9
    cpu_s = _cpu_s() - cpu0
    after = snapshot()
    if errors:
        raise MLProfError(f"a stream's call failed: {errors[0]}")
    return _streams_summary(starts, ends, t0_box[0], events, wall_s, cpu_s,
                            environment(before, after))


def _streams_summary(starts: Sequence[Sequence[int]], ends: Sequence[Sequence[int]], t0: int,
                     events: int, wall_s: float, cpu_s: float, env: dict[str, Any]
                     ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The CSV rows and the summary of a streams point from each stream's call start and end
    times (``perf_counter_ns``; ``t0``: when they were let go)."""
    n = len(starts)
    rows: dict[str, list] = {c: [] for c in STREAM_COLUMNS}
    per_stream = []
    rate = 0.0
    for i in range(n):
        s = np.asarray(starts[i], dtype=np.int64)
        e = np.asarray(ends[i], dtype=np.int64)
        lat = (e - s) / 1e6
        span_s = (e[-1] - t0) / 1e9 if e.size else 0.0
        calls_per_s = e.size / span_s if span_s > 0 else 0.0
        rate += calls_per_s
        per_stream.append({"stream": i, "calls": int(e.size), "span_s": span_s,
                           "calls_per_s": calls_per_s, **latency_summary(lat)})
        rows["stream"].append(np.full(e.size, i, dtype=np.int64))
        rows["call"].append(np.arange(e.size, dtype=np.int64))
        rows["start_ms"].append((s - t0) / 1e6)
        rows["latency_ms"].append(lat)
        rows["events"].append(np.full(e.size, events, dtype=np.int64))
    arrays = {c: np.concatenate(v) for c, v in rows.items()}
    lat_all = arrays["latency_ms"]
    n_calls = int(lat_all.size)
    summary = {
        "streams": n, "calls": n_calls, "events": n_calls * events, "wall_s": wall_s,
        "calls_per_s": rate, "events_per_s": rate * events,
        "cpu_s": cpu_s, "cores_used": cpu_s / wall_s if wall_s > 0 else None,
        # events per CPU-second: what a core of this node delivers at this load
        "events_per_cpu_s": n_calls * events / cpu_s if cpu_s > 0 else None,
        **latency_summary(lat_all), "per_stream": per_stream,
        "environment": env,
    }
    return arrays, summary


def _stream_child() -> None:
    """One stream as a process of its own (``--sessions process``), run as ``python -c``.

    Reads its arguments (a pickle) from stdin, opens the model, makes its first call and the
    warm-up calls, reports ``ready``; reads ``t0`` and calls back to back until
    ``t0 + duration`` and ``min_calls``; reports its call times and the CPU time of its timed
    calls. The protocol runs over a copy of stdout; the model's own prints go to stderr.
    """
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    try:
        a = pickle.load(inp)
        m = _open(a["model_file"], a["settings"], a["script_args"])
        bs = m.settings.batch_size
        rt = m.session(bs)
        fn, args = m.call(rt, bs, a["index"] % m.settings.n_events)
        _first_call(fn, args, m.resolved.spec.spec_file, bs, rt)
        with m.runtime_cls.thread_context():
            for _ in range(a["warmup"]):
                fn(*args)
            pickle.dump(("ready", rt.info()), out)
            out.flush()
            t0 = pickle.load(inp)
            pc = time.perf_counter_ns
            deadline = t0 + int(a["duration_s"] * 1e9)
            st: list[int] = []
            en: list[int] = []
            cpu0 = _cpu_s()
            while len(en) < a["max_calls"]:
                x = pc()
                fn(*args)
                y = pc()
                st.append(x)
                en.append(y)
                if y >= deadline and len(en) >= a["min_calls"]:
                    break
            cpu = _cpu_s() - cpu0
        pickle.dump(("done", (st, en, cpu)), out)
    except BaseException as e:  # the parent raises it, in one line
        pickle.dump(("error", str(e) if isinstance(e, MLProfError) else
                     f"{type(e).__name__}: {e}"), out)
    out.flush()


def run_stream_processes(model_file: str, settings: MeasureSettings,
                         script_args: tuple[str, ...], streams: int, events: int,
                         max_calls: int = MAX_REQUESTS
                         ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``streams`` processes, each with its own session, calling back to back for
    ``settings.min_duration`` s (at least ``settings.n_calls`` calls each), let go together
    after their warm-up: no GIL between them, as CMSSW's streams (C++ threads). The CSV rows
    and the point's summary, as :func:`run_streams`'s; the CPU time is each process's own
    during its timed calls. A failing process fails the point in one line; every process is
    ended before this returns."""
    import subprocess

    from mlprof.measure.contention import environment, snapshot

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]))
    code = "from mlprof.measure.load import _stream_child; _stream_child()"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env) for _ in range(streams)]
    try:
        def reply(p: subprocess.Popen) -> Any:
            assert p.stdout is not None
            try:
                kind, value = pickle.load(p.stdout)
            except (EOFError, pickle.UnpicklingError):
                raise MLProfError(f"a stream's process ended (exit code {p.wait()})",
                                  model_file) from None
            if kind == "error":
                raise MLProfError(f"a stream's process failed: {value}", model_file)
            return value

        for i, p in enumerate(procs):
            assert p.stdin is not None
            pickle.dump({"model_file": model_file, "settings": settings,
                         "script_args": tuple(script_args), "index": i,
                         "warmup": settings.warmup, "duration_s": settings.min_duration,
                         "min_calls": settings.n_calls, "max_calls": max_calls}, p.stdin)
            p.stdin.flush()
        infos = [reply(p) for p in procs]  # ready: each with its session's settings
        before = snapshot()
        pc = time.perf_counter_ns
        t0 = pc()
        for p in procs:
            assert p.stdin is not None
            pickle.dump(t0, p.stdin)
            p.stdin.flush()
        done = [reply(p) for p in procs]
        wall_s = (pc() - t0) / 1e9
        after = snapshot()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    rows, summary = _streams_summary([d[0] for d in done], [d[1] for d in done], t0, events,
                                     wall_s, sum(d[2] for d in done),
                                     environment(before, after))
    summary["runtime_settings"] = infos[0] if infos else {}
    return rows, summary


def measure_streams(model_file: str, settings: MeasureSettings, streams: int,
                    sessions: str = "each", script_args: tuple[str, ...] = (),
                    progress: Callable[[float, str], None] | None = None) -> LoadResult:
    """The streams scenario at ``streams`` callers and ``settings.batch_size`` per call (in
    this process; :func:`measure_load_isolated` runs it in a child)."""
    from mlprof.measure.harness import events_in_call
    from mlprof.measure.progress import Progress

    check_streams([streams])
    if sessions not in SESSIONS:
        raise MLProfError(f"one of {', '.join(SESSIONS)}, got {sessions!r}", field="--sessions")
    with Progress(progress) as rep:
        rep.phase("loading the model")
        m = _open(model_file, settings, script_args)
        s = m.settings
        bs = s.batch_size
        events = events_in_call(bs, m.resolved.inputs)
        runtime_settings: dict[str, Any] = {}
        if sessions == "process":
            rep.phase(f"{streams} stream process(es) for {s.min_duration:g} s")
            rows, summary = run_stream_processes(model_file, s, tuple(script_args), streams,
                                                 events)
            runtime_settings = summary.pop("runtime_settings")
        else:
            rep.phase(f"creating {1 if sessions == 'shared' else streams} session(s)")
            shared = m.session(bs) if sessions == "shared" else None
            calls = []
            for i in range(streams):
                rt = shared if shared is not None else m.session(bs)
                calls.append(m.call(rt, bs, i % s.n_events))
                _first_call(*calls[-1], m.resolved.spec.spec_file, bs, rt)
            rep.phase(f"{streams} stream(s) for {s.min_duration:g} s")
            rows, summary = run_streams(calls, s.min_duration, s.n_calls, s.warmup, events,
                                        thread_context=m.runtime_cls.thread_context)
        rep.phase(f"{summary['calls']} calls measured", 1.0)
        point = {"scenario": "streams", "streams": streams, "threads": s.threads,
                 "sessions": sessions, "batch_size": bs, **summary}
        prov = _provenance(m, {"scenario": "streams", "streams": streams,
                               "sessions": sessions})
        if runtime_settings:
            prov["runtime_settings"] = runtime_settings
    return LoadResult(STREAM_COLUMNS, rows, [point], prov)


# --- server --------------------------------------------------------------------------------------


def arrivals(rate: float, n: int, seed: int = 0, exact: Sequence[int] = ()) -> np.ndarray:
    """``n`` Poisson arrival times (ns from 0) at ``rate`` per second, drawn with ``seed``.

    ``exact``: increasing request counts (a point's checkpoints; the last at most ``n``) at
    which exactly that many requests have arrived, at exactly ``rate``. The first
    ``exact[0]`` arrivals are then uniform in ``[0, exact[0] / rate)``, sorted, the next ones
    uniform in the next window, and so on: a Poisson process given its count in each window
    (its arrivals in a window are uniform order statistics given their count), so the bursts
    that make queues stay, and only the count's own noise goes. Why: a point's verdict is
    taken after 459 requests at p99; a plain Poisson draw of 459 arrivals runs at its rate
    +-4.7 % (one standard deviation, 1/sqrt(459)), so a search picked the luckiest draw near
    the answer, not the rate. ResNet-18's answer at p99 <= 100 ms (3 runs) spread -10.7 % to
    +9.2 % in events/s with plain draws (docs/load.md has the figures after).
    """
    rng = np.random.default_rng(seed)
    if not exact:
        return np.cumsum(rng.exponential(1e9 / rate, size=n)).astype(np.int64)
    out = np.empty(n, dtype=np.float64)
    lo = 0
    for c in [*(int(c) for c in exact if 0 < c <= n), n]:
        if c <= lo:
            continue
        out[lo:c] = np.sort(rng.uniform(lo, c, size=c - lo)) * (1e9 / rate)
        lo = c
    return out.astype(np.int64)


@dataclass
class _Served:
    """What :func:`serve` did per request (ns from the start; -1: not served) and why it
    stopped."""

    start: np.ndarray
    end: np.ndarray
    batch: np.ndarray
    worker: np.ndarray
    lateness: list[int]
    stopped: str

    def dispatch_gaps_ns(self, arrival_ns: np.ndarray) -> np.ndarray:
        """Per worker, the time from a call's end to its next call's start where a request
        was already waiting: what the server adds to each call (the Python between calls,
        ~6 µs on this machine's CPU-bound calls, ~50-70 µs after a call that slept, whose
        vCPU wakes cold)."""
        out = []
        for w in np.unique(self.worker[self.worker >= 0]):
            idx = np.flatnonzero((self.worker == w) & (self.end >= 0))
            first = idx[np.r_[True, self.start[idx][1:] != self.start[idx][:-1]]]
            first = first[np.argsort(self.start[first])]
            ends, starts = self.end[first][:-1], self.start[first][1:]
            waiting = arrival_ns[first][1:] <= ends
            out.append((starts - ends)[waiting])
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def serve(workers: Sequence[Mapping[int, tuple[Callable[..., Any], tuple]]],
          arrival_ns: np.ndarray, max_batch: int, max_wait_ms: float, *,
          stop: Callable[[int, np.ndarray], str | None] | None = None,
          check_every: int = 32, check_at: Sequence[int] = (),
          thread_context: Callable[[], Any] = contextlib.nullcontext) -> _Served:
    """Serve requests arriving at ``arrival_ns`` (from now) with the ``workers`` (each a map
    from call size to its bound call), batching dynamically; every ``check_every`` completed
    requests, and when the count reaches one of ``check_at`` (a point's checkpoints, so that
    its verdict is of exactly that many), ``stop(done, latencies_ms_so_far)`` may end the run
    (returning why).

    The worker holding the queue's lock forms the next batch: it sleeps until the oldest
    waiting request is due, then, with ``max_batch`` > 1, until ``max_batch`` have arrived or
    ``max_wait_ms`` have passed since the oldest arrived; it takes them, releases the lock and
    runs the call of the smallest allowed size that holds them.
    """
    pc = time.perf_counter_ns
    n = int(arrival_ns.size)
    start = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    batch = np.zeros(n, dtype=np.int64)
    who = np.full(n, -1, dtype=np.int64)
    lateness: list[int] = []
    wait_ns = int(max_wait_ms * 1e6)
    sizes = sorted(workers[0])
    lock = threading.Lock()
    state: dict[str, Any] = {"head": 0, "done": 0, "stopped": ""}
    done_lock = threading.Lock()
    errors: list[BaseException] = []
    t0 = pc() + 2_000_000  # 2 ms for the threads to start
    due_all = arrival_ns + t0

    def take() -> tuple[int, int] | None:
        with lock:
            i = state["head"]
            if i >= n or state["stopped"]:
                return None
            now = pc()
            if now < due_all[i]:
                woke = _sleep_until(int(due_all[i]))
                lateness.append(woke - int(due_all[i]))
                now = woke
            j = i + 1
            if max_batch > 1:
                last = min(i + max_batch, n) - 1
                deadline = int(due_all[i]) + wait_ns
                if due_all[last] > now and deadline > now:
                    target = min(int(due_all[last]), deadline)
                    woke = _sleep_until(target)
                    lateness.append(woke - target)
                    now = woke
                j = int(np.searchsorted(due_all, now, side="right"))
                j = max(i + 1, min(j, i + max_batch, n))
            state["head"] = j
            return i, j

    def worker(w: int) -> None:
        with thread_context():
            run(w)

    def run(w: int) -> None:
        calls = workers[w]
        try:
            while True:
                got = take()
                if got is None:
                    return
                i, j = got
                k = j - i
                size = next(s for s in sizes if s >= k)
                fn, args = calls[size]
                a = pc()
                fn(*args)
                b = pc()
                start[i:j] = a
                end[i:j] = b
                batch[i:j] = k
                who[i:j] = w
                if stop is None:
                    continue
                with done_lock:
                    before = state["done"]
                    state["done"] = before + k
                    if ((before + k) // check_every > before // check_every
                            or any(before < c <= before + k for c in check_at)):
                        finished = end > 0
                        why = stop(int(finished.sum()),
                                   (end[finished] - due_all[finished]) / 1e6)
                        if why:
                            state["stopped"] = why
        except BaseException as e:
            errors.append(e)
            state["stopped"] = "error"

    threads = [threading.Thread(target=worker, args=(w,), daemon=True)
               for w in range(len(workers))]
    # a worker that ends its call while another spins for the next arrival waits for the GIL
    # at most this long (Python's default, 5 ms, would add up to 5 ms to its latency)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise MLProfError(f"a server worker's call failed: {errors[0]}")
    rel_start = np.where(start >= 0, start - t0, -1)
    rel_end = np.where(end >= 0, end - t0, -1)
    return _Served(rel_start, rel_end, batch, who, lateness, state["stopped"])


def _server_point(workers: Sequence[Mapping[int, tuple[Callable[..., Any], tuple]]],
                  rate: float, *, max_batch: int, max_wait_ms: float, duration_s: float,
                  bound_ms: float | None, percentile: float, seed: int, events: int,
                  min_planned: int = 0,
                  thread_context: Callable[[], Any] = contextlib.nullcontext
                  ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """One rate: the served requests' rows and the point's summary (and verdict, with a
    bound). It plans at least ``min_planned`` requests, at least the percentile's minimum
    (:func:`min_requests`) and ``rate x duration_s``."""
    planned = max(min_requests(percentile), min_planned, int(math.ceil(rate * duration_s)), 64)
    planned = min(planned, MAX_REQUESTS // 4)
    n_max = planned * 4  # an undecided point runs on, to twice and four times as many
    checkpoints = (planned, 2 * planned, n_max)
    arr = arrivals(rate, n_max, seed, exact=checkpoints)

    deadline = time.monotonic() + max(MAX_POINT_S, 2 * planned / rate)

    judged: set[int] = set()

    def stop(done: int, lat_ms: np.ndarray) -> str | None:
        """Why the point ends now (None: it goes on). The verdict is taken at the
        checkpoints only (the planned requests, twice and four times as many: a fixed number
        of looks, not one per batch); before one, the point ends only when the next
        checkpoint's verdict is certain to be ``missed`` whatever the requests still to come
        (their overs can only add up), so a single stall early in a point cannot end it."""
        if time.monotonic() > deadline and done >= 64:
            return f"time limit ({MAX_POINT_S:g} s)"
        if bound_ms is None:
            return "planned" if done >= planned else None
        overs = int((lat_ms > bound_ms).sum())
        target = next((c for c in checkpoints if c > done), n_max)
        if verdict(target, overs, percentile) == "missed":
            return "missed"  # certain at the next checkpoint already
        for c in checkpoints:
            if done >= c and c not in judged:
                judged.add(c)
                if verdict(done, overs, percentile) == "met":
                    return "met"
        return None

    from mlprof.measure.contention import environment, snapshot

    before = snapshot()
    cpu0 = _cpu_s()
    served = serve(workers, arr, max_batch, max_wait_ms, stop=stop, check_at=checkpoints,
                   thread_context=thread_context)
    cpu_s = _cpu_s() - cpu0
    after = snapshot()
    ok = served.end >= 0
    lat = (served.end[ok] - arr[ok]) / 1e6
    queue = (served.start[ok] - arr[ok]) / 1e6
    service = (served.end[ok] - served.start[ok]) / 1e6
    n = int(ok.sum())
    span_s = float(served.end[ok].max()) / 1e9 if n else 0.0
    overs = int((lat > bound_ms).sum()) if bound_ms is not None else None
    # the calls alone (no queueing): when they miss the bound, no lower rate meets it
    service_overs = int((service > bound_ms).sum()) if bound_ms is not None else None
    late = np.asarray(served.lateness, dtype=np.int64) / 1e3
    gaps = served.dispatch_gaps_ns(arr) / 1e3
    point: dict[str, Any] = {
        "rate": rate, "requests": n, "planned": planned,
        "offered_rate": n / (float(arr[n - 1]) / 1e9) if n > 1 else None,
        "events_per_s": n * events / span_s if span_s > 0 else 0.0,
        # the fraction of the point's span the workers spent in calls (a call of k requests
        # counted once): the load kept, which the machine's speed moves less than the rate.
        # Nine ResNet-18 searches at p99 <= 100 ms answered 58.8-80.2 events/s, at a load
        # (rate x mean call) of 0.67-0.77
        "busy": float((service / served.batch[ok]).sum()) / (span_s * 1e3 * len(workers))
        if span_s > 0 else None,
        # the process's CPU time while serving: the workers' calls and the waits' spinning
        "cpu_s": cpu_s, "events_per_cpu_s": n * events / cpu_s if cpu_s > 0 else None,
        **latency_summary(lat),
        "queue_mean_ms": float(queue.mean()) if n else None,
        "service_mean_ms": float(service.mean()) if n else None,
        "mean_batch": float(served.batch[ok].mean()) if n else None,
        "dispatch_us": {"n": int(gaps.size), "p50": _pct(gaps, 50), "p99": _pct(gaps, 99)},
        "lateness_us": {"n": int(late.size), "p50": _pct(late, 50), "p99": _pct(late, 99),
                        "max": float(late.max()) if late.size else None},
        "stopped": served.stopped or "all requests served",
        # what else used the CPUs meanwhile: a p99 of a fast model misses its bound on one
        # stall, so a contended point is flagged wherever it is shown
        "environment": environment(before, after),
    }
    if bound_ms is not None:
        point.update(bound_ms=bound_ms, percentile=percentile, overs=overs,
                     verdict=verdict(n, overs or 0, percentile) if n else "missed",
                     percentile_ms=_pct(lat, percentile),
                     service_percentile_ms=_pct(service, percentile),
                     service_verdict=verdict(n, service_overs or 0, percentile) if n
                     else "undecided")
    rows = {"rate": np.full(n, rate), "request": np.flatnonzero(ok).astype(np.int64),
            "arrival_ms": arr[ok] / 1e6, "start_ms": served.start[ok] / 1e6,
            "end_ms": served.end[ok] / 1e6, "latency_ms": lat,
            "batch": served.batch[ok]}
    return rows, point


def search(point: Callable[[float, bool], dict[str, Any]], start_rate: float, *,
           tolerance: float = TOLERANCE, max_points: int = MAX_POINTS,
           floor: float | None = None) -> tuple[float | None, list[dict[str, Any]], str]:
    """The highest rate whose point is ``met``: from ``start_rate``, doubling while met and
    halving while missed until a met and a missed rate bracket it, then their geometric mean
    until they are within ``tolerance``. ``(best rate or None, the points, why it ended)``;
    below ``floor`` (default ``start_rate / 1000``) no rate meets the bound.

    ``point(rate, decisive)`` measures one rate. ``decisive`` is true for the points that can
    decide the answer: those inside a bracket, which plan :data:`DECISIVE_FACTOR` times the
    requests (see :func:`measure_server`), and the ends of the final bracket. An end that was
    measured before the bracket existed, with the percentile's minimum of requests, is measured
    again as decisive before the search ends, and the search goes on from what it finds (the
    newest verdict of a rate counts). Why: ResNet-18's first point once missed at a load of
    0.69 (p99 417 ms, one stall in 192 requests), halving and bisecting below it gave 49.6
    events/s, while the runs beside it found 73-80."""
    floor = start_rate / 1000 if floor is None else floor
    known: dict[float, tuple[bool, bool]] = {}  # rate: (met, decisive), the newest verdict
    r, decisive = start_rate, False
    points: list[dict[str, Any]] = []
    while len(points) < max_points:
        p = point(r, decisive)
        points.append(p)
        known[r] = (p.get("verdict") == "met", decisive)
        met = [x for x, (ok, _) in known.items() if ok]
        lo = max(met) if met else None
        missed = [x for x, (ok, _) in known.items() if not ok and (lo is None or x > lo)]
        hi = min(missed) if missed else None
        if lo is not None and hi is not None:
            if hi / lo > 1 + tolerance:
                r, decisive = math.sqrt(lo * hi), True
            elif not known[hi][1]:
                r, decisive = hi, True
            elif not known[lo][1]:
                r, decisive = lo, True
            else:
                return lo, points, f"bracketed within {tolerance:.0%}"
        elif lo is None:
            if p.get("service_verdict") == "missed":
                return None, points, (
                    f"the calls alone miss it (p{p['percentile']:g} of the calls "
                    f"{p['service_percentile_ms']:.3g} ms at {r:.3g} requests/s): a lower rate "
                    f"only removes queueing")
            r, decisive = min(known) / 2, False
            if r < floor:
                return None, points, f"none met down to {min(known):.3g} requests/s"
        else:
            r, decisive = max(known) * 2, False
            if r > MAX_RATE:
                return lo, points, f"met up to the highest rate mlprof asks for ({MAX_RATE:g}/s)"
    met = [x for x, (ok, _) in known.items() if ok]
    return (max(met) if met else None), points, f"stopped after {max_points} points"


def measure_server(model_file: str, settings: MeasureSettings, workers: int, *,
                   rates: Sequence[float] = (), bound_ms: float | None = None,
                   percentile: float = 99.0, max_batch: int = 1, max_wait_ms: float = 0.0,
                   sessions: str = "each", script_args: tuple[str, ...] = (),
                   progress: Callable[[float, str], None] | None = None,
                   decisive_factor: int = DECISIVE_FACTOR) -> LoadResult:
    """The server scenario: each of ``rates``, or (with ``bound_ms`` and no rates) a search for
    the highest rate whose ``percentile`` stays under ``bound_ms``. In this process;
    :func:`measure_load_isolated` runs it in a child.

    A point plans ``rate x min_duration`` requests, and at least the percentile's minimum
    (:func:`min_requests`); the search's points inside a bracket at least ``decisive_factor``
    times that minimum (:data:`DECISIVE_FACTOR`; the argument is for
    ``benchmarks/load_search.py``, which compares factors)."""
    from mlprof.measure.harness import events_in_call
    from mlprof.measure.progress import Progress

    check_streams([workers], "--streams")
    if sessions not in ("each", "shared"):
        raise MLProfError(f"each or shared for the server, got {sessions!r}", field="--sessions")
    rates = check_rates(rates)
    percentile = check_percentile(percentile)
    if bound_ms is not None:
        bound_ms = check_bound(bound_ms)
    max_batch, max_wait_ms = check_batching(max_batch, max_wait_ms)
    if not rates and bound_ms is None:
        raise MLProfError("give --rates or --latency-bound-ms", field="--rates")
    if not isinstance(decisive_factor, int) or not 1 <= decisive_factor <= 16:
        raise MLProfError(f"a whole number from 1 to 16, got {decisive_factor!r}",
                          field="decisive_factor")
    pc = time.perf_counter_ns
    with Progress(progress) as rep:
        rep.phase("loading the model")
        m = _open(model_file, settings, script_args)
        s = m.settings
        bs = s.batch_size
        sizes = allowed_batches(max_batch)
        rep.phase(f"creating sessions for call sizes {', '.join(map(str, sizes))}")
        shared = {k: m.session(k * bs) for k in sizes} if sessions == "shared" else None
        worker_calls: list[dict[int, tuple[Callable[..., Any], tuple]]] = []
        for w in range(workers):
            calls = {}
            for k in sizes:
                rt = shared[k] if shared is not None else m.session(k * bs)
                calls[k] = m.call(rt, k * bs, w)
                _first_call(*calls[k], m.resolved.spec.spec_file, k * bs, rt)
            worker_calls.append(calls)
        # the service time of one request alone and of a full batch: the warm-up's calls
        rep.phase("warm-up")
        service: dict[int, float] = {}
        for k in (1, max_batch):
            fn, args = worker_calls[0][k]
            times = []
            for _ in range(max(s.warmup, 5)):
                a = pc()
                fn(*args)
                times.append(pc() - a)
            service[k] = float(np.median(times)) / 1e6
        for calls in worker_calls[1:]:
            for fn, args in calls.values():
                for _ in range(s.warmup):
                    fn(*args)
        events = events_in_call(bs, m.resolved.inputs)
        capacity = workers * max_batch / (service[max_batch] / 1e3)
        all_rows: list[dict[str, np.ndarray]] = []
        seeds = iter(range(s.seed, s.seed + 10_000))

        last: list[str] = []  # the previous point's outcome, for the progress lines

        def point(rate: float, decisive: bool = False) -> dict[str, Any]:
            # each progress line says which point runs and how the previous one ended
            rep.phase(f"point {len(all_rows) + 1}: {rate:,.4g} requests/s"
                      + (f" (point {len(all_rows)}: {last[0]})" if last else ""))
            least = min_requests(percentile) * (decisive_factor if decisive else 1)
            rows, p = _server_point(worker_calls, rate, max_batch=max_batch,
                                    max_wait_ms=max_wait_ms, duration_s=s.min_duration,
                                    bound_ms=bound_ms, percentile=percentile,
                                    seed=next(seeds), events=events, min_planned=least,
                                    thread_context=m.runtime_cls.thread_context)
            rows["point"] = np.full(rows["rate"].size, len(all_rows), dtype=np.int64)
            all_rows.append(rows)
            p["decisive"] = decisive
            if bound_ms is not None:
                last[:] = [f"{p['verdict']}, p{percentile:g} {_fmt_ms(p['percentile_ms'])}"]
            else:
                last[:] = [f"p99 {_fmt_ms(p['p99_ms'])}"]
            return p

        search_info: dict[str, Any] | None = None
        if rates:
            points = [point(r) for r in rates]
        elif service[1] > bound_ms:  # type: ignore[operator]
            points = []
            search_info = {"best_rate": None, "ended": (
                f"one request alone takes {service[1]:.3g} ms (median of "
                f"{max(s.warmup, 5)} calls)")}
        else:
            best, points, ended = search(point, capacity / 2)
            # the newest point at the best rate is the one whose verdict counts
            search_info = {"best_rate": best, "ended": ended, "best_point": max(
                (i for i, p in enumerate(points) if p["rate"] == best), default=None)}
        rep.phase(f"{len(points)} rate(s) measured", 1.0)
    for p in points:
        p.update(scenario="server", streams=workers, threads=s.threads, sessions=sessions,
                 batch_size=bs, max_batch=max_batch, max_wait_ms=max_wait_ms)
    if all_rows:
        rows = {c: np.concatenate([r[c] for r in all_rows]) for c in SERVER_COLUMNS}
    else:
        rows = {c: np.zeros(0) for c in SERVER_COLUMNS}
    info = {"scenario": "server", "streams": workers, "sessions": sessions,
            "max_batch": max_batch, "max_wait_ms": max_wait_ms, "rates": list(rates),
            "latency_bound_ms": bound_ms, "percentile": percentile,
            "service_ms": {str(k): v for k, v in service.items()},
            "capacity_estimate": capacity, "confidence": CONFIDENCE,
            "decisive_factor": decisive_factor}
    if search_info is not None:
        info["search"] = search_info
    return LoadResult(SERVER_COLUMNS, rows, points, _provenance(m, info))


def _provenance(m: _Model, load: dict[str, Any]) -> dict[str, Any]:
    from mlprof.measure.harness import events_in_call
    from mlprof.measure.provenance import measurement_header

    s = m.settings
    spec = m.resolved.spec
    header = measurement_header(
        started=_dt.datetime.now(_dt.timezone.utc),
        runtime=s.runtime, runtime_version=m.runtime_cls.version(), device=s.device,
        threads=s.threads, runtime_settings=m.sessions[0].info() if m.sessions else {},
        precision={"precision": s.precision},
        model={"name": spec.name, "label": spec.label, "spec_file": spec.spec_file,
               "file": spec.file, "content_hash": spec.content_hash},
        settings=asdict(s), batch_size=s.batch_size,
        events_per_call=events_in_call(s.batch_size, m.resolved.inputs))
    return {**header.to_json(), "load": load}


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


# --- the files -----------------------------------------------------------------------------------


def write_load(result: LoadResult, paths: Mapping[str, str], **extra: Any) -> None:
    """The CSV, then the record (provenance, ``points`` and ``extra``), each atomically."""
    from mlprof.results import records
    from mlprof.util import write_json_atomic, write_text_atomic

    write_text_atomic(paths["csv"], result.csv_text())
    write_json_atomic(paths["json"], records.stamp(
        {**result.provenance, "points": result.points, **extra}, "load"))


def read_load(json_path: str) -> dict[str, Any]:
    """A load record, checked: a JSON object of at most the record size whose every field
    :class:`mlprof.results.records.LoadRecord` checks (type and range), of a format this code
    reads, as JSON of this format (an older record upgraded); a one-line
    :class:`~mlprof.errors.CorruptResult` naming the file and the field."""
    from mlprof import ingest
    from mlprof.errors import CorruptResult
    from mlprof.results import records

    try:
        rec = ingest.load_json(json_path)
    except MLProfError as e:
        raise CorruptResult(e.message, json_path) from None
    return records.LoadRecord.from_json(rec, json_path).to_json()
