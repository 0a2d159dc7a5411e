"""The alert rule with and without the host's noise floor (issue 36 item 4), on seeded series.

The series are :mod:`benchmarks.alerts`'s (40 runs of one configuration; each run a level times
run-to-run noise, with 200 calls of 10 % within-run spread; the rule sees median, p16, p84 and
count). ``before`` is :class:`mlprof.report.alerts.AlertRule` as it is, ``after`` the rule each
series is judged by once its host is calibrated: :func:`mlprof.report.history.floor_rule`,
``min_change`` raised to 2 x the floor.

Scenarios, per run-to-run noise (Gaussian 3 / 5 / 10 %, or 5 % plus a noisy neighbour slowing
10 % of the runs by 30-100 %):

- ``A/A``: the same code measured every night (an A/A nightly): ``false`` is the share of
  series with any alert over the 40 runs (target <= 1 %);
- ``step+20%``: a planted +20 % step at run 20; ``det<=2`` the share caught by the second run
  after it (a nightly's run and its re-measurement, then the next night);
- ``step+6%``: what the floor costs: a +6 % step, within 2 x a 3-4 % floor, is no longer an
  alert (the point of the floor: on a host whose A/A pairs move that far, it is not a change
  anyone can confirm);
- ``A/A states`` and ``step+20% states``: quiet nights (1 % Gaussian run-to-run noise) on a
  host that changes state now and then: each night it enters or leaves a slow state with
  probability ``--switch`` (0.2: about 5 nights in a state), and the slow state moves the
  level by a per-series amount drawn uniformly between 0.5 and 1 floor (a neighbour, a
  frequency state: as far as the host's A/A pairs move, which the quiet history does not
  show).

Stationary noise is what the rule's own noise estimate already weighs: there the floor changes
little. A host whose level moves by more than the history's noise shows, for several nights at
a time, is what the floor is for.

The floor: ``--floor`` (relative), by default 0.031 and then 0.093, measured on this
project's 2-core VM with interleaved A/A rounds as CalibrateNoise makes them (the 10x128
DNN against itself, one process, 60 rounds of 30 calls, fresh sessions each round): the 95th
percentile of |ratio - 1| was 3.1 % at batch size 8 (0.037 ms calls) and 9.3 % at batch size 1
(0.019 ms calls), with the machine shared with other test runs. ``--measure`` measures both
again here the same way and uses them (about 10 s; waits for the machine's measurement
lock). The checks below are judged at the first floor; the second is the short calls' class,
shown for what it costs.

Real histories: the repository holds none longer than two versions (``tests/fixtures/
store_v1``: v1 and v2 of two models), too short for the rule to judge, so the figures are
simulated only.

Usage (after ``source setup.sh``)::

    python benchmarks/alerts_floor.py [--series 2000] [--seed 1] [--floor 0.031,0.093] \
        [--measure]

Exit code 0 when, with the floor: A/A false alerts <= 1 % under every noise model and with
host states; the +20 % step caught by the second run after it in >= 90 % of series at 3 %
noise and with host states; and the floor costing the +20 % step at most 1 point of detection
anywhere (at 5 % noise the rule catches 88-90 % with or without it, ``benchmarks/alerts.py``);
1 otherwise. About a minute per 1000 series on a quiet core.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

from mlprof.report.alerts import AlertRule, detect
from mlprof.report.history import floor_rule

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("bench_alerts", os.path.join(_HERE, "alerts.py"))
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_alerts"] = bench
_spec.loader.exec_module(bench)

#: the floor measured here (see the module docstring)
MEASURED_FLOORS = (0.031, 0.093)
NOISES = (("gauss3", 0.03, 0.0), ("gauss5", 0.05, 0.0), ("gauss10", 0.10, 0.0),
          ("heavy", 0.05, 0.10))


def measure_floor(rounds: int = 60) -> dict[int, tuple[float, float]]:
    """``{batch size: (median call ms, 95th percentile of |ratio - 1|)}`` of interleaved A/A
    rounds of the 10x128 DNN against itself at batch sizes 1 and 8, as CalibrateNoise pairs
    them."""
    from mlprof.measure import MeasureSettings
    from mlprof.measure.interleave import Config, measure_interleaved_isolated

    dnn = os.path.join(_HERE, "..", "examples", "dnn", "model_onnx_l10u128.yaml")
    configs = [Config("A", dnn, "onnxruntime", "A"), Config("B", dnn, "onnxruntime", "B")]
    out = {}
    for bs in (1, 8):
        print(f"measuring {rounds} interleaved A/A rounds at batch size {bs}", flush=True)
        s = MeasureSettings(batch_size=bs, n_calls=30, warmup=5, min_duration=0)
        m = measure_interleaved_isolated(configs, s, rounds).round_medians_ms
        out[bs] = (float(np.median(m)),
                   float(np.percentile(np.abs(m[:, 0] / m[:, 1] - 1), 95)))
    return out


def with_states(stats: dict, floor: float, switch: float, rng: np.random.Generator) -> dict:
    """``stats`` (of :func:`bench.simulate`) on a host with a slow state (see the module
    docstring): every run's median, p16 and p84 times the state's factor."""
    n, runs = stats["median"].shape
    flips = rng.random((n, runs)) < switch
    state = np.cumsum(flips, axis=1) % 2            # 0 fast, 1 slow; every series starts fast
    shift = rng.uniform(0.5 * floor, floor, (n, 1))
    factor = 1 + shift * state
    return {**stats, **{k: stats[k] * factor for k in ("median", "p16", "p84")}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--series", type=int, default=2000, help="series per scenario")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--samples", type=int, default=200, help="calls per run")
    p.add_argument("--floor", default=",".join(map(str, MEASURED_FLOORS)),
                   help="the host's floors, relative, comma-separated; default "
                   f"{','.join(map(str, MEASURED_FLOORS))} (measured here)")
    p.add_argument("--measure", action="store_true",
                   help="measure the floor here first (interleaved A/A, batch sizes 1 and 8)")
    p.add_argument("--switch", type=float, default=0.2,
                   help="chance per night that the host enters or leaves its slow state")
    args = p.parse_args(argv)
    floors = [float(f) for f in args.floor.split(",")]
    if args.measure:
        found = measure_floor()
        for bs, (call, f) in found.items():
            print(f"A/A floor at batch size {bs}: {100 * f:.1f} % ({call:.4f} ms calls)")
        floors = [found[8][1], found[1][1]]
    t0 = time.perf_counter()
    results: dict[tuple[str, str], dict[str, float]] = {}
    for k, floor in enumerate(floors):
        before = AlertRule()
        after = floor_rule(before, floor)
        print(f"\nfloor {100 * floor:.1f} %: min_change {100 * before.min_change:g} % -> "
              f"{100 * after.min_change:.1f} %; {args.series} series of {bench.N_RUNS} runs, "
              f"seed {args.seed}")
        j = 0
        for change, step in (("A/A", 0.0), ("step+20%", 0.20), ("step+6%", 0.06)):
            for name, noise, outliers in (*NOISES, ("states", 0.01, 0.0)):
                if step and outliers or change == "step+6%" and name == "states":
                    continue
                sc = bench.Scenario(f"{change} {name}", noise, outliers=outliers, step=step)
                rng = np.random.default_rng([args.seed, 100 + j])
                j += 1
                stats = bench.simulate(sc, args.series, args.samples, rng)
                if name == "states":
                    stats = with_states(stats, floor, args.switch, rng)
                cells = []
                for label, rule in (("before", before), ("after", after)):
                    def run(st: dict, i: int, rule: AlertRule = rule) -> list:
                        return detect(st["median"][i], rule, p16=st["p16"][i],
                                      p84=st["p84"][i], count=st["count"][i])
                    r = bench.evaluate(sc, stats, run)
                    if k == 0:
                        results[(sc.name, label)] = r
                    key = "det<=2" if step else "false"
                    cells.append(f"{100 * r[key]:5.1f} %")
                key = "det<=2" if step else "false"
                print(f"{sc.name:18s} {key:7s} before {cells[0]}  after {cells[1]}",
                      flush=True)
    checks = {
        "A/A nightly: false alerts <= 1 % with the floor (every noise model, host states)": all(
            results[(f"A/A {n}", "after")]["false"] <= 0.01
            for n in (*(n for n, _, _ in NOISES), "states")),
        "+20 % step caught by the 2nd run after it >= 90 % with the floor (3 % noise, states)":
            all(results[(f"step+20% {n}", "after")]["det<=2"] >= 0.9
                for n in ("gauss3", "states")),
        "+20 % step: the floor costs at most 1 point of detection (every noise model)": all(
            results[(f"step+20% {n}", "after")]["det<=2"]
            >= results[(f"step+20% {n}", "before")]["det<=2"] - 0.01
            for n in ("gauss3", "gauss5", "gauss10", "states")),
    }
    print(f"\nchecks at the floor {100 * floors[0]:.1f} %:")
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
