"""A server point's verdict: whether its requests show the percentile under the bound.

MLPerf LoadGen's early-stopping idea: with ``n`` requests of which ``k`` took longer than
the bound, the percentile is *met* when ``P(Bin(n, q) <= k) <= 1 - confidence`` (``q = 1 -
percentile/100``), *missed* when ``P(Bin(n, q) >= k) <= 1 - confidence``, else *undecided*.
"""

from __future__ import annotations

import math

from mlprof.measure.loadgen.settings import CONFIDENCE


def _log_binom_pmf(k: int, n: int, q: float) -> float:
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(q) + (n - k) * math.log1p(-q))


def _tail(k: int, n: int, q: float, step: int) -> float:
    """The binomial probabilities from ``k`` away from the mode (``step`` -1: down to 0, +1: up
    to ``n``), summed until a term no longer changes the sum: each term is the last one times
    a ratio below 1 there, so a few dozen terms do where the plain sum took up to ``n``."""
    term = math.exp(_log_binom_pmf(k, n, q))
    total, i = 0.0, k
    while 0 <= i <= n and term > 0.0:
        total += term
        if term < total * 1e-17:
            break
        term *= ((n - i) / (i + 1) * q / (1 - q)) if step > 0 else (i / (n - i + 1) * (1 - q) / q)
        i += step
    return total


def binom_cdf(k: int, n: int, q: float) -> float:
    """``P(Bin(n, q) <= k)``, from the smaller tail.

    Why not the plain sum: the server's stop rule evaluates this every 32 requests inside a
    worker, at ``n`` up to four times the planned requests; summing up to ``n`` log-space
    terms took milliseconds there, time the requests waiting behind it were charged."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if k <= n * q:
        return min(1.0, _tail(k, n, q, -1))
    return max(0.0, 1.0 - _tail(k + 1, n, q, +1))


def verdict(n: int, overs: int, percentile: float, confidence: float = CONFIDENCE) -> str:
    """``met``, ``missed`` or ``undecided``: whether ``n`` requests of which ``overs`` exceeded
    the bound show, at ``confidence``, that the ``percentile`` stays under it (see the module
    docstring)."""
    q = 1.0 - percentile / 100.0
    alpha = 1.0 - confidence
    if n <= 0:
        return "undecided"
    if binom_cdf(overs, n, q) <= alpha:
        return "met"
    if 1.0 - binom_cdf(overs - 1, n, q) <= alpha:
        return "missed"
    return "undecided"


def min_requests(percentile: float, confidence: float = CONFIDENCE) -> int:
    """The fewest requests that can show ``percentile`` met (none of them over the bound):
    ``ceil(log(1 - confidence) / log(percentile/100))``; 459 at p99 and 99 %."""
    return int(math.ceil(math.log(1.0 - confidence) / math.log(percentile / 100.0) - 1e-9))
