"""Why a measurement was disturbed: the signals read around its timed loop, the causes named.

:func:`mlprof.measure.contention.snapshot` reads :func:`counters` before and after the timed
loop (never inside it), without root, inside a VM or a container; :func:`signals` turns two of
them into the ``environment`` record's cause keys and :func:`named_causes` names the causes
whose signal crossed its threshold (the constants below, each with the figures measured on
the 2-core VM this was written on). ``docs/noise.md`` says what each cause means and what to
do about it:

- ``others``: other processes used more than :data:`~mlprof.measure.contention.CONTENDED_CORES`
  of our CPUs (a contended record written before the causes names this one);
- ``cpu-wait``: our threads were runnable but waited for a CPU (``/proc/<pid>/task/*/schedstat``,
  2nd field) held by other processes or other cgroups: beyond the wait our own threads cause
  each other when more of them are runnable than there are CPUs (that is ``oversubscribed``);
- ``throttled``: the cgroup's CPU quota stopped us (``cpu.stat`` ``throttled_time`` /
  ``throttled_usec``, v1 and v2, our cgroup and its ancestors);
- ``steal``: the hypervisor ran another guest on our CPUs (``/proc/stat`` steal);
- ``memory``: tasks stalled on memory (``/proc/pressure/memory`` ``some``) or we took major
  page faults (``getrusage``);
- ``io``: tasks stalled on I/O (``/proc/pressure/io`` ``some``; the whole machine's);
- ``gc``: Python's garbage collector paused the loop (``gc.callbacks``, only while
  :func:`gc_watch` runs, i.e. around the harness's timed loop);
- ``oversubscribed``: more of our threads were runnable on average than we have CPUs (the
  affinity, capped by the cgroup's quota, and never fewer than one: a single thread under a
  quota below one CPU competes with nothing of ours, it is ``throttled``): the runtime's own
  thread pools compete;
- ``drift``: a fixed piece of work (:func:`probe`, ~0.7 ms) ran that much slower or faster
  after the loop than before it (frequency, thermal limits, a busy sibling hyperthread).

Involuntary context switches and the PSI of the CPU are recorded but name no cause: a
preemption costs what ``cpu-wait`` measures, and the CPU's pressure is the whole machine's.
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from mlprof.results import records
from mlprof.sysinfo import (  # noqa: F401 (usable_cpus: tests read it here)
    cpu_cgroup_dirs,
    quota_cpus,
    usable_cpus,
)
from mlprof.sysinfo import read_text as _read

#: run-queue wait above this share of the time our threads wanted a CPU names ``cpu-wait``.
#: 5 % of the loop spent waiting shifts its mean by up to 5 %, more than the differences
#: between runtimes this tool is meant to show. Measured on this 2-core VM (a 0.5 s busy
#: loop pinned to one CPU, 5 times each, loadavg 3.4-4.5 from other test runs): nothing else
#: pinned there 1-34 % (other processes landing on that CPU: 0.02-0.34 cores, below the
#: ``others`` threshold); beside one busy loop pinned there 51-67 %, three 75-83 %, three
#: ``nice -n 19`` ones 5.3-53 % (5.3-6.6 % when nothing else came: CFS gives a nice-19 task
#: 1.5 % of a nice-0 one's weight). The quick start's onnxruntime loop (1 thread, 0.6 s)
#: read 1.2-1.6 % while other processes used the other CPU (1.0 core), 30-42 % at 1.3 cores.
RUN_WAIT_SHARE = 0.05
#: PSI ``memory some`` above this share of the window names ``memory``: 5 % of the window
#: some task waited for memory (reclaim, swap-in, refaults). 0.0 % here in every window read
#: (this VM never reclaimed).
PSI_MEMORY_SHARE = 0.05
#: PSI ``io some`` above this share names ``io``. It is the machine's, not ours: other test
#: runs writing files read 0-0.3 % here; reading a 16 MB file page by page after dropping it
#: from the page cache (4096 major faults, 63 us each) read 50 %.
PSI_IO_SHARE = 0.10
#: major page faults per second of the window above this name ``memory``: one costs 63 us here
#: (a page read back from the VM's disk; 5-10 ms on a spinning disk), so 20/s are 0.13 % of
#: the time here and 10-20 % on a disk. A warm loop takes none (0 in every loop here).
MAJOR_FAULTS_PER_S = 20.0
#: steal above this share of the CPUs' time names ``steal`` (as ``cpu-wait``: 5 % lost shifts
#: up to 5 %). Here 0 in most windows, 0.8-2 % in some, 8-16 % in some while three or more
#: busy loops kept both vCPUs busy (the host took them back).
STEAL_SHARE = 0.05
#: time the cgroup's quota held us back above this share of the window names ``throttled``:
#: a throttled cgroup stops for the rest of its period (100 ms by default), a whole sample's
#: worth; no quota on this VM, so never measured here (the parsing is tested on cgroup trees).
THROTTLED_SHARE = 0.01
#: GC pauses above this share of the loop name ``gc``: a collection stops every thread of the
#: interpreter and lands in the samples it interrupts. The onnxruntime loop takes none here
#: (0.000 s in all 16 loops); a loop allocating cyclic garbage spent 61 % in GC pauses.
GC_SHARE = 0.01
#: our threads runnable on average above the usable CPUs plus this many name
#: ``oversubscribed``: a single-thread onnxruntime loop reads 0.84-1.0 runnable threads here,
#: three hashing threads on one CPU 3.0; half a thread is far from both. Never fewer than one
#: CPU counts here: one thread under a quota of half a CPU (``benchmarks/staged_causes.py``'s
#: ``quota`` stage) read 1.000-1.001 runnable threads and would cross 0.5 + 0.5 by jitter
#: (1 point in 3), though nothing of ours competes (that is ``throttled``'s).
OVERSUBSCRIBED_MARGIN = 0.5
#: the probe's time after the loop differing from before by more than this many percent names
#: ``drift``. The probe sees ~0.7 ms of the machine, whose speed on this VM changes by up to
#: ~60 % from one moment to the next (the probe is bimodal: 32-38 or 50-60 us a repetition):
#: over 100 before/after pairs 0.2 s apart |drift| exceeded 20 % in 2-15 and 40 % in 1-5 of
#: them (p5-p95 -2 to +2 % in the calmest run); beside the quick start's loop with other
#: processes busy, 5 of 16 loops read 40-70 %. A change of the CPU's speed that large moves
#: every sample; below it the probe cannot tell drift from its own noise here.
DRIFT_PCT = 40.0
#: ... and where the loop's own calls are known (MeasureRuntime's samples: ``loop_drift_pct``,
#: the median of the last quarter of the calls against the first quarter), ``drift`` also needs
#: them to have moved the same way by more than this many percent: a speed change of the machine
#: that did not move the measured calls did not disturb the point. Half the probe's threshold: a
#: change of 40 % in the loop's first three quarters moves the last quarter's median by about
#: that much. On a quiet machine (``benchmarks/staged_causes.py --stage quiet --points 40``,
#: twice) the probe alone named ``drift`` in 6 of 80 points (this VM's bimodal flips between
#: two 0.7 ms probes); with the calls moved the same way by more than 10 % 3 of 80, by more than
#: 20 % 1 of 80 (its calls 68 % slower at the end: a real change). The calls' quarters of a
#: quiet point moved by 0.9-1.3 % at the median, 21-27 % at the 90th percentile.
LOOP_DRIFT_PCT = 20.0

#: every cause a record may name, in the order they are listed (defined with the record that
#: holds them, which checks them on reading)
CAUSES = records.ENVIRONMENT_CAUSES

_PSI = ("cpu", "memory", "io")


@dataclass(frozen=True)
class Counters:
    """The cause counters at one moment (None: not readable here).

    ``tasks``: run and run-queue wait ns per thread id (ours and our descendants');
    ``psi``: ``some total`` in us per resource; ``throttled``: (periods throttled, ns);
    ``nivcsw``/``majflt``: this process' ``getrusage``; ``gc_ns``: GC pauses so far while
    :func:`gc_watch` runs; ``usable_cpus``: the affinity capped by the cgroup's quota;
    ``probe_ns``: :func:`probe`'s time."""

    tasks: dict[int, tuple[int, int]] | None = None
    psi: dict[str, int] | None = None
    throttled: tuple[int, int] | None = None
    nivcsw: int | None = None
    majflt: int | None = None
    gc_ns: int | None = None
    usable_cpus: float | None = None
    probe_ns: int | None = None


def _tasks(pids: Iterable[int | str]) -> dict[int, tuple[int, int]] | None:
    """Run and wait ns (``schedstat``'s first two fields) of every thread of ``pids``."""
    out: dict[int, tuple[int, int]] = {}
    readable = False
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            counts = _schedstat(f"/proc/{pid}/task/{tid}/schedstat")
            if counts is not None:
                out[int(tid)] = counts
                readable = True
    return out if readable else None


def _schedstat(path: str) -> tuple[int, int] | None:
    """Run and run-queue wait ns, the first two fields of a ``schedstat`` file (None where
    unreadable)."""
    try:
        run, wait = (int(x) for x in (_read(path) or "").split()[:2])
    except ValueError:
        return None
    return run, wait


def _psi(root: str = "/proc/pressure") -> dict[str, int] | None:
    """``some total=`` (us) of each resource in ``root`` (None where there is no PSI)."""
    out = {}
    for res in _PSI:
        text = _read(f"{root}/{res}")
        if text is None:
            continue
        for line in text.splitlines():
            if line.startswith("some "):
                for field in line.split()[1:]:
                    if field.startswith("total="):
                        with contextlib.suppress(ValueError):
                            out[res] = int(field[6:])
    return out or None


def throttling(dirs: Iterable[str]) -> tuple[int, int] | None:
    """(periods throttled, ns throttled) summed over the ``cpu.stat`` of ``dirs`` (v1's
    ``throttled_time`` is ns, v2's ``throttled_usec`` us); None where none has the counters."""
    found, periods, ns = False, 0, 0
    for d in dirs:
        text = _read(f"{d}/cpu.stat")
        if not text:
            continue
        stat = {}
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                stat[key] = int(value)
        if "nr_throttled" not in stat:
            continue
        found = True
        periods += stat["nr_throttled"]
        ns += stat.get("throttled_time", stat.get("throttled_usec", 0) * 1000)
    return (periods, ns) if found else None


# Python's GC pauses, accumulated while gc_watch() runs (a callback in gc.callbacks)
_gc_state = {"ns": 0, "t0": 0, "watching": 0}


def _on_gc(phase: str, info: Mapping[str, Any]) -> None:
    if phase == "start":
        _gc_state["t0"] = time.perf_counter_ns()
    elif _gc_state["t0"]:
        _gc_state["ns"] += time.perf_counter_ns() - _gc_state["t0"]
        _gc_state["t0"] = 0


class GcWatch:
    """Python's GC pauses while it runs: :func:`counters` reads their sum in between (None
    outside). Start it before the first snapshot and :meth:`stop` it after the last; also a
    context manager. Costs two clock reads per collection, nothing between collections."""

    def __init__(self) -> None:
        self.stopped = False
        if _on_gc not in gc.callbacks:
            gc.callbacks.append(_on_gc)
        _gc_state["watching"] += 1

    def stop(self) -> None:
        """Remove the callback (when no other watch runs)."""
        if self.stopped:
            return
        self.stopped = True
        _gc_state["watching"] -= 1
        if _gc_state["watching"] <= 0:
            _gc_state["watching"] = 0
            with contextlib.suppress(ValueError):
                gc.callbacks.remove(_on_gc)

    def __enter__(self) -> GcWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def gc_watch() -> GcWatch:
    """Start accumulating GC pauses (see :class:`GcWatch`)."""
    return GcWatch()


def gc_pause_ns() -> int | None:
    """The GC pauses so far while a :func:`gc_watch` runs, in ns (None when none runs)."""
    return _gc_state["ns"] if _gc_state["watching"] else None


class ThreadLog:
    """The run and run-queue wait ns of threads that may end inside a window, each read by the
    thread itself as it enters and leaves :meth:`watch`.

    A snapshot lists the live threads only (``/proc/<pid>/task``): a load point's workers,
    started after its first snapshot and joined before its last, were in neither, so their
    waits for a CPU never reached the point's ``run_wait_s`` (113-124 ms per 12 s point beside
    two busy loops on this 2-core VM, against the main thread's 0-4 ms). :meth:`merged` adds
    them to the two snapshots' counters."""

    def __init__(self) -> None:
        self.start: dict[int, tuple[int, int]] = {}
        self.end: dict[int, tuple[int, int]] = {}

    @contextlib.contextmanager
    def watch(self) -> Iterator[None]:
        """Record the calling thread's counters now and when the block ends."""
        import threading

        tid = threading.get_native_id()
        first = _schedstat("/proc/thread-self/schedstat")
        if first is not None:
            self.start[tid] = first
        try:
            yield
        finally:
            last = _schedstat("/proc/thread-self/schedstat")
            if first is not None and last is not None:
                self.end[tid] = last

    def add(self, start: dict[int, tuple[int, int]] | None,
            end: dict[int, tuple[int, int]] | None) -> None:
        """Log the threads another process read for itself (:func:`own_threads`) as its timed
        calls began and ended; a thread in only one of them is left out."""
        if start is None or end is None:
            return
        for tid, counts in end.items():
            if tid in start:
                self.start[tid], self.end[tid] = start[tid], counts

    def merged(self, start: Counters | None, end: Counters | None
               ) -> tuple[Counters | None, Counters | None]:
        """``start`` and ``end`` with the logged threads each lacks (a thread a snapshot saw
        keeps the snapshot's figures: they bound the window)."""
        if start is None or end is None or start.tasks is None or end.tasks is None:
            return start, end
        first, last = dict(start.tasks), dict(end.tasks)
        for tid, counts in self.end.items():
            if tid not in last:
                last[tid] = counts
                first.setdefault(tid, self.start[tid])
        return replace(start, tasks=first), replace(end, tasks=last)


def own_threads() -> dict[int, tuple[int, int]] | None:
    """Run and wait ns of every thread of this process (:meth:`ThreadLog.add`)."""
    return _tasks(["self"])


def _work(n: int) -> int:
    s = 0
    for i in range(n):
        s += i * i
    return s


#: the probe: the fastest of this many repetitions of a fixed pure-Python loop (32-38 us each
#: here, 0.71 ms in all): the fastest is what the CPU can do, a preemption hits one repetition
PROBE_REPS = 20
PROBE_N = 1000


def probe() -> int:
    """The ns the fastest of :data:`PROBE_REPS` repetitions of a fixed piece of work takes."""
    pc = time.perf_counter_ns
    best = 0
    for _ in range(PROBE_REPS):
        t0 = pc()
        _work(PROBE_N)
        d = pc() - t0
        best = d if not best or d < best else best
    return best


def counters(pids: Iterable[int | str], affinity: int | None, run_probe: bool = True
             ) -> Counters:
    """The cause counters now, for the processes ``pids`` (this one and its descendants) with
    ``affinity`` CPUs; the probe first (so that it is outside an end snapshot's reads)."""
    probe_ns = probe() if run_probe else None
    usage = resource.getrusage(resource.RUSAGE_SELF)
    dirs, quota = _cgroup()
    cpus = quota if affinity is None else (
        float(affinity) if quota is None else min(float(affinity), quota))
    return Counters(tasks=_tasks(pids), psi=_psi(), throttled=throttling(dirs),
                    nivcsw=usage.ru_nivcsw, majflt=usage.ru_majflt, gc_ns=gc_pause_ns(),
                    usable_cpus=cpus, probe_ns=probe_ns)


_cgroups: dict[int, tuple[list[str], float | None]] = {}


def _cgroup() -> tuple[list[str], float | None]:
    """This process' CPU cgroup directories and quota, read once per process (150 us: a
    process does not change its cgroup or quota while it measures)."""
    pid = os.getpid()
    if pid not in _cgroups:
        dirs = cpu_cgroup_dirs()
        _cgroups[pid] = (dirs, quota_cpus(dirs))
    return _cgroups[pid]


def _share(value: float, of: float, digits: int = 4) -> float:
    return round(value / of, digits) if of > 0 else 0.0


def signals(start: Counters | None, end: Counters | None, wall_s: float) -> dict[str, Any]:
    """The cause keys of the ``environment`` record for a window of ``wall_s`` seconds between
    two :func:`counters` (None where unreadable):

    ``run_wait_s`` (our threads' run-queue wait), ``run_wait_share`` (that over the time our
    threads were runnable, running or waiting: per wall second per runnable thread),
    ``own_wait_share`` (the part of it our own threads cause each other, beyond the usable
    CPUs: :func:`own_wait_share`), ``runnable_threads`` (our threads runnable on average),
    ``threads`` (our threads at the end), ``usable_cpus``, ``psi_{cpu,memory,io}_share``
    (``some`` per wall second), ``throttled_s``, ``nr_throttled``, ``invol_ctx_switches``,
    ``major_faults``, ``gc_pause_s``, ``probe_us`` (before, after) and ``drift_pct``."""
    rec: dict[str, Any] = dict.fromkeys(
        ("run_wait_s", "run_wait_share", "own_wait_share", "runnable_threads", "threads",
         "usable_cpus",
         *(f"psi_{r}_share" for r in _PSI), "throttled_s", "nr_throttled",
         "invol_ctx_switches", "major_faults", "gc_pause_s", "probe_us", "drift_pct"))
    if start is None or end is None or wall_s <= 0:
        return rec
    wall_ns = wall_s * 1e9
    if start.tasks is not None and end.tasks is not None:
        run = wait = 0
        for tid, (ran, waited) in end.tasks.items():
            ran0, waited0 = start.tasks.get(tid, (0, 0))
            run, wait = run + max(0, ran - ran0), wait + max(0, waited - waited0)
        rec.update(run_wait_s=round(wait / 1e9, 5), run_wait_share=_share(wait, run + wait),
                   runnable_threads=round((run + wait) / wall_ns, 3), threads=len(end.tasks))
    rec["usable_cpus"] = end.usable_cpus
    if rec["runnable_threads"] is not None:
        rec["own_wait_share"] = round(own_wait_share(rec["runnable_threads"], end.usable_cpus), 4)
    if start.psi and end.psi:
        for r in _PSI:
            if r in start.psi and r in end.psi:
                rec[f"psi_{r}_share"] = _share((end.psi[r] - start.psi[r]) * 1e3, wall_ns)
    if start.throttled is not None and end.throttled is not None:
        rec["nr_throttled"] = end.throttled[0] - start.throttled[0]
        rec["throttled_s"] = round((end.throttled[1] - start.throttled[1]) / 1e9, 5)
    if start.nivcsw is not None and end.nivcsw is not None:
        rec["invol_ctx_switches"] = end.nivcsw - start.nivcsw
    if start.majflt is not None and end.majflt is not None:
        rec["major_faults"] = end.majflt - start.majflt
    if start.gc_ns is not None and end.gc_ns is not None:
        rec["gc_pause_s"] = round((end.gc_ns - start.gc_ns) / 1e9, 6)
    if start.probe_ns and end.probe_ns:
        rec["probe_us"] = [round(start.probe_ns / 1e3, 1), round(end.probe_ns / 1e3, 1)]
        rec["drift_pct"] = round(100 * (end.probe_ns - start.probe_ns) / start.probe_ns, 1)
    return rec


def _above(rec: Mapping[str, Any], key: str, threshold: float, per: float = 1.0) -> bool:
    value = rec.get(key)
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and value / per > threshold)


def own_wait_share(runnable: Any, cpus: Any) -> float:
    """The run-queue wait share our own threads cause each other: with ``runnable`` threads
    runnable on average and ``cpus`` usable CPUs, at least ``1 - cpus / runnable`` of their
    runnable time is spent waiting, whatever else runs (0 when they fit, or unknown)."""
    if (isinstance(runnable, (int, float)) and isinstance(cpus, (int, float)) and cpus > 0
            and runnable > cpus):
        return 1.0 - cpus / runnable
    return 0.0


def named_causes(rec: Mapping[str, Any], others_cores: float,
                 planned_threads: float | None = None) -> list[str]:
    """The causes (:data:`CAUSES`, in that order) whose signal in the ``environment`` record
    ``rec`` crossed its threshold; ``others_cores``: the ``others`` threshold in cores.

    ``cpu-wait`` counts the wait beyond what our own threads cause each other
    (:func:`own_wait_share`: that is ``oversubscribed``'s); ``planned_threads``: the threads a
    measurement runs on purpose (a load point's streams x threads), which oversubscribe the CPUs
    without disturbing it (None: any runnable thread beyond the CPUs is a disturbance)."""
    wall = rec.get("window_s") or 0.0
    runnable, cpus = rec.get("runnable_threads"), rec.get("usable_cpus")
    causes = []
    if _above(rec, "other_cpu_cores", others_cores):
        causes.append("others")
    wait = rec.get("run_wait_share")
    if (isinstance(wait, (int, float)) and not isinstance(wait, bool)
            and wait - own_wait_share(runnable, cpus) > RUN_WAIT_SHARE):
        causes.append("cpu-wait")
    if wall and _above(rec, "throttled_s", THROTTLED_SHARE, wall):
        causes.append("throttled")
    if _above(rec, "steal_share", STEAL_SHARE):
        causes.append("steal")
    if _above(rec, "psi_memory_share", PSI_MEMORY_SHARE) or (
            wall and _above(rec, "major_faults", MAJOR_FAULTS_PER_S, wall)):
        causes.append("memory")
    if _above(rec, "psi_io_share", PSI_IO_SHARE):
        causes.append("io")
    if wall and _above(rec, "gc_pause_s", GC_SHARE, wall):
        causes.append("gc")
    if (isinstance(runnable, (int, float)) and isinstance(cpus, (int, float))
            and runnable > max(cpus, 1.0, planned_threads or 0) + OVERSUBSCRIBED_MARGIN):
        causes.append("oversubscribed")
    drift, loop = rec.get("drift_pct"), rec.get("loop_drift_pct")
    if (isinstance(drift, (int, float)) and abs(drift) > DRIFT_PCT
            and (not isinstance(loop, (int, float))
                 or (loop * drift > 0 and abs(loop) > LOOP_DRIFT_PCT))):
        causes.append("drift")
    return causes


def loop_drift_pct(samples_ns: Any) -> float | None:
    """How much the loop's own calls moved over it, in %: the median of the last quarter of
    the calls (in the order made) against the first quarter (None for fewer than 8 calls).

    The confirmation ``drift`` needs where the calls are known (:data:`LOOP_DRIFT_PCT`): the
    probe sees 0.7 ms before and after, the calls the whole loop."""
    import numpy as np

    calls = np.asarray(samples_ns, dtype=np.float64)
    n = calls.size
    if n < 8:
        return None
    q = n // 4
    first, last = float(np.median(calls[:q])), float(np.median(calls[n - q:]))
    return round(100.0 * (last - first) / first, 2) if first > 0 else None


def thresholds(others_cores: float) -> dict[str, float]:
    """Every cause's threshold, as the record keeps them (``cause_thresholds``)."""
    return {"others_cores": others_cores, "run_wait_share": RUN_WAIT_SHARE,
            "throttled_share": THROTTLED_SHARE, "steal_share": STEAL_SHARE,
            "psi_memory_share": PSI_MEMORY_SHARE, "major_faults_per_s": MAJOR_FAULTS_PER_S,
            "psi_io_share": PSI_IO_SHARE, "gc_share": GC_SHARE,
            "oversubscribed_margin": OVERSUBSCRIBED_MARGIN, "drift_pct": DRIFT_PCT,
            "loop_drift_pct": LOOP_DRIFT_PCT}
