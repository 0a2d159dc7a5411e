"""Fidelity: does mlprof's harness report the latency a bare ``session.run`` loop sees?

For each batch size, several rounds alternate two child processes (which one goes first
alternates too, so drifts of the noisy machine hit both sides alike):

- **bare**: a fresh interpreter running a minimal ONNX Runtime loop, like
  ``/work/shared/peers/bare/bare_ort.py``: one session (ORT_ENABLE_ALL, ORT_SEQUENTIAL,
  1 intra-op and 1 inter-op thread, CPUExecutionProvider), one input generated once, ``warmup``
  untimed calls, then ``calls`` calls of ``session.run(None, feed)``, each timed alone with
  ``time.perf_counter_ns``;
- **mlprof**: :func:`mlprof.measure.measure_isolated` with ``MeasureSettings(batch_size=...,
  n_calls=calls, warmup=warmup, min_duration=0)``, i.e. the real harness in a forkserver child,
  exactly as ``MeasureRuntime`` calls it.

Each side's per-round median is recorded; the ratio printed per batch size is the median over
rounds of mlprof's medians divided by the median over rounds of the bare medians (1.000 means
the harness adds nothing; the target is <= 1.02).

Usage (after ``source setup.sh``)::

    python benchmarks/fidelity.py [--rounds 7] [--calls 2000] [--warmup 100] \
        [--batch-sizes 1,64] [--model examples/dnn/model_onnx_l10u128.yaml]

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

BASE = os.environ.get("MLP_BASE") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(BASE, "examples", "dnn", "model_onnx_l10u128.yaml")

#: the bare loop, run with ``python -c`` in a fresh interpreter; argv: onnx bs warmup calls seed
BARE_SCRIPT = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort

model, bs, warmup, calls, seed = sys.argv[1], *map(int, sys.argv[2:6])
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.intra_op_num_threads = 1
so.inter_op_num_threads = 1
sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
# the same values as mlprof's "random" input: one generator, standard normal, per input in order
rng = np.random.default_rng(seed)
feed = {}
for i in sess.get_inputs():
    shape = [bs] + [int(d) for d in i.shape[1:]]
    feed[i.name] = rng.standard_normal(shape).astype(np.float32)
run = sess.run
for _ in range(warmup):
    run(None, feed)
ns = [0] * calls
pc = time.perf_counter_ns
for k in range(calls):
    a = pc()
    run(None, feed)
    ns[k] = pc() - a
print(json.dumps({"median_ns": float(np.median(ns)), "min_ns": min(ns), "n": len(ns)}))
"""


def onnx_file_of(model_file: str) -> str:
    """The ONNX file behind ``model_file`` (a model YAML or an ``.onnx`` file)."""
    from mlprof.model import read_model_file

    return read_model_file(model_file).file


def run_bare(onnx_file: str, batch_size: int, calls: int, warmup: int, seed: int) -> float:
    """Median latency in ms of the bare loop, run in a fresh child interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", BARE_SCRIPT, onnx_file, str(batch_size), str(warmup), str(calls),
         str(seed)],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"bare loop failed (exit code {proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["median_ns"] / 1e6


def run_mlprof(model_file: str, batch_size: int, calls: int, warmup: int, seed: int) -> float:
    """Median latency in ms reported by mlprof's harness (forkserver child, as the tasks do)."""
    import numpy as np

    from mlprof.measure import MeasureSettings, measure_isolated

    settings = MeasureSettings(batch_size=batch_size, n_calls=calls, warmup=warmup,
                               min_duration=0, seed=seed)
    result = measure_isolated(model_file, settings)
    return float(np.median(result.samples_ns)) / 1e6


def fidelity(model_file: str, batch_size: int, rounds: int, calls: int, warmup: int,
             seed: int) -> float:
    """Run ``rounds`` interleaved bare/mlprof rounds at ``batch_size``; return the ratio."""
    onnx_file = onnx_file_of(model_file)
    bare: list[float] = []
    mlp: list[float] = []
    for r in range(rounds):
        order = ("bare", "mlprof") if r % 2 == 0 else ("mlprof", "bare")
        for side in order:
            if side == "bare":
                bare.append(run_bare(onnx_file, batch_size, calls, warmup, seed))
            else:
                mlp.append(run_mlprof(model_file, batch_size, calls, warmup, seed))
        print(f"bs={batch_size} round {r + 1}/{rounds} ({order[0]} first): "
              f"bare {bare[-1]:.4f} ms, mlprof {mlp[-1]:.4f} ms, "
              f"round ratio {mlp[-1] / bare[-1]:.3f}", flush=True)
    med_bare, med_mlp = statistics.median(bare), statistics.median(mlp)
    round_ratios = [m / b for m, b in zip(mlp, bare, strict=True)]
    print(f"bs={batch_size} summary: median bare {med_bare:.4f} ms, median mlprof "
          f"{med_mlp:.4f} ms, median of round ratios {statistics.median(round_ratios):.3f} "
          f"(min {min(round_ratios):.3f}, max {max(round_ratios):.3f})", flush=True)
    return med_mlp / med_bare


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=DEFAULT_MODEL,
                    help="model YAML or .onnx file (default: the 10x128 example DNN)")
    ap.add_argument("--batch-sizes", default="1,64",
                    help="comma-separated batch sizes (default: 1,64)")
    ap.add_argument("--rounds", type=int, default=7,
                    help="interleaved bare/mlprof rounds per batch size (default: 7)")
    ap.add_argument("--calls", type=int, default=2000,
                    help="timed calls per round and side (default: 2000)")
    ap.add_argument("--warmup", type=int, default=100,
                    help="untimed warm-up calls per round and side (default: 100)")
    ap.add_argument("--seed", type=int, default=0, help="input seed (default: 0)")
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
          f"{args.calls} calls (+{args.warmup} warm-up), 1 thread", flush=True)
    start = time.monotonic()
    ratios = {bs: fidelity(model, bs, args.rounds, args.calls, args.warmup, args.seed)
              for bs in args.batch_sizes}
    print(f"took {time.monotonic() - start:.1f} s")
    for bs, ratio in ratios.items():
        print(f"ratio bs={bs}: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
