"""Error rates of the regression alert rule (:mod:`mlprof.report.alerts`) on seeded series.

What is simulated: series of 40 runs of one configuration. Each run is like a real one: a run
level (the configuration's true latency times *run-to-run* noise: the machine's state during
that run) and ``--samples`` calls around it with *within-run* noise (log-normal, 10 % spread,
like a small model's calls on a shared VM). The rule gets what the report has per run:
``median_ms``, ``p16_ms``, ``p84_ms`` and ``count``.

Noise models (run to run):

- ``gauss3`` / ``gauss5`` / ``gauss10``: Gaussian, 3 / 5 / 10 % of the level;
- ``heavy``: Gaussian 5 % plus, in 10 % of the runs, a noisy neighbour slowing the run by
  +30 to +100 % (uniform), unevenly: each call by 0.5 to 1.5 times that slowdown, which widens
  the run's own spread as CPU contention does;
- ``heavy-even`` (reported, not a target): the same slowdowns applied evenly to every call, so
  the run's own spread does not show them. Two such runs in a row look exactly like a step.

Changes: a +10 % and a +20 % step at run 20 (20 runs of history), a +3 %/run drift from run 10,
and a +300 % step (a 4x slowdown: what a nightly most needs to catch at once) at 5 % and 10 %
noise and under ``heavy`` noise. At 4x, the step run and its confirmation differ by 7-14 % of
their level at 5-10 % noise: the rule must not take two such runs for an outlier beside an
ordinary run (issue 23: the rule without its "each beyond the thresholds and beyond a
neighbour's 2x" condition confirmed only 58-85 % of them by the first run after the step).

Columns: ``false`` = share of steady series with any alert (for the change scenarios: any alert
confirmed before the change; one confirmed by the first changed run counts as a detection);
``det<=k`` = share of step series with a regression alert confirmed by the k-th run after the
step (the step run is run 0: ``det<=1`` = the step run and one confirmation, what a
nightly run with its re-measurement sees); ``drift runs`` = median and 90th percentile of the
runs from the drift's start to its first alert, ``det<=10`` the share alerted within 10 runs.

``oracle`` lines: the best a rule could do that knows the true level and noise and tests the
mean of the last 2 or 3 runs, with its threshold set so that 1 % of steady 40-run series alert.
``bound`` lines: a rule that knows the level, the noise *and the run of the step* and tests
once, at 1 % false alerts: by Neyman-Pearson the mean of the runs since the step is the most
powerful test, so ``Phi(step * sqrt(k + 1) / noise - 2.326)`` bounds every rule (the run's own
samples do not help: the run-to-run noise moves each run's level itself).

Usage (after ``source setup.sh``)::

    python benchmarks/alerts.py [--series 2000] [--seed 1] [--samples 200]

Both rules run on the same series: ``before`` is the rule before issue 14 (kept verbatim below
as ``old_detect``, medians only), ``after`` the current :func:`mlprof.report.alerts.detect` with
each run's p16, p84 and count.

Exit code 0 when the feasible targets of issue 14 hold for ``after``: false alerts <= 1 % under
gauss3/5/10 and heavy; a +20 % step at 5 % noise detected by the second run after it >= 90 %; a
+3 %/run drift at 3 % and 5 % noise alerted within 10 runs in >= 90 % of series; and issue 23's:
a +300 % step detected by the first run after it (the nightly's re-measurement) >= 95 % at 5 %
and 10 % noise and under heavy noise. 1 otherwise.
(The issue asked for the step at 10 % noise; the oracle and bound lines show that no rule
reaches it.)
About two minutes on one quiet core (39 minutes beside other test runs, at a load average of
6.5 on 2 cores).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mlprof.report.alerts import Alert, AlertRule, detect

N_RUNS = 40
STEP_AT = 20
DRIFT_AT = 10
WITHIN_CV = 0.10  # within-run spread of the calls (log-normal sigma)
NEVER = 99  # runs-to-detect of a drift that never alerted


# --- the rule before issue 14, verbatim but for the names: the "before" reference ---

MAD_SCALE = 1.4826


@dataclass(frozen=True)
class OldRule:
    """The rule before issue 14 (mlprof 0.x): median and MAD of the medians only."""

    z_min: float = 4.0
    min_change: float = 0.05
    persist: int = 2
    window: int = 10
    #: past points needed before anything can alert (two earlier runs, then a candidate and
    #: its confirmation: the third run of a configuration can already alert)
    min_history: int = 2
    #: with fewer past points than this, the MAD says little about the noise: assume at least
    #: ``prior_noise`` (relative) run-to-run noise, so that z >= 4 needs a change of 60 %
    short_history: int = 5
    prior_noise: float = 0.15
    #: floor of the noise scale, relative to the median (a perfectly flat history still needs
    #: a change of z_min * mad_floor to count)
    mad_floor: float = 0.002


def _old_score(x: float, past: np.ndarray, rule: OldRule) -> tuple[float, float, float]:
    med = float(np.median(past))
    mad = MAD_SCALE * float(np.median(np.abs(past - med)))
    floor = rule.prior_noise if len(past) < rule.short_history else rule.mad_floor
    mad = max(mad, floor * abs(med), 1e-12)
    return med, (x - med) / mad, (x - med) / med if med else float("inf")


def old_detect(values: Sequence[float], rule: OldRule = OldRule(),
           higher_is_worse: bool = True) -> list[Alert]:
    """The old rule, kept here as the "before" reference."""
    x = np.asarray(values, dtype=float)
    alerts: list[Alert] = []
    reset = 0  # after an alert, the shifted level is the new normal: history restarts there
    i = rule.min_history + rule.persist - 1
    while i < len(x):
        start = i - rule.persist + 1
        past = x[max(reset, start - rule.window):start]
        past = past[np.isfinite(past)]
        if len(past) < rule.min_history:
            i += 1
            continue
        signs = set()
        last = None
        for j in range(start, i + 1):
            med, z, change = _old_score(float(x[j]), past, rule)
            if not (abs(z) >= rule.z_min and abs(change) >= rule.min_change):
                break
            signs.add(np.sign(z))
            last = (med, z, change)
        else:
            if len(signs) == 1 and last is not None:
                med, z, change = last
                worse = (z > 0) == higher_is_worse
                alerts.append(Alert(index=i, start=start,
                                    kind="regression" if worse else "improvement",
                                    value=float(x[i]), baseline=med, change=change, z=z))
                reset = start
                i += 1
                continue
        i += 1
    return alerts


@dataclass(frozen=True)
class Scenario:
    """One kind of series: run-to-run noise, outliers, and the change (if any)."""

    name: str
    noise: float
    outliers: float = 0.0        # share of runs slowed by a noisy neighbour
    even: bool = False           # the neighbour slows every call alike (spread unchanged)
    step: float = 0.0
    drift: float = 0.0


SCENARIOS = [
    Scenario("gauss3", 0.03), Scenario("gauss5", 0.05), Scenario("gauss10", 0.10),
    Scenario("heavy", 0.05, outliers=0.10), Scenario("heavy-even", 0.05, outliers=0.10, even=True),
    *[Scenario(f"step+{int(100 * s)}% gauss{n}", n / 100, step=s)
      for s in (0.10, 0.20) for n in (3, 5, 10)],
    *[Scenario(f"drift+3%/run gauss{n}", n / 100, drift=0.03) for n in (3, 5, 10)],
    *[Scenario(f"step+300% gauss{n}", n / 100, step=3.0) for n in (5, 10)],
    Scenario("step+300% heavy", 0.05, outliers=0.10, step=3.0),
]


def simulate(sc: Scenario, n_series: int, n_samples: int, rng: np.random.Generator
             ) -> dict[str, np.ndarray]:
    """Per run statistics like the report's: median, p16, p84, count (arrays series x runs)."""
    t = np.arange(N_RUNS)
    level = np.ones(N_RUNS)
    if sc.step:
        level = np.where(t >= STEP_AT, 1 + sc.step, 1.0)
    if sc.drift:
        level = 1 + sc.drift * np.clip(t - DRIFT_AT + 1, 0, None)
    run = level * (1 + sc.noise * rng.standard_normal((n_series, N_RUNS)))
    calls = np.exp(WITHIN_CV * rng.standard_normal((n_series, N_RUNS, n_samples)))
    if sc.outliers:
        hit = rng.random((n_series, N_RUNS)) < sc.outliers
        slow = rng.uniform(0.3, 1.0, (n_series, N_RUNS))
        uneven = (np.ones((n_series, N_RUNS, n_samples)) if sc.even
                  else rng.uniform(0.5, 1.5, (n_series, N_RUNS, n_samples)))
        calls *= np.where(hit[..., None], 1 + slow[..., None] * uneven, 1.0)
    samples = run[..., None] * calls
    p16, med, p84 = np.percentile(samples, [16, 50, 84], axis=-1)
    return {"median": med, "p16": p16, "p84": p84,
            "count": np.full(med.shape, n_samples)}


def run_new(stats: dict, i: int) -> list:
    """The rule of :mod:`mlprof.report.alerts` with each run's p16, p84 and count."""
    return detect(stats["median"][i], AlertRule(), p16=stats["p16"][i], p84=stats["p84"][i],
                  count=stats["count"][i])


def run_old(stats: dict, i: int) -> list:
    """The old rule (medians only)."""
    return old_detect(stats["median"][i])


def evaluate(sc: Scenario, stats: dict, run: Callable) -> dict[str, float]:
    """The rates of one scenario (see the module docstring)."""
    n = stats["median"].shape[0]
    false = 0
    det = {1: 0, 2: 0}
    drift_runs: list[float] = []
    change_at = STEP_AT if sc.step else DRIFT_AT if sc.drift else N_RUNS
    for i in range(n):
        alerts = run(stats, i)
        if any(a.index < change_at for a in alerts):
            false += 1
            continue
        regs = [a.index for a in alerts if a.kind == "regression"]
        first = min(regs) if regs else None
        if sc.step:
            for k in det:
                det[k] += first is not None and first <= STEP_AT + k
        if sc.drift:
            drift_runs.append(first - DRIFT_AT + 1 if first is not None else np.inf)
    out = {"false": false / n}
    if sc.step:
        out.update({f"det<={k}": v / n for k, v in det.items()})
    if sc.drift:
        r = np.minimum(drift_runs, NEVER)  # never alerted: shown as 99
        out.update({"median runs": float(np.median(r)), "p90 runs": float(np.percentile(r, 90)),
                    "det<=10": float(np.mean(r <= 10))})
    return out


def oracle(noise: float, step: float, n_series: int, rng: np.random.Generator
           ) -> dict[int, float]:
    """Detection by the k-th run after a step of a rule that knows the level and the noise.

    It alerts when the mean of the last ``k + 1`` runs is above a threshold; the threshold is
    the 99th percentile, over steady series, of that mean's maximum along 40 runs.
    """
    out = {}
    for k in (1, 2):
        w = k + 1
        steady = noise * rng.standard_normal((n_series, N_RUNS))
        means = np.lib.stride_tricks.sliding_window_view(steady, w, axis=1).mean(axis=-1)
        c = np.percentile(means.max(axis=1), 99)
        after = step + noise * rng.standard_normal((n_series, w))
        out[k] = float(np.mean(after.mean(axis=1) > c))
    return out


def known_location_bound(noise: float, step: float, k: int) -> float:
    """Detection by the k-th run after a step when its run, the level and the noise are known.

    One test of the mean of the ``k + 1`` runs since the step at 1 % false alerts (one-sided
    normal quantile 2.326): the most powerful test there is (Neyman-Pearson), so no rule that
    must also find the step among 40 runs, or estimate level and noise, does better.
    """
    z = step * np.sqrt(k + 1) / noise - 2.326
    return 0.5 * (1 + math.erf(z / np.sqrt(2)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--series", type=int, default=2000, help="series per scenario")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--samples", type=int, default=200, help="calls per run")
    args = p.parse_args(argv)

    print(f"after:  {AlertRule()} (medians, p16/p84 and count)")
    print(f"before: {OldRule()} (medians only)")
    print(f"{args.series} series of {N_RUNS} runs per scenario, {args.samples} calls per run, "
          f"seed {args.seed}\n")
    t0 = time.perf_counter()
    results = {}
    for j, sc in enumerate(SCENARIOS):
        rng = np.random.default_rng([args.seed, j])
        stats = simulate(sc, args.series, args.samples, rng)
        for label, run in (("before", run_old), ("after", run_new)):
            r = evaluate(sc, stats, run)
            if label == "after":
                results[sc.name] = r
            cells = "  ".join(f"{k} {100 * v:5.1f}%" if k.startswith(("false", "det"))
                              else f"{k} {v:4.1f}" for k, v in r.items())
            print(f"{sc.name:22s} {label:6s} {cells}", flush=True)
    rng = np.random.default_rng([args.seed, 999])
    for noise in (0.05, 0.10):
        o = oracle(noise, 0.20, args.series, rng)
        print(f"{'oracle step+20% gauss' + str(int(100 * noise)):22s} "
              + "  ".join(f"det<={k} {100 * v:5.1f}%" for k, v in o.items()))
        print(f"{'bound  step+20% gauss' + str(int(100 * noise)):22s} "
              + "  ".join(f"det<={k} {100 * known_location_bound(noise, 0.20, k):5.1f}%"
                          for k in (1, 2)))
    checks = {
        "false <= 1% (gauss3/5/10, heavy)": all(
            results[s]["false"] <= 0.01 for s in ("gauss3", "gauss5", "gauss10", "heavy")),
        "step +20% at 5% noise: det<=2 >= 90%": results["step+20% gauss5"]["det<=2"] >= 0.9,
        "drift +3%/run at 3% and 5% noise: within 10 runs >= 90%": all(
            results[f"drift+3%/run gauss{n}"]["det<=10"] >= 0.9 for n in (3, 5)),
        "step +300% at 5% and 10% noise and heavy: det<=1 >= 95%": all(
            results[f"step+300% {n}"]["det<=1"] >= 0.95 for n in ("gauss5", "gauss10", "heavy")),
    }
    print()
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
