"""How many interleaved rounds does a 95 % interval need? Self-comparisons at several round counts.

One long interleaved run of the same model against itself (two configurations, same file, so
every "faster" or "slower" is a false call), cut into disjoint blocks of ``n`` consecutive
rounds; each block is judged as an ``--interleave n`` comparison would judge it. Prints, per
``n``, the share of blocks whose interval excludes 1 (the false-call rate; a 95 % interval
should give about 5 %) for the percentile bootstrap of the median (:func:`bootstrap_ci`) and for
the distribution-free order-statistic interval of the median.

    python benchmarks/interleave_rounds.py [--rounds 600] [--runs 4] [--batch-sizes 1,8] \
        [--n-calls 30]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mlprof.measure import MeasureSettings  # noqa: E402
from mlprof.measure.interleave import (  # noqa: E402
    Config,
    bootstrap_ci,
    measure_interleaved_isolated,
)

DNN = os.path.join(os.path.dirname(__file__), "..", "examples", "dnn", "model_onnx_l10u128.yaml")


def order_stat_ci(x: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """[x(k), x(n+1-k)] with the largest k whose binomial coverage is >= level, else None."""
    n = x.size
    s = np.sort(x)
    best = None
    for k in range(1, n // 2 + 1):
        tail = sum(math.comb(n, i) for i in range(k)) / 2 ** n
        if 1 - 2 * tail >= level:
            best = (float(s[k - 1]), float(s[n - k]))
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=600, help="rounds per run (<= 1000)")
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--batch-sizes", default="1,8")
    p.add_argument("--n-calls", type=int, default=30)
    p.add_argument("--model", default=DNN)
    p.add_argument("--save", default="", help="save the ratios (npz) here")
    a = p.parse_args()
    ns = (2, 3, 4, 5, 6, 8, 10, 12, 20)
    configs = [Config("A", a.model, "onnxruntime", "A"), Config("B", a.model, "onnxruntime", "B")]
    all_ratios = {}
    for bs in (int(b) for b in a.batch_sizes.split(",")):
        s = MeasureSettings(batch_size=bs, n_calls=a.n_calls, warmup=5, min_duration=0)
        runs = []
        for _ in range(a.runs):
            m = measure_interleaved_isolated(configs, s, a.rounds).round_medians_ms
            runs.append(m[:, 0] / m[:, 1])
        all_ratios[bs] = runs
    if a.save:
        np.savez(a.save, **{f"bs{k}": np.concatenate(v) for k, v in all_ratios.items()})
    print(f"{'bs':>4} {'rounds':>6} {'blocks':>6} {'bootstrap false':>16} "
          f"{'order-stat false':>17} {'order-stat: no interval':>24}")
    for bs, runs in all_ratios.items():
        for n in ns:  # blocks never span two runs
            blocks = [r[i:i + n] for r in runs for i in range(0, r.size - n + 1, n)]
            boot = sum(not (lo <= 1.0 <= hi) for _, lo, hi in map(bootstrap_ci, blocks))
            ost = [order_stat_ci(b) for b in blocks]
            none = sum(c is None for c in ost)
            osf = sum(c is not None and not (c[0] <= 1.0 <= c[1]) for c in ost)
            print(f"{bs:>4} {n:>6} {len(blocks):>6} {boot / len(blocks):>15.1%} "
                  f"{osf / len(blocks):>16.1%} {none / len(blocks):>23.0%}")


if __name__ == "__main__":
    main()
