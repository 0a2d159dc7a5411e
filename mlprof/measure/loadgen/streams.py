"""The streams scenario (MLPerf MultiStream, a CMSSW job's streams): callers at once, each
calling back to back, as threads or as processes of their own.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.loadgen.record import LoadResult, _provenance
from mlprof.measure.loadgen.session import _cpu_s, _first_call, _open, latency_summary
from mlprof.measure.loadgen.settings import (
    MAX_REQUESTS,
    STREAM_COLUMNS,
    LoadSettings,
)
from mlprof.measure.settings import MeasureSettings


def run_streams(calls: Sequence[tuple[Callable[..., Any], tuple]], duration_s: float,
                min_calls: int, warmup: int, events: int, max_calls: int = MAX_REQUESTS,
                thread_context: Callable[[], Any] = contextlib.nullcontext,
                threads_per_stream: int = 1
                ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Call each of ``calls`` (one per stream) back to back in its own thread, all starting
    together after ``warmup`` untimed calls each, until ``duration_s`` have passed and each made
    ``min_calls`` (at most ``max_calls``); the CSV rows and the point's summary.
    ``thread_context()`` is entered in each stream's thread (the runtime's
    :meth:`~mlprof.runtimes.base.Runtime.thread_context`); ``threads_per_stream``: each
    session's intra-op threads (streams x threads run on purpose: not ``oversubscribed``)."""
    pc = time.perf_counter_ns
    n = len(calls)
    barrier = threading.Barrier(n + 1)
    starts: list[list[int]] = [[] for _ in range(n)]
    ends: list[list[int]] = [[] for _ in range(n)]
    errors: list[BaseException] = []
    t0_box: list[int] = []

    from mlprof.measure.causes import ThreadLog

    log = ThreadLog()

    def worker(i: int) -> None:
        with log.watch(), thread_context():
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
                            environment(before, after, planned_threads=n * threads_per_stream,
                                        threads=log))


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


def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when its parent (the measurement worker, pid ``parent``) ends, and
    end now if it already has (the signal armed too late). The worker dies with its
    supervisor, which dies with the measurement server, which ends with ``law run``: without
    this a ``law run`` killed with SIGKILL left its stream processes calling the model for the
    rest of their ``--min-duration`` (up to a minute at 100 % of a core each), re-parented to
    init. (Linux's ``PR_SET_PDEATHSIG`` follows the *thread* that started the process: the
    worker starts them from its main thread, which runs the whole measurement.)"""
    from mlprof.measure.proctree import PR_SET_PDEATHSIG, prctl

    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _stream_child() -> None:
    """One stream as a process of its own (``--sessions process``), run as ``python -c``
    with its parent's pid as its argument (see :func:`_die_with_parent`).

    Reads its arguments (a pickle) from stdin, opens the model, makes its first call and the
    warm-up calls, reports ``ready``; reads ``t0`` and calls back to back until
    ``t0 + duration`` and ``min_calls``; reports its call times, the CPU time of its timed
    calls and its threads' run and wait counters as they began and ended
    (:func:`~mlprof.measure.causes.own_threads`: the parent's end snapshot misses the threads
    of a process that has exited). The protocol runs over a copy of stdout; the model's own
    prints go to stderr.
    """
    from mlprof.measure.causes import own_threads

    if len(sys.argv) > 1:
        _die_with_parent(int(sys.argv[1]))
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
            pickle.dump(("ready", (rt.info(), rt.compile_record)), out)
            out.flush()
            t0 = pickle.load(inp)
            pc = time.perf_counter_ns
            deadline = t0 + int(a["duration_s"] * 1e9)
            st: list[int] = []
            en: list[int] = []
            cpu0 = _cpu_s()
            first = own_threads()
            while len(en) < a["max_calls"]:
                x = pc()
                fn(*args)
                y = pc()
                st.append(x)
                en.append(y)
                if y >= deadline and len(en) >= a["min_calls"]:
                    break
            cpu = _cpu_s() - cpu0
            last = own_threads()
        pickle.dump(("done", (st, en, cpu, first, last)), out)
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

    from mlprof.measure.causes import ThreadLog
    from mlprof.measure.contention import environment, snapshot

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]))
    code = "from mlprof.measure.loadgen.streams import _stream_child; _stream_child()"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(os.getpid())],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
             for _ in range(streams)]
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
        infos = [reply(p) for p in procs]  # ready: each with its session's settings, compile
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
    # a process that exited before ``after`` took its threads' counters with it: each one
    # read them itself around its timed calls
    log = ThreadLog()
    for d in done:
        log.add(d[3], d[4])
    rows, summary = _streams_summary([d[0] for d in done], [d[1] for d in done], t0, events,
                                     wall_s, sum(d[2] for d in done),
                                     environment(before, after,
                                                 planned_threads=streams * settings.threads,
                                                 threads=log))
    summary["runtime_settings"] = infos[0][0] if infos else {}
    summary["compiles"] = [compiled for _, compiled in infos]
    return rows, summary


def measure_streams(model_file: str, settings: MeasureSettings, load: LoadSettings,
                    script_args: tuple[str, ...] = (),
                    progress: Callable[[float, str], None] | None = None) -> LoadResult:
    """The streams scenario of one point's ``load``: its one number of callers, its sessions,
    and ``settings.batch_size`` per call (in this process;
    :func:`~mlprof.measure.loadgen.run.measure_load_isolated` runs it in a child). ``load``
    was checked when it was made."""
    from mlprof.measure.harness import events_in_call
    from mlprof.progress import Progress

    if load.scenario != "streams":
        raise MLProfError(f"not a streams point: {load.scenario}", field="--scenario")
    streams, sessions = load.workers, load.sessions
    with Progress(progress) as rep:
        rep.phase("loading the model")
        m = _open(model_file, settings, script_args)
        s = m.settings
        bs = s.batch_size
        events = events_in_call(bs, m.resolved.inputs)
        runtime_settings: dict[str, Any] = {}
        compiles = None  # the sessions' own (in this process) unless in processes of their own
        if sessions == "process":
            rep.phase(f"{streams} stream process(es) for {s.min_duration:g} s")
            rows, summary = run_stream_processes(model_file, s, tuple(script_args), streams,
                                                 events)
            runtime_settings = summary.pop("runtime_settings")
            compiles = summary.pop("compiles")
        else:
            rep.phase(f"creating {1 if sessions == 'shared' else streams} session(s)")
            shared = m.session(bs) if sessions == "shared" else None
            calls = []
            for i in range(streams):
                rt = shared if shared is not None else m.session(bs)
                calls.append(m.call(rt, bs, i % s.n_events))
                _first_call(*calls[-1], m.resolved.spec.spec_file, bs, rt, rep.phase)
            rep.phase(f"{streams} stream(s) for {s.min_duration:g} s")
            rows, summary = run_streams(calls, s.min_duration, s.n_calls, s.warmup, events,
                                        thread_context=m.runtime_cls.thread_context,
                                        threads_per_stream=s.threads)
        rep.phase(f"{summary['calls']} calls measured", 1.0)
        point = {"scenario": "streams", "streams": streams, "threads": s.threads,
                 "sessions": sessions, "batch_size": bs, **summary}
        prov = _provenance(m, {"scenario": "streams", "streams": streams,
                               "sessions": sessions}, compiles)
        if runtime_settings:
            prov["runtime_settings"] = runtime_settings
    return LoadResult(STREAM_COLUMNS, rows, [point], prov)
