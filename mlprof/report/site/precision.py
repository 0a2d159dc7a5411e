"""The precision section of the dashboard: lower precisions against fp32 (ComparePrecisions).

The front page has every current row, a model's page its own: the speed-up of each precision
over fp32 with its 95 % interval, its error against fp32, the rounds that were disturbed, and
where a precision gains less than 1.2x the operators that account for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mlprof.measure.trust import CONTENDED, NOT_MEASURABLE, row_not_measurable
from mlprof.report.site.table import number, table_section

#: the columns of the precision tables (ComparePrecisions) on the dashboard
PRECISION_COLUMNS = ["runtime", "batch_size", "precision", "fp32_ms", "median_ms", "speedup",
                     "ci", "verdict", "flags", "max_rel_error", "top1", "why", "version"]
_PRECISION_HEADERS = {"fp32_ms": "fp32 median [ms]", "speedup": "speed-up vs fp32",
                      "ci": "95% CI", "flags": "disturbed rounds", "top1": "top-1 agreement",
                      "why": "why not faster (operator time per call)"}


def current_precisions(rows: Sequence[Mapping[str, Any]],
                       versions: Sequence[str] | None = None) -> list[dict]:
    """The ComparePrecisions rows to show (:func:`mlprof.report.collect.collect_precisions`):
    those of ``versions`` when given, else the newest table's row of each model, runtime,
    settings, batch size and precision; sorted for reading (the precisions in the order of
    THE precision table, :mod:`mlprof.runtimes.precisions`). Each has its ``flags``: how many
    of its rounds were disturbed and by what (``! 3 of 20: cpu-wait, gc``), and its speed-up
    reads "not measurable now" where those rounds' interval spans more than 10x."""
    from mlprof.measure.interleave import disturbed_text
    from mlprof.runtimes.precisions import order as precision_order

    chosen: dict[tuple, dict] = {}
    for r in rows:
        if versions and r.get("version") not in versions:
            continue
        key = (r.get("model"), r.get("model_hash"), r.get("runtime"), r.get("settings_key"),
               r.get("batch_size"), r.get("precision"))
        if key not in chosen or (r.get("mtime") or 0) >= (chosen[key].get("mtime") or 0):
            chosen[key] = dict(r)
    fp32 = {k[:5]: r.get("median_ms") for k, r in chosen.items() if k[5] == "fp32"}
    out = sorted((r for k, r in chosen.items() if k[5] != "fp32"),  # fp32 is the reference
                 key=lambda r: (str(r.get("model")), str(r.get("runtime")),
                                int(r.get("batch_size") or 0), precision_order(r.get("precision")),
                                str(r.get("precision"))))
    for r in out:
        r["fp32_ms"] = fp32.get((r.get("model"), r.get("model_hash"), r.get("runtime"),
                                 r.get("settings_key"), r.get("batch_size")))
        r["ci"] = f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
        r["gain"], r["speedup"] = r["speedup"], f"{r['speedup']:.2f}x"
        if row_not_measurable({**r, "contended": bool(r.get("disturbed_rounds"))}):
            r["speedup"] = NOT_MEASURABLE
        # the rounds that named a cause, and which (a table of an older mlprof: empty)
        r["flags"] = (f"{CONTENDED} {disturbed_text(r)}" if r.get("disturbed_rounds")
                      and r.get("rounds") else "")
        top1 = r.get("top1_agreement")
        r["top1"] = "" if top1 is None else f"{top1:.3f}"
        if r.get("error_note"):  # an infinite error is an answer: "inf", "NaN outputs differ"
            from mlprof.model.precision import NONFINITE

            r["max_rel_error"] = NONFINITE.get(str(r["error_note"]), "inf")
    return out


def precisions_html(rows: Sequence[Mapping[str, Any]], model_link=None,
                     section_id: str = "precisions") -> str:
    """Lower precisions against fp32: speed-up with its interval, error, and where a precision
    gains less than 1.2x the operators that account for it (empty without tables)."""
    if not rows:
        return ""
    from mlprof.report.precision import SLOW_GAIN

    slow = sum(1 for r in rows if (number(r.get("gain")) or 0) < SLOW_GAIN)
    heading = f"Precisions against fp32 ({len(rows):,}; {slow:,} gain less than {SLOW_GAIN:g}x)"
    intro = ("ComparePrecisions: the speed-up of each precision over fp32 in interleaved rounds "
             "with its 95% bootstrap interval, its error against fp32 on the same inputs (of "
             "the largest fp32 output value), and where it gains less than 1.2x the operator "
             "types that account for the difference (profiles of both diffed).")
    return table_section(section_id, heading, intro, rows, PRECISION_COLUMNS,
                         _PRECISION_HEADERS, model_link)


