"""How reproducible is the server search? The highest rate at a latency bound, several times.

Runs MeasureLoad's server search (:func:`mlprof.measure.loadgen.run.measure_load_isolated`)
``--runs`` times on one model, each in its own measurement child under the measurement lock,
and prints each run's highest met rate, its points and the spread around the mean (the
acceptance of issue 25: within +-10 % over 3 runs). Used to tune the search's rules (a point's
early stop, the checkpoints of its verdict, the requests of a point inside the bracket) with
figures before and after.

With ``--factors 1,4`` each run searches once per factor, alternating, so that both see the
same machine (its speed drifts by 20 % over minutes here): the factor is how many times the
percentile's minimum requests a point inside the bracket plans (``DECISIVE_FACTOR``).

    python benchmarks/load_search.py [--model FILE] [--latency-bound-ms 1] [--percentile 99] \
        [--runs 3] [--threads 1] [--min-duration 2] [--factors 4]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mlprof.measure import MeasureSettings  # noqa: E402
from mlprof.measure.loadgen import DECISIVE_FACTOR, LoadSettings, measure_load_isolated  # noqa: E402

DNN = os.path.join(os.path.dirname(__file__), "..", "examples", "dnn", "model_onnx_l10u128.yaml")


def main() -> None:
    """Run the searches and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DNN, help="a model YAML or ONNX file (default: the DNN)")
    ap.add_argument("--runtime", default="onnxruntime")
    ap.add_argument("--latency-bound-ms", type=float, default=1.0)
    ap.add_argument("--percentile", type=float, default=99.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--min-duration", type=float, default=2.0)
    ap.add_argument("--factors", default=str(DECISIVE_FACTOR),
                    help="comma-separated DECISIVE_FACTOR values, alternated per run")
    args = ap.parse_args()
    factors = [int(f) for f in args.factors.split(",")]
    settings = MeasureSettings(batch_size=1, runtime=args.runtime, threads=args.threads,
                               min_duration=args.min_duration, warmup=10)
    best: dict[int, list[float]] = {f: [] for f in factors}
    delivered: dict[int, list[float]] = {f: [] for f in factors}
    for run in range(args.runs):
        for factor in factors:
            res = measure_load_isolated(args.model, settings, LoadSettings(
                scenario="server", latency_bound_ms=args.latency_bound_ms,
                percentile=args.percentile, decisive_factor=factor), timeout=3600)
            search = res.provenance["load"]["search"]
            chosen = [p for p in res.points if p["rate"] == search["best_rate"]]
            if chosen:  # the answer's figure: the delivered events/s of the chosen point
                best[factor].append(search["best_rate"])
                delivered[factor].append(chosen[0]["events_per_s"])
            took = sum(p["requests"] / p["rate"] for p in res.points)
            print(f"run {run + 1}, factor {factor}: best {search['best_rate']}; "
                  f"{search['ended']}; {took:.0f} s of requests", flush=True)
            for p in res.points:
                # busy: the worker's share of the time in calls, which the machine's speed
                # moves less than the rate (before it was recorded: rate x mean call)
                load = p.get("busy") or p["rate"] * (p.get("service_mean_ms") or 0.0) / 1e3
                print(f"  {p['rate']:>10.4g}/s {p['verdict']:<9} n {p['requests']:>6} overs "
                      f"{p['overs']:>4} p{args.percentile:g} {p['percentile_ms'] or 0:9.3f} ms"
                      f"  call {p.get('service_mean_ms') or 0:8.3f} ms  busy {load:.2f}  late "
                      f"p99 {(p.get('lateness_us') or {}).get('p99') or 0:7.0f} us"
                      + ("  contended" if (p.get("environment") or {}).get("contended")
                         else ""), flush=True)
    for factor in factors:
        for what, values in (("best rates", best[factor]),
                             ("their events/s (the answer)", delivered[factor])):
            if values:
                mean = sum(values) / len(values)
                print(f"factor {factor}: {what}: {', '.join(f'{v:,.1f}' for v in values)}; "
                      f"mean {mean:,.1f}; spread {min(values) / mean - 1:+.1%} to "
                      f"{max(values) / mean - 1:+.1%}")


if __name__ == "__main__":
    main()
