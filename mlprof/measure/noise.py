"""This host's noise floor: how far one configuration measured against itself moves, and so the
smallest change a comparison or an alert on this host can honestly call a change.

A floor is measured by CalibrateNoise (interleaved A/A pairs, :func:`calibrate`) and stored in
``<store>/CalibrateNoise/<host>/fp-<fingerprint id>/<revision>/noise.json``
(:class:`mlprof.results.records.NoiseRecord`). It belongs to the machine's fingerprint
(:func:`mlprof.measure.sysinfo.host_fingerprint`): a new kernel, other runtime versions or a
smaller CPU quota make a new fingerprint, which has no floor until it is calibrated again.

Readers ask :func:`find_floor` for the record of a fingerprint (this machine's by default) and
judge a figure by :meth:`~mlprof.results.records.NoiseRecord.floor_for` its call time and
threads; without a record they use their own fixed rules and say that the host is not
calibrated.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.results.records import NOISE_MAX_PAIRS, NoiseRecord

logger = logging.getLogger(__name__)

#: the message of a reader that found no floor for the fingerprint
NOT_CALIBRATED = "this host's noise floor is not measured (law run CalibrateNoise)"
#: the same, where a value is shown (``mlprof system-info``)
NOT_CALIBRATED_SHORT = "not calibrated (law run CalibrateNoise)"


def read_noise(path: str) -> NoiseRecord:
    """A noise record, checked (a one-line :class:`~mlprof.errors.MLProfError` naming the file
    and the field otherwise)."""
    try:  # through mlprof.ingest: a FIFO or a device there is one line, never a hang
        record = ingest.load_json(path)
    except MLProfError as e:
        raise MLProfError(f"cannot read the noise record: {e.message}", path,
                          "classes") from None
    return NoiseRecord.from_json(record, path)


def noise_paths(store: str, fingerprint_id: str) -> list[str]:
    """The noise records of ``fingerprint_id`` in ``store`` (of any host name and revision),
    the newest revision directory first."""
    base = os.path.join(store, "CalibrateNoise")
    seg = layout.fingerprint_segment(fingerprint_id)
    out = []
    try:
        hosts = sorted(os.listdir(base))
    except OSError:
        return []
    for host in hosts:
        fdir = os.path.join(base, host, seg)
        try:
            revisions = sorted(os.listdir(fdir), reverse=True)
        except OSError:
            continue
        for rev in revisions:
            path = os.path.join(fdir, rev, layout.NOISE_FILE)
            if os.path.isfile(path) and not os.path.islink(path):
                out.append(path)
    return out


def find_floor(store: str | None = None, fingerprint_id: str | None = None,
               warn: bool = True) -> NoiseRecord | None:
    """The noise record of ``fingerprint_id`` (this machine's by default) in ``store`` (the
    configured store by default), None when there is none; a damaged record is skipped, with
    a one-line warning naming its file and field (``warn``), never a number."""
    from mlprof.measure.sysinfo import fingerprint_id as current

    store = store or layout.store_base()
    fid = fingerprint_id or current()
    for path in noise_paths(store, fid):
        try:
            record = read_noise(path)
            if record.fingerprint_id != fid:  # copied or moved: another machine's floor
                raise MLProfError(f"the record is of fingerprint {record.fingerprint_id}, "
                                  f"its directory of {fid}", path, "fingerprint_id")
            return record
        except MLProfError as e:
            if warn:
                logger.warning("skipped a damaged noise record: %s", e)
    return None


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


def floor_summary(record: NoiseRecord) -> list[dict[str, Any]]:
    """Each class of ``record`` as the figures a reader states: call time, threads, pairs,
    floor and interval, median ``|ratio - 1|`` and the minimum detectable change (2 x floor);
    what ``nightly.json`` and ``mlprof system-info`` show."""
    return [{"call_ms": c.call_ms, "threads": c.threads, "pairs": c.pairs, "floor": c.floor,
             "ci_low": c.ci_low, "ci_high": c.ci_high, "median_abs": c.median_abs,
             "min_detectable": 2.0 * c.floor} for c in record.classes]


def describe_class(c: Any) -> str:
    """One class of a record in words: ``0.021 ms calls, 1 thread(s): floor 3.1 % [2.0, 4.5],
    minimum detectable change 6.2 %`` (``c``: a :class:`NoiseClass` or its JSON)."""
    def get(key: str) -> Any:
        return c[key] if isinstance(c, dict) else getattr(c, key)

    return (f"{_ms(get('call_ms'))} calls, {get('threads')} thread(s): floor "
            f"{100 * get('floor'):.1f} % [{100 * get('ci_low'):.1f}, "
            f"{100 * get('ci_high'):.1f}], minimum detectable change "
            f"{200 * get('floor'):.1f} % ({get('pairs')} A/A pairs)")


def _ms(v: float) -> str:
    return f"{v:.3g} ms" if math.isfinite(v) else "? ms"

# --- how verdicts use a floor (pure helpers: alerts, interleaved and --compare verdicts,
# Report and the dashboard all word it the same way) ----------------------------------------

#: what a reader without a floor says, once (Report, dashboard, comparison tables, alerts)
NOT_CALIBRATED_SHORT = "not calibrated: law run CalibrateNoise"


def percent(floor: float) -> str:
    """A relative floor as per cent, as every verdict writes it: ``0.0412`` -> ``"4.1"``."""
    return f"{100 * floor:.1f}"


def within_noise(floor: float) -> str:
    """The verdict of a speed-up whose interval excludes 1 but whose distance from 1 is within
    the host's floor: the rounds tell the two apart, the host does not (an A/A pair of this
    host moves that far in 1 of 20 rounds)."""
    return f"within this host's noise (floor {percent(floor)} %)"


def is_within_floor(speedup: float, floor: float | None) -> bool:
    """Whether ``|speedup - 1|`` is within ``floor`` (never without a floor)."""
    return floor is not None and abs(speedup - 1.0) <= floor


def calibration_date(record: NoiseRecord) -> str:
    """The day the record was calibrated (its header's timestamp), ``"?"`` without one."""
    ts = record.header.timestamp
    return str(ts)[:10] if ts else "?"


def min_detectable_text(record: NoiseRecord | None, host: str = "this host") -> str:
    """One line: the smallest change this host can tell from noise (2 x floor), per class
    where the classes differ (by a tenth of a per cent or more), with the fingerprint id and
    the calibration date; ``"minimum detectable change: not calibrated: law run
    CalibrateNoise"`` without a record. ``host`` names the machine (another host's records
    in a report of several).

    Why per class: short calls and many threads move more between A/A rounds than long
    single-threaded ones; one number for all would hide small regressions of the steady
    configurations or call the noise of the unsteady ones a change."""
    if record is None:
        return (f"minimum detectable change{'' if host == 'this host' else ' on ' + host}: "
                f"{NOT_CALIBRATED_SHORT}")
    where = f"fingerprint {record.fingerprint_id}, calibrated {calibration_date(record)}"
    shown = {percent(2 * c.floor) for c in record.classes}
    if len(shown) == 1:
        return f"minimum detectable change on {host}: {shown.pop()} % (2 x floor; {where})"
    parts = [f"{percent(2 * c.floor)} % for {c.call_ms:.3g} ms calls with {c.threads} "
             f"thread{'s' if c.threads != 1 else ''}"
             for c in sorted(record.classes, key=lambda c: (c.threads, c.call_ms))]
    return f"minimum detectable change on {host}: {'; '.join(parts)} (2 x floor; {where})"
