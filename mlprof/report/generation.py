"""The end-of-run table of a generation measurement: per point and runtime, TTFT, TPOT and decode
tokens/s with their 95 % intervals, the speed-up against the reference runtime and the tokens'
agreement (rows from the checked records, as a DataFrame, CSV and text; no law).

The figures and their formulas are :mod:`mlprof.measure.generation.metrics`' (in each record's
``formulas``, printed under the table), the agreement :mod:`mlprof.measure.generation.agreement`'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

#: the table's columns, in order (the CSV's header)
COLUMNS = ("prompt_length", "batch_size", "new_tokens", "runtime", "version", "calls",
           "ttft_ms", "ttft_ms_low", "ttft_ms_high", "tpot_ms", "tpot_ms_low", "tpot_ms_high",
           "decode_tokens_per_s", "decode_tokens_per_s_low", "decode_tokens_per_s_high",
           "prefill_tokens_per_s", "e2e_ms", "speedup_tpot", "speedup_tpot_low",
           "speedup_tpot_high", "agreement", "agreement_errors", "first_divergence",
           "peak_rss_mb", "contended", "compile_s")

#: the metrics of the table: (record key, column)
_METRICS = (("ttft", "ttft_ms"), ("tpot", "tpot_ms"),
            ("decode_tokens_per_s", "decode_tokens_per_s"))


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) \
        and math.isfinite(v) else None


def statistic(metric: Any, stat: str = "p50") -> tuple[float | None, float | None, float | None]:
    """``(value, low, high)`` of ``stat`` (the median by default) of one metric's JSON: a
    number, or an object with ``stat`` and its interval as ``<stat>_ci`` ([low, high]), as
    ``<stat>_low``/``<stat>_high``, or under ``ci``/``intervals``."""
    if _num(metric) is not None:
        return _num(metric), None, None
    if not isinstance(metric, Mapping):
        return None, None, None
    est = metric.get(stat)
    if isinstance(est, Mapping):  # mlprof.measure.generation.metrics: {value, low, high}
        return _num(est.get("value")), _num(est.get("low")), _num(est.get("high"))
    value = _num(est)
    if value is None and stat == "p50":
        value = _num(metric.get("median"))
    for ci in (metric.get(f"{stat}_ci"), (metric.get("ci") or {}).get(stat)
               if isinstance(metric.get("ci"), Mapping) else None,
               (metric.get("intervals") or {}).get(stat)
               if isinstance(metric.get("intervals"), Mapping) else None):
        if isinstance(ci, Sequence) and not isinstance(ci, str) and len(ci) == 2:
            return value, _num(ci[0]), _num(ci[1])
        if isinstance(ci, Mapping):
            return value, _num(ci.get("low")), _num(ci.get("high"))
    return value, _num(metric.get(f"{stat}_low")), _num(metric.get(f"{stat}_high"))


def _speedup(speedups: Sequence[Mapping[str, Any]], runtime: str
             ) -> tuple[float | None, float | None, float | None]:
    """The TPOT speed-up of ``runtime`` (:class:`mlprof.measure.generation.metrics.Speedup`'s
    JSON: ``speedup`` is ``{value, low, high}``)."""
    for s in speedups:
        if s.get("runtime") == runtime and s.get("metric") == "tpot_ms":
            return statistic(s, "speedup")
    return None, None, None


def _agreement(a: Mapping[str, Any] | None) -> tuple[float | None, int | None, int | None]:
    """``(share of steps agreeing, errors by the margin rule, first free-running divergence
    step)``; (1, 0, None) for the reference."""
    if a is None:
        return 1.0, 0, None
    share = _num(a.get("agreement", a.get("agreement_rate", a.get("share"))))
    errors = a.get("errors", a.get("margin_errors"))
    first = a.get("first_divergence", a.get("first_divergence_step"))
    return (share, errors if isinstance(errors, int) else None,
            first if isinstance(first, int) else None)


def points_table(recs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per point and runtime (records as :func:`~mlprof.measure.generation.run.
    read_generation` returns them), sorted by prompt length, batch size and the runtimes'
    order."""
    rows = []
    for rec in recs:
        point = rec["point"]
        contended = bool((rec.get("environment") or {}).get("contended") is True)
        for order, rt in enumerate(rec["runtimes"]):
            m = rt["metrics"]
            row: dict[str, Any] = {"prompt_length": point["prompt_length"],
                                   "batch_size": point["batch_size"],
                                   "new_tokens": point["new_tokens"], "runtime": rt["runtime"],
                                   "version": rt.get("version"), "calls": rt.get("calls"),
                                   "_order": order, "reference": rec.get("reference")}
            for key, col in _METRICS:
                row[col], row[f"{col}_low"], row[f"{col}_high"] = statistic(m.get(key))
            row["prefill_tokens_per_s"] = statistic(m.get("prefill_tokens_per_s"))[0]
            row["e2e_ms"] = statistic(m.get("e2e"))[0]
            if rt["runtime"] == rec.get("reference"):
                row["speedup_tpot"], row["speedup_tpot_low"], row["speedup_tpot_high"] = \
                    1.0, None, None
            else:
                row["speedup_tpot"], row["speedup_tpot_low"], row["speedup_tpot_high"] = \
                    _speedup(rec.get("speedups") or [], rt["runtime"])
            row["agreement"], row["agreement_errors"], row["first_divergence"] = \
                _agreement(rt.get("agreement"))
            row["peak_rss_mb"] = rt.get("peak_rss_mb")
            # torch.compile's (and OpenVINO's) compile time, spent before the timed rounds
            row["compile_s"] = _num((rt.get("info") or {}).get("compile_s"))
            row["contended"] = contended
            rows.append(row)
    df = pd.DataFrame(rows, columns=[*COLUMNS, "_order", "reference"])
    if not df.empty:
        df = df.sort_values(["prompt_length", "batch_size", "_order"], kind="stable")
    return df.reset_index(drop=True)


def _with_interval(v: Any, lo: Any, hi: Any, fmt: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    text = format(float(v), fmt)
    if lo is not None and hi is not None and not (isinstance(lo, float) and math.isnan(lo)) \
            and not (isinstance(hi, float) and math.isnan(hi)):
        text += f" [{format(float(lo), fmt)}, {format(float(hi), fmt)}]"
    return text


def format_table(df: pd.DataFrame, formulas: Mapping[str, str] | None = None) -> str:
    """The table as text: per point and runtime the median TTFT, TPOT and decode tokens/s with
    their 95 % intervals in brackets, the TPOT speed-up against the reference and the share of
    teacher-forced steps whose token agrees with the reference's (errors by the margin rule in
    parentheses); the formulas below."""
    if df.empty:
        return "no generation points\n"
    head = ("prompt", "batch", "runtime", "TTFT ms [95% CI]", "TPOT ms [95% CI]",
            "decode tok/s [95% CI]", "speed-up TPOT", "agreement")
    lines = []
    for _, r in df.iterrows():
        agree = "-" if r["agreement"] is None or pd.isna(r["agreement"]) else \
            f"{100 * float(r['agreement']):.1f} %"
        if r["runtime"] == r.get("reference"):
            agree = "reference"
        elif r["agreement_errors"] is not None and not pd.isna(r["agreement_errors"]):
            agree += f" ({int(r['agreement_errors'])} errors)"
        lines.append((str(int(r["prompt_length"])), str(int(r["batch_size"])),
                      str(r["runtime"]) + (" *" if r["contended"] else ""),
                      _with_interval(r["ttft_ms"], r["ttft_ms_low"], r["ttft_ms_high"], ".2f"),
                      _with_interval(r["tpot_ms"], r["tpot_ms_low"], r["tpot_ms_high"], ".3f"),
                      _with_interval(r["decode_tokens_per_s"], r["decode_tokens_per_s_low"],
                                     r["decode_tokens_per_s_high"], ".0f"),
                      _with_interval(r["speedup_tpot"], r["speedup_tpot_low"],
                                     r["speedup_tpot_high"], ".2f"),
                      agree))
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in lines]
    if df["contended"].any():
        out.append("* other processes used the CPUs during the timed rounds (contended)")
    compiled = [f"{r['runtime']} {float(r['compile_s']):.1f} s (prompt {int(r['prompt_length'])}"
                f", batch {int(r['batch_size'])})" for _, r in df.iterrows()
                if r["compile_s"] is not None and not pd.isna(r["compile_s"])
                and float(r["compile_s"]) >= 0.05]
    if compiled:
        out.append("compiled before the timed rounds (not in TTFT or TPOT): "
                   + "; ".join(compiled))
    for name, formula in (formulas or {}).items():
        out.append(f"{name}: {formula}")
    return "\n".join(out) + "\n"


def formulas_of(recs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The formulas the records name (the first record's: every record of one run has the
    same)."""
    for rec in recs:
        f = rec.get("formulas")
        if isinstance(f, Mapping):
            return {str(k): str(v) for k, v in f.items() if isinstance(v, str)}
    return {}

