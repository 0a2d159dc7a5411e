"""Kept process: does a point measured in a process that measured others before give the figures
of a point measured in a new process?

Why: the points of a sweep share one measurement process where the runtime allows it
(:attr:`mlprof.runtimes.RuntimeInfo.reuses_process`, ``docs/harness.md``); that is allowed only
where what the runtime keeps per process does not change what a later point measures. This
measures it for one runtime and model: each round runs the sweep of ``--batch-sizes`` twice,
once in one kept process (as ``law run`` does: the second size is measured by a process that
measured one before, the third by one that measured two) and once with a new process per point
(``MLP_FRESH_PROCESS=1``), which of the two goes first alternating from round to round. Each
point is :func:`mlprof.measure.measure_isolated`, the call ``MeasureRuntime`` makes.

Prints per round the two medians of every batch size, and per batch size the median over rounds
of the paired ratio kept / new (1.000: the kept process changes nothing; the noise here is
about +-1 %, more when the machine flips between fast and slow states) and the same of the
fastest single calls (which those states move less).

Usage (after ``source setup.sh``)::

    python benchmarks/kept_process.py --runtime torch --model-file models/selftest/mlp.py \
        [--batch-sizes 1,16,256] [--rounds 8] [--calls 2000] [--warmup 100]

A benchmark, not a test: it exits 0 whatever the ratios are.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sweep(runtime: str, model_file: str, sizes: list[int], calls: int, warmup: int,
          fresh: bool) -> dict[int, tuple[float, int, float]]:
    """One sweep of ``sizes``: {batch size: (median ns, measurements its process ran before,
    fastest call ns)}."""
    import numpy as np

    from mlprof.measure import MeasureSettings, measure_isolated
    from mlprof.measure.isolate import retire_kept

    os.environ["MLP_FRESH_PROCESS"] = "1" if fresh else "0"
    out = {}
    try:
        for bs in sizes:
            settings = MeasureSettings(batch_size=bs, runtime=runtime, n_calls=calls,
                                       warmup=warmup, min_duration=0, seed=0)
            result = measure_isolated(model_file, settings, reuse=True)
            out[bs] = (float(np.median(result.samples_ns)),
                       int(result.provenance.get("earlier_in_process", 0)),
                       float(result.samples_ns.min()))
    finally:
        retire_kept()  # the next sweep starts in a new process, as a new law run does
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", default="onnxruntime")
    ap.add_argument("--model-file",
                    default=os.path.join(HERE, "examples", "dnn", "model_onnx_l10u128.yaml"))
    ap.add_argument("--batch-sizes", default="1,16,256")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=100)
    args = ap.parse_args(argv)
    sizes = [int(b) for b in args.batch_sizes.split(",") if b.strip()]
    start = time.monotonic()
    ratios: dict[int, list[float]] = {bs: [] for bs in sizes}
    fastest: dict[int, list[float]] = {bs: [] for bs in sizes}
    for r in range(args.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        got = {fresh: sweep(args.runtime, args.model_file, sizes, args.calls, args.warmup,
                            fresh) for fresh in order}
        kept, new = got[False], got[True]
        cells = []
        for bs in sizes:
            ratios[bs].append(kept[bs][0] / new[bs][0])
            fastest[bs].append(kept[bs][2] / new[bs][2])
            cells.append(f"bs={bs} kept {kept[bs][0] / 1e6:.4f} ms (after {kept[bs][1]}) "
                         f"new {new[bs][0] / 1e6:.4f} ms")
        print(f"round {r + 1}/{args.rounds}: " + "; ".join(cells), flush=True)
    for bs in sizes:
        rs = ratios[bs]
        print(f"ratio kept/new {args.runtime} bs={bs}: {statistics.median(rs):.3f} "
              f"(rounds {min(rs):.3f}-{max(rs):.3f}; fastest calls "
              f"{statistics.median(fastest[bs]):.3f})")
    print(f"({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
