"""Staged causes: does each disturbance, made for real on this machine, get its cause named?

Issue 36's acceptance: every cause is staged here and real points are measured with the
library, exactly as ``MeasureRuntime`` measures them (:func:`mlprof.measure.measure_isolated`:
the harness in a forkserver child, default settings: 100 calls, 10 warm-up calls, 0.5 s
minimum duration). Each stage counts how many of its affected points carry the expected cause
in their record (``environment.causes``); the quick start stages run ``law run PlotRuntimes``
itself. Stages (``--stage``, default all):

- ``busy``: one busy loop pinned (``os.sched_setaffinity``) to the one CPU the measurement is
  pinned to -> ``cpu-wait`` (or ``others``);
- ``quota``: the measuring process in a cgroup with half a CPU (v1 ``cpu.cfs_quota_us`` 50000
  of ``cpu.cfs_period_us`` 100000, v2 ``cpu.max`` ``50000 100000``; needs root; the cgroup is
  removed afterwards, also on errors) -> ``throttled``;
- ``faults``: a neighbour process reading a 64 MB file page by page after dropping it from the
  page cache (``posix_fadvise(DONTNEED)``), over and over -> ``io`` (or ``memory``);
- ``faults-model``: a PyTorch model script whose forward reads 16 pages of such a file
  (``benchmarks/staged/fault_storm.py``: major faults in the measured process) -> ``memory``;
- ``gc``: a PyTorch model script whose forward allocates cyclic garbage
  (``benchmarks/staged/gc_storm.py``) -> ``gc``;
- ``threads``: onnxruntime with 8 intra-op threads on the machine's 2 CPUs -> ``oversubscribed``;
- ``quickstart-nice``: the README's quick start (``law run PlotRuntimes``, 11 batch sizes, in a
  temporary store) beside two ``nice -n 19`` busy loops; ``quickstart-spin``: beside 12
  processes that each sleep and spin in turn (0.05-0.3 s each): every point whose run-queue
  wait beyond our own threads' (``run_wait_share - own_wait_share``) exceeded
  :data:`mlprof.measure.causes.RUN_WAIT_SHARE` must be ``contended`` with ``cpu-wait`` and
  carry ``!`` in the printed table;
- ``quiet``: the ``busy``/``threads`` stages' point settings with nothing staged (an A/A run):
  the share of points carrying any cause (target: at most 5 %).

The table printed at the end: stage, points, affected points (all of a staged disturbance's;
for the quick start those above the threshold; for ``quiet`` none is expected), points with the
expected cause, their share, the other causes seen, and the signal behind the expected cause
(median and range over the stage's points), with the load average before the stage.

Usage (after ``source setup.sh``)::

    python benchmarks/staged_causes.py [--stage busy,quota,...|quiet] [--points 10] [--quick]
        [--json FILE]

``--quick``: 3 points per stage. ``--json FILE``: every point's stage, settings and
``environment`` record. Every process the script starts is killed at the end (and dies with it:
``PR_SET_PDEATHSIG``). This is a benchmark, not a test: it exits 0 whatever the shares are
(1 when a stage could not run at all).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

BASE = os.environ.get("MLP_BASE") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(BASE, "examples", "dnn", "model_onnx_l10u128.yaml")
GC_SCRIPT = os.path.join(BASE, "benchmarks", "staged", "gc_storm.py")
FAULT_SCRIPT = os.path.join(BASE, "benchmarks", "staged", "fault_storm.py")
CGROUP_NAME = f"mlprof-staged-{os.getpid()}"

#: stage -> the causes that count as right (any of them)
EXPECTED: dict[str, tuple[str, ...]] = {
    "busy": ("cpu-wait", "others"), "quota": ("throttled",), "faults": ("io", "memory"),
    "faults-model": ("memory",), "gc": ("gc",), "threads": ("oversubscribed",),
    "quickstart-nice": ("cpu-wait",), "quickstart-spin": ("cpu-wait",), "quiet": (),
}
STAGES = tuple(EXPECTED)
#: stage -> the record key shown as its signal
SIGNAL = {"busy": "run_wait_share", "quota": "throttled_s", "faults": "psi_io_share",
          "faults-model": "major_faults", "gc": "gc_pause_s", "threads": "runnable_threads",
          "quickstart-nice": "run_wait_share", "quickstart-spin": "run_wait_share",
          "quiet": "run_wait_share"}
#: the batch sizes the measured points cycle through (onnxruntime stages)
BATCH_SIZES = (1, 16, 256)

_PR_SET_PDEATHSIG = 1


def _die_with_us(cpus: set[int] | None = None, nice: int = 0) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets SIGKILL when this script dies (``PR_SET_PDEATHSIG``),
    is pinned to ``cpus`` and niced by ``nice``."""

    def setup() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if cpus:
            os.sched_setaffinity(0, cpus)
        if nice:
            os.nice(nice)

    return setup


_started: list[subprocess.Popen[Any]] = []


def _spawn(code: str, *args: str, cpus: set[int] | None = None, nice: int = 0,
           **kw: Any) -> subprocess.Popen[Any]:
    proc = subprocess.Popen([sys.executable, "-c", code, *args],
                            preexec_fn=_die_with_us(cpus, nice), **kw)
    _started.append(proc)
    return proc


def _stop_all() -> None:
    """Kill every process this script started (and wait for it)."""
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            with _suppress():
                proc.kill()
        with _suppress():
            proc.wait(10)


@contextmanager
def _suppress() -> Iterator[None]:
    try:
        yield
    except (OSError, subprocess.TimeoutExpired):
        pass


BURN = "while True: pass"
#: sleeps and spins in turn, 0.05-0.3 s each (seeded per process: argv[1])
SLEEP_SPIN = """
import random, sys, time
rng = random.Random(int(sys.argv[1]))
while True:
    time.sleep(rng.uniform(0.05, 0.3))
    t = time.perf_counter() + rng.uniform(0.05, 0.3)
    while time.perf_counter() < t:
        pass
"""
#: reads a 64 MB file page by page after dropping it from the page cache, over and over (its
#: pages unmapped first: ``POSIX_FADV_DONTNEED`` leaves the pages a process maps)
FAULTS = """
import mmap, os, sys, tempfile
size = 64 << 20
f = tempfile.TemporaryFile(dir=sys.argv[1])
f.write(os.urandom(size)); f.flush(); os.fsync(f.fileno())
m = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
m.madvise(mmap.MADV_RANDOM)
print("ready", flush=True)
while True:
    m.madvise(mmap.MADV_DONTNEED)  # unmapped first: the page cache keeps mapped pages
    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    for off in range(0, size, 4096):
        m[off]
"""


# ---------------------------------------------------------------- the measuring worker


def worker(spec: dict[str, Any]) -> None:
    """Measure ``spec['points']`` (model, runtime, threads, batch size) one after the other
    with :func:`mlprof.measure.measure_isolated`, pinned to ``spec['cpus']`` and in the cgroup
    ``spec['cgroup']`` first (so that the measurement server and its children are too), and
    print one JSON line per point."""
    if spec.get("cgroup"):
        with open(os.path.join(spec["cgroup"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    if spec.get("cpus"):
        os.sched_setaffinity(0, set(spec["cpus"]))
    from mlprof.measure import MeasureSettings, measure_isolated

    for model, runtime, threads, bs in spec["points"]:
        res = measure_isolated(model, MeasureSettings(batch_size=bs, runtime=runtime,
                                                      threads=threads))
        prov = res.provenance
        print(json.dumps({"model": os.path.basename(model), "runtime": runtime,
                          "threads": threads, "batch_size": bs,
                          "median_ms": statistics.median(res.samples_ms.tolist()),
                          "lock_wait_s": prov.get("lock_wait_s"),
                          "environment": prov["environment"]}), flush=True)


def _measure(stage: str, points: list[tuple[str, str, int, int]], cpus: set[int] | None = None,
             cgroup: str | None = None) -> list[dict[str, Any]]:
    """Run the worker on ``points`` and collect its records, saying what it does as it goes."""
    spec = {"points": points, "cpus": sorted(cpus) if cpus else None, "cgroup": cgroup}
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                             json.dumps(spec)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=_die_with_us())
    _started.append(proc)
    out = []
    assert proc.stdout is not None
    for line in proc.stdout:
        rec = json.loads(line)
        rec["stage"] = stage
        out.append(rec)
        env = rec["environment"]
        print(f"  {stage}: point {len(out)}/{len(points)} ({rec['model']} {rec['runtime']} "
              f"threads {rec['threads']} bs {rec['batch_size']}): causes {env.get('causes')}, "
              f"{SIGNAL[stage]} {env.get(SIGNAL[stage])}", flush=True)
    if proc.wait() != 0:
        raise RuntimeError(f"{stage}: the measuring worker failed (exit code {proc.returncode})")
    return out


def _ort_points(n: int, threads: int = 1) -> list[tuple[str, str, int, int]]:
    return [(MODEL, "onnxruntime", threads, BATCH_SIZES[i % len(BATCH_SIZES)]) for i in range(n)]


def _script_points(script: str, n: int) -> list[tuple[str, str, int, int]]:
    return [(script, "torch", 1, (1, 16)[i % 2]) for i in range(n)]


# ---------------------------------------------------------------- the cgroup


def _cgroup_root() -> tuple[str, str]:
    """(the CPU controller's hierarchy root, ``v1`` or ``v2``)."""
    if os.path.isfile("/sys/fs/cgroup/cpu/cpu.cfs_period_us") or os.path.isfile(
            "/sys/fs/cgroup/cpu/cgroup.procs"):
        return "/sys/fs/cgroup/cpu", "v1"
    for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        try:
            with open(f"{root}/cgroup.controllers") as f:
                if "cpu" in f.read().split():
                    return root, "v2"
        except OSError:
            continue
    raise RuntimeError("no cgroup hierarchy with the cpu controller under /sys/fs/cgroup")


@contextmanager
def half_cpu_cgroup() -> Iterator[str]:
    """A cgroup allowed half a CPU (50 ms every 100 ms), removed afterwards whatever happens:
    the processes still in it are moved back to the root and it is ``rmdir``-ed."""
    root, version = _cgroup_root()
    path = os.path.join(root, CGROUP_NAME)
    os.mkdir(path)
    try:
        if version == "v1":
            with open(f"{path}/cpu.cfs_period_us", "w") as f:
                f.write("100000")
            with open(f"{path}/cpu.cfs_quota_us", "w") as f:
                f.write("50000")
        else:
            with open(f"{path}/cpu.max", "w") as f:
                f.write("50000 100000")
        yield path
    finally:
        remove_cgroup(path, root)


def remove_cgroup(path: str, root: str) -> None:
    """Move what is left in ``path`` to ``root`` and remove it (retrying for 5 s while its
    last processes exit)."""
    deadline = time.monotonic() + 5
    while True:
        try:
            with open(f"{path}/cgroup.procs") as f:
                pids = f.read().split()
        except OSError:
            pids = []
        for pid in pids:
            with _suppress(), open(f"{root}/cgroup.procs", "w") as f:
                f.write(pid)
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# ---------------------------------------------------------------- the stages


def _pinned_cpu() -> int:
    return max(os.sched_getaffinity(0))


def stage_busy(n: int) -> list[dict[str, Any]]:
    cpu = _pinned_cpu()
    _spawn(BURN, cpus={cpu})
    time.sleep(0.2)
    return _measure("busy", _ort_points(n), cpus={cpu})


def stage_quota(n: int) -> list[dict[str, Any]]:
    with half_cpu_cgroup() as path:
        return _measure("quota", _ort_points(n), cgroup=path)


def stage_faults(n: int) -> list[dict[str, Any]]:
    proc = _spawn(FAULTS, os.environ.get("MLP_STAGED_DIR", "/var/tmp"), stdout=subprocess.PIPE,
                  text=True)
    assert proc.stdout is not None
    proc.stdout.readline()
    time.sleep(0.2)
    return _measure("faults", _ort_points(n))


def stage_faults_model(n: int) -> list[dict[str, Any]]:
    return _measure("faults-model", _script_points(FAULT_SCRIPT, n))


def stage_gc(n: int) -> list[dict[str, Any]]:
    return _measure("gc", _script_points(GC_SCRIPT, n))


def stage_threads(n: int) -> list[dict[str, Any]]:
    return _measure("threads", [(MODEL, "onnxruntime", 8, (16, 256)[i % 2]) for i in range(n)])


def stage_quiet(n: int) -> list[dict[str, Any]]:
    # the settings of the other stages' onnxruntime points, nothing staged; one in four
    # pinned to one CPU as in ``busy``
    pinned = _measure("quiet", _ort_points(max(1, n // 4)), cpus={_pinned_cpu()})
    return pinned + _measure("quiet", _ort_points(n - len(pinned)))


def _quickstart(stage: str) -> list[dict[str, Any]]:
    """``law run PlotRuntimes`` (the README's quick start) in a temporary store; its points
    with the table row's marker."""
    store = tempfile.mkdtemp(prefix="mlprof-staged-")
    version = f"staged-{stage}-{os.getpid()}"
    cmd = ["law", "run", "PlotRuntimes", "--version", version]
    print(f"  {stage}: $ MLP_STORE={store} {' '.join(cmd)}", flush=True)
    try:
        proc = subprocess.Popen(cmd, env=dict(os.environ, MLP_STORE=store),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=_die_with_us())
        _started.append(proc)
        assert proc.stdout is not None
        lines = []
        last = time.monotonic()
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if time.monotonic() - last > 4 or "median latency" in line:
                print(f"  {stage}: {line.rstrip()[:150]}", flush=True)
                last = time.monotonic()
        if proc.wait() != 0:
            raise RuntimeError(f"{stage}: law run failed:\n" + "\n".join(lines[-30:]))
        markers = {}
        for line in lines:
            m = re.match(r"\s+(\d+)\s+[\d.]+\s*(\S*)\s*$", line)
            if m:
                markers[int(m.group(1))] = m.group(2)
        out = []
        pattern = os.path.join(store, "MeasureRuntime", "**", "runtime_bs_*.json")
        for path in sorted(glob.glob(pattern, recursive=True)):
            with open(path) as f:
                prov = json.load(f)
            bs = int(re.search(r"runtime_bs_(\d+)\.json$", path).group(1))  # type: ignore
            out.append({"stage": stage, "model": os.path.basename(MODEL),
                        "runtime": "onnxruntime", "threads": 1, "batch_size": bs,
                        "marker": markers.get(bs), "environment": prov["environment"]})
        return sorted(out, key=lambda r: r["batch_size"])
    finally:
        shutil.rmtree(store, ignore_errors=True)


def stage_quickstart_nice(n: int) -> list[dict[str, Any]]:
    for _ in range(2):
        _spawn(BURN, nice=19)
    return _quickstart("quickstart-nice")


def stage_quickstart_spin(n: int) -> list[dict[str, Any]]:
    for k in range(12):
        _spawn(SLEEP_SPIN, str(k))
    return _quickstart("quickstart-spin")


RUNNERS: dict[str, Callable[[int], list[dict[str, Any]]]] = {
    "busy": stage_busy, "quota": stage_quota, "faults": stage_faults,
    "faults-model": stage_faults_model, "gc": stage_gc, "threads": stage_threads,
    "quickstart-nice": stage_quickstart_nice, "quickstart-spin": stage_quickstart_spin,
    "quiet": stage_quiet,
}


# ---------------------------------------------------------------- judging


def wait_beyond_own(env: dict[str, Any]) -> float | None:
    """The run-queue wait share beyond what our own threads cause each other (what
    ``cpu-wait`` is judged on)."""
    from mlprof.measure.causes import own_wait_share

    wait = env.get("run_wait_share")
    if not isinstance(wait, (int, float)):
        return None
    return wait - own_wait_share(env.get("runnable_threads"), env.get("usable_cpus"))


def affected(stage: str, rec: dict[str, Any]) -> bool:
    """Whether a point of ``stage`` was disturbed: every point of a staged disturbance; in the
    quick start, those whose wait beyond their own exceeded the threshold; none when quiet."""
    from mlprof.measure.causes import RUN_WAIT_SHARE

    if stage == "quiet":
        return False
    if stage.startswith("quickstart"):
        beyond = wait_beyond_own(rec["environment"])
        return beyond is not None and beyond > RUN_WAIT_SHARE
    return True


def hit(stage: str, rec: dict[str, Any]) -> bool:
    """Whether the point carries its stage's expected cause (the quick start: also
    ``contended`` and ``!`` in the printed table)."""
    env = rec["environment"]
    named = env.get("causes") or []
    if stage == "quiet":
        return bool(named)
    ok = any(c in named for c in EXPECTED[stage])
    if stage.startswith("quickstart"):
        ok = ok and env.get("contended") is True and "!" in (rec.get("marker") or "")
    return ok


@dataclass
class Row:
    """One stage's line of the table."""

    stage: str
    load: str
    records: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def cells(self) -> list[str]:
        if self.error:
            return [self.stage, "-", "-", "-", "-", self.error, "-", self.load]
        aff = [r for r in self.records if affected(self.stage, r)]
        if self.stage == "quiet":
            aff = self.records
        hits = [r for r in aff if hit(self.stage, r)]
        others: Counter[str] = Counter()
        for r in self.records:
            for c in r["environment"].get("causes") or []:
                if c not in EXPECTED[self.stage]:
                    others[c] += 1
        share = f"{len(hits) / len(aff):.0%}" if aff else "-"
        key = SIGNAL[self.stage]
        values = [v for r in self.records
                  if isinstance(v := r["environment"].get(key), (int, float))]
        if key == "throttled_s" or key == "gc_pause_s":  # as a share of the window
            values = [r["environment"][key] / r["environment"]["window_s"]
                      for r in self.records if r["environment"].get("window_s")
                      and isinstance(r["environment"].get(key), (int, float))]
            key = key.replace("_s", "") + " share"
        signal_text = (f"{key} {statistics.median(values):.3g} ({min(values):.3g}-"
                       f"{max(values):.3g})" if values else "-")
        return [self.stage, str(len(self.records)), str(len(aff)),
                str(len(hits)) + (" with any" if self.stage == "quiet" else ""), share,
                ", ".join(f"{c} {k}" for c, k in others.most_common()) or "-", signal_text,
                self.load]


HEADER = ["stage", "points", "affected", "expected cause", "share", "other causes seen",
          "signal: median (range)", "loadavg before"]


def table(rows: list[Row]) -> str:
    """The markdown table of the stages (as docs/noise.md shows it)."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines)


def _loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stage", default=",".join(STAGES),
                    help=f"comma-separated stages (default: all): {', '.join(STAGES)}")
    ap.add_argument("--points", type=int, default=10, help="points per stage (default 10; "
                    "the quick start stages measure their 11 batch sizes)")
    ap.add_argument("--quick", action="store_true", help="3 points per stage")
    ap.add_argument("--json", help="write every point's record to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    stages = [s.strip() for s in args.stage.split(",") if s.strip()]
    unknown = [s for s in stages if s not in RUNNERS]
    if unknown:
        ap.error(f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(STAGES)}")
    n = 3 if args.quick else args.points
    rows: list[Row] = []
    try:
        for stage in stages:
            row = Row(stage, _loadavg())
            print(f"stage {stage} (loadavg {row.load}): {EXPECTED[stage] or 'nothing staged'}",
                  flush=True)
            try:
                row.records = RUNNERS[stage](n)
            except (OSError, RuntimeError) as e:
                row.error = f"could not run: {str(e).splitlines()[0][:120]}"
                print(f"  {stage}: {row.error}", flush=True)
            finally:
                _stop_all()
            rows.append(row)
    finally:
        _stop_all()
    print()
    print(table(rows))
    if args.json:
        from mlprof.util import write_json_atomic

        write_json_atomic(args.json, [r for row in rows for r in row.records])
    return 1 if rows and all(r.error for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
