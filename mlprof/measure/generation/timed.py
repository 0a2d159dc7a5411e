"""The result of one timed generation call (:class:`TimedGeneration`), on its own so that the
backends (which make it) and :mod:`~mlprof.measure.generation.timing` (which opens them, and
re-exports it) import no circle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TimedGeneration:
    """One timed generation call of a batch.

    ``tokens``: int64 ``[batch, new_tokens]``, the generated ids (greedy, exactly
    ``new_tokens`` each: ``min_new_tokens = max_new_tokens``); ``token_ns``: int64
    ``[new_tokens]``, ``perf_counter_ns`` when step i's tokens (the whole batch) had been sampled,
    relative to the call's start (``token_ns[0]`` is the TTFT); ``e2e_ns``: the call's start to
    its return."""

    tokens: np.ndarray
    token_ns: np.ndarray
    e2e_ns: int
