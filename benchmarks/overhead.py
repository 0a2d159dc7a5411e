"""Overhead: how much wall time does a ``law run PlotRuntimes`` sweep spend outside timed calls?

Runs ``law run PlotRuntimes --version bench-<timestamp>-<pid>-<n>`` as a subprocess, exactly as
a user would (default model, the default 11 batch sizes 1..1024, 100 calls, 10 warm-up, 0.5 s
minimum duration, 1 thread) into a fresh temporary store (``MLP_STORE`` set to a ``mkdtemp``
directory in the child's environment), and measures the wall time of that command. It then reads
what ``MeasureRuntime`` wrote per batch size:

- ``runtime_bs_<N>.csv``: one ``runtime_ms`` per timed call, summed to the *timed sum*;
- ``runtime_bs_<N>.json``: provenance with ``timed_sum_s`` (cross-check), ``session_creation_ms``,
  ``first_call_ms``, ``warmup_ms`` and ``loop_wall_s``;

and prints::

    overhead per point: (wall - timed sum) / points  s      (target <= 0.15 s, issue 38)

and, at the end, a *host reference*: the imports the sweep's fixed costs are made of (law and
luigi, pyplot, onnx), each timed in fresh interpreters, so that a figure says which kind of host it
is from (``--no-host`` skips it).

The child's log lines are time-stamped as they arrive (luigi logs to stderr and flushes every
record), which splits the wall time into phases: start-up until the first task runs, every
``MeasureRuntime`` branch (measurement vs. everything else in the branch), scheduler gaps,
``MergeRuntimes``, ``PlotRuntimes`` and the shutdown.

Usage (after ``source setup.sh``)::

    python benchmarks/overhead.py [--runs 1] [--keep] [--no-host] [--law-args "--batch-sizes 1,2,4"]

This is a benchmark, not a test: it exits 0 unless the law command fails.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

#: luigi's worker lines: "... running   MeasureRuntime(..., branch=3, ...)" and "... done ..."
_TASK_LINE = re.compile(r"\) (running|done|failed)\s+(\w+)\((.*)\)\s*$")
_BRANCH = re.compile(r"\bbranch=(-?\d+)")


@dataclass
class Point:
    """What ``MeasureRuntime`` recorded for one batch size, plus its task's log times."""

    batch_size: int
    timed_csv_s: float
    prov: dict[str, Any]
    #: seconds after the start of ``law run`` when the branch task started / finished (log)
    task_start: float | None = None
    task_end: float | None = None

    @property
    def timed_json_s(self) -> float:
        """``timed_sum_s`` from the provenance JSON."""
        return float(self.prov["timed_sum_s"])

    @property
    def measured_s(self) -> float:
        """Session creation, first call, warm-up and the timed loop, as the child measured."""
        p = self.prov
        return (p["session_creation_ms"] + p["first_call_ms"] + p["warmup_ms"]) / 1e3 + \
            p["loop_wall_s"]

    @property
    def task_s(self) -> float | None:
        """Duration of the branch task (luigi's "running" to "done" log lines)."""
        if self.task_start is None or self.task_end is None:
            return None
        return self.task_end - self.task_start


@dataclass
class Sweep:
    """One ``law run`` sweep: its wall time, log events and the points it wrote."""

    command: list[str]
    store: str
    returncode: int
    wall_s: float
    #: ``time.time()`` when the command was started
    start_unix: float
    events: list[tuple[float, str]] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)

    @property
    def timed_s(self) -> float:
        """Sum of all timed calls (from the CSVs)."""
        return sum(p.timed_csv_s for p in self.points)

    @property
    def overhead_per_point_s(self) -> float:
        """``(wall - timed) / points``."""
        return (self.wall_s - self.timed_s) / max(len(self.points), 1)

    def split_branch(self, p: Point) -> tuple[float, float] | None:
        """Seconds of ``p``'s task before session creation and after the timed loop.

        Uses ``started_unix``/``finished_unix`` of the provenance (wall clock around session
        creation ... last timed call) when the harness records them.
        """
        s, f = p.prov.get("started_unix"), p.prov.get("finished_unix")
        if s is None or f is None or p.task_start is None or p.task_end is None:
            return None
        return s - (self.start_unix + p.task_start), (self.start_unix + p.task_end) - f


def run_sweep(law_args: list[str], keep: bool, index: int = 1) -> Sweep:
    """Run one ``law run PlotRuntimes`` sweep into a fresh temporary store and read it back.

    ``index`` numbers the sweeps of one invocation; it is part of the ``--version``.
    """
    if shutil.which("law") is None or not os.environ.get("LAW_CONFIG_FILE"):
        sys.exit("overhead: `law` or LAW_CONFIG_FILE not found; run `source setup.sh` first")
    store = tempfile.mkdtemp(prefix="mlprof-bench-store-")
    version = f"bench-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{index}"
    cmd = ["law", "run", "PlotRuntimes", "--version", version, *law_args]
    # MLP_VERBOSE=1: the per-task split reads luigi's INFO lines, hidden without it
    env = dict(os.environ, MLP_STORE=store, MLP_VERBOSE="1")
    print(f"$ MLP_STORE={store} {shlex.join(cmd)}", flush=True)
    events: list[tuple[float, str]] = []
    try:
        start_unix = time.time()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
        assert proc.stdout is not None
        for line in proc.stdout:  # blocking reads: the parent uses no CPU while the child works
            events.append((time.perf_counter() - start, line.rstrip("\n")))
        rc = proc.wait()
        wall = time.perf_counter() - start
        with open(os.path.join(store, "law_run.log"), "w") as f:
            f.writelines(f"{t:9.3f} {line}\n" for t, line in events)
        sweep = Sweep(cmd, store, rc, wall, start_unix, events, read_points(store))
    finally:
        if not keep:
            shutil.rmtree(store, ignore_errors=True)
    if rc != 0:
        tail = "\n".join(line for _, line in events[-30:])
        sys.exit(f"overhead: law run failed with exit code {rc}:\n{tail}")
    _attach_task_times(sweep)
    return sweep


def read_points(store: str) -> list[Point]:
    """The ``runtime_bs_<N>.csv``/``.json`` pairs that ``MeasureRuntime`` wrote below ``store``."""
    points = []
    pattern = os.path.join(store, "MeasureRuntime", "**", "runtime_bs_*.json")
    for json_path in glob.glob(pattern, recursive=True):
        m = re.search(r"runtime_bs_(\d+)\.json$", json_path)
        if m is None:
            continue
        with open(json_path) as f:
            prov = json.load(f)
        with open(json_path[:-5] + ".csv", newline="") as f:
            timed_ms = sum(float(row["runtime_ms"]) for row in csv.DictReader(f))
        points.append(Point(int(m.group(1)), timed_ms / 1e3, prov))
    return sorted(points, key=lambda p: p.batch_size)


def _task_marks(sweep: Sweep) -> list[tuple[float, str, str, int | None]]:
    """``(time, running|done|failed, task family, branch)`` of luigi's worker log lines."""
    marks = []
    for t, line in sweep.events:
        m = _TASK_LINE.search(line)
        if m:
            b = _BRANCH.search(m.group(3))
            marks.append((t, m.group(1), m.group(2), int(b.group(1)) if b else None))
    return marks


def _attach_task_times(sweep: Sweep) -> None:
    """Set ``task_start``/``task_end`` of every point from the branch's log lines."""
    bs_of_branch = dict(enumerate(p.batch_size for p in sweep.points))
    by_bs = {p.batch_size: p for p in sweep.points}
    for t, kind, task, branch in _task_marks(sweep):
        if task != "MeasureRuntime" or branch is None or branch < 0:
            continue
        point = by_bs.get(bs_of_branch.get(branch, -1))
        if point is None:
            continue
        if kind == "running":
            point.task_start = t
        elif kind == "done":
            point.task_end = t


def phases(sweep: Sweep) -> list[tuple[str, float]]:
    """Split the wall time into phases using the time-stamped luigi log lines."""
    marks = _task_marks(sweep)
    if not marks:
        return []
    branches = [p for p in sweep.points if p.task_s is not None]
    branch_total = sum(p.task_s or 0.0 for p in branches)
    measured = sum(p.measured_s for p in branches)
    out = [("start-up until the first task runs (imports, parameters, completeness checks)",
            marks[0][0]),
           ("MeasureRuntime branches, total", branch_total),
           ("  of which session + first call + warm-up + timed loop (child)", measured)]
    splits = [sweep.split_branch(p) for p in branches]
    if splits and all(s is not None for s in splits):
        pre = sum(s[0] for s in splits if s is not None)
        post = sum(s[1] for s in splits if s is not None)
        out.append(("  of which before session creation (child start, model read/check, inputs)",
                    pre))
        out.append(("  of which after the timed loop (provenance, result transfer, CSV/JSON)",
                    post))
    else:
        out.append(("  of which other (child start, model check, writing outputs, ...)",
                    branch_total - measured))
    running: dict[str, float] = {}
    other_tasks = 0.0
    for t, kind, task, _ in marks:
        if task == "MeasureRuntime":  # branches above; the workflow itself spans them
            continue
        if kind == "running":
            running.setdefault(task, t)
        elif kind == "done" and task in running:
            dur = t - running.pop(task)
            out.append((f"{task} run", dur))
            other_tasks += dur
    tail = sweep.wall_s - marks[-1][0]
    out.append(("after the last task until the process exited (incl. interpreter shutdown)",
                tail))
    out.append(("scheduler, workflow bookkeeping and gaps between tasks (rest)",
                sweep.wall_s - marks[0][0] - branch_total - other_tasks - tail))
    return out


def report(sweep: Sweep) -> None:
    """Print the figures of one sweep."""
    pts = sweep.points
    n = len(pts)
    print(f"wall time: {sweep.wall_s:.3f} s")
    json_sum = sum(p.timed_json_s for p in pts)
    print(f"timed sum: {sweep.timed_s:.3f} s (CSV runtime_ms; JSON timed_sum_s {json_sum:.3f} s)")
    print(f"points: {n}")
    if not n:
        print("no runtime_bs_*.json found: nothing was measured (already complete?)")
        return
    print("per point (ms unless noted; pre/post: task time before session creation / after the "
          "timed loop):")
    print(f"  {'bs':>5} {'task s':>7} {'pre':>7} {'session':>8} {'first':>6} {'warmup':>7} "
          f"{'loop-timed':>10} {'post':>6} {'timed s':>8} {'samples':>8}")
    for p in pts:
        pr = p.prov
        split = sweep.split_branch(p)
        pre, post = (f"{1e3 * split[0]:7.1f}", f"{1e3 * split[1]:6.1f}") if split else \
            (f"{'-':>7}", f"{'-':>6}")
        task = f"{p.task_s:7.3f}" if p.task_s is not None else f"{'-':>7}"
        print(f"  {p.batch_size:>5} {task} {pre} {pr['session_creation_ms']:>8.1f} "
              f"{pr['first_call_ms']:>6.1f} {pr['warmup_ms']:>7.1f} "
              f"{1e3 * (pr['loop_wall_s'] - pr['timed_sum_s']):>10.1f} {post} "
              f"{p.timed_csv_s:>8.3f} {pr['n_samples']:>8}")
    mean = {k: sum(p.prov[k] for p in pts) / n for k in
            ("session_creation_ms", "first_call_ms", "warmup_ms")}
    loop_extra = 1e3 * sum(p.prov["loop_wall_s"] - p.prov["timed_sum_s"] for p in pts) / n
    print(f"  mean per point: session {mean['session_creation_ms']:.1f} ms, first call "
          f"{mean['first_call_ms']:.1f} ms, warm-up {mean['warmup_ms']:.1f} ms, loop - timed "
          f"{loop_extra:.1f} ms")
    ph = phases(sweep)
    if ph:
        print("phases of the wall time (from time-stamped log lines):")
        for name, secs in ph:
            print(f"  {secs:7.3f} s  {name}")
    print(f"overhead per point: {sweep.overhead_per_point_s:.3f} s")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1,
                    help="number of sweeps, each into its own fresh store (default: 1)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary store(s) (with law_run.log) instead of removing them")
    ap.add_argument("--law-args", default="",
                    help="extra arguments for `law run PlotRuntimes`, one shell-quoted string "
                    "(default: none, i.e. the default sweep)")
    ap.add_argument("--no-host", action="store_true",
                    help="skip the closing host reference line (the imports the sweep's fixed "
                    "costs are made of, timed in fresh interpreters)")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the sweep(s) and print ``overhead per point: X s`` for each."""
    args = parse_args(argv)
    law_args = shlex.split(args.law_args)
    results = []
    for i in range(args.runs):
        if args.runs > 1:
            print(f"--- run {i + 1}/{args.runs}")
        sweep = run_sweep(law_args, args.keep, i + 1)
        report(sweep)
        if args.keep:
            print(f"kept: {sweep.store}")
        results.append(sweep.overhead_per_point_s)
    if args.runs > 1:
        print(f"overhead per point over {args.runs} runs: median "
              f"{statistics.median(results):.3f} s, min {min(results):.3f} s, "
              f"max {max(results):.3f} s")
    if not args.no_host:
        print(host_reference())
    return 0


#: what the sweep's fixed costs are made of, each timed in a fresh interpreter
_HOST_IMPORTS = {"law+luigi": "import law, luigi", "matplotlib.pyplot": "import matplotlib.pyplot",
                 "onnx": "import onnx"}


def host_reference(rounds: int = 3) -> str:
    """One line: the medians over ``rounds`` fresh interpreters of the imports the sweep's fixed
    costs are made of (law and luigi, pyplot, onnx).

    Why: the target is in seconds, and most of a sweep's own time is these imports. The same
    code gave 0.144-0.227 s per point on one host (law's no-op floor 0.370 s, the plot's imports
    0.42 s) and 0.213-0.312 s on a slower one (floor 0.476 s), where this line read law+luigi
    0.22-0.31 s, pyplot 0.53-0.63 s. This line says which kind of host a figure is from.
    ``onnx``: the measurement server and MergeRuntimes import it; with ml_dtypes 0.7.0 it took
    0.86 s instead of 0.19 s (2026-12-02), and the sweep 0.273 s per point instead of 0.149 s:
    a dependency's release is part of the host too."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}
    parts = []
    for name, stmt in _HOST_IMPORTS.items():
        code = ("import time; t = time.perf_counter(); " + stmt
                + "; print(time.perf_counter() - t)")
        times = [float(subprocess.run([sys.executable, "-c", code], env=env,
                                      cwd=tempfile.gettempdir(), capture_output=True, text=True,
                                      check=True).stdout)
                 for _ in range(rounds)]
        parts.append(f"import {name} {statistics.median(times):.3f} s")
    return (f"host reference (median of {rounds} fresh interpreters): " + ", ".join(parts))


if __name__ == "__main__":
    sys.exit(main())
