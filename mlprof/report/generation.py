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

from mlprof.results import identity

#: the table's columns, in order (the CSV's header)
COLUMNS = ("prompt_length", "batch_size", "new_tokens", "runtime", "version", "calls",
           "ttft_ms", "ttft_ms_low", "ttft_ms_high", "tpot_ms", "tpot_ms_low", "tpot_ms_high",
           "decode_tokens_per_s", "decode_tokens_per_s_low", "decode_tokens_per_s_high",
           "prefill_tokens_per_s", "e2e_ms", "speedup_tpot", "speedup_tpot_low",
           "speedup_tpot_high", "agreement", "agreement_errors", "first_divergence",
           "peak_rss_mb", "contended", "causes", "error", "compile_s")

#: the metrics of the table: (record key, column)
_METRICS = (("ttft", "ttft_ms"), ("tpot", "tpot_ms"),
            ("decode_tokens_per_s", "decode_tokens_per_s"))


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) \
        and math.isfinite(v) else None


def statistic(metric: Any, stat: str = "p50") -> tuple[float | None, float | None, float | None]:
    """``(value, low, high)`` of ``stat`` (the median by default) of one metric's JSON as
    :mod:`mlprof.measure.generation.metrics` writes it: ``{stat: {value, low, high}}``; all None
    where the record has no such statistic (the record's check on read made every number finite
    or absent)."""
    est = metric.get(stat) if isinstance(metric, Mapping) else None
    if not isinstance(est, Mapping):
        return None, None, None
    return _num(est.get("value")), _num(est.get("low")), _num(est.get("high"))


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
    step)`` of :class:`mlprof.measure.generation.agreement.Agreement`'s JSON; (1, 0, None) for
    the reference."""
    if a is None:
        return 1.0, 0, None
    errors, first = a.get("errors"), a.get("first_divergence")
    return (_num(a.get("share")), errors if isinstance(errors, int) else None,
            first if isinstance(first, int) else None)


def points_table(recs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per point and runtime (records as :func:`~mlprof.measure.generation.run.
    read_generation` returns them), sorted by prompt length, batch size and the runtimes'
    order."""
    rows = []
    for rec in recs:
        point = rec["point"]
        env = rec.get("environment") or {}
        contended = bool(env.get("contended") is True)
        causes = ", ".join(str(c) for c in env.get("causes") or ())
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
            row["contended"], row["causes"], row["error"] = contended, causes, None
            rows.append(row)
        for k, bad in enumerate(rec.get("failed") or ()):  # could not run this model
            rows.append({"prompt_length": point["prompt_length"],
                         "batch_size": point["batch_size"], "new_tokens": point["new_tokens"],
                         "runtime": bad["runtime"], "_order": len(rec["runtimes"]) + k,
                         "reference": rec.get("reference"), "contended": False, "causes": "",
                         "error": bad["error"]})
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
        if isinstance(r.get("error"), str) and r["error"]:
            lines.append((str(int(r["prompt_length"])), str(int(r["batch_size"])),
                          str(r["runtime"]), "not run: " + r["error"], "", "", "", ""))
            continue
        agree = "-" if r["agreement"] is None or pd.isna(r["agreement"]) else \
            f"{100 * float(r['agreement']):.1f} %"
        if r["runtime"] == r.get("reference"):
            agree = "reference"
        elif r["agreement_errors"] is not None and not pd.isna(r["agreement_errors"]):
            agree += f" ({int(r['agreement_errors'])} errors)"
        lines.append((str(int(r["prompt_length"])), str(int(r["batch_size"])),
                      str(r["runtime"]) + (" !" if r["contended"] else ""),
                      _with_interval(r["ttft_ms"], r["ttft_ms_low"], r["ttft_ms_high"], ".2f"),
                      _with_interval(r["tpot_ms"], r["tpot_ms_low"], r["tpot_ms_high"], ".3f"),
                      _with_interval(r["decode_tokens_per_s"], r["decode_tokens_per_s_low"],
                                     r["decode_tokens_per_s_high"], ".0f"),
                      _with_interval(r["speedup_tpot"], r["speedup_tpot_low"],
                                     r["speedup_tpot_high"], ".2f"),
                      agree))
    # a failed runtime's reason spans the row: it does not widen the TTFT column
    sized = [line for line in lines if not line[3].startswith("not run: ")] or lines
    widths = [max(len(h), *(len(line[i]) for line in sized)) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in lines]
    disturbed = df[df["contended"].fillna(False).astype(bool)]
    if not disturbed.empty:  # the causes named, per point (docs/noise.md)
        named = sorted({c.strip() for text in disturbed["causes"].fillna("")
                        for c in str(text).split(",") if c.strip()})
        out.append("! contended: a cause was named during the point's timed rounds ("
                   + (", ".join(named) or "unexplained") + "; docs/noise.md)")
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



# --- Report / dashboard rows ---------------------------------------------------------------------

#: the columns of Report's ``generation.csv``, in order: one row per generation point, runtime
#: and version (:func:`mlprof.report.collect.collect_generations`); medians with their 95 %
#: intervals (``_low``/``_high``), ``causes`` what disturbed a contended point's timed rounds
GENERATION_CSV_COLUMNS = (
    "model", "model_hash", "model_file", "runtime", "runtime_version", "device",
    "settings_key", "version", "point", "prompt_length", "batch_size", "new_tokens",
    "threads", "reference", "calls", "rounds", "ttft_ms", "ttft_ms_low", "ttft_ms_high",
    "tpot_ms", "tpot_ms_low", "tpot_ms_high", "decode_tokens_per_s",
    "decode_tokens_per_s_low", "decode_tokens_per_s_high", "prefill_tokens_per_s", "e2e_ms",
    "speedup_tpot", "speedup_tpot_low", "speedup_tpot_high", "agreement", "agreement_errors",
    "first_divergence", "peak_rss_mb", "contended", "causes", "host", "cpu_model",
    "timestamp", "path")


def record_rows(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of one checked generation record (JSON of
    :class:`mlprof.results.records.GenerationRecord`): one per runtime, with the
    :func:`points_table` figures, the record's host, time, threads, rounds and causes. The
    record's fields were checked on read, so every number here is finite or None."""
    from mlprof.measure.contention import causes_of, is_contended

    df = points_table([rec])
    contended = is_contended(dict(rec))
    causes = ",".join(causes_of(dict(rec))) if contended else ""
    raw_settings = rec.get("settings")
    settings: Mapping[str, Any] = raw_settings if isinstance(raw_settings, Mapping) else {}
    point = rec["point"]
    model = rec.get("model")
    model_file = model.get("source") if isinstance(model, Mapping) else None
    out = []
    for r in df.to_dict("records"):
        out.append({
            # the table's ``version`` is the runtime's: the row's is the store version's
            **{k: (None if isinstance(v, float) and math.isnan(v) else v)
               for k, v in r.items() if not k.startswith("_") and k != "version"},
            "point": f"p{int(point['prompt_length'])}_bs{int(point['batch_size'])}",
            "runtime_version": r.get("version"), "threads": settings.get("threads"),
            "model_file": model_file,
            "cpu_model": rec.get("cpu_model"),
            "rounds": rec.get("rounds"), "causes": causes, "host": rec.get("host"),
            "timestamp": rec.get("timestamp")})
    return out


def _order(row: Mapping[str, Any]) -> tuple[str, float]:
    """When a generation record was measured: its timestamp, else its file's time."""
    return (str(row.get("timestamp") or ""), float(row.get("mtime") or 0.0))


#: what makes two generation rows the same series: the series key of every measurement
#: (:data:`mlprof.results.identity.SERIES_KEY`: model and file, runtime by name, device, host,
#: CPU, threads, settings) with the point (prompt length and batch size) for the batch size;
#: the runtime's version and the model's hash are properties of each point (an upgrade
#: continues the series, as an event). Its newest row is the current one, its rows over
#: versions its history.
SERIES_KEY = (*(k for k in identity.SERIES_KEY if k not in ("variant", "batch_size")), "point")


def newest_generations(rows: Sequence[Mapping[str, Any]],
                       versions: Sequence[str] | None = None) -> list[dict]:
    """Of generation rows (:func:`mlprof.report.collect.collect_generations`), those of
    ``versions`` when given, else the newest of each series (:data:`SERIES_KEY`), sorted by
    model, prompt length, batch size and runtime."""
    chosen: dict[tuple, dict] = {}
    for r in rows:
        if versions and r.get("version") not in versions:
            continue
        key = identity.key_of(r, SERIES_KEY)
        if key not in chosen or _order(r) >= _order(chosen[key]):
            chosen[key] = dict(r)
    return sorted(chosen.values(), key=lambda r: (
        str(r.get("model")), int(r.get("prompt_length") or 0), int(r.get("batch_size") or 0),
        str(r.get("runtime"))))


def generation_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Generation rows as Report's ``generation.csv`` (:data:`GENERATION_CSV_COLUMNS`), in
    series and time order; the header alone without rows."""
    ordered = sorted(rows, key=lambda r: (identity.key_of(r, SERIES_KEY), _order(r)))
    return pd.DataFrame([{c: r.get(c) for c in GENERATION_CSV_COLUMNS} for r in ordered],
                        columns=list(GENERATION_CSV_COLUMNS))


def _ms(v: Any, lo: Any, hi: Any, fmt: str) -> str:
    return _with_interval(v, lo, hi, fmt)


def generation_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """Report's summary of generation results: the newest row of each series, one line each
    (``tiny_llama p16_bs1 on onnxruntime 1.22.0 (g1): TTFT 1.93 [1.90, 2.01] ms, TPOT ...,
    agreement 100.0 %``), a contended one marked ``!`` with its causes."""
    newest = newest_generations(rows)
    n = len(newest)
    lines = [f"generation ({n} runtime point{'s' if n != 1 else ''}, the newest record of "
             "each; all versions in generation.csv):"]
    for r in newest:
        agree = r.get("agreement")
        agree_text = "reference" if r.get("runtime") == r.get("reference") else (
            "-" if agree is None else f"{100 * float(agree):.1f} %"
            + (f" ({int(r['agreement_errors'])} errors)"
               if r.get("agreement_errors") is not None else ""))
        flag = f" ! contended ({r.get('causes') or 'unexplained'})" if r.get("contended") else ""
        ttft = _ms(r.get("ttft_ms"), r.get("ttft_ms_low"), r.get("ttft_ms_high"), ".3g")
        tpot = _ms(r.get("tpot_ms"), r.get("tpot_ms_low"), r.get("tpot_ms_high"), ".3g")
        decode = _ms(r.get("decode_tokens_per_s"), r.get("decode_tokens_per_s_low"),
                     r.get("decode_tokens_per_s_high"), ".0f")
        lines.append(f"  {r.get('model')} {r.get('point')} ({r.get('new_tokens')} new tokens) "
                     f"on {r.get('runtime')} "
                     f"{r.get('runtime_version') or ''}".rstrip() + f" ({r.get('version')}): "
                     f"TTFT {ttft} ms, TPOT {tpot} ms, decode {decode} tokens/s, "
                     f"agreement {agree_text}{flag}")
    return "\n".join(lines)


def series_history(rows: Sequence[Mapping[str, Any]], row: Mapping[str, Any],
                   metric: str = "tpot_ms") -> tuple[list[str], list[float], list[str]]:
    """The history of ``row``'s series (:data:`SERIES_KEY`) in ``rows``: ``(versions,
    values of metric, events)`` in time order, a point without the metric left out;
    ``events`` the runtime upgrades and model edits along it
    (:func:`mlprof.results.identity.events`, as the latency history marks them)."""
    key = identity.key_of(row, SERIES_KEY)
    members = sorted((r for r in rows if identity.key_of(r, SERIES_KEY) == key
                      and _num(r.get(metric)) is not None), key=_order)
    events = [e.text for e in identity.events(members, runtime=str(row.get("runtime") or ""))]
    return ([str(r.get("version")) for r in members], [float(r[metric]) for r in members],
            events)
