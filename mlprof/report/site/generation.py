"""The generation section of the dashboard: MeasureGeneration's points per decoder and runtime.

TTFT, TPOT and decode tokens/s with their 95 % intervals, the TPOT speed-up against the
reference runtime, the teacher-forced agreement, the contended flag and the TPOT's history as
a sparkline; a decoder measured only by MeasureGeneration gets a page with this table alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlprof.measure.trust import CONTENDED
from mlprof.measure.trust import _causes_text as _causes_text
from mlprof.report.site.panels import TREND_POINTS
from mlprof.report.site.svg import sparkline
from mlprof.report.site.table import flag, html_table, number

#: the columns of the generation table (one row per decoder, runtime and point)
GENERATION_COLUMNS = ["runtime", "runtime_version", "shown_point", "ttft", "tpot", "decode",
                      "speedup", "agreement", "flags", "tpot_history", "host", "version"]
_GENERATION_HEADERS = {"shown_point": "prompt, batch", "ttft": "TTFT ms [95% CI]",
                       "tpot": "TPOT ms [95% CI]", "decode": "decode tok/s [95% CI]",
                       "speedup": "TPOT speed-up", "agreement": "tokens agree",
                       "tpot_history": "TPOT history"}


def current_generations(rows: Sequence[Mapping[str, Any]],
                        versions: Sequence[str] | None = None) -> list[dict]:
    """The MeasureGeneration rows to show (:func:`mlprof.report.collect.collect_generations`):
    those of ``versions`` when given, else the newest of each series
    (:func:`mlprof.report.generation.newest_generations`), each with its figures as text
    (median and 95 % interval), its agreement, ``flags`` (contended and what disturbed it, as
    the other tables show it) and the history of its TPOT over every version in ``rows``."""
    from mlprof.report.generation import _with_interval, newest_generations, series_history

    out = newest_generations(rows, versions)
    for r in out:
        r["_history"] = series_history(rows, r)  # before a shown column replaces a key part
        r["shown_point"] = (f"{r.get('prompt_length')}, {r.get('batch_size')} "
                            f"({r.get('new_tokens')} new)")
        r["ttft"] = _with_interval(r.get("ttft_ms"), r.get("ttft_ms_low"), r.get("ttft_ms_high"),
                                   ".3g")
        r["tpot"] = _with_interval(r.get("tpot_ms"), r.get("tpot_ms_low"), r.get("tpot_ms_high"),
                                   ".3g")
        r["decode"] = _with_interval(r.get("decode_tokens_per_s"),
                                     r.get("decode_tokens_per_s_low"),
                                     r.get("decode_tokens_per_s_high"), ".0f")
        r["speedup"] = "reference" if r.get("runtime") == r.get("reference") else \
            _with_interval(r.get("speedup_tpot"), r.get("speedup_tpot_low"),
                           r.get("speedup_tpot_high"), ".2f")
        agree = number(r.get("agreement"))
        errors = number(r.get("agreement_errors"))
        r["agreement"] = "reference" if r.get("runtime") == r.get("reference") else (
            "-" if agree is None else f"{100 * agree:.1f} %"
            + (f" ({int(errors)} errors)" if errors is not None else ""))
        r["flags"] = (f"{CONTENDED} contended: {_causes_text(r)}" if flag(r.get("contended"))
                      else "")
    return out


def generations_html(rows: Sequence[Mapping[str, Any]], model_link=None,
                      section_id: str = "generation") -> str:
    """MeasureGeneration's points: per decoder, runtime, prompt length and batch size the
    median TTFT, TPOT and decode tokens/s with their 95 % intervals, the TPOT speed-up against
    the reference runtime, the teacher-forced agreement, the contended flag and a sparkline of
    the TPOT over versions (empty without records)."""
    if not rows:
        return ""

    def history(r: Mapping[str, Any]) -> str:
        versions, values, events = r.get("_history") or ([], [], [])
        if len(values) < 2:
            return "-"
        tip = (f"TPOT ms of {r.get('model')} {r.get('runtime')} {r.get('shown_point')}: "
               + ", ".join(f"{v} {x:.3g}" for v, x in zip(versions[-TREND_POINTS:],
                                                         values[-TREND_POINTS:], strict=True))
               + (f"; {'; '.join(events)}" if events else ""))
        return sparkline(values[-TREND_POINTS:], baseline=float(np.median(values[:-1])),
                         worse_up=True, title=tip)

    cols = (["model"] if model_link else []) + GENERATION_COLUMNS
    contended = sum(1 for r in rows if flag(r.get("contended")))
    n = len(rows)
    return (f'<section id="{section_id}"><h2>Generation ({n:,} runtime point'
            f'{"s" if n != 1 else ""}' + (f"; {contended:,} contended" if contended else "")
            + ")</h2><p>MeasureGeneration: a decoder generating a fixed number of tokens per "
            "call, runtimes in interleaved rounds. TTFT: call start to the first token "
            "sampled; TPOT = (E2E - TTFT)/(N - 1); decode tokens/s = batch x (N - 1)/(E2E - "
            "TTFT); medians with bootstrap 95 % intervals. Tokens agree: the share of "
            "teacher-forced steps whose token is the reference runtime's (errors only where "
            "the reference's margin exceeds 10x the logit difference). A contended point "
            "shared the CPUs with other processes. Generation.csv of Report has every "
            "version.</p>"
            + html_table(rows, cols, table_id=f"{section_id}-table", headers=_GENERATION_HEADERS,
                     links={"model": model_link} if model_link else None,
                     raw={"tpot_history": history})
            + "</section>")


