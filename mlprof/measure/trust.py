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

A contended row whose band (:func:`band_of`: the spread of what its number summarizes) spans
more than :data:`BAND_MAX_RATIO` shows :data:`NOT_MEASURABLE` instead of its number
(:func:`measurable_text`); a CV above :data:`CV_OUTLIER_DRIVEN` is shown as outlier-driven
(:func:`cv_text`), not as thousands of per cent.

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
               marked(measurable_text(f"{float(r['median_ms']):.4g}", r), m)]
              for r, m in hit[:limit]]
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


def causes_over(rows: Iterable[Mapping[str, Any]]) -> str:
    """What disturbed the contended ``rows`` (each with ``contended`` and ``causes``, a list or
    comma-separated), every cause once, in the record's order of causes
    (:data:`mlprof.results.records.ENVIRONMENT_CAUSES`, ``others`` first), ``unexplained`` for
    a contended row without causes: ``others, cpu-wait``. Empty when no row is contended.
    One wording for every summary of several points (PlotLoad's answer and table legend)."""
    from mlprof.results.records import ENVIRONMENT_CAUSES

    named: set[str] = set()
    for r in rows:
        if _true(r.get("contended")):
            named.update(_causes_text(r).split(", "))
    return ", ".join(sorted(named, key=lambda c: (
        ENVIRONMENT_CAUSES.index(c) if c in ENVIRONMENT_CAUSES else len(ENVIRONMENT_CAUSES),
        c == UNEXPLAINED, c)))


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


#: a disturbed (contended) row whose band spans more than this factor (high / low, see
#: :func:`band_of`) says :data:`NOT_MEASURABLE` instead of its number. Why 10x: a quiet point's
#: calls spread far less: over the 50 batch sizes of the test stores (``tests/fixtures``, the
#: 10x128 DNN and a linear model, 20 calls of 0.01-0.5 ms each, quiet or contended) p95 / min
#: was 2.6 at the median, 4.3 at the 90th percentile and 10.0 at most (one row, CV 380 %).
#: Beyond 10x, more than 5 % of the calls took ten times what the model needs: the machine
#: took the CPU away for whole calls, and the median says how often that happened this
#: minute, not how fast the model is (the issue's ComparePrecisions row: +38.5 ms for a call
#: whose median is 0.033 ms, profiled calls up to 1,770 ms; a quick-start row 13x its
#: neighbour). Only contended rows: a quiet row that spread this far is the model's own
#: behaviour (and marked unstable)
BAND_MAX_RATIO = 10.0
#: what such a row shows instead of its number
NOT_MEASURABLE = "not measurable now"
#: a CV above this (100 %) is shown as outlier-driven: a CV of 2,789 % says that a few calls
#: took hundreds of times the rest (the standard deviation of 1 call of 1,770 ms among 10,000
#: of 0.03 ms), which the median ignores; the percentage reads as a spread it is not
CV_OUTLIER_DRIVEN = 1.0


def _finite(value: Any) -> float | None:
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if f == f and f not in (float("inf"), float("-inf")) else None


def band_of(row: Mapping[str, Any]) -> tuple[float, float] | None:
    """The band of a table row: the spread of what its number summarizes, (low, high).

    - a speed-up (an interleaved comparison's, ComparePrecisions'): its 95 % interval
      (``ci_low``, ``ci_high``);
    - a latency or throughput of calls (statistics, Report, dashboard rows): the fastest call
      to the 95th percentile (``min_ms``, ``p95_ms``): a disturbance only adds time, so the
      fastest call is what the model needs; the slowest 5 % are outliers a median ignores;
    - a load point (``load.csv``): the call latency's ``p50_ms`` to ``p99_ms`` (it has no min);

    None where the row has neither (a record from before them)."""
    for low, high in (("ci_low", "ci_high"), ("min_ms", "p95_ms"), ("p50_ms", "p99_ms")):
        lo, hi = _finite(row.get(low)), _finite(row.get(high))
        if lo is not None and hi is not None:
            return lo, hi
    return None


def band_ratio(band: tuple[float, float] | None) -> float | None:
    """high / low of a band (None without one, or with a low not above 0)."""
    if band is None or band[0] <= 0:
        return None
    return band[1] / band[0]


def not_measurable(band: tuple[float, float] | None, contended: Any) -> bool:
    """Whether a row's number is not to be shown: ``contended`` and its band spans more than
    :data:`BAND_MAX_RATIO`."""
    ratio = band_ratio(band)
    return _true(contended) and ratio is not None and ratio > BAND_MAX_RATIO


def row_not_measurable(row: Mapping[str, Any]) -> bool:
    """:func:`not_measurable` of a row with its :func:`band_of` and ``contended`` field."""
    return not_measurable(band_of(row), row.get("contended"))


def measurable_text(text: str, row: Mapping[str, Any]) -> str:
    """``text`` (a row's number, formatted), or :data:`NOT_MEASURABLE` when the row is
    :func:`row_not_measurable`."""
    return NOT_MEASURABLE if row_not_measurable(row) else text


def cv_text(cv: Any) -> str:
    """A CV (a fraction) as shown: ``12.3%``, or ``outlier-driven (CV 2,789%)`` above
    :data:`CV_OUTLIER_DRIVEN`; empty when it is not a number."""
    value = _finite(cv)
    if value is None:
        return ""
    if value > CV_OUTLIER_DRIVEN:
        return f"outlier-driven (CV {100 * value:,.0f}%)"
    return f"{100 * value:.1f}%"


def causes_text(row: Mapping[str, Any]) -> str:
    """A contended row's causes as ``cpu-wait, gc`` (``unexplained`` when none is recorded);
    empty for a row that is not contended."""
    return _causes_text(row) if _true(row.get("contended")) else ""
