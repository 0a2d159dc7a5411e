"""Statistics over raw samples, per batch size."""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mlprof.measure.trust import (
    CV_UNSTABLE,
    NOT_MEASURABLE,
    marks,
    not_measurable,
    with_legend,
)

if TYPE_CHECKING:  # pandas is optional here: the tasks use the numpy path (faster start-up)
    import numpy as np  # on first use: law run's summary (medians_table) needs none
    import pandas as pd

__all__ = ["CV_UNSTABLE", "ERROR_COLUMNS", "RAW_COLUMNS", "STAT_COLUMNS", "compute_stats",
           "medians_table", "read_runtimes", "read_stats_csv", "speedups_table", "summarize",
           "throughput", "throughputs_table", "write_stats_csv"]

#: the longest plausible call, in ms (one hour): a sample or statistic above it is a damaged
#: file, not a measurement (without it a 1e300 ms sample reads as an ``ok`` row); the longest
#: call mlprof lets run is bounded by the measurement's time-out, far below an hour per call
MAX_SAMPLE_MS = 3_600_000.0

#: columns of the raw sample CSV
RAW_COLUMNS = ["batch_size", "event", "call", "runtime_ms"]

#: columns of the statistics table, in order
STAT_COLUMNS = [
    "batch_size", "count", "mean_ms", "std_ms", "cv", "min_ms", "p16_ms", "median_ms", "p84_ms",
    "p90_ms", "p95_ms", "p99_ms", "max_ms", "events_per_call", "throughput", "unstable",
    "contended", "gflop_per_call", "gflops_per_s", "max_abs_error", "max_rel_error",
    "top1_agreement", "top5_agreement",
]

#: the error against fp32 of a lower precision's outputs on the measured inputs
#: (:func:`mlprof.model.precision.output_error`); nan at fp32, for outputs that are no class
#: scores (the agreements) and in statistics written before precisions existed
ERROR_COLUMNS = ("max_abs_error", "max_rel_error", "top1_agreement", "top5_agreement")

_PERCENTILES = {"p16_ms": 16, "median_ms": 50, "p84_ms": 84, "p90_ms": 90, "p95_ms": 95,
                "p99_ms": 99}


def throughput(events_per_call, latency_ms):
    """Events per second when one call of ``events_per_call`` events takes ``latency_ms``.

    ``events_per_call`` is the batch size, or 1 for a model without a batch dimension (every
    batch size measures the model's own shapes: one event per call); see
    :func:`mlprof.measure.results.events_per_call`.

    mlprof's throughput is this at the *median* latency, everywhere (the statistics'
    ``throughput`` column, the plots, the dashboard): the median is what the latency plots show
    and, unlike the mean, one slow outlier call does not move it (a mean-based number was 2.3x
    off the median-based one on a dashboard page of real records). Scalars or arrays; NaN where the
    latency is not positive.
    """
    import numpy as np

    ev = np.asarray(events_per_call, dtype=np.float64)
    lat = np.asarray(latency_ms, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(lat > 0, ev * 1000.0 / np.where(lat > 0, lat, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


def summarize(samples_ms: np.ndarray, batch_size: int, contended: bool = False,
              gflop_per_call: float | None = None, events_per_call: int | None = None,
              error: Mapping[str, Any] | None = None) -> dict:
    """Statistics of one batch size's samples (milliseconds per call).

    ``throughput`` is events (samples) per second at the median latency (:func:`throughput`,
    the one definition everywhere: tables, plots and the dashboard), with ``events_per_call``
    events per call (default: the batch size; 1 for a model without a batch dimension, whose
    calls are the same at every batch size); ``unstable`` is set where
    the coefficient of variation exceeds :data:`CV_UNSTABLE`; ``contended`` is given: other
    processes used the CPUs during the measurement (:mod:`mlprof.measure.contention`);
    ``error`` is a lower precision's error against fp32 (:data:`ERROR_COLUMNS`, from the
    provenance's ``precision.error``; nan where it has no number).
    """
    import numpy as np

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
    row["events_per_call"] = int(batch_size if events_per_call is None else events_per_call)
    row["throughput"] = throughput(row["events_per_call"], row["median_ms"])
    row["unstable"] = bool(row["cv"] > CV_UNSTABLE)
    row["contended"] = bool(contended)
    # the graph's FLOPs per call (mlprof.model.flops), achieved at the median latency; nan when
    # not counted (no ONNX graph, or nodes whose cost is unknown)
    gflop = float("nan") if gflop_per_call is None else float(gflop_per_call)
    row["gflop_per_call"] = gflop
    row["gflops_per_s"] = gflop / (row["median_ms"] / 1e3) if row["median_ms"] > 0 \
        else float("nan")
    from mlprof.model.precision import error_number

    for key in ERROR_COLUMNS:  # inf where the error is infinite (its record says why)
        value = error_number(dict(error or {}), key)
        row[key] = float("nan") if value is None else value
    return row


def compute_stats(raw: pd.DataFrame) -> pd.DataFrame:
    """One row of statistics per batch size of a raw-sample frame (see :data:`RAW_COLUMNS`)."""
    import pandas as pd

    missing = [c for c in ("batch_size", "runtime_ms") if c not in raw.columns]
    if missing:
        raise ValueError(f"raw samples lack column(s) {', '.join(missing)}")
    rows = [summarize(g["runtime_ms"].to_numpy(), bs)
            for bs, g in raw.groupby("batch_size", sort=True)]
    return pd.DataFrame(rows, columns=STAT_COLUMNS)


def read_runtimes(path: str | os.PathLike) -> np.ndarray:
    """The ``runtime_ms`` column of a raw-sample CSV as a float array."""
    import numpy as np

    with io.StringIO(_result_text(path, 1 << 30), newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or "runtime_ms" not in header:
            raise ValueError(f"{path}: no runtime_ms column")
        col = header.index("runtime_ms")
        return np.array([float(row[col]) for row in reader], dtype=np.float64)


def _result_text(path: str | os.PathLike, max_bytes: int = 64 << 20) -> str:
    """The text of a result file, read through :func:`mlprof.ingest.read_text` (regular file,
    size limit); what is wrong is a :class:`~mlprof.errors.CorruptResult` naming the file."""
    from mlprof import ingest
    from mlprof.errors import CorruptResult, MLProfError

    try:
        return ingest.read_text(path, max_bytes, what="a result file")
    except MLProfError as e:
        raise CorruptResult(e.message, path) from None


def write_stats_csv(path: str | os.PathLike, rows: Sequence[Mapping]) -> None:
    """Write statistics rows (dicts with :data:`STAT_COLUMNS`) as CSV."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(STAT_COLUMNS)
        for r in rows:
            w.writerow([_fmt(r[c]) for c in STAT_COLUMNS])


#: columns a statistics CSV must have (older files lack some of the others)
_REQUIRED_STATS = ("batch_size", "median_ms")
_FLAG_COLUMNS = ("unstable", "contended")
#: columns that may be nan (no FLOPs known, no spread of one sample, no throughput at 0 ms)
_MAY_BE_NAN = ("cv", "gflop_per_call", "gflops_per_s", "throughput", "std_ms", *ERROR_COLUMNS)


def read_stats_csv(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """A statistics CSV as a dict of column arrays (what the plotting functions take), checked:
    a regular file of known columns (:data:`STAT_COLUMNS`; older files have fewer), every row
    as long as the header, numbers in every numeric column, batch sizes and counts positive,
    times finite, >= 0 and at most :data:`MAX_SAMPLE_MS`. A damaged file raises
    :class:`~mlprof.errors.CorruptResult` naming it and the line, never becomes a number."""
    import numpy as np

    out = {c: np.array(v) for c, v in _read_stats_columns(path).items()}
    if "batch_size" in out and "events_per_call" not in out:
        # files written before events per call were recorded: one event per batch element
        out["events_per_call"] = out["batch_size"].copy()
    if "median_ms" in out and "events_per_call" in out:
        # files written before throughput was defined at the median held the mean-based number
        out["throughput"] = throughput(out["events_per_call"], out["median_ms"])
    return out


def _read_stats_columns(path: str | os.PathLike) -> dict[str, list]:
    """:func:`read_stats_csv`'s checks, its columns as lists (floats; bools for the flags),
    without numpy: ``law run``'s summary of a no-op rerun reads the statistics through here,
    and importing numpy for it was 0.1-0.2 s of a 0.5 s command."""
    from mlprof.errors import CorruptResult
    from mlprof.ingest import MAX_RECORD_BYTES, read_text

    try:
        text = read_text(path, MAX_RECORD_BYTES, what="a statistics table")
    except CorruptResult:
        raise
    except Exception as e:  # MLProfError of the one way in: a FIFO, a device, too large
        raise CorruptResult(getattr(e, "message", str(e)), path) from None
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if not header:
        raise CorruptResult("is empty (no header)", path)
    unknown = [c for c in header if c not in STAT_COLUMNS]
    missing = [c for c in _REQUIRED_STATS if c not in header]
    if unknown or missing or len(set(header)) != len(header):
        what = (f"unknown columns {unknown}" if unknown else f"no column {missing[0]}"
                if missing else "a column twice")
        raise CorruptResult(f"header has {what}; not a statistics table", path)
    rows = list(reader)
    if not rows:
        raise CorruptResult("no statistics rows", path)
    for i, r in enumerate(rows):
        if len(r) != len(header):
            raise CorruptResult(f"line {i + 2} has {len(r)} fields, expected {len(header)}",
                                path)
    out: dict[str, list] = {}
    for j, c in enumerate(header):
        vals = [r[j] for r in rows]
        if c in _FLAG_COLUMNS:
            out[c] = [v.strip().lower() == "true" for v in vals]
            continue
        try:
            col = [float(v) if v.isascii() else float("x") for v in vals]
        except ValueError:  # (float() alone takes Arabic-Indic digits)
            i = next(k for k, v in enumerate(vals) if not (v.isascii() and _is_float(v)))
            raise CorruptResult(f"{c} in line {i + 2} is {vals[i][:20]!r}, not a number",
                                path) from None
        out[c] = col
        bad = [False] * len(col) if c in _MAY_BE_NAN else [not math.isfinite(v) for v in col]
        if c in ("batch_size", "count", "events_per_call"):
            bad = [b or not v >= 1 or (math.isfinite(v) and v != round(v))
                   for b, v in zip(bad, col, strict=True)]
        elif c.endswith("_ms"):
            bad = [b or v < 0 or v > MAX_SAMPLE_MS for b, v in zip(bad, col, strict=True)]
        if any(bad):
            i = bad.index(True)
            limit = f" (at most {MAX_SAMPLE_MS:.0f} ms, an hour)" if c.endswith("_ms") else ""
            raise CorruptResult(f"{c} in line {i + 2} is {vals[i][:20]}, not a plausible "
                                f"value{limit}", path)
    return out


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _fmt(v) -> str:
    import numpy as np

    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    return "nan" if math.isnan(v) else f"{v:.6g}"


def medians_table(curves: Sequence[tuple[str, str | os.PathLike]]) -> str:
    """A small text table of median latencies: one row per batch size, one column per
    ``(label, statistics CSV)``; what ``law run`` prints at the end of a sweep.

    A median of an unstable or contended point carries its marker (``0.0123 ~``, see
    :mod:`mlprof.measure.trust`) and the legend follows the table: the table is what most users
    read, and the warnings that say the same are far above it among luigi's lines."""
    columns = [(f"{label} [ms]", _read_stats_columns(path)) for label, path in curves]
    table = _points_table("median latency per batch", [
        (label, st, [float(v) for v in st["median_ms"]]) for label, st in columns])
    errors = _errors_table([(label.removesuffix(" [ms]"), st) for label, st in columns])
    return table + ("\n" + errors if errors else "")


def _errors_table(columns: Sequence[tuple[str, Any]]) -> str:
    """The error against fp32 of the curves that have one (a lower precision's): per batch
    size its max relative error and, for class scores, the top-1 agreement; empty when no
    curve has an error (fp32 only, or statistics from before the error columns)."""
    with_error = [(label, st) for label, st in columns if "max_rel_error" in st
                  and any(not math.isnan(float(v)) for v in st["max_rel_error"])]
    if not with_error:
        return ""
    sizes = sorted({int(b) for _, st in with_error for b in st["batch_size"]})
    rows = [["batch size", *[label for label, _ in with_error]]]
    for bs in sizes:
        row = [str(bs)]
        for _, st in with_error:
            at = [i for i, b in enumerate(st["batch_size"]) if int(b) == bs]
            rel = float(st["max_rel_error"][at[0]]) if at else math.nan
            top1 = float(st["top1_agreement"][at[0]]) if at and "top1_agreement" in st \
                else math.nan
            cell = "-" if math.isnan(rel) else "inf" if math.isinf(rel) else \
                f"{100 * rel:.2g}%" + (
                f", top-1 {top1:.3f}" if math.isfinite(top1) else "")
            row.append(cell)
        rows.append(row)
    return ("error against fp32 (max error over the largest fp32 output value; top-1 "
            "agreement of class scores)\n" + _aligned(rows))


def _aligned(rows: list[list[str]]) -> str:
    """``rows`` (the first one the header) as right-aligned columns, dashes under the header."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def throughputs_table(curves: Sequence[tuple[str, str | os.PathLike]]) -> str:
    """As :func:`medians_table`, of throughputs: events per second at the median latency
    (:func:`throughput`, the one definition), what PlotThroughput prints at the end."""
    import numpy as np

    columns = []
    for label, path in curves:
        st = read_stats_csv(path)
        ev = st["events_per_call"] if "events_per_call" in st else st["batch_size"]
        columns.append((f"{label} [events/s]", st, np.asarray(throughput(ev, st["median_ms"]))))
    return _points_table("throughput at the median latency", columns)


def speedups_table(pairs: Sequence[tuple[str, str | os.PathLike, str | os.PathLike]],
                   reference: str = "the reference") -> str:
    """Speed-ups ``reference median / median`` (above 1: faster) over ``reference`` (named in
    the title), one column per ``(label, reference statistics CSV, statistics CSV)``, on the
    batch sizes both have; a point is marked when either measurement is. What PlotSpeedup
    prints at the end.

    No confidence interval: the two curves were measured apart (minutes apart, the machine's
    drift moves such a ratio by up to ~10 %, see :mod:`mlprof.measure.interleave`); the table
    says where to get one (``PlotMultiRuntimes --interleave``)."""
    import numpy as np

    columns = []
    for label, ref_path, path in pairs:
        ref, st = read_stats_csv(ref_path), read_stats_csv(path)
        ref_at = {int(b): i for i, b in enumerate(ref["batch_size"])}
        keep = [i for i, b in enumerate(st["batch_size"]) if int(b) in ref_at]
        j = [ref_at[int(st["batch_size"][i])] for i in keep]
        def flags(st: Any, name: str) -> np.ndarray:
            return np.asarray(st.get(name, np.zeros(len(st["batch_size"]), dtype=bool)),
                              dtype=bool)

        sub = {"batch_size": np.asarray(st["batch_size"])[keep]}
        for name in ("unstable", "contended"):  # either measurement's marker
            sub[name] = flags(st, name)[keep] | flags(ref, name)[j]
        # either measurement not measurable: neither is their ratio
        sub["not_measurable"] = (
            np.asarray(_not_measurable(st, len(st["batch_size"])), dtype=bool)[keep]
            | np.asarray(_not_measurable(ref, len(ref["batch_size"])), dtype=bool)[j])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.asarray(ref["median_ms"], dtype=float)[j] / \
                np.asarray(st["median_ms"], dtype=float)[keep]
        columns.append((f"{label} [x]", sub, ratio))
    return _points_table(f"speed-up vs {reference} (its median latency / median latency; "
                         "> 1: faster)", columns, fmt="{:.3f}") + (
        "\nno confidence interval: the curves were measured apart; for one, compare them "
        "interleaved (PlotMultiRuntimes --interleave 20 with the same --runtimes)")


def _not_measurable(st: Mapping[str, Any], n: int) -> list[bool]:
    """Per point of statistics ``st``: contended with its calls spread over more than
    :data:`~mlprof.measure.trust.BAND_MAX_RATIO` (min to p95,
    :func:`mlprof.measure.trust.not_measurable`); given as ``not_measurable`` by a table of
    ratios (either side's)."""
    if "not_measurable" in st:
        return [bool(x) for x in st["not_measurable"]]
    if "min_ms" not in st or "p95_ms" not in st or "contended" not in st:
        return [False] * n
    return [not_measurable((float(lo), float(hi)), c) for lo, hi, c in zip(
        st["min_ms"], st["p95_ms"], st["contended"], strict=True)]


def _points_table(title: str, columns: Sequence[tuple[str, Any, Any]],
                  fmt: str = "{:.4g}") -> str:
    """One row per batch size, one column per ``(header, statistics, values)``, each value with
    its point's trust markers; the legend under the table when a marker is shown."""
    sizes = sorted({int(b) for _, st, _ in columns for b in st["batch_size"]})
    rows = [["batch size", *[header for header, _, _ in columns]]]
    shown: list[str] = []
    for bs in sizes:
        row = [str(bs)]
        for _, st, values in columns:
            n = len(st["batch_size"])
            unstable = st.get("unstable", [False] * n)
            contended = st.get("contended", [False] * n)
            gone = _not_measurable(st, n)
            hit = [(v, marks(u, c), x) for b, v, u, c, x in zip(
                st["batch_size"], values, unstable, contended, gone, strict=True)
                if int(b) == bs]
            if hit:
                value, flags, unmeasurable = hit[0]
                shown.append(flags)
                # the marker column is as wide in every row, so the numbers stay aligned
                text = NOT_MEASURABLE if unmeasurable else fmt.format(value)
                row.append(f"{text} {flags:<2}")
            else:
                row.append("-   ")
        rows.append(row)
    if not any(shown):  # no marker: the table as before, without the markers' column
        rows = [[c.rstrip() if i else c for i, c in enumerate(r)] for r in rows]
    return with_legend(title + "\n" + _aligned(rows), shown)
