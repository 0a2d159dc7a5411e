"""How reproducible is the server search? The highest rate at a latency bound, several times.

Runs MeasureLoad's server search (:func:`mlprof.measure.load.measure_load_isolated`) ``--runs``
times on one model, each in its own measurement child under the measurement lock, and prints
each run's highest met rate, its points and the spread around the mean (the acceptance of
issue 25: within +-10 % over 3 runs). Used to tune the search's rules (a point's early stop,
the checkpoints of its verdict) with figures before and after.

    python benchmarks/load_search.py [--model FILE] [--bound-ms 1] [--percentile 99] \
        [--runs 3] [--threads 1] [--min-duration 2]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mlprof.measure import MeasureSettings  # noqa: E402
from mlprof.measure.load import measure_load_isolated  # noqa: E402

DNN = os.path.join(os.path.dirname(__file__), "..", "examples", "dnn", "model_onnx_l10u128.yaml")


def main() -> None:
    """Run the searches and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DNN, help="a model YAML or ONNX file (default: the DNN)")
    ap.add_argument("--runtime", default="onnxruntime")
    ap.add_argument("--bound-ms", type=float, default=1.0)
    ap.add_argument("--percentile", type=float, default=99.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--min-duration", type=float, default=2.0)
    args = ap.parse_args()
    settings = MeasureSettings(batch_size=1, runtime=args.runtime, threads=args.threads,
                               min_duration=args.min_duration, warmup=10)
    best: list[float | None] = []
    delivered: list[float] = []
    for run in range(args.runs):
        res = measure_load_isolated(args.model, settings, {
            "scenario": "server", "workers": 1, "bound_ms": args.bound_ms,
            "percentile": args.percentile}, timeout=3600)
        search = res.provenance["load"]["search"]
        best.append(search["best_rate"])
        chosen = [p for p in res.points if p["rate"] == search["best_rate"]]
        if chosen:  # the answer's figure: the delivered events/s of the chosen point
            delivered.append(chosen[0]["events_per_s"])
        points = ", ".join(f"{p['rate']:.0f}/s {p['verdict']}"
                           + (" (contended)" if (p.get("environment") or {}).get("contended")
                              else "") for p in res.points)
        print(f"run {run + 1}: best {search['best_rate']}; {search['ended']}; {points}",
              flush=True)
    found = [b for b in best if b]
    if found:
        mean = sum(found) / len(found)
        print(f"best rates: {', '.join(f'{b:,.0f}' for b in found)}; mean {mean:,.0f}; "
              f"spread {min(found) / mean - 1:+.1%} to {max(found) / mean - 1:+.1%}")
    if delivered:
        mean = sum(delivered) / len(delivered)
        print(f"their events/s (the answer): {', '.join(f'{d:,.1f}' for d in delivered)}; "
              f"mean {mean:,.1f}; spread {min(delivered) / mean - 1:+.1%} to "
              f"{max(delivered) / mean - 1:+.1%}")


if __name__ == "__main__":
    main()
