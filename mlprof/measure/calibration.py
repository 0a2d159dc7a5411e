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
from mlprof.progress import Progress
from mlprof.results.records import NOISE_MAX_PAIRS
from mlprof.runtimes import DEFAULT_RUNTIME

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
#: the calibrated model: the bundled 10x128 DNN on the default runtime (ONNX Runtime: always
#: installed, and it runs the bundled ONNX model)
CALIBRATION_MODEL = os.path.join("examples", "dnn", "model_onnx_l10u128.onnx")
CALIBRATION_RUNTIME = DEFAULT_RUNTIME


@dataclass(frozen=True)
class CalibrationClass:
    """One class of configuration to calibrate: a batch size of the calibration model (which
    sets the call time) at a thread count."""

    batch_size: int
    threads: int

    @property
    def label(self) -> str:
        return f"bs{self.batch_size}_t{self.threads}"


#: the batch sizes of a short and a long call
SHORT_BATCH, LONG_BATCH = 1, 256
#: untimed calls of each session before its first round
CALIBRATION_WARMUP = 5
#: the time of calls each copy runs per pair, in slices of about :data:`SLICE_MS` that alternate
#: between the copies in a fresh random order, and the bounds on the calls of a pair. Why:
#: a pair must compare what a measurement's median compares, steady calls, and it must not
#: read this VM's speed flips (a 0.02 ms call runs 1.5x slower for tens of ms at a time, every
#: 0.1-1 s) as the difference of two copies. Measured here on a quiet machine (load 0.8,
#: 20 pairs): with fresh sessions each round, 40 calls (short class) and 3 calls (long class)
#: a round without warm-up, eight calibrations gave floors of 1-43 % (short) and 2-11 %
#: (long); with two sessions kept, 5 warm-up calls and 10 ms of calls per copy in one piece,
#: still 1-43 % and 2-11 % (the pairs were 1.00 +- 0.01 but for the one or two in 20 that a
#: flip hit: 0.65, 1.73); with the 10 ms cut into 1 ms slices alternating between the copies,
#: 0.5-2.4 % (short) and 1.7-3.8 % (long) in 0.33-0.42 s a class: both copies see a flip
ROUND_MS = 10.0
SLICE_MS = 1.0
#: the time each copy is called, untimed, before its first pair (after its warm-up calls)
WARM_MS = 20.0
MIN_CALLS, MAX_CALLS = 5, 5000


def calibration_classes(usable_cpus: float | None) -> list[CalibrationClass]:
    """A short call (batch size 1: ~0.02 ms on this 2-vCPU VM) and a long call (batch size
    256: ~0.8 ms) at one thread and, when more than one CPU is usable (affinity and cgroup
    quota), the long call at all of them: the thread counts measurements use most (the default
    and the machine's width).

    Why no short call at all CPUs: the calibration must cost at most 10 % of a default
    nightly run (``benchmarks/calibration_cost.py``: 20 s here), and each class costs 0.4-0.7 s;
    a many-thread measurement of a short call is judged by the many-thread class, the nearest
    (:meth:`mlprof.results.records.NoiseRecord.class_for`)."""
    out = [CalibrationClass(SHORT_BATCH, 1), CalibrationClass(LONG_BATCH, 1)]
    if usable_cpus is not None and int(usable_cpus) > 1:
        out.append(CalibrationClass(LONG_BATCH, int(usable_cpus)))
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
    from mlprof.measure.isolate import run_isolated
    from mlprof.measure.lock import measurement_lock
    from mlprof.sysinfo import host_fingerprint

    pairs = check_pairs(pairs)
    if classes is None:
        classes = calibration_classes(host_fingerprint().get("usable_cpus"))
    if not classes:
        raise MLProfError("no class of configuration to calibrate", field="classes")
    model = model_file or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        CALIBRATION_MODEL)
    label = f"noise floor: {len(classes)} classes x {pairs} A/A pairs"
    with measurement_lock(label) as lock:
        t0 = time.monotonic()  # the calibration's own time, without the wait for the lock
        results = run_isolated(_measure_pairs, {"classes": list(classes), "model": model,
                                                "rounds": pairs, "seed": seed},
                               timeout=timeout, progress=progress, label=label)
        t1 = time.monotonic()
    out = []
    for c, result in zip(classes, results, strict=True):
        m = np.asarray(result["medians_ms"], dtype=np.float64)
        ratios = [float(r) for r in m[:, 0] / m[:, 1]]
        out.append({"call_ms": float(np.median(m)), "threads": c.threads,
                    "pairs": pairs, **floor_of(ratios, seed=seed), "model": "dnn_l10u128",
                    "runtime": CALIBRATION_RUNTIME, "batch_size": c.batch_size,
                    "n_calls": result["n_calls"], "slice_calls": result["slice_calls"],
                    "sessions": result["sessions"], "ratios": ratios,
                    # what disturbed the class's rounds (a disturbed calibration's floor is
                    # high: the task says so, and CalibrateNoise can be run again)
                    "causes": list((result["environment"] or {}).get("causes") or [])})
    return {"classes": out, "pairs": pairs, "seed": seed, "model_file": model,
            "method": f"per class, {pairs} A/A pairs of the class's configuration against "
                      "itself (two sessions at one thread, one at more; "
                      f"{CALIBRATION_WARMUP} warm-up calls), each copy running ~{ROUND_MS:g} ms "
                      f"of calls a pair in ~{SLICE_MS:g} ms slices interleaved in a fresh random "
                      "order (seeded) in one process; floor = "
                      f"{FLOOR_PERCENTILE:g}th percentile of |A/A' - 1| over the rounds, its "
                      f"{100 * FLOOR_LEVEL:g} % interval from {FLOOR_RESAMPLES} bootstrap "
                      "resamples of the rounds",
            "duration_s": round(t1 - t0, 3), "lock_wait_s": lock.wait_s,
            "class_environment": [r["environment"] for r in results]}


def _measure_pairs(classes: Sequence[CalibrationClass], model: str, rounds: int, seed: int,
                   progress: Callable[[float, str], None] | None = None
                   ) -> list[dict[str, Any]]:
    """In the child: per class, its two copies (A and A'), warmed up, then ``rounds`` pairs;
    a pair runs each copy for ~:data:`ROUND_MS` of calls in slices of ~:data:`SLICE_MS`, the
    copies alternating slice by slice in a fresh random order (seeded with ``seed + i``), each
    call timed alone with ``perf_counter_ns`` as in :mod:`mlprof.measure.harness`; its ratio
    is A's median call over A''s. One class after the other.

    The copies are two sessions at one thread (where a session's memory lands is part of what
    two runs differ by: up to 2 % here), ONE session at more threads: two multi-thread ONNX
    Runtime sessions in one process keep each other's spinning thread pools on the CPUs (named
    ``oversubscribed`` in all 8 calibrations here, floors 36-66 %, against 1.3-5.8 % for one
    session), which no measurement of one session sees. Each class alone: with 8
    configurations in one random order the two-thread class's median pair moved by 22 %.

    Returns per class ``medians_ms`` (rounds x 2), ``n_calls`` per copy and pair,
    ``slice_calls``, ``sessions`` and the cause record around its pairs (``environment``)."""
    with Progress(progress) as rep:  # session creation or a slow round still speaks
        return _pairs(classes, model, rounds, seed, rep)


def _pairs(classes: Sequence[CalibrationClass], model: str, rounds: int, seed: int,
           rep: Progress) -> list[dict[str, Any]]:
    """:func:`_measure_pairs`'s work, each class's phase and round reported to ``rep``."""
    from mlprof.measure.contention import environment, snapshot
    from mlprof.measure.inputs import make_feeds
    from mlprof.measure.interleave import _ready
    from mlprof.measure.settings import MeasureSettings
    from mlprof.runtimes import get_runtime

    cls = get_runtime(CALIBRATION_RUNTIME)
    resolved = cls.resolve(model, ())
    pc = time.perf_counter_ns
    out = []
    for i, c in enumerate(classes):
        s = MeasureSettings(runtime=CALIBRATION_RUNTIME, batch_size=c.batch_size,
                            threads=c.threads, warmup=CALIBRATION_WARMUP,
                            min_duration=0.0).validated()
        rep.phase(f"class {i + 1} of {len(classes)} ({c.label}): creating the sessions",
                  i / len(classes))
        feeds = make_feeds(resolved.inputs, c.batch_size, 1, s.input_data, s.seed)
        first = _ready(cls, resolved, feeds, s)
        second = _ready(cls, resolved, feeds, s) if c.threads == 1 else first
        copies = [first[1][0], second[1][0]]
        # warm up by time as well: 5 calls of the short class are 0.1 ms, and a class whose
        # first pairs ran cold set a floor of 52 % in 1 of 6 calibrations here
        for fn, args in copies:
            t0, end = pc(), pc() + int(WARM_MS * 1e6)
            while pc() < end:
                fn(*args)
        fn, args = copies[0]
        t0 = pc()
        for _ in range(MIN_CALLS):
            fn(*args)
        call_ms = max((pc() - t0) / MIN_CALLS / 1e6, 1e-6)
        n = int(min(MAX_CALLS, max(MIN_CALLS, round(ROUND_MS / call_ms))))
        per_slice = max(1, min(n, round(SLICE_MS / call_ms)))
        slices = max(1, n // per_slice)
        rng = np.random.default_rng(seed + i)
        medians = np.zeros((rounds, 2))
        bufs = [[0] * (slices * per_slice) for _ in range(2)]
        start = snapshot()
        for r in range(rounds):
            for sl in range(slices):
                for j in rng.permutation(2):
                    fn, args = copies[int(j)]
                    buf, k = bufs[int(j)], sl * per_slice
                    for _ in range(per_slice):
                        t0 = pc()
                        fn(*args)
                        buf[k] = pc() - t0
                        k += 1
            medians[r] = [float(np.median(b)) / 1e6 for b in bufs]
            rep.update(f"class {i + 1} of {len(classes)} ({c.label}): pair {r + 1} of {rounds}",
                       fraction=(i + (r + 1) / rounds) / len(classes))
        out.append({"medians_ms": medians.tolist(), "n_calls": slices * per_slice,
                    "slice_calls": per_slice, "sessions": 2 if second is not first else 1,
                    "environment": environment(start, snapshot())})
        del first, second, copies
    return out
