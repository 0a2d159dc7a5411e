"""The server scenario (MLPerf Server): requests at Poisson times, served by workers from one
queue, optionally in dynamic batches; each rate, or the search for the highest one met.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.loadgen.record import LoadResult, _provenance
from mlprof.measure.loadgen.search import search
from mlprof.measure.loadgen.session import (
    _cpu_s,
    _first_call,
    _fmt_ms,
    _open,
    _pct,
    _sleep_until,
    latency_summary,
)
from mlprof.measure.loadgen.settings import (
    CONFIDENCE,
    MAX_POINT_S,
    MAX_REQUESTS,
    SERVER_COLUMNS,
    SWITCH_INTERVAL_S,
    LoadSettings,
    allowed_batches,
)
from mlprof.measure.loadgen.verdict import min_requests, verdict
from mlprof.measure.settings import MeasureSettings

if TYPE_CHECKING:
    from mlprof.measure.causes import ThreadLog


def _rate_text(rate: float) -> str:
    """A request rate as people read it: ``14,170`` (``{:,.4g}`` printed ``1.417e+04``),
    ``0.5``."""
    return f"{rate:,.0f}" if rate >= 100 else f"{rate:.3g}"


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
    +9.2 % in events/s with plain draws, and within +-3.3 % in four of six sets of three runs
    with these windows (docs/design/load.md).

    Times past :data:`MAX_ARRIVAL_NS` (a rate far below one request per ``$MLP_TIMEOUT``,
    which :class:`~mlprof.measure.loadgen.settings.LoadSettings` refuses) are refused in one
    line rather than wrapped around in 64 bits.
    """
    if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0
            and math.isfinite(1e9 / rate)):
        raise MLProfError(f"must be a number > 0/s, got {rate!r}", field="--rates")
    rng = np.random.default_rng(seed)
    if not exact:
        return _as_ns(np.cumsum(rng.exponential(1e9 / rate, size=n)), rate)
    out = np.empty(n, dtype=np.float64)
    lo = 0
    for c in [*(int(c) for c in exact if 0 < c <= n), n]:
        if c <= lo:
            continue
        out[lo:c] = np.sort(rng.uniform(lo, c, size=c - lo)) * (1e9 / rate)
        lo = c
    return _as_ns(out, rate)


#: the latest arrival time (ns from a point's start) :func:`arrivals` gives: 146 years, half
#: of what a signed 64-bit count of nanoseconds holds
MAX_ARRIVAL_NS = 2**62


def _as_ns(times: np.ndarray, rate: float) -> np.ndarray:
    """Arrival times (float ns) as 64-bit integers; a one-line error where they do not fit."""
    if times.size and not (np.isfinite(times).all() and float(times.max()) <= MAX_ARRIVAL_NS):
        raise MLProfError(f"{times.size:,} arrivals at {rate:g}/s would run past "
                          f"{MAX_ARRIVAL_NS / 1e9 / 86400 / 365.25:.0f} years", field="--rates")
    return times.astype(np.int64)


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
    threads: ThreadLog

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


def _run_workers(run: Callable[[int], None], n: int, thread_context: Callable[[], Any]
                 ) -> ThreadLog:
    """``run(w)`` for each ``w < n`` in its own thread, inside ``thread_context()`` and a
    :class:`~mlprof.measure.causes.ThreadLog` (returned: the point's record counts the
    workers' waits for a CPU, which its snapshots cannot see), until all have ended."""
    from mlprof.measure.causes import ThreadLog

    log = ThreadLog()

    def worker(w: int) -> None:
        with log.watch(), thread_context():
            run(w)

    threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(n)]
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
    return log


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

    log = _run_workers(run, len(workers), thread_context)
    if errors:
        raise MLProfError(f"a server worker's call failed: {errors[0]}")
    rel_start = np.where(start >= 0, start - t0, -1)
    rel_end = np.where(end >= 0, end - t0, -1)
    return _Served(rel_start, rel_end, batch, who, lateness, state["stopped"], log)


def _server_point(workers: Sequence[Mapping[int, tuple[Callable[..., Any], tuple]]],
                  rate: float, *, max_batch: int, max_wait_ms: float, duration_s: float,
                  latency_bound_ms: float | None, percentile: float, seed: int, events: int,
                  min_planned: int = 0,
                  thread_context: Callable[[], Any] = contextlib.nullcontext,
                  planned_threads: float | None = None
                  ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """One rate: the served requests' rows and the point's summary (and verdict, with a
    bound). It plans at least ``min_planned`` requests, at least the percentile's minimum
    (:func:`min_requests`) and ``rate x duration_s``. ``planned_threads``: the workers'
    threads in all (run on purpose: not ``oversubscribed``)."""
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
        if latency_bound_ms is None:
            return "planned" if done >= planned else None
        overs = int((lat_ms > latency_bound_ms).sum())
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
    overs = int((lat > latency_bound_ms).sum()) if latency_bound_ms is not None else None
    # the calls alone (no queueing): when they miss the bound, no lower rate meets it
    service_overs = (int((service > latency_bound_ms).sum()) if latency_bound_ms is not None
                     else None)
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
        # what disturbed it (a fast model's point at 22,000/s lasts 56 ms: judged even so)
        "environment": environment(before, after, planned_threads, short=True,
                                   threads=served.threads),
    }
    if latency_bound_ms is not None:
        point.update(latency_bound_ms=latency_bound_ms, percentile=percentile, overs=overs,
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


def measure_server(model_file: str, settings: MeasureSettings, load: LoadSettings, *,
                   script_args: tuple[str, ...] = (),
                   progress: Callable[[float, str], None] | None = None) -> LoadResult:
    """The server scenario of one point's ``load`` (one number of workers): each of its
    ``rates``, or (with ``latency_bound_ms`` and no rates) a search for the highest rate whose
    ``percentile`` stays under ``latency_bound_ms``. In this process;
    :func:`~mlprof.measure.loadgen.run.measure_load_isolated` runs it in a child. ``load`` was
    checked when it was made.

    A point plans ``rate x min_duration`` requests, and at least the percentile's minimum
    (:func:`min_requests`); the search's points inside a bracket at least ``decisive_factor``
    times that minimum (:data:`DECISIVE_FACTOR`; the option is for
    ``benchmarks/load_search.py``, which compares factors)."""
    from mlprof.measure.harness import events_in_call
    from mlprof.measure.isolate import restart_timeout
    from mlprof.progress import Progress

    if load.scenario != "server":
        raise MLProfError(f"not a server point: {load.scenario}", field="--scenario")
    workers, rates, sessions = load.workers, load.rates, load.sessions
    latency_bound_ms, percentile = load.latency_bound_ms, load.percentile
    max_batch, max_wait_ms = load.max_batch, load.max_wait_ms
    decisive_factor = load.decisive_factor
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
                _first_call(*calls[k], m.resolved.spec.spec_file, k * bs, rt, rep.phase)
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
            # a time-out per point, not one for the whole search (mlprof.measure.isolate)
            restart_timeout(f"point {len(all_rows) + 1} ({_rate_text(rate)} requests/s)")
            # each progress line says which point runs and how the previous one ended
            rep.phase(f"point {len(all_rows) + 1}: {_rate_text(rate)} requests/s"
                      + (f" (point {len(all_rows)}: {last[0]})" if last else ""))
            least = min_requests(percentile) * (decisive_factor if decisive else 1)
            rows, p = _server_point(worker_calls, rate, max_batch=max_batch,
                                    max_wait_ms=max_wait_ms, duration_s=s.min_duration,
                                    latency_bound_ms=latency_bound_ms, percentile=percentile,
                                    seed=next(seeds), events=events, min_planned=least,
                                    thread_context=m.runtime_cls.thread_context,
                                    planned_threads=workers * s.threads)
            rows["point"] = np.full(rows["rate"].size, len(all_rows), dtype=np.int64)
            all_rows.append(rows)
            p["decisive"] = decisive
            if latency_bound_ms is not None:
                last[:] = [f"{p['verdict']}, p{percentile:g} {_fmt_ms(p['percentile_ms'])}"]
            else:
                last[:] = [f"p99 {_fmt_ms(p['p99_ms'])}"]
            return p

        search_info: dict[str, Any] | None = None
        if rates:
            points = [point(r) for r in rates]
        elif service[1] > latency_bound_ms:  # type: ignore[operator]
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
            "latency_bound_ms": latency_bound_ms, "percentile": percentile,
            "service_ms": {str(k): v for k, v in service.items()},
            "capacity_estimate": capacity, "confidence": CONFIDENCE,
            "decisive_factor": decisive_factor}
    if search_info is not None:
        info["search"] = search_info
    return LoadResult(SERVER_COLUMNS, rows, points, _provenance(m, info))
