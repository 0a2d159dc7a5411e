"""Fidelity: does mlprof's harness report the latency a bare ``session.run`` loop sees?

For each batch size, several rounds each run two child processes back to back; which one goes
first alternates from round to round, so drifts of the noisy machine hit both sides alike:

- **bare**: a fresh interpreter running a minimal ONNX Runtime loop, like
  ``../shared/peers/bare/bare_ort.py`` (relative to the checkout): one session (ORT_ENABLE_ALL,
  ORT_SEQUENTIAL, 1 intra-op and 1 inter-op thread, CPUExecutionProvider), one input generated once
  (the same values as mlprof's ``random`` input), ``warmup`` untimed calls, then ``calls`` calls of
  ``session.run(output_names, feed)``, each timed alone with ``time.perf_counter_ns``. It is started
  (interpreter, imports, session, input) before the round's timing begins and then waits idle for
  its turn, so the two sides of a round run within ~0.1 s of each other. It passes the same
  ``output_names`` as mlprof (the YAML's outputs): ``bare_ort.py`` passes ``None``, which makes ONNX
  Runtime's Python wrapper rebuild the name list on every call (~3% slower at batch size 1, nothing
  to do with the harness);
- **mlprof**: :func:`mlprof.measure.measure_isolated` with ``MeasureSettings(batch_size=...,
  n_calls=calls, warmup=warmup, min_duration=0)``: the real harness in a forkserver child,
  exactly as ``MeasureRuntime`` calls it.

Each side's median per round is recorded. The ratio printed per batch size (``--estimator
paired``, the default) is the median of the per-round ratios mlprof median / bare median, the two
sides of a round measured within a fraction of a second of each other; 1.000 means the harness
adds nothing (target: <= 1.02). ``--estimator medians`` reports the median over rounds of
mlprof's medians divided by the median over rounds of the bare medians instead, which swings by
+-10% on a machine that flips between fast and slow states (see benchmarks/README.md). The
summary line shows both and the ratio of the fastest single calls.

Usage (after ``source setup.sh``)::

    python benchmarks/fidelity.py [--rounds 15] [--calls 2000] [--warmup 100] \
        [--batch-sizes 1,64] [--estimator paired|medians] [--model MODEL.yaml]

This is a benchmark, not a test: it exits 0 whatever the ratio is.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

BASE = os.environ.get("MLP_BASE") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(BASE, "examples", "dnn", "model_onnx_l10u128.yaml")
ESTIMATORS = ("medians", "paired")

#: The bare loop, run with ``python -c`` in a fresh interpreter.
#: argv: onnx_file batch_size warmup calls seed output_names (comma-separated, "-" for None).
#: It builds the session and the input, prints "ready" and waits for a line on stdin; then it
#: makes the warm-up calls and the timed calls and prints one JSON line.
BARE_SCRIPT = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort


def main():
    model, bs, warmup, calls, seed = sys.argv[1], *map(int, sys.argv[2:6])
    names = None if sys.argv[6] == "-" else sys.argv[6].split(",")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    # the same values as mlprof's "random" input: one generator, standard normal, inputs in order
    rng = np.random.default_rng(seed)
    feed = {}
    for i in sess.get_inputs():
        shape = [bs] + [int(d) for d in i.shape[1:]]
        feed[i.name] = rng.standard_normal(shape).astype(np.float32)
    print("ready", flush=True)
    sys.stdin.readline()
    run = sess.run
    for _ in range(warmup):
        run(names, feed)
    ns = [0] * calls
    pc = time.perf_counter_ns
    for k in range(calls):
        a = pc()
        run(names, feed)
        ns[k] = pc() - a
    print(json.dumps({"median_ns": float(np.median(ns)), "min_ns": min(ns), "n": len(ns)}),
          flush=True)


main()
"""


@dataclass
class Side:
    """One side's result of one round: median and fastest call in ms."""

    median_ms: float
    min_ms: float


class BareChild:
    """The bare loop in a fresh interpreter, staged so that a round's two sides run close in time.

    :meth:`start` launches it and returns once it has imported onnxruntime, created the session
    and built the input (all untimed, while nothing else is measured); :meth:`go` then lets it make
    its warm-up and timed calls.
    """

    def __init__(self, onnx_file: str, batch_size: int, calls: int, warmup: int, seed: int,
                 output_names: list[str] | None) -> None:
        names = ",".join(output_names) if output_names else "-"
        self.cmd = [sys.executable, "-c", BARE_SCRIPT, onnx_file, str(batch_size), str(warmup),
                    str(calls), str(seed), names]
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> BareChild:
        """Launch the child and wait until it is ready to measure."""
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            self._fail(line)
        return self

    def go(self) -> Side:
        """Make the warm-up and timed calls; return the median and fastest call."""
        assert self.proc is not None
        out, err = self.proc.communicate("go\n")
        if self.proc.returncode != 0 or not out.strip():
            self._fail(out, err)
        res = json.loads(out.strip().splitlines()[-1])
        return Side(res["median_ns"] / 1e6, res["min_ns"] / 1e6)

    def close(self) -> None:
        """Kill the child if it is still running (after an error on the other side)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()

    def _fail(self, out: str = "", err: str = "") -> None:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.kill()
        more_out, more_err = self.proc.communicate()
        raise RuntimeError(f"bare loop failed (exit code {self.proc.returncode}):\n"
                           f"{out}{more_out}{err}{more_err}")


def run_mlprof(model_file: str, batch_size: int, calls: int, warmup: int, seed: int) -> Side:
    """mlprof's harness in a forkserver child, as ``MeasureRuntime`` runs it: the rounds share
    one measurement process (``reuse``; ``MLP_FRESH_PROCESS=1``: a new one for each)."""
    import numpy as np

    from mlprof.measure import MeasureSettings, measure_isolated

    settings = MeasureSettings(batch_size=batch_size, n_calls=calls, warmup=warmup,
                               min_duration=0, seed=seed)
    samples = measure_isolated(model_file, settings, reuse=True).samples_ns
    return Side(float(np.median(samples)) / 1e6, float(samples.min()) / 1e6)


@dataclass
class Fidelity:
    """All rounds of one batch size and the ratios derived from them."""

    batch_size: int
    bare: list[Side] = field(default_factory=list)
    mlprof: list[Side] = field(default_factory=list)

    def ratio(self, estimator: str = "medians") -> float:
        """mlprof over bare: ``medians`` (median over rounds of each side's medians, then the
        ratio) or ``paired`` (median of the per-round ratios)."""
        if estimator == "paired":
            return statistics.median(m.median_ms / b.median_ms
                                     for m, b in zip(self.mlprof, self.bare, strict=True))
        return (statistics.median(m.median_ms for m in self.mlprof)
                / statistics.median(b.median_ms for b in self.bare))

    def fastest_call_ratio(self) -> float:
        """The fastest single mlprof call over the fastest bare call (all rounds)."""
        return min(m.min_ms for m in self.mlprof) / min(b.min_ms for b in self.bare)


def measure_fidelity(model_file: str, batch_size: int, rounds: int, calls: int, warmup: int,
                     seed: int) -> Fidelity:
    """Run ``rounds`` interleaved bare/mlprof rounds at ``batch_size``, printing each round."""
    from mlprof.model import read_model_file

    spec = read_model_file(model_file)
    res = Fidelity(batch_size)
    for r in range(rounds):
        bare_first = r % 2 == 0
        # the bare child's start-up (interpreter, imports, session) happens before either side
        # is timed; it then waits, idle, for its turn
        child = BareChild(spec.file, batch_size, calls, warmup, seed, spec.outputs).start()
        try:
            if bare_first:
                res.bare.append(child.go())
                res.mlprof.append(run_mlprof(model_file, batch_size, calls, warmup, seed))
            else:
                res.mlprof.append(run_mlprof(model_file, batch_size, calls, warmup, seed))
                res.bare.append(child.go())
        finally:
            child.close()
        b, m = res.bare[-1].median_ms, res.mlprof[-1].median_ms
        print(f"bs={batch_size} round {r + 1}/{rounds} ({'bare' if bare_first else 'mlprof'} "
              f"first): bare {b:.4f} ms, mlprof {m:.4f} ms, round ratio {m / b:.3f}", flush=True)
    round_ratios = [m.median_ms / b.median_ms for m, b in zip(res.mlprof, res.bare, strict=True)]
    print(f"bs={batch_size} summary: median bare "
          f"{statistics.median(b.median_ms for b in res.bare):.4f} ms, median mlprof "
          f"{statistics.median(m.median_ms for m in res.mlprof):.4f} ms; "
          f"medians {res.ratio('medians'):.3f}, paired {res.ratio('paired'):.3f} "
          f"(round ratios {min(round_ratios):.3f}..{max(round_ratios):.3f}), "
          f"fastest call {res.fastest_call_ratio():.3f}", flush=True)
    return res


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=DEFAULT_MODEL,
                    help="model YAML or .onnx file (default: the 10x128 example DNN)")
    ap.add_argument("--batch-sizes", default="1,64",
                    help="comma-separated batch sizes (default: 1,64)")
    ap.add_argument("--rounds", type=int, default=15,
                    help="interleaved bare/mlprof rounds per batch size (default: 15)")
    ap.add_argument("--calls", type=int, default=2000,
                    help="timed calls per round and side (default: 2000)")
    ap.add_argument("--warmup", type=int, default=100,
                    help="untimed warm-up calls per round and side (default: 100)")
    ap.add_argument("--seed", type=int, default=0, help="input seed (default: 0)")
    ap.add_argument("--estimator", choices=ESTIMATORS, default="paired",
                    help="what the final 'ratio' lines report: paired = median of the per-round "
                    "ratios (default); medians = median over rounds of mlprof's medians / the "
                    "same for bare")
    args = ap.parse_args(argv)
    try:
        args.batch_sizes = [int(b) for b in str(args.batch_sizes).split(",") if b.strip()]
    except ValueError:
        ap.error(f"--batch-sizes: expected comma-separated integers, got {args.batch_sizes!r}")
    if not args.batch_sizes or min(args.batch_sizes) < 1:
        ap.error("--batch-sizes: give at least one batch size >= 1")
    if args.rounds < 1 or args.calls < 1 or args.warmup < 0:
        ap.error("--rounds and --calls must be >= 1, --warmup >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one ``ratio bs=N: X`` line per batch size."""
    args = parse_args(argv)
    model = os.path.abspath(args.model)
    print(f"fidelity: {model}, batch sizes {args.batch_sizes}, {args.rounds} rounds x "
          f"{args.calls} calls (+{args.warmup} warm-up), 1 thread, estimator {args.estimator}",
          flush=True)
    start = time.monotonic()
    results = [measure_fidelity(model, bs, args.rounds, args.calls, args.warmup, args.seed)
               for bs in args.batch_sizes]
    print(f"took {time.monotonic() - start:.1f} s")
    for res in results:
        print(f"ratio bs={res.batch_size}: {res.ratio(args.estimator):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
