"""Why a lower precision is not faster: two per-operator profiles (fp32 and the lower
precision, same model, runtime and batch size) diffed by operator type, and the operators that
account for the difference named.

Measured on this AVX2 VM (no VNNI), ONNX Runtime, the example DNN at batch size 1: int8-dynamic
ran at 0.9x of fp32 because each of its 11 ``DynamicQuantizeLinear`` nodes (quantizing the
activations per call) and the ``MatMulInteger`` + ``Cast`` + ``Mul`` that replace each
``MatMul`` cost more than the fp32 ``MatMul`` they replace: at one event per call the matrix
products are too small for int8 arithmetic to pay for the conversions.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

#: below this speed-up over fp32 a lower precision is explained (the issue's "gains less than
#: 1.2x": lower precision is chosen for speed, and 1.2x is about what a runtime upgrade gives)
SLOW_GAIN = 1.2

#: ComparePrecisions' table columns (``precisions_<bs>.csv``). ``max_abs_error`` and
#: ``max_rel_error`` are ``inf`` where the error is infinite, and ``error_note`` then says why
#: (:data:`mlprof.model.precision.NONFINITE`: ``inf``, ``nan-mismatch``); a lower precision
#: whose outputs overflow or turn NaN is an answer, not a damaged table
#:
#: The last four are the interleaved rounds' (:func:`mlprof.measure.interleave.comparison_rows`):
#: ``rounds``, ``disturbed_rounds`` (how many named a cause; empty: not judged), ``causes``
#: (which, comma-separated) and ``floor`` (this host's noise floor the verdict was judged by;
#: empty: not calibrated), so that a reader (the dashboard) can say "not measurable now" and
#: name the causes from the table alone
COLUMNS = ("batch_size", "precision", "median_ms", "speedup", "ci_low", "ci_high", "verdict",
           "max_abs_error", "max_rel_error", "top1_agreement", "error_note", "why", "rounds",
           "disturbed_rounds", "causes", "floor")
#: the columns of tables written before the rounds' causes (still read: those four empty)
COLUMNS_V2 = COLUMNS[:COLUMNS.index("why") + 1]
#: the columns of tables written before ``error_note`` (still read; an ``inf`` error in them
#: reads as ``error_note`` ``inf``)
COLUMNS_V1 = tuple(c for c in COLUMNS_V2 if c != "error_note")
#: the rounds' columns (empty in an older table, and where the rounds were not judged)
_ROUND_COLUMNS = ("rounds", "disturbed_rounds", "causes", "floor")
#: the longest ``causes`` read (all of mlprof.measure.causes' names together are 76 characters)
MAX_CAUSES_CHARS = 200
#: numeric columns of the table and the columns that may be empty (fp32 has no error; a CNN
#: output without class scores no agreement)
_NUMBERS = ("median_ms", "speedup", "ci_low", "ci_high", "max_abs_error", "max_rel_error",
            "top1_agreement")
_MAY_BE_EMPTY = ("max_abs_error", "max_rel_error", "top1_agreement")
#: the columns that may be ``inf`` (an infinite error is an answer)
_MAY_BE_INF = ("max_abs_error", "max_rel_error")
#: the largest table read (a few batch sizes x five precisions, a line of reasons each)
MAX_TABLE_BYTES = 1 << 20
#: the longest "why" kept (one line of operators)
MAX_WHY_CHARS = 1000


def read_precision_table(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The rows of a ComparePrecisions table, checked: a regular file of at most
    :data:`MAX_TABLE_BYTES` read through :mod:`mlprof.ingest`, the header :data:`COLUMNS`,
    batch sizes positive integers, medians and speed-ups positive finite numbers, errors
    numbers >= 0, ``inf`` (with ``error_note`` saying why) or empty, agreements in [0, 1].
    ``rounds`` a positive integer, ``disturbed_rounds`` an integer from 0 to ``rounds``,
    ``causes`` lowercase names, ``floor`` a number in [0, 10]; each of these None (``""`` for
    ``causes``) where empty. Tables of older mlprof versions read with those empty
    (:data:`COLUMNS_V2`) and with ``error_note`` from their errors (:data:`COLUMNS_V1`).
    A damaged table raises
    :class:`~mlprof.errors.CorruptResult` naming the file and the line: it never becomes a
    number on the dashboard."""
    from mlprof import ingest
    from mlprof.errors import CorruptResult, MLProfError
    from mlprof.model.precision import NONFINITE

    try:
        text = ingest.read_text(path, MAX_TABLE_BYTES, what="a precision table")
    except MLProfError as e:
        raise CorruptResult(e.message, path) from None
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None or tuple(header) not in (COLUMNS, COLUMNS_V2, COLUMNS_V1):
        raise CorruptResult("header is not ComparePrecisions' columns", path)
    columns = tuple(header)
    rows = []
    for i, fields in enumerate(reader, start=2):
        if len(fields) != len(columns):
            raise CorruptResult(f"line {i} has {len(fields)} fields, expected {len(columns)}",
                                path)
        row: dict[str, Any] = {"error_note": "", **dict.fromkeys(_ROUND_COLUMNS, ""),
                               **dict(zip(columns, fields, strict=True))}
        _read_rounds(row, i, path)
        for key in ("batch_size", *_NUMBERS):
            value = row[key]
            if value == "" and key in _MAY_BE_EMPTY:
                row[key] = None
                continue
            try:
                number = float(value) if value.isascii() else float("x")
            except ValueError:
                raise CorruptResult(f"{key} in line {i} is {value[:20]!r}, not a number",
                                    path) from None
            bad = (not math.isfinite(number) and not (
                key in _MAY_BE_INF and number == math.inf)) or (
                key == "batch_size" and (number < 1 or not number.is_integer())) or (
                key in ("median_ms", "speedup", "ci_low", "ci_high") and number <= 0) or (
                key == "top1_agreement" and not 0 <= number <= 1) or number < 0
            if bad:
                raise CorruptResult(f"{key} in line {i} is {value[:20]}, not plausible", path)
            row[key] = int(number) if key == "batch_size" else number
        infinite = any(row[k] == math.inf for k in _MAY_BE_INF)
        if row["error_note"] == "" and infinite:
            row["error_note"] = "inf"  # a table of an older mlprof
        elif row["error_note"] != "" and (row["error_note"] not in NONFINITE or not infinite):
            raise CorruptResult(f"error_note in line {i} is {row['error_note'][:20]!r} beside "
                                "errors that are " + ("infinite" if infinite else "numbers"),
                                path)
        row["why"] = row["why"][:MAX_WHY_CHARS]
        rows.append(row)
    return rows


def _read_rounds(row: dict[str, Any], line: int, path: str | os.PathLike) -> None:
    """``row``'s rounds columns (:data:`_ROUND_COLUMNS`) checked and typed in place."""
    import re

    from mlprof.errors import CorruptResult

    def bad(key: str) -> CorruptResult:
        return CorruptResult(f"{key} in line {line} is {str(row[key])[:20]!r}, not plausible",
                             path)

    for key in ("rounds", "disturbed_rounds"):
        value = row[key]
        if value == "":
            row[key] = None
        elif not (value.isascii() and value.isdigit()):
            raise bad(key)
        else:
            row[key] = int(value)
    if row["rounds"] is not None and row["rounds"] < 1:
        raise bad("rounds")
    if row["disturbed_rounds"] is not None and row["rounds"] is not None \
            and row["disturbed_rounds"] > row["rounds"]:
        raise bad("disturbed_rounds")
    if len(row["causes"]) > MAX_CAUSES_CHARS or not re.fullmatch(r"[a-z0-9,-]*", row["causes"]):
        raise bad("causes")
    if row["floor"] == "":
        row["floor"] = None
        return
    try:
        floor = float(row["floor"]) if row["floor"].isascii() else float("x")
    except ValueError:
        raise bad("floor") from None
    if not 0 <= floor <= 10:  # NaN fails too
        raise bad("floor")
    row["floor"] = floor


#: operator types by what they mean for a lower precision (ONNX Runtime's and PyTorch's names)
CONVERSION_OPS = frozenset({
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "Cast",
    "aten::quantize_per_tensor", "aten::dequantize", "aten::to", "aten::_to_copy",
    "aten::copy_", "FakeQuantize", "Convert",
})
LAYOUT_OPS = frozenset({"Transpose", "Reshape", "aten::contiguous", "aten::permute",
                        "aten::transpose", "Reorder"})


def op_diff(fp32: Iterable[Any], low: Iterable[Any]) -> list[dict[str, Any]]:
    """Per operator type, milliseconds per call at fp32 and at the lower precision and their
    difference (``low - fp32``: positive where the lower precision spends more), largest
    difference first. ``fp32``/``low``: rows with ``op_type``, ``ms_per_call`` and
    ``median_ms_per_call`` (:class:`mlprof.measure.profile.OpRow`): the medians over the
    profiled calls where both profiles have them (one stalled call moves a mean by its
    share: a 1,770 ms stall made ``+38.5 ms DynamicQuantizeMatMul`` of a 0.033 ms kernel),
    else the means."""
    fp32, low = list(fp32), list(low)
    median = all(_field(r, "median_ms_per_call") is not None for r in (*fp32, *low))
    a = _per_type(fp32, median)
    b = _per_type(low, median)
    rows = [{"op_type": t, "fp32_ms": a.get(t, 0.0), "low_ms": b.get(t, 0.0),
             "delta_ms": b.get(t, 0.0) - a.get(t, 0.0),
             "kind": "new" if t not in a else "gone" if t not in b else "both"}
            for t in dict.fromkeys([*a, *b])]
    return sorted(rows, key=lambda r: (-r["delta_ms"], r["op_type"]))


def _field(row: Any, key: str) -> Any:
    return row.get(key) if isinstance(row, Mapping) else getattr(row, key, None)


def _per_type(rows: Iterable[Any], median: bool = False) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in rows:
        op = _field(r, "op_type")
        ms = _field(r, "median_ms_per_call" if median else "ms_per_call")
        out[str(op)] = out.get(str(op), 0.0) + float(ms)
    return out


def _ms(value: float) -> str:
    """Milliseconds to 3 significant digits, without e-notation (``2,040``, ``0.0734``)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _what(op: str) -> str:
    if op in CONVERSION_OPS:
        return "conversion"
    if op in LAYOUT_OPS:
        return "layout"
    return ""


def marked_why(text: str, contended: Iterable[str]) -> str:
    """``text`` (a :func:`why_not_faster` line) marked as the other tables mark a contended
    measurement (:data:`mlprof.measure.trust.CONTENDED`, ``!``) when a profile it diffs was
    contended (``contended``: their precisions): other processes used the CPUs while it was
    profiled, so an operator's time may be theirs."""
    from mlprof.measure.trust import CONTENDED

    which = list(contended)
    if not which:
        return text
    return (f"{CONTENDED} contended profile ({', '.join(which)}: other processes used the "
            f"CPUs while profiling; profile again on a quiet machine): {text}")


def why_not_faster(fp32: Iterable[Any], low: Iterable[Any], precision: str,
                   top: int = 3) -> str:
    """One line naming the operator types that account for a lower precision's missing
    speed-up: the ones it spends more time in (new conversions, slower kernels), largest
    first, at most ``top`` and each at least a tenth of the time added; then what it saves.

    ``+0.031 ms DynamicQuantizeLinear (new, conversion), +0.024 ms MatMulInteger (new);
    saves 0.040 ms in MatMul (gone)``."""
    diff = op_diff(fp32, low)
    added = [r for r in diff if r["delta_ms"] > 0]
    saved = sorted((r for r in diff if r["delta_ms"] < 0), key=lambda r: r["delta_ms"])
    if not added:
        return f"no operator is slower at {precision}: the difference is outside the operators"
    named: list[str] = []
    total = sum(r["delta_ms"] for r in added)
    for r in added[:top]:
        if named and r["delta_ms"] < 0.1 * total:  # the rest is noise beside these
            break
        tags = [r["kind"]] if r["kind"] != "both" else []
        if _what(r["op_type"]):
            tags.append(_what(r["op_type"]))
        named.append(f"+{_ms(r['delta_ms'])} ms {r['op_type']}"
                     + (f" ({', '.join(tags)})" if tags else ""))
    text = ", ".join(named)
    if saved:
        best = saved[0]
        text += (f"; saves {_ms(-sum(r['delta_ms'] for r in saved))} ms, most in "
                 f"{best['op_type']}" + (f" ({best['kind']})" if best["kind"] != "both" else ""))
    return text
