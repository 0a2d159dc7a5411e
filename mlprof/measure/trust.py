"""Trust markers: how every table that prints a measured number says it is not to be trusted.

A point of the statistics is ``unstable`` (coefficient of variation above
:data:`mlprof.measure.stats.CV_UNSTABLE`) or ``contended`` (other processes used the CPUs while
it was measured, :mod:`mlprof.measure.contention`). The plots draw such points open; the text
tables (the end-of-run table of ``law run``, ``mlprof benchmark``, the corpus lines, the
Report's summary) append a marker to the number, as asv and pyperf mark the results they do
not trust:

- ``~`` unstable: the calls spread widely; the median is robust, but may move between runs;
- ``!`` contended: something disturbed the measurement, and the record names what
  (:mod:`mlprof.measure.causes`: ``cpu-wait``, ``others``, ``gc``, ...); the latency may be too
  high; measure again on a quiet machine.

A table that shows a marker prints :func:`legend` under it (and only then); where the causes
are known, :func:`cause_line` says which cause disturbed which batch sizes
(``contended: cpu-wait at batch size(s) 8, 32``). The API's result has the same markers in its
``flags`` column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: CV above which a measurement is flagged as unstable (also :data:`mlprof.measure.stats.
#: CV_UNSTABLE`: defined here, below the statistics, so that they can mark their tables)
CV_UNSTABLE = 0.10

#: the marker of an unstable point (CV above CV_UNSTABLE)
UNSTABLE = "~"
#: the marker of a point measured under contention
CONTENDED = "!"

_MEANING = {
    UNSTABLE: f"unstable (CV > {100 * CV_UNSTABLE:.0f}%)",
    CONTENDED: "contended (disturbed while measuring: other processes, CPU wait, GC, ...)",
}

#: the cause of a contended point whose record names none (from before the causes)
UNEXPLAINED = "unexplained"


def _true(value: Any) -> bool:
    """A flag as stored: a bool, numpy bool, ``"True"`` in a CSV; NaN and None are False."""
    if isinstance(value, str):
        return value.strip().lower() == "true"
    try:
        return bool(value) and value == value  # NaN != NaN
    except (TypeError, ValueError):
        return False


def marks(unstable: Any = False, contended: Any = False) -> str:
    """The markers of one point: ``""``, ``"~"``, ``"!"`` or ``"~!"``."""
    return (UNSTABLE if _true(unstable) else "") + (CONTENDED if _true(contended) else "")


def combined(flags: Iterable[str]) -> str:
    """The markers of several points together (a script's models, a corpus line): ``~!`` when
    one is unstable and another contended."""
    seen = "".join(flags)
    return marks(UNSTABLE in seen, CONTENDED in seen)


def row_marks(row: Mapping[str, Any]) -> str:
    """The markers of a statistics or report row (its ``unstable``/``contended`` fields;
    missing in records written before them: no marker)."""
    return marks(row.get("unstable"), row.get("contended"))


def marked(text: str, flags: str) -> str:
    """``text`` with the point's markers appended (``"84.2 ~"``); unchanged without any."""
    return f"{text} {flags}" if flags else text


def legend(shown: Iterable[str]) -> str | None:
    """The one-line legend of the markers in ``shown`` (the markers of each row shown, as
    :func:`marks` gives them; not the cells, whose labels may contain the characters); None
    when no marker was shown, so that a table without one prints nothing more."""
    text = "".join(shown)
    used = [m for m in (UNSTABLE, CONTENDED) if m in text]
    if not used:
        return None
    return "markers: " + "; ".join(f"{m} {_MEANING[m]}" for m in used)


def with_legend(table: str, shown: Iterable[str]) -> str:
    """``table`` followed by :func:`legend` of ``shown`` when a marker was shown."""
    line = legend(shown)
    return f"{table}\n{line}" if line else table


def _causes_text(row: Mapping[str, Any]) -> str:
    """A row's causes (a list, or the Report's comma-separated ``contended_causes``) as
    ``cpu-wait, gc``; ``unexplained`` when none is recorded (NaN in a CSV is none)."""
    value = row.get("causes", row.get("contended_causes"))
    if isinstance(value, str):
        names = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, (list, tuple)):
        names = [str(v) for v in value]
    else:
        names = []
    return ", ".join(names) or UNEXPLAINED


def marked_points(rows: Iterable[Mapping[str, Any]], limit: int = 20) -> str | None:
    """The points of ``rows`` (statistics or report rows with ``model``, ``runtime``,
    ``batch_size`` and ``median_ms``) that carry a marker, as a table with the marked medians
    and the legend under it, at most ``limit`` of them (then how many more); None when no point
    is marked. What a summary that counts results prints, so that its reader learns which
    numbers not to trust without opening the full table."""
    hit = [(r, row_marks(r)) for r in rows]
    hit = [(r, m) for r, m in hit if m]
    if not hit:
        return None
    cells = [["model", "runtime", "batch", "median [ms]"]]
    cells += [[str(r.get("model", "")), str(r.get("runtime", "")), str(r.get("batch_size", "")),
               marked(f"{float(r['median_ms']):.4g}", m)] for r, m in hit[:limit]]
    # what disturbed a contended point (the Report's ``contended_causes``), where known
    named = [_causes_text(r) if CONTENDED in m else "" for r, m in hit[:limit]]
    if any(named):
        cells[0].append("contended by")
        for row, text in zip(cells[1:], named, strict=True):
            row.append(text)
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)).rstrip()
             for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if len(hit) > limit:
        lines.append(f"... and {len(hit) - limit} more (the report's unstable and contended "
                     "columns)")
    text = f"{len(hit)} marked point(s)\n" + "\n".join(lines)
    return with_legend(text, [m for _, m in hit])


def cause_line(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """Which cause disturbed which batch sizes, over the contended ``rows`` (each with
    ``batch_size``, ``contended`` and ``causes``, a list: see
    :func:`mlprof.measure.contention.causes_of`): ``contended: cpu-wait at batch size(s) 8, 32;
    gc at batch size(s) 32``; a contended row without causes counts as ``unexplained``. None
    when no row is contended."""
    at: dict[str, list[str]] = {}
    for r in rows:
        if not _true(r.get("contended")):
            continue
        for cause in r.get("causes") or [UNEXPLAINED]:
            at.setdefault(str(cause), []).append(str(r.get("batch_size", "?")))
    if not at:
        return None
    return "contended: " + "; ".join(f"{c} at batch size(s) {', '.join(b)}"
                                     for c, b in at.items())
