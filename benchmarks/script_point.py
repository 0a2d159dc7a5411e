"""Script point: wall time of one measured point from a model script, mlprof vs. TurnkeyML.

One *point* is batch size 1 on ONNX Runtime, taken from an unedited TurnkeyML-style model script
(default: ``../shared/peers/models/mlp10x128.py``, relative to the checkout) into a fresh store:
discovery, export to ONNX and the measurement are all included. Each round runs both tools
once, one after the other, and which one goes first alternates from round to round:

- **mlprof**: ``law run MeasureRuntime --version <unique> --model-file SCRIPT --batch-sizes 1
  --runtime onnxruntime --n-calls 100 --warmup 100 --min-duration 0`` as a subprocess, with
  ``MLP_STORE`` set to a fresh ``mkdtemp`` directory in its environment. 100 timed calls and
  100 warm-up calls are what TurnkeyML's ``benchmark`` does by default; ``--min-duration 0``
  stops mlprof from extending the loop to its default 0.5 s. The wall time is that of the
  ``law`` command, from ``Popen`` to its exit, as a shell sees it. The measurement server shares
  ``law``'s stdout and exits after it; the time until the output closed is printed too.
- **turnkey**: ``turnkey_bench.sh SCRIPT --runtime ort --repeats 1 --workdir <fresh dir>``, i.e.
  TurnkeyML 3.0.7 running ``discover export-pytorch optimize-ort benchmark --runtime ort`` with a
  fresh cache. The wall time is the script's own ``wall_s``, measured around the ``turnkey``
  command only (the wrapper's JSON post-processing is not included).

It prints one line per run with a breakdown of the wall time (mlprof: from its console lines,
time-stamped as they arrive, see :func:`mlprof_phases`; turnkey: its ``tool_duration``
figures), the medians per tool, and last::

    ratio vs turnkey: X        (mlprof median wall / turnkey median wall; target <= 0.4)

Usage (after ``source setup.sh``; the first TurnkeyML run sets up ``/tmp/peer-turnkey``, ~95 s)::

    python benchmarks/script_point.py [--rounds 3] [--iterations 100] [--keep]
        [--script ../shared/peers/models/mlp10x128.py] [--law-args "..."]

This is a benchmark, not a test: it exits 0 unless one of the tools fails.
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
import threading
import time
from dataclasses import dataclass, field
from typing import Any

#: the checkout, and the peers' models and benchmark scripts beside it (../shared/peers)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.normpath(os.path.join(REPO, "..", "shared", "peers"))
DEFAULT_SCRIPT = os.path.join(PEERS, "models", "mlp10x128.py")
TURNKEY_BENCH = os.path.join(PEERS, "turnkey_bench.sh")
#: TurnkeyML's tools in the order they run, as named in its ``tool_duration`` keys
TURNKEY_TOOLS = ("discover", "export-pytorch", "optimize-ort", "benchmark")



class BenchmarkError(RuntimeError):
    """One of the tools failed or did not produce the expected output."""


@dataclass
class Run:
    """One run of one tool: its wall time and a breakdown of it."""

    tool: str
    round: int
    wall_s: float
    #: (phase, seconds) in the order they happened
    phases: list[tuple[str, float]] = field(default_factory=list)
    #: what the run measured: median per-call latency in ms and the number of timed calls
    median_ms: float | None = None
    calls: int | None = None
    #: where the run's files are (kept with ``--keep``)
    where: str = ""
    #: mlprof: seconds from the exit of ``law`` until its stdout closed (the measurement server
    #: shares it and exits after ``law``); a pipeline such as ``law run ... | tee`` waits for it
    closed_s: float | None = None

    def line(self) -> str:
        """One line for the report."""
        ph = ", ".join(f"{name} {secs:.2f}" for name, secs in self.phases)
        lat = f"; median {self.median_ms:.4f} ms over {self.calls} calls" \
            if self.median_ms is not None else ""
        closed = f"; output closed {self.closed_s:.2f} s after exit" \
            if self.closed_s is not None else ""
        return f"round {self.round} {self.tool:<7}: wall {self.wall_s:6.3f} s ({ph}){lat}{closed}"


#: mlprof's own console lines that end a phase of a script point: the discovery's line per
#: model ("INFO: mlprof - NAME  CLASS (line N, P parameters, C call(s))"), the export's, the
#: point's "measuring ..." and luigi's summary at the end
_PHASE_ENDS = (
    ("start-up + discovery", re.compile(r"^INFO: mlprof - \S+\s+\S+ \(line \d+, ")),
    ("export", re.compile(r"^INFO: mlprof - exported ")),
    ("scheduling", re.compile(r"^measuring ")),
    ("measure", re.compile(r"^luigi: \d+ ran")),
)


def mlprof_phases(events: list[tuple[float, str]], wall_s: float) -> list[tuple[str, float]]:
    """Split mlprof's wall time with its time-stamped console lines.

    Phases: ``start-up + discovery`` (law's start, the parameters, the measurement server's
    imports and the script's discovery, until its line per model), ``export`` (until the
    "exported" line), ``scheduling`` (until "measuring ..."), ``measure`` (the point, until
    luigi's summary line) and ``exit``. A phase whose line is missing is left out (and its time
    counts in the next one found); no line at all gives no breakdown.
    """
    out: list[tuple[str, float]] = []
    last, phases = 0.0, iter(_PHASE_ENDS)
    name, pattern = next(phases)
    for t, line in events:
        if pattern.search(line):
            out.append((name, t - last))
            last = t
            try:
                name, pattern = next(phases)
            except StopIteration:
                break
    if out:
        out.append(("exit", wall_s - last))
    return out


def run_mlprof(script: str, calls: int, law_args: list[str], keep: bool, index: int) -> Run:
    """One ``law run MeasureRuntime`` point from ``script`` into a fresh temporary store."""
    store = tempfile.mkdtemp(prefix="mlprof-bench-store-")
    version = f"sp-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{index}"
    cmd = ["law", "run", "MeasureRuntime", "--version", version, "--model-file", script,
           "--batch-sizes", "1", "--runtime", "onnxruntime", "--n-calls", str(calls),
           "--warmup", "100", "--min-duration", "0", *law_args]
    env = dict(os.environ, MLP_STORE=store)
    print(f"$ MLP_STORE={store} {shlex.join(cmd)}", flush=True)
    events: list[tuple[float, str]] = []
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
        reader = threading.Thread(target=_read_lines, args=(proc, start, events), daemon=True)
        reader.start()
        # the wall time ends when `law` exits, as in a shell; the measurement server, which
        # shares its stdout, may close the pipe a little later
        rc = proc.wait()
        wall = time.perf_counter() - start
        reader.join()
        closed = time.perf_counter() - start
        with open(os.path.join(store, "law_run.log"), "w") as f:
            f.writelines(f"{t:9.3f} {line}\n" for t, line in events)
        if rc != 0:
            tail = "\n".join(line for _, line in events[-30:])
            raise BenchmarkError(f"law run failed with exit code {rc}:\n{tail}")
        run = Run("mlprof", index, wall, mlprof_phases(events, wall), where=store,
                  closed_s=closed - wall)
        _read_mlprof_point(store, run)
    finally:
        if not keep:
            shutil.rmtree(store, ignore_errors=True)
    if run.calls != calls:
        raise BenchmarkError(f"mlprof measured {run.calls} calls, expected {calls}")
    return run


def _read_lines(proc: subprocess.Popen[str], start: float,
                events: list[tuple[float, str]]) -> None:
    """Append ``proc``'s output lines to ``events``, time-stamped as they arrive."""
    assert proc.stdout is not None
    for line in proc.stdout:  # blocking reads: no CPU used here while law works
        events.append((time.perf_counter() - start, line.rstrip("\n")))


def _read_mlprof_point(store: str, run: Run) -> None:
    """Median latency and call count from the ``runtime_bs_1.csv`` the run wrote."""
    found = glob.glob(os.path.join(store, "MeasureRuntime", "**", "runtime_bs_1.csv"),
                      recursive=True)
    if len(found) != 1:
        raise BenchmarkError(f"expected one runtime_bs_1.csv below {store}, found {len(found)}")
    with open(found[0], newline="") as f:
        ms = [float(row["runtime_ms"]) for row in csv.DictReader(f)]
    run.calls = len(ms)
    run.median_ms = statistics.median(ms) if ms else None


def run_turnkey(script: str, calls: int, keep: bool, index: int) -> Run:
    """One TurnkeyML run (discover, export-pytorch, optimize-ort, benchmark) in a fresh dir."""
    workdir = tempfile.mkdtemp(prefix="turnkey-bench-run-")
    cmd = [TURNKEY_BENCH, script, "--runtime", "ort", "--repeats", "1", "--workdir", workdir]
    if calls != 100:  # TurnkeyML's default is 100 iterations
        cmd += ["--iterations", str(calls)]
    print(f"$ {shlex.join(cmd)}", flush=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        runs = [r for r in (_json_or_none(line) for line in proc.stdout.splitlines())
                if r is not None and r.get("kind") == "run"]
        if proc.returncode != 0 or len(runs) != 1:
            raise BenchmarkError(f"turnkey_bench.sh failed (exit code {proc.returncode}):\n"
                                 f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        r = runs[0]
        if r.get("rc") != 0 or r.get("build_status") != "successful":
            raise BenchmarkError(f"TurnkeyML failed (rc {r.get('rc')}, build status "
                                 f"{r.get('build_status')}): {r.get('error', '')}")
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    wall = float(r["wall_s"])
    tools: dict[str, float] = r.get("tool_duration_s") or {}
    phases = [(name, float(tools[name])) for name in TURNKEY_TOOLS if name in tools]
    phases.insert(0, ("start-up/other", wall - sum(s for _, s in phases)))
    calls_done = r.get("iterations")
    return Run("turnkey", index, wall, phases, median_ms=r.get("median_ms"),
               calls=int(calls_done) if calls_done is not None else None, where=workdir)


def _json_or_none(line: str) -> dict[str, Any] | None:
    """``line`` parsed as a JSON object, or None."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds, each running both tools once (default: 3)")
    ap.add_argument("--script", default=DEFAULT_SCRIPT,
                    help=f"the model script (default: {DEFAULT_SCRIPT})")
    ap.add_argument("--iterations", type=int, default=100,
                    help="timed calls for both tools (default: 100, TurnkeyML's default)")
    ap.add_argument("--law-args", default="",
                    help="extra arguments for `law run MeasureRuntime`, one shell-quoted string")
    ap.add_argument("--keep", action="store_true",
                    help="keep the stores (with law_run.log) and TurnkeyML's work dirs")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    if args.iterations < 1:
        ap.error("--iterations must be >= 1")
    args.script = os.path.abspath(args.script)
    if not os.path.isfile(args.script):
        ap.error(f"no such script: {args.script}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the rounds and print the medians and ``ratio vs turnkey: X``."""
    args = parse_args(argv)
    if shutil.which("law") is None or not os.environ.get("LAW_CONFIG_FILE"):
        sys.exit("script_point: `law` or LAW_CONFIG_FILE not found; run `source setup.sh` first")
    if not os.access(TURNKEY_BENCH, os.X_OK):
        sys.exit(f"script_point: {TURNKEY_BENCH} not found or not executable")
    law_args = shlex.split(args.law_args)
    walls: dict[str, list[float]] = {"mlprof": [], "turnkey": []}
    try:
        for i in range(1, args.rounds + 1):
            order = ("mlprof", "turnkey") if i % 2 else ("turnkey", "mlprof")
            for tool in order:
                if tool == "mlprof":
                    run = run_mlprof(args.script, args.iterations, law_args, args.keep, i)
                else:
                    run = run_turnkey(args.script, args.iterations, args.keep, i)
                walls[tool].append(run.wall_s)
                print(run.line(), flush=True)
                if args.keep:
                    print(f"  kept: {run.where}")
    except BenchmarkError as e:
        print(f"script_point: {e}", file=sys.stderr)
        return 1
    med = {tool: statistics.median(w) for tool, w in walls.items()}
    for tool, w in walls.items():
        print(f"{tool} wall over {len(w)} rounds: median {med[tool]:.3f} s, min {min(w):.3f} s, "
              f"max {max(w):.3f} s")
    print(f"ratio vs turnkey: {med['mlprof'] / med['turnkey']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
