"""Generation metrics (issue 37): TTFT, TPOT, inter-token latency, tokens/s and E2E of timed
generation calls, with their formulas, percentiles and seeded bootstrap intervals, and the
paired speed-up of one runtime against another from interleaved rounds.

Pure: numbers in (:class:`~mlprof.measure.generation.timing.TimedGeneration`), numbers out; no
runtime or law imports. Why each definition (the peers disagree, issue 37): TPOT is
``(E2E - TTFT) / (N - 1)`` as in vLLM and AIPerf (guidellm includes the first token, which
mixes the prefill into a per-token decode cost); the inter-token latencies (ITL) are the raw
gaps between consecutive steps, as vLLM reports them, so a slow step is visible instead of
averaged into TPOT; TTFT ends when the first token has been *sampled* (the backends stamp it),
never including tokenization (prompts are token ids). :data:`FORMULAS` holds the text every
output and doc quotes.

Intervals: each percentile (p50, p90, p99) gets the percentile interval of that percentile over
:data:`~mlprof.measure.interleave.N_RESAMPLES` resamples of the calls (with replacement, seed 0:
the same data give the same interval; ITL resamples its gaps). With few calls the bootstrap of
an extreme percentile is coarse (it can only return values that were observed), so an interval
is widened, where needed, to contain its own estimate. The speed-up of runtime B over A is
computed as :mod:`mlprof.measure.interleave` does for forward calls: one ratio of the two
runtimes' medians per interleaved round (both saw the same machine state), the median of the
ratios, and the bootstrap interval of that median (:func:`~mlprof.measure.interleave.bootstrap_ci`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.generation.timing import TimedGeneration
from mlprof.measure.interleave import LEVEL, N_RESAMPLES, bootstrap_ci
from mlprof.measure.stats import MAX_SAMPLE_MS

#: what each metric is, as the output and the docs quote it (N: new tokens per call, batch:
#: sequences per call, prompt: prompt tokens per sequence; token_ns[i]: the time after the call's
#: start at which step i's tokens had been sampled)
FORMULAS: dict[str, str] = {
    "ttft_ms": "TTFT = token_ns[0]: call start to the first token sampled (prefill + 1 step)",
    "tpot_ms": "TPOT = (E2E - TTFT) / (N - 1)",
    "itl_ms": "ITL_i = token_ns[i] - token_ns[i-1], i = 1 .. N-1, every gap of every call",
    "prefill_tokens_per_s": "prefill tokens/s = batch x prompt / TTFT",
    "decode_tokens_per_s": "decode tokens/s = batch x (N - 1) / (E2E - TTFT)",
    "e2e_ms": "E2E = call start to call return",
}

#: the unit of each metric
UNITS: dict[str, str] = {"ttft_ms": "ms", "tpot_ms": "ms", "itl_ms": "ms", "e2e_ms": "ms",
                         "prefill_tokens_per_s": "tokens/s", "decode_tokens_per_s": "tokens/s"}

#: metrics where more is better (a speed-up is B / A); for the times it is A / B
RATES = ("prefill_tokens_per_s", "decode_tokens_per_s")

#: the percentiles reported
PERCENTILES = (50, 90, 99)

#: the largest plausible rate (tokens/s): a record above it is damaged, not a measurement
MAX_RATE = 1e12
#: bounds of the counts of a point (generous: a record beyond them is damaged)
MAX_BATCH, MAX_TOKENS, MAX_CALLS = 1 << 20, 1 << 24, 1 << 24


# --- checked values ----------------------------------------------------------------------------


def _number(data: Mapping[str, Any], key: str, source: str | os.PathLike | None, prefix: str,
            upper: float) -> float:
    value = data.get(key) if isinstance(data, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MLProfError(f"{value!r} is not a number", source, prefix + key)
    value = float(value)
    if not math.isfinite(value) or not 0.0 <= value <= upper:
        raise MLProfError(f"{value!r} is out of range (0 to {upper:g})", source, prefix + key)
    return value


def _count(data: Mapping[str, Any], key: str, source: str | os.PathLike | None, prefix: str,
           upper: int, lower: int = 1) -> int:
    value = data.get(key) if isinstance(data, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int) or not lower <= value <= upper:
        raise MLProfError(f"{value!r} is not an integer from {lower} to {upper}", source,
                          prefix + key)
    return int(value)


def _text(data: Mapping[str, Any], key: str, source: str | os.PathLike | None,
          prefix: str) -> str:
    value = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(value, str) or not value or len(value) > 200 or not value.isprintable():
        raise MLProfError(f"{str(value)[:40]!r} is not a name", source, prefix + key)
    return value


@dataclass(frozen=True)
class Estimate:
    """One statistic with its 95 % interval: ``low <= value <= high``."""

    value: float
    low: float
    high: float

    def to_json(self) -> dict[str, float]:
        """``{"value", "low", "high"}``."""
        return {"value": self.value, "low": self.low, "high": self.high}

    @classmethod
    def from_json(cls, data: Any, source: str | os.PathLike | None = None, field: str = "",
                  upper: float = MAX_SAMPLE_MS) -> Estimate:
        """Checked: numbers, finite, within ``[0, upper]``, ``low <= value <= high``; errors
        name ``source`` and ``field``."""
        if not isinstance(data, Mapping):
            raise MLProfError(f"is a {type(data).__name__}, not an object", source, field)
        p = f"{field}." if field else ""
        value, low, high = (_number(data, k, source, p, upper) for k in ("value", "low", "high"))
        if not low <= value <= high:
            raise MLProfError(f"interval [{low:g}, {high:g}] does not contain {value:g}", source,
                              field)
        return cls(value, low, high)


@dataclass(frozen=True)
class Distribution:
    """One metric over the calls of a point: its unit, sample count and p50/p90/p99, each with
    its bootstrap interval."""

    metric: str
    n: int
    p50: Estimate
    p90: Estimate
    p99: Estimate

    @property
    def unit(self) -> str:
        """``ms`` or ``tokens/s``."""
        return UNITS[self.metric]

    @property
    def formula(self) -> str:
        """The metric's definition (:data:`FORMULAS`)."""
        return FORMULAS[self.metric]

    def to_json(self) -> dict[str, Any]:
        """``{"metric", "unit", "n", "p50", "p90", "p99"}`` (the unit for readers; checked on
        read)."""
        return {"metric": self.metric, "unit": self.unit, "n": self.n,
                **{f"p{q}": getattr(self, f"p{q}").to_json() for q in PERCENTILES}}

    @classmethod
    def from_json(cls, data: Any, source: str | os.PathLike | None = None,
                  field: str = "") -> Distribution:
        """Checked: a known metric with its unit, ``n >= 1``, each percentile an
        :class:`Estimate` in its range, ``p50 <= p90 <= p99``."""
        if not isinstance(data, Mapping):
            raise MLProfError(f"is a {type(data).__name__}, not an object", source, field)
        p = f"{field}." if field else ""
        metric = data.get("metric")
        if metric not in FORMULAS:
            raise MLProfError(f"{str(metric)[:40]!r} is not one of {', '.join(FORMULAS)}",
                              source, p + "metric")
        if data.get("unit") != UNITS[metric]:
            raise MLProfError(f"{str(data.get('unit'))[:20]!r} is not {UNITS[metric]!r}", source,
                              p + "unit")
        n = _count(data, "n", source, p, MAX_CALLS * MAX_TOKENS)
        upper = MAX_RATE if metric in RATES else MAX_SAMPLE_MS
        est = [Estimate.from_json(data.get(f"p{q}"), source, f"{p}p{q}", upper)
               for q in PERCENTILES]
        if not est[0].value <= est[1].value <= est[2].value:
            raise MLProfError("percentiles are not in order (p50 <= p90 <= p99)", source,
                              field or "percentiles")
        return cls(metric, n, *est)


@dataclass(frozen=True)
class GenerationMetrics:
    """The metrics of one runtime at one point (batch size, prompt length, new tokens).

    ``tpot``, ``itl`` and ``decode_tokens_per_s`` are None for ``new_tokens == 1`` (there is no
    decode step); ``itl_by_step_ms``: the median gap of each step over the calls (step 1 ..
    N-1), which shows whether steps slow down as the KV cache grows."""

    runtime: str
    batch_size: int
    prompt_length: int
    new_tokens: int
    n_calls: int
    ttft: Distribution
    e2e: Distribution
    prefill_tokens_per_s: Distribution
    tpot: Distribution | None
    itl: Distribution | None
    decode_tokens_per_s: Distribution | None
    itl_by_step_ms: tuple[float, ...]

    def distributions(self) -> dict[str, Distribution]:
        """metric -> distribution, the metrics that exist at this point."""
        out = {d.metric: d for d in (self.ttft, self.tpot, self.itl, self.prefill_tokens_per_s,
                                     self.decode_tokens_per_s, self.e2e) if d is not None}
        return out

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (the record embeds it)."""
        return {"runtime": self.runtime, "batch_size": self.batch_size,
                "prompt_length": self.prompt_length, "new_tokens": self.new_tokens,
                "n_calls": self.n_calls,
                **{k: (None if d is None else d.to_json()) for k, d in (
                    ("ttft", self.ttft), ("tpot", self.tpot), ("itl", self.itl),
                    ("prefill_tokens_per_s", self.prefill_tokens_per_s),
                    ("decode_tokens_per_s", self.decode_tokens_per_s), ("e2e", self.e2e))},
                "itl_by_step_ms": list(self.itl_by_step_ms)}

    @classmethod
    def from_json(cls, data: Any, source: str | os.PathLike | None = None,
                  field: str = "") -> GenerationMetrics:
        """Checked (see :meth:`Distribution.from_json`): each distribution is the metric its key
        names; the decode metrics are present exactly when ``new_tokens > 1``;
        ``itl_by_step_ms`` has ``new_tokens - 1`` finite, non-negative entries."""
        if not isinstance(data, Mapping):
            raise MLProfError(f"is a {type(data).__name__}, not an object", source, field)
        p = f"{field}." if field else ""
        runtime = _text(data, "runtime", source, p)
        batch = _count(data, "batch_size", source, p, MAX_BATCH)
        prompt = _count(data, "prompt_length", source, p, MAX_TOKENS)
        new = _count(data, "new_tokens", source, p, MAX_TOKENS)
        calls = _count(data, "n_calls", source, p, MAX_CALLS)
        dists: dict[str, Distribution | None] = {}
        for key, metric in (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("itl", "itl_ms"),
                            ("prefill_tokens_per_s", "prefill_tokens_per_s"),
                            ("decode_tokens_per_s", "decode_tokens_per_s"), ("e2e", "e2e_ms")):
            value = data.get(key) if isinstance(data, Mapping) else None
            decode = key in ("tpot", "itl", "decode_tokens_per_s")
            if value is None:
                if not decode or new > 1:
                    raise MLProfError("missing", source, p + key)
                dists[key] = None
                continue
            if decode and new == 1:
                raise MLProfError("present for new_tokens 1 (no decode step)", source, p + key)
            d = Distribution.from_json(value, source, p + key)
            if d.metric != metric:
                raise MLProfError(f"holds {d.metric}, not {metric}", source, p + key + ".metric")
            dists[key] = d
        steps = data.get("itl_by_step_ms")
        if not isinstance(steps, list) or len(steps) != new - 1:
            raise MLProfError(f"is not a list of {new - 1} numbers", source, p + "itl_by_step_ms")
        by_step = tuple(_number({f"itl_by_step_ms[{i}]": v}, f"itl_by_step_ms[{i}]", source, p,
                                MAX_SAMPLE_MS) for i, v in enumerate(steps))
        ttft, e2e, prefill = dists["ttft"], dists["e2e"], dists["prefill_tokens_per_s"]
        assert ttft is not None and e2e is not None and prefill is not None
        return cls(runtime, batch, prompt, new, calls, ttft=ttft, e2e=e2e,
                   prefill_tokens_per_s=prefill, tpot=dists["tpot"], itl=dists["itl"],
                   decode_tokens_per_s=dists["decode_tokens_per_s"], itl_by_step_ms=by_step)


@dataclass(frozen=True)
class Speedup:
    """Runtime ``runtime`` against ``reference`` on one metric, from ``rounds`` interleaved
    rounds: the median of the per-round ratios (above 1: ``runtime`` is faster) and its bootstrap
    interval; ``significant``: the interval excludes 1."""

    runtime: str
    reference: str
    metric: str
    rounds: int
    estimate: Estimate

    @property
    def significant(self) -> bool:
        """Whether the interval excludes 1 (the rounds tell the two apart)."""
        return self.estimate.low > 1.0 or self.estimate.high < 1.0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, with ``significant`` for readers (recomputed on read)."""
        return {"runtime": self.runtime, "reference": self.reference, "metric": self.metric,
                "rounds": self.rounds, "speedup": self.estimate.to_json(),
                "significant": self.significant}

    @classmethod
    def from_json(cls, data: Any, source: str | os.PathLike | None = None,
                  field: str = "") -> Speedup:
        """Checked: names, a known metric, ``rounds >= 2``, a finite positive estimate in its
        interval."""
        if not isinstance(data, Mapping):
            raise MLProfError(f"is a {type(data).__name__}, not an object", source, field)
        p = f"{field}." if field else ""
        runtime, reference = _text(data, "runtime", source, p), _text(data, "reference", source, p)
        metric = data.get("metric")
        if metric not in FORMULAS:
            raise MLProfError(f"{str(metric)[:40]!r} is not one of {', '.join(FORMULAS)}",
                              source, p + "metric")
        rounds = _count(data, "rounds", source, p, MAX_CALLS, lower=2)
        est = Estimate.from_json(data.get("speedup"), source, p + "speedup", upper=1e9)
        if est.low <= 0.0:
            raise MLProfError("a speed-up interval is positive", source, p + "speedup.low")
        return cls(runtime, reference, str(metric), rounds, est)


# --- computing ---------------------------------------------------------------------------------


def per_call(calls: Sequence[TimedGeneration], batch_size: int, prompt_length: int
             ) -> dict[str, np.ndarray]:
    """Each metric per call (ITL: every gap, ``[calls, N-1]`` flattened), by :data:`FORMULAS`;
    the decode metrics are absent for ``N == 1``. Raises ValueError for calls that are not
    well-formed (shapes, a clock that runs backwards, a return before the last token)."""
    if not calls:
        raise ValueError("no generation calls")
    n = _check_call(calls[0], batch_size)
    for c in calls[1:]:
        if _check_call(c, batch_size) != n:
            raise ValueError("calls of one point generated different numbers of tokens")
    ttft = np.array([c.token_ns[0] for c in calls], dtype=np.float64)
    e2e = np.array([c.e2e_ns for c in calls], dtype=np.float64)
    out = {"ttft_ms": ttft / 1e6, "e2e_ms": e2e / 1e6,
           "prefill_tokens_per_s": batch_size * prompt_length / (ttft / 1e9)}
    if n > 1:
        decode = e2e - ttft
        out["tpot_ms"] = decode / (n - 1) / 1e6
        out["itl_ms"] = np.concatenate([np.diff(np.asarray(c.token_ns, dtype=np.float64))
                                        for c in calls]) / 1e6
        out["decode_tokens_per_s"] = batch_size * (n - 1) / (decode / 1e9)
    return out


def _check_call(c: TimedGeneration, batch_size: int) -> int:
    tokens, ns = np.asarray(c.tokens), np.asarray(c.token_ns)
    if tokens.ndim != 2 or tokens.shape[0] != batch_size or tokens.shape[1] < 1:
        raise ValueError(f"tokens of shape {tokens.shape}, expected [{batch_size}, N >= 1]")
    if ns.shape != (tokens.shape[1],) or not np.issubdtype(ns.dtype, np.integer):
        raise ValueError(f"token_ns of shape {ns.shape} ({ns.dtype}), expected integer "
                         f"[{tokens.shape[1]}]")
    if ns[0] <= 0 or np.any(np.diff(ns) < 0) or int(c.e2e_ns) < int(ns[-1]):
        raise ValueError("token times must be positive, non-decreasing and end before the "
                         "call returns")
    if ns.size > 1 and int(c.e2e_ns) <= int(ns[0]):  # decode tokens/s would be infinite
        raise ValueError("the decode steps took no time (E2E == TTFT)")
    return int(tokens.shape[1])


def _percentile_estimates(x: np.ndarray, seed: int = 0, n_resamples: int = N_RESAMPLES,
                          level: float = LEVEL) -> list[Estimate]:
    """p50/p90/p99 of ``x`` with the percentile intervals of their bootstrap (resamples in
    blocks of 250, so 10^5 ITL gaps need ~200 MB at most, never 2000 x n at once)."""
    x = np.asarray(x, dtype=np.float64)
    points = np.percentile(x, PERCENTILES)
    rng = np.random.default_rng(seed)
    stats = np.empty((n_resamples, len(PERCENTILES)))
    block = 250
    for start in range(0, n_resamples, block):
        k = min(block, n_resamples - start)
        sample = x[rng.integers(0, x.size, (k, x.size))]
        stats[start:start + k] = np.percentile(sample, PERCENTILES, axis=1).T
    alpha = (1.0 - level) / 2
    lows, highs = np.quantile(stats, [alpha, 1.0 - alpha], axis=0)
    return [Estimate(float(v), float(min(lo, v)), float(max(hi, v)))
            for v, lo, hi in zip(points, lows, highs, strict=True)]


def distribution(metric: str, values: np.ndarray, seed: int = 0) -> Distribution:
    """The :class:`Distribution` of ``values`` (one metric, :data:`FORMULAS`' units)."""
    if metric not in FORMULAS:
        raise ValueError(f"unknown metric {metric!r}")
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError(f"{metric}: need finite non-negative values, got {x.size}")
    return Distribution(metric, int(x.size), *_percentile_estimates(x, seed))


def generation_metrics(calls: Sequence[TimedGeneration], *, runtime: str, batch_size: int,
                       prompt_length: int, seed: int = 0) -> GenerationMetrics:
    """Every metric of ``calls`` (one runtime at one point), by :data:`FORMULAS`, with
    p50/p90/p99 and their bootstrap intervals (seeded: the same calls give the same numbers).
    Measured: 100 calls of 32 tokens (3,100 gaps) take ~0.3 s on this 2-vCPU machine."""
    values = per_call(calls, batch_size, prompt_length)
    n = int(np.asarray(calls[0].tokens).shape[1])

    def dist(metric: str) -> Distribution | None:
        return distribution(metric, values[metric], seed) if metric in values else None

    if n > 1:
        gaps = np.stack([np.diff(np.asarray(c.token_ns, dtype=np.float64)) for c in calls])
        by_step = tuple(float(v) for v in np.median(gaps, axis=0) / 1e6)
    else:
        by_step = ()
    ttft, e2e, prefill = dist("ttft_ms"), dist("e2e_ms"), dist("prefill_tokens_per_s")
    assert ttft is not None and e2e is not None and prefill is not None
    return GenerationMetrics(runtime, int(batch_size), int(prompt_length), n, len(calls),
                             ttft=ttft, e2e=e2e, prefill_tokens_per_s=prefill,
                             tpot=dist("tpot_ms"), itl=dist("itl_ms"),
                             decode_tokens_per_s=dist("decode_tokens_per_s"),
                             itl_by_step_ms=by_step)


def paired_speedup(reference_rounds: Sequence[Sequence[TimedGeneration]],
                   runtime_rounds: Sequence[Sequence[TimedGeneration]], *, reference: str,
                   runtime: str, metric: str, batch_size: int, prompt_length: int,
                   seed: int = 0) -> Speedup:
    """The speed-up of ``runtime`` over ``reference`` on ``metric`` from interleaved rounds
    (round i of both measured back to back): per round the ratio of the two medians (times:
    reference / runtime; rates: runtime / reference; above 1, ``runtime`` is faster), then
    :func:`~mlprof.measure.interleave.bootstrap_ci` (median of the ratios, 95 % interval over
    rounds). The pairing cancels this VM's slow drift (the ratio of two independent medians
    swings by +-10 % here, the median of paired ratios stays within 2 %:
    ``benchmarks/fidelity.py``)."""
    if metric not in FORMULAS or metric == "itl_ms":
        raise ValueError(f"no speed-up over {metric!r} (ITL has no per-call median: use "
                         "tpot_ms)")
    if len(reference_rounds) != len(runtime_rounds) or len(reference_rounds) < 2:
        raise ValueError("need the same number (>= 2) of rounds of both runtimes")
    ratios = []
    for ref_calls, rt_calls in zip(reference_rounds, runtime_rounds, strict=True):
        a = per_call(ref_calls, batch_size, prompt_length)
        b = per_call(rt_calls, batch_size, prompt_length)
        if metric not in a or metric not in b:
            raise ValueError(f"{metric} needs more than one new token")
        ma, mb = float(np.median(a[metric])), float(np.median(b[metric]))
        ratios.append(mb / ma if metric in RATES else ma / mb)
    value, low, high = bootstrap_ci(ratios, seed=seed)
    return Speedup(runtime, reference, metric, len(ratios),
                   Estimate(value, min(low, value), max(high, value)))
