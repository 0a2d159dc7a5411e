"""Statistics over raw samples, per batch size."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: CV above which a measurement is flagged as unstable
CV_UNSTABLE = 0.10

#: columns of the raw sample CSV
RAW_COLUMNS = ["batch_size", "event", "call", "runtime_ms"]

#: columns of the statistics table, in order
STAT_COLUMNS = [
    "batch_size", "count", "mean_ms", "std_ms", "cv", "min_ms", "p16_ms", "median_ms", "p84_ms",
    "p90_ms", "p95_ms", "p99_ms", "max_ms", "throughput", "unstable",
]

_PERCENTILES = {"p16_ms": 16, "median_ms": 50, "p84_ms": 84, "p90_ms": 90, "p95_ms": 95,
                "p99_ms": 99}


def summarize(samples_ms: np.ndarray, batch_size: int) -> dict:
    """Statistics of one batch size's samples (milliseconds per call).

    ``throughput`` is events (samples) per second at the mean latency; ``unstable`` is set where
    the coefficient of variation exceeds :data:`CV_UNSTABLE`.
    """
    x = np.asarray(samples_ms, dtype=np.float64)
    if x.size == 0:
        raise ValueError(f"no samples for batch size {batch_size}")
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if x.size > 1 else 0.0
    pct = np.percentile(x, list(_PERCENTILES.values()))
    row = {"batch_size": int(batch_size), "count": int(x.size), "mean_ms": mean, "std_ms": std,
           "cv": std / mean if mean > 0 else float("nan"), "min_ms": float(x.min())}
    row.update({k: float(v) for k, v in zip(_PERCENTILES, pct, strict=False)})
    row["max_ms"] = float(x.max())
    row["throughput"] = batch_size * 1000.0 / mean if mean > 0 else float("nan")
    row["unstable"] = bool(row["cv"] > CV_UNSTABLE)
    return row


def compute_stats(raw: pd.DataFrame) -> pd.DataFrame:
    """One row of statistics per batch size of a raw-sample frame (see :data:`RAW_COLUMNS`)."""
    missing = [c for c in ("batch_size", "runtime_ms") if c not in raw.columns]
    if missing:
        raise ValueError(f"raw samples lack column(s) {', '.join(missing)}")
    rows = [summarize(g["runtime_ms"].to_numpy(), bs)
            for bs, g in raw.groupby("batch_size", sort=True)]
    return pd.DataFrame(rows, columns=STAT_COLUMNS)
