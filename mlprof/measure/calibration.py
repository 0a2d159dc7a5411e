"""CalibrateNoise's measurement: this host's noise floor from interleaved A/A pairs, each class
of configuration (a call time and a thread count) against itself.

Apart from :mod:`mlprof.measure.noise` (the floor's reader and the wording of verdicts) because
it runs interleaved rounds (:mod:`mlprof.measure.interleave`), whose verdicts read the floor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.results.records import NOISE_MAX_PAIRS

# --- calibration (CalibrateNoise) -------------------------------------------------------------

#: the fewest A/A pairs per class: the issue's rule (the 95th percentile of fewer than 20 pairs
#: is the largest of them, and its interval has no upper end worth the name)
MIN_PAIRS = 20
#: pairs per class when none are given
DEFAULT_PAIRS = 20
#: the percentile of |ratio - 1| that is the floor, and the level of its interval
FLOOR_PERCENTILE = 95.0
FLOOR_LEVEL = 0.95
#: bootstrap resamples of the floor's interval (seeded: the same ratios, the same interval)
FLOOR_RESAMPLES = 2000
#: the calibrated model: the bundled 10x128 DNN on ONNX Runtime (always installed)
CALIBRATION_MODEL = os.path.join("examples", "dnn", "model_onnx_l10u128.onnx")
CALIBRATION_RUNTIME = "onnxruntime"


@dataclass(frozen=True)
class CalibrationClass:
    """One class of configuration to calibrate: a batch size of the calibration model (which
    sets the call time) at a thread count, ``n_calls`` timed calls per round.

    Why these calls per round: the calibration must cost at most 10 % of a default nightly run,
    and a round's median must not be one call. A short call (batch size 1, 0.02 ms here) takes
    40 calls per round (about 1 ms of calls); a long one (batch size 256, 0.8 ms here) 3, after
    only the fresh session's untimed first call. Beside other test runs (load average 4-5,
    3 calibrations each, alternated), 5 calls after one warm-up call took 1.3-2.5 s for the
    long two-thread class and 0.4-0.7 s at one thread, 3 calls without it 1.0-1.1 s and
    0.2-0.3 s, with floors of the same size (7-14 % and 8-11 % at one thread). Fewer calls per
    round than a measurement's (100 by default) make each round median noisier, never quieter:
    the floor errs on the side of calling less a change."""

    batch_size: int
    threads: int
    n_calls: int

    @property
    def label(self) -> str:
        return f"bs{self.batch_size}_t{self.threads}"


#: the batch sizes of a short and a long call, and their calls per round
SHORT_BATCH, SHORT_CALLS = 1, 40
LONG_BATCH, LONG_CALLS = 256, 3
#: untimed calls after each fresh session's (untimed) first call
CALIBRATION_WARMUP = 0


def calibration_classes(usable_cpus: float | None) -> list[CalibrationClass]:
    """A short call (batch size 1: ~0.02 ms on this 2-vCPU VM) and a long call (batch size
    256: ~0.8 ms) at one thread and, when more than one CPU is usable (affinity and cgroup
    quota), the long call at all of them: the thread counts measurements use most (the default
    and the machine's width).

    Why no short call at all CPUs: a two-thread session costs 6-8 ms to create here (its
    thread pool) against 1.3-2.9 ms at one thread, and sessions are created afresh every
    round: beside other test runs (load average 3-5), the four classes of both call times at
    both thread counts took 4.5-5.9 s (3 calibrations), these three 2.0-4.5 s (6), and with 3
    calls per round in the long classes 1.5-1.7 s, median 1.6 s, against 19.7-20.3 s for a
    default nightly run (``benchmarks/calibration_cost.py``): 7.9 % of it.
    A many-thread measurement of a short call is judged by the many-thread class, the nearest
    (:meth:`mlprof.results.records.NoiseRecord.class_for`)."""
    out = [CalibrationClass(SHORT_BATCH, 1, SHORT_CALLS),
           CalibrationClass(LONG_BATCH, 1, LONG_CALLS)]
    if usable_cpus is not None and int(usable_cpus) > 1:
        out.append(CalibrationClass(LONG_BATCH, int(usable_cpus), LONG_CALLS))
    return out


def check_pairs(pairs: Any) -> int:
    """At least :data:`MIN_PAIRS` and at most :data:`~mlprof.results.records.NOISE_MAX_PAIRS`
    A/A pairs per class (one line naming ``--pairs`` otherwise)."""
    if isinstance(pairs, bool) or not isinstance(pairs, int):
        raise MLProfError(f"must be an integer, got {pairs!r}", field="--pairs")
    if pairs < MIN_PAIRS:
        raise MLProfError(f"give at least {MIN_PAIRS} A/A pairs, got {pairs} (the 95th "
                          f"percentile of fewer is their largest: no floor)", field="--pairs")
    if pairs > NOISE_MAX_PAIRS:
        raise MLProfError(f"give at most {NOISE_MAX_PAIRS} A/A pairs, got {pairs}",
                          field="--pairs")
    return pairs


def floor_of(ratios: Sequence[float], *, seed: int = 0, n_resamples: int = FLOOR_RESAMPLES,
             level: float = FLOOR_LEVEL) -> dict[str, float]:
    """The floor of A/A ratios: ``floor`` the :data:`FLOOR_PERCENTILE` th percentile of
    ``|ratio - 1|``, ``ci_low``/``ci_high`` its percentile bootstrap interval (``n_resamples``
    resamples of the pairs, seeded), widened to hold the floor itself where the bootstrap
    distribution is lopsided (a record's floor is always inside its interval), and
    ``median_abs`` the median ``|ratio - 1|`` (the typical pair, beside the bad one)."""
    x = np.asarray(ratios, dtype=np.float64)
    if x.ndim != 1 or x.size < 2 or not np.all(np.isfinite(x)) or not np.all(x > 0):
        raise ValueError(f"need at least 2 finite positive ratios, got {x.tolist()!r:.200}")
    d = np.abs(x - 1.0)
    floor = float(np.percentile(d, FLOOR_PERCENTILE))
    rng = np.random.default_rng(seed)
    stats = np.percentile(d[rng.integers(0, d.size, (n_resamples, d.size))], FLOOR_PERCENTILE,
                          axis=1)
    alpha = (1.0 - level) / 2
    low, high = (float(v) for v in np.quantile(stats, [alpha, 1.0 - alpha]))
    return {"floor": floor, "ci_low": min(low, floor), "ci_high": max(high, floor),
            "median_abs": float(np.median(d))}


def calibrate(pairs: int = DEFAULT_PAIRS, *, classes: Sequence[CalibrationClass] | None = None,
              seed: int = 0, model_file: str | None = None, timeout: float | None = None,
              progress: Callable[[float, str], None] | None = None) -> dict[str, Any]:
    """Measure this host's noise floor: every class's configuration twice (A and A', the same
    model and settings, separate sessions made afresh each round), the two interleaved for
    ``pairs`` rounds in a fresh random order each round (seeded with ``seed``) so that neither
    copy has a place; the classes one after the other, all in ONE isolated child under the
    measurement lock, as :func:`mlprof.measure.interleave.measure_interleaved_isolated` runs a
    comparison. A pair is one round: ``A's round median / A''s round median``; each class's
    floor is :func:`floor_of` its pairs.

    Why A/A and interleaved: two copies of one configuration differ by exactly what the
    machine does to a measurement (drift, neighbours, where a session's memory lands); a
    comparison or an alert on this host cannot tell a change smaller than that from noise.

    Returns the record's body (``classes``, ``pairs``, ``seed``, ``method``, ``model_file``,
    ``interleaved``: the child's provenance), without header or fingerprint (the task adds
    them: :class:`mlprof.results.records.NoiseRecord`)."""
    from mlprof.measure.interleave import Config
    from mlprof.measure.isolate import run_isolated
    from mlprof.measure.lock import measurement_lock
    from mlprof.measure.settings import MeasureSettings
    from mlprof.measure.sysinfo import host_fingerprint

    pairs = check_pairs(pairs)
    if classes is None:
        classes = calibration_classes(host_fingerprint().get("usable_cpus"))
    if not classes:
        raise MLProfError("no class of configuration to calibrate", field="classes")
    model = model_file or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        CALIBRATION_MODEL)
    groups = [[Config(f"{copy} {c.label}", model, CALIBRATION_RUNTIME, "dnn_l10u128",
                      settings=(("batch_size", c.batch_size), ("threads", c.threads),
                                ("n_calls", c.n_calls)))
               for copy in ("A", "A'")] for c in classes]
    base = MeasureSettings(runtime=CALIBRATION_RUNTIME, batch_size=classes[0].batch_size,
                           warmup=CALIBRATION_WARMUP, min_duration=0.0)
    label = f"noise floor: {len(classes)} classes x {pairs} A/A pairs"
    with measurement_lock(label) as lock:
        t0 = time.monotonic()  # the calibration's own time, without the wait for the lock
        results = run_isolated(_measure_pairs, {"groups": groups, "settings": base,
                                                "rounds": pairs, "seed": seed},
                               timeout=timeout, progress=progress, label=label)
        t1 = time.monotonic()
    out = []
    for c, result in zip(classes, results, strict=True):
        m = result.round_medians_ms
        ratios = m[:, 0] / m[:, 1]
        out.append({"call_ms": float(np.median(m)), "threads": c.threads,
                    "pairs": pairs, **floor_of(ratios, seed=seed), "model": "dnn_l10u128",
                    "runtime": CALIBRATION_RUNTIME, "batch_size": c.batch_size,
                    "n_calls": c.n_calls, "ratios": [float(r) for r in ratios]})
    return {"classes": out, "pairs": pairs, "seed": seed, "model_file": model,
            "method": f"per class, {pairs} rounds of an A/A pair: the class's configuration "
                      "twice (separate sessions, fresh each round) interleaved in a fresh random "
                      f"order each round (seeded) in one process; floor = "
                      f"{FLOOR_PERCENTILE:g}th percentile of |A/A' - 1| over the rounds, its "
                      f"{100 * FLOOR_LEVEL:g} % interval from {FLOOR_RESAMPLES} bootstrap "
                      "resamples of the rounds",
            "duration_s": round(t1 - t0, 3), "lock_wait_s": lock.wait_s,
            "interleaved": [r.provenance for r in results]}


def _measure_pairs(groups: Sequence[Sequence[Any]], settings: Any, rounds: int, seed: int,
                   progress: Callable[[float, str], None] | None = None) -> list[Any]:
    """In the child: each class's A/A pair interleaved alone
    (:func:`mlprof.measure.interleave.measure_interleaved`, random order, seed ``seed + i``),
    one class after the other.

    Why not all classes in one interleaving: ONNX Runtime's thread pools spin after a call, so
    a two-thread session that ran just before slows the next configuration; with 8
    configurations in one random order the 0.8 ms two-thread class moved by 22 % in its median
    pair (floor 65 %) here, against 1-3 % for the others: the noise of the mix, not of a
    comparison, which interleaves its own configurations only."""
    from mlprof.measure.interleave import measure_interleaved

    say = progress or (lambda f, m: None)
    n = len(groups)
    out = []
    for i, pair in enumerate(groups):
        def sub(f: float, msg: str, i: int = i) -> None:
            say((i + f) / n, f"class {i + 1} of {n} ({groups[i][0].label[2:]}): {msg}")

        out.append(measure_interleaved(pair, settings, rounds, progress=sub, ordering="random",
                                       seed=seed + i))
    return out
