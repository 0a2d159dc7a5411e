"""Contention and environment of a measurement, read from ``/proc`` and ``/sys`` (Linux).

What competed with a measurement for the machine is measured, not guessed: the harness takes a
:func:`snapshot` just before its timed loop and one just after, never inside it (one snapshot
costs 1.0 ms on this busy 2-core VM: 0.23 ms of counters, 0.71 ms of drift probe; twice per
batch size, outside ``loop_wall_s``: 0.4 % of a 0.5 s loop's wall time), and
:func:`environment` turns the two into the provenance's ``environment`` record:

- ``other_cpu_cores``: CPU time used by every other process on the CPUs this process may run on
  (its affinity), per wall second, in cores: the busy jiffies of those CPUs in ``/proc/stat``
  (user + nice + system + irq + softirq + steal) minus this process' own (``/proc/self/stat``
  utime + stime of all its threads, plus waited-for children and live descendants);
  steal counts as other: the hypervisor gave our CPU to another guest;
- ``own_cpu_cores``: this process' CPU time per wall second (its threads);
- ``steal_share``: the share of the CPUs' time stolen by the hypervisor;
- ``loadavg``: ``/proc/loadavg`` (1, 5 and 15 minutes) after the loop (it counts this process);
- ``cpu_mhz``: the mean ``scaling_cur_freq`` of those CPUs before and after the loop, None
  where there is no cpufreq (most VMs, this one included);
- the cause record (:mod:`mlprof.measure.causes`): our threads' run-queue wait
  (``run_wait_s``, ``run_wait_share``, ``own_wait_share``), ``runnable_threads``, ``threads``,
  ``usable_cpus``, PSI (``psi_cpu_share``, ``psi_memory_share``, ``psi_io_share``), cgroup
  throttling (``throttled_s``, ``nr_throttled``), ``invol_ctx_switches``, ``major_faults``,
  ``gc_pause_s`` (None unless the harness watched the GC), ``probe_us`` and ``drift_pct``;
- ``causes``: the causes whose signal crossed its threshold (``cause_thresholds``), in
  :data:`mlprof.measure.causes.CAUSES` order; ``others`` is ``other_cpu_cores`` above
  :data:`CONTENDED_CORES` (what a contended record written before the causes names);
- ``contended``: a cause was named; None (not judged, ``causes`` None) for a loop shorter than
  :data:`MIN_WINDOW_S`.

``contended`` is a property of the machine during the measurement, separate from ``unstable``
(the samples' CV): a busy neighbour often leaves the CV low and shifts every sample instead.

:func:`system_checks` lists what makes a machine a poor benchmark machine the way pyperf's
``system show`` does (frequency governor, turbo, SMT), for ``mlprof system-info``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import time
from dataclasses import dataclass
from typing import Any

from mlprof.measure import causes as _causes

#: other processes using more CPU than this (in cores, averaged over the timed loop) mark a
#: measurement ``contended``. Measured on this 2-core VM (onnxruntime, 1 thread, a 0.6 s
#: loop, 4 measurements each) while other test runs kept it busy (1.94-2.02 cores used by
#: others while the probe slept): without a burner, other processes used 0.98-1.41 cores and
#: the loop got 0.57-1.00 of its core; beside one ``python -c 'while True: pass'``
#: 1.64-1.73 cores (the loop got 0.28-0.33), beside two 1.64-1.73 as well (both CPUs were
#: already saturated). A burner is always above ~1 core on 2 CPUs: while it is runnable no
#: CPU idles, so other = 2 - own >= 1 for a 1-thread loop. What mlprof itself adds is far
#: below: the parent's 10 Hz memory watch used 0.009 cores (its CPU time over 6.6 s of
#: isolated measurements), jiffy rounding +-0.07 over a 0.5 s loop (:data:`MIN_WINDOW_S`).
#: Half a core flags a neighbour that runs half of the time. No idle moment came up on this
#: shared VM to measure a quiet machine's value; the tests check it when one does.
CONTENDED_CORES = 0.5
#: a timed loop shorter than this is not judged (``contended`` None): the counters advance in
#: 10 ms jiffies, so busy minus own is uncertain by a few jiffies (+-0.04 s on 2 CPUs), i.e.
#: +-0.2 cores over 0.2 s, +-0.07 over the default 0.5 s; over 2.4 ms (10 calls,
#: ``--min-duration 0``) it read 0.0 cores on a machine whose other processes used 2
MIN_WINDOW_S = 0.2

#: the causes a window shorter than :data:`MIN_WINDOW_S` may name (``environment(short=True)``):
#: those whose counters are finer than a jiffy (schedstat ns, PSI and cgroup us, getrusage
#: counts, the GC's clock); ``others`` and ``steal`` are not among them, nor ``drift`` unless
#: the snapshots ran the probe
SHORT_CAUSES = tuple(c for c in _causes.CAUSES if c not in ("others", "steal"))

_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Snapshot:
    """CPU counters at one moment: wall time, busy and steal jiffies of ``cpus``, own jiffies,
    and the counters of the causes (:class:`mlprof.measure.causes.Counters`; None: not read)."""

    wall: float
    cpus: tuple[int, ...]
    busy: int
    steal: int
    own: int
    mhz: float | None
    causes: _causes.Counters | None = None


def _affinity() -> set[int] | None:
    with contextlib.suppress(AttributeError, OSError):
        return set(os.sched_getaffinity(0))
    return None


def _cpu_jiffies(cpus: set[int] | None) -> tuple[tuple[int, ...], int, int] | None:
    """``(cpus counted, busy, steal)`` jiffies from ``/proc/stat`` (None where unreadable)."""
    try:
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    seen, busy, steal = [], 0, 0
    for line in lines:
        if not line.startswith("cpu") or line.startswith("cpu "):
            continue
        name, *fields = line.split()
        try:
            n = int(name[3:])
            v = [int(x) for x in fields[:8]] + [0] * (8 - len(fields[:8]))
        except ValueError:
            continue
        if cpus is not None and n not in cpus:
            continue
        seen.append(n)
        # user nice system idle iowait irq softirq steal (guest time is inside user)
        busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
        steal += v[7]
    return (tuple(seen), busy, steal) if seen else None


def _proc_jiffies(pid: int | str, children: bool = False) -> int:
    """utime + stime (+ cutime + cstime with ``children``) of a process; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        used = int(fields[11]) + int(fields[12])
        return used + int(fields[13]) + int(fields[14]) if children else used
    except (OSError, IndexError, ValueError):
        return 0


def _mean_mhz(cpus: tuple[int, ...]) -> float | None:
    """The mean current frequency of ``cpus`` in MHz (None: no cpufreq)."""
    values = []
    for n in cpus:
        try:
            with open(f"/sys/devices/system/cpu/cpu{n}/cpufreq/scaling_cur_freq") as f:
                values.append(int(f.read()) / 1000)
        except (OSError, ValueError):
            continue
    return sum(values) / len(values) if values else None


def snapshot(probe: bool = True) -> Snapshot | None:
    """This moment's counters for the current process (None where ``/proc/stat`` is missing).

    Own time is the process (all threads) with its waited-for children, plus the processes
    below it now (a model's workers), so that what the measurement itself starts is not
    "other"; the causes' counters (:func:`mlprof.measure.causes.counters`) count the threads
    of the same processes, and run the drift probe first unless ``probe`` is False.
    """
    # here, not at the top: the summary of a no-op ``law run`` reads causes_of/is_contended and
    # needs none of isolate's multiprocessing (-10 to -25 ms per start-up, issue 38)
    from mlprof.measure.proctree import descendants

    affinity = _affinity()
    kids = descendants(os.getpid())
    extra = _causes.counters([os.getpid(), *kids], len(affinity) if affinity else None, probe)
    read = _cpu_jiffies(affinity)
    if read is None:
        return None
    cpus, busy, steal = read
    own = _proc_jiffies("self", children=True)
    own += sum(_proc_jiffies(k) for k in kids)
    return Snapshot(time.monotonic(), cpus, busy, steal, own, _mean_mhz(cpus), extra)


def _loadavg() -> list[float] | None:
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return None


def environment(start: Snapshot | None, end: Snapshot | None,
                planned_threads: float | None = None, short: bool = False,
                loop_drift_pct: float | None = None,
                threads: _causes.ThreadLog | None = None) -> dict[str, Any]:
    """The ``environment`` record of the window between two snapshots (see the module
    docstring); its numbers are None where they could not be read. ``planned_threads``: the
    threads the measurement runs on purpose (a load point's streams x threads: more than the
    CPUs is then its experiment, not ``oversubscribed``; see
    :func:`mlprof.measure.causes.named_causes`).

    ``short``: a window shorter than :data:`MIN_WINDOW_S` (an interleaved round, tens of ms)
    is judged too, on the causes read from ns and us counters only (:data:`SHORT_CAUSES`:
    ``others`` and ``steal`` come from 10 ms jiffies, +-0.7 cores over 30 ms), with the
    per-second rules (major faults, throttled and GC time) over :data:`MIN_WINDOW_S`.

    ``loop_drift_pct``: how much the loop's own calls moved
    (:func:`mlprof.measure.causes.loop_drift_pct`), which ``drift`` then needs too.
    ``threads``: the threads that ran inside the window and may have ended before ``end``
    (:class:`mlprof.measure.causes.ThreadLog`; a load point's workers)."""
    rec: dict[str, Any] = {
        "window_s": None, "cpus": None, "other_cpu_cores": None, "own_cpu_cores": None,
        "steal_share": None, "loadavg": _loadavg(), "cpu_mhz": None, "contended": None,
        "contended_threshold_cores": CONTENDED_CORES,
    }
    ok = not (start is None or end is None or start.cpus != end.cpus or end.wall <= start.wall)
    wall = end.wall - start.wall if ok and start is not None and end is not None else 0.0
    first, last = (start.causes if ok and start else None), (end.causes if ok and end else None)
    if threads is not None:
        first, last = threads.merged(first, last)
    rec.update(_causes.signals(first, last, wall))
    rec.update(causes=None, cause_thresholds=_causes.thresholds(CONTENDED_CORES),
               planned_threads=planned_threads)
    if loop_drift_pct is not None:
        rec["loop_drift_pct"] = loop_drift_pct
    if not ok or start is None or end is None:
        return rec
    busy, own = end.busy - start.busy, end.own - start.own
    other = max(0.0, (busy - own) / _HZ / wall)
    mhz = [m for m in (start.mhz, end.mhz) if m is not None]
    rec.update(
        window_s=round(wall, 4), cpus=len(end.cpus), other_cpu_cores=round(other, 3),
        own_cpu_cores=round(own / _HZ / wall, 3),
        steal_share=round((end.steal - start.steal) / _HZ / wall / len(end.cpus), 4),
        cpu_mhz=round(sum(mhz) / len(mhz), 1) if mhz else None)
    if wall >= MIN_WINDOW_S or short:
        if wall >= MIN_WINDOW_S:
            named = _causes.named_causes(rec, CONTENDED_CORES, planned_threads)
        else:  # rates over MIN_WINDOW_S at least: one major fault in a 34 ms interleaved
            # round read 30/s (above 20/s) and named memory in 3 of 12 quiet rounds
            named = [c for c in _causes.named_causes({**rec, "window_s": MIN_WINDOW_S},
                                                     CONTENDED_CORES, planned_threads)
                     if c in SHORT_CAUSES]
        rec["causes"] = named
        rec["contended"] = bool(named)
    return rec


def causes_of(provenance: dict[str, Any]) -> list[str]:
    """The causes a branch's provenance names (empty for records from before them; a record
    from before the causes but contended names ``others``, the only rule it had)."""
    env = provenance.get("environment")
    if not isinstance(env, dict):
        return []
    named = env.get("causes")
    if isinstance(named, list):
        return [str(c) for c in named]
    return ["others"] if env.get("contended") is True else []


def is_contended(provenance: dict[str, Any]) -> bool:
    """Whether a branch's provenance says it was measured under contention: False for records
    from before the ``environment`` record, and where it was not judged (a short loop, no
    ``/proc``)."""
    env = provenance.get("environment")
    return isinstance(env, dict) and env.get("contended") is True


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def system_checks(root: str = "/sys/devices/system/cpu") -> list[str]:
    """What makes this machine measure less reproducibly, as pyperf's ``system show`` checks:
    the CPU frequency governor (not ``performance``: the frequency follows the load, so the
    first calls run slower), turbo/boost (the frequency follows temperature and the other
    cores' load), SMT (a sibling hyperthread shares the core's units with the measurement).

    One line per check that fails or cannot be read ("unknown"); an empty list: all fine.
    """
    checks: list[str] = []
    governors = {g for p in sorted(glob.glob(f"{root}/cpu[0-9]*/cpufreq/scaling_governor"))
                 if (g := _read(p))}
    if not governors:
        checks.append("CPU frequency governor: unknown (no cpufreq in /sys: a VM or a kernel "
                      "without frequency scaling; the host may still scale)")
    elif governors != {"performance"}:
        checks.append(f"CPU frequency governor is {', '.join(sorted(governors))}, not "
                      "performance: the frequency follows the load (cpupower frequency-set "
                      "--governor performance)")
    no_turbo, boost = _read(f"{root}/intel_pstate/no_turbo"), _read(f"{root}/cpufreq/boost")
    if no_turbo == "0" or boost == "1":
        checks.append("turbo/boost is enabled: the frequency follows temperature and the load "
                      "of the other cores (echo 1 > /sys/devices/system/cpu/intel_pstate/"
                      "no_turbo, or 0 > .../cpufreq/boost)")
    elif no_turbo is None and boost is None:
        checks.append("turbo/boost: unknown (neither intel_pstate/no_turbo nor cpufreq/boost "
                      "is readable)")
    smt = _read(f"{root}/smt/active")
    if smt == "1":
        checks.append("SMT (hyperthreading) is active: a sibling thread shares the core with "
                      "the measurement (echo off > /sys/devices/system/cpu/smt/control)")
    elif smt is None:
        checks.append("SMT: unknown (smt/active is not readable)")
    return checks


def contended_warning(name: str, rows: list[dict[str, Any]],
                      runtime: str | None = None) -> str | None:
    """A warning naming the model (``name``), the ``runtime``, the batch sizes measured under
    contention and the cause(s) at each (rows' ``causes``, :func:`causes_of`; None if none is
    contended), so that the line says which curve to measure again and what disturbed it."""
    from mlprof.measure.trust import cause_line

    hit = [str(r["batch_size"]) for r in rows if r.get("contended")]
    if not hit:
        return None
    where = f"{name} on {runtime}" if runtime else name
    return (f"{where}: measured under contention at batch size(s) {', '.join(hit)} "
            f"({cause_line(rows)}): their latencies may be too high; measure again on a quiet "
            "machine (docs/noise.md: what each cause means; the provenance's environment "
            "record: its signals)")
