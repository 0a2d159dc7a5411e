"""Small charts for the dashboard as inline SVG: sparklines, history panels, box plots.

Why not matplotlib: the dashboard draws a trend per series that changed, a panel per batch
size of every configuration's history and a box plot per model. At the corpus scale (40 models
x 3 runtimes x 11 batch sizes) that is thousands of small charts; as PNGs they cost about
0.3 s each to draw and a request each to load, as inline SVG a few hundred bytes and well under
a millisecond, and they stay sharp at any zoom. Every text in them is escaped
(:func:`mlprof.report.site.escape.esc`), and the only classes and colours are this module's own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mlprof.report.history import history_y_range
from mlprof.report.site.escape import esc

#: curve colours (colour-blind safe, Okabe-Ito), in order
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442",
           "#000000")
REGRESSION, IMPROVEMENT, NEUTRAL = "#c62828", "#1a7f37", "#5b6475"


def readable(value: float | None, sig: int = 4) -> str:
    """``value`` with ``sig`` significant digits, never in e-notation: ``0.0001234``,
    ``12.35``, ``1,235``, ``1,234,567`` (thousands separated); "" for None or NaN."""
    if value is None:
        return ""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(x):
        return "" if x != x else ("inf" if x > 0 else "-inf")
    a = abs(x)
    if a == 0:
        return "0"
    if x.is_integer() and a < 1e15:
        return f"{int(x):,}"
    digits = sig - 1 - math.floor(math.log10(a))
    if digits <= 0:
        return f"{round(x, digits):,.0f}"
    return f"{x:,.{min(digits, 12)}f}"


def tick(value: float) -> str:
    """An axis label: three significant digits, trailing zeros dropped (``0.05``, ``1.5``,
    ``20``, ``1,500``)."""
    x = float(f"{float(value):.3g}")
    if x.is_integer():
        return f"{int(x):,}"
    return np.format_float_positional(x, trim="-")


def short_version(version: str) -> str:
    """A version short enough for an axis: the month and day of a dated one
    (``nightly-2026-11-09`` -> ``11-09``, ``.confirm`` kept as ``+c``), else its first 10
    characters."""
    m = re.search(r"\d{4}-(\d{2}-\d{2})", version)
    if m:
        return m.group(1) + ("+c" if version.endswith(".confirm") else "")
    return version if len(version) <= 10 else version[:9] + "\u2026"


def _fmt_xy(v: float) -> str:
    return f"{v:.1f}"


def _scale(lo: float, hi: float, a: float, b: float, log: bool):
    """A function mapping [lo, hi] onto [a, b] (log scale when ``log``)."""
    if log:
        lo, hi = math.log10(lo), math.log10(hi)
    span = hi - lo or 1.0

    def f(v: float) -> float:
        t = math.log10(v) if log else v
        return a + (t - lo) / span * (b - a)

    return f


def _range(values: Sequence[float], pad: float = 0.08, log: bool = False
           ) -> tuple[float, float]:
    vals = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
    if not vals:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(vals), max(vals)
    if log:
        if hi <= lo:
            return lo / 1.5, hi * 1.5
        f = (hi / lo) ** pad
        return lo / f, hi * f
    if hi <= lo:
        d = abs(lo) * 0.1 or 1.0
        return lo - d, hi + d
    d = (hi - lo) * pad
    return lo - d, hi + d


#: the style of :func:`sparkline`'s line and baseline, for the page that shows them
SPARK_CSS = ("svg.spark polyline{fill:none;stroke:" + NEUTRAL + ";stroke-width:1.4}"
             "svg.spark line{stroke:#9aa3b2;stroke-dasharray:3,2;stroke-width:1}")


def sparkline(values: Sequence[float], *, baseline: float | None = None,
              marks: Mapping[int, str] | None = None, width: int = 120, height: int = 28,
              worse_up: bool = True, title: str = "") -> str:
    """A trend line of ``values`` (oldest first): the baseline dashed, the last point coloured
    by its change (red: worse, green: better, grey: within 5 %), ``marks`` (index -> ``regression``
    or ``improvement``) as triangles. ``title`` is the tooltip (none when empty: a card that
    names the series needs none). The page includes :data:`SPARK_CSS`."""
    vals = [float(v) for v in values]
    if not vals:
        return ""
    # the history panels' floor (20 % of the level): noise stays flat, a step shows
    lo, hi = history_y_range(vals + ([baseline] if baseline else []), 0.06)
    x = _scale(0, max(len(vals) - 1, 1), 3, width - 4, False)
    y = _scale(lo, hi, height - 3, 3, False)
    pts = " ".join(f"{_fmt_xy(x(i))},{_fmt_xy(y(v))}" for i, v in enumerate(vals))
    parts = [f'<svg class="spark" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img">']
    if title:
        parts.append(f"<title>{esc(title)}</title>")
    # the line's and the baseline's style is the page's (SPARK_CSS): thousands of trend lines
    # on a front page, each a few bytes shorter
    if baseline is not None and math.isfinite(baseline):
        yb = _fmt_xy(y(baseline))
        parts.append(f'<line x1="2" x2="{width - 2}" y1="{yb}" y2="{yb}"/>')
    parts.append(f'<polyline points="{pts}"/>')
    color = NEUTRAL
    if baseline:
        change = vals[-1] / baseline - 1
        if abs(change) >= 0.05:
            color = REGRESSION if (change > 0) == worse_up else IMPROVEMENT
    for i, kind in sorted((marks or {}).items()):
        if 0 <= i < len(vals):
            parts.append(_triangle(x(i), y(vals[i]), kind, 4.5))
    parts.append(f'<circle cx="{_fmt_xy(x(len(vals) - 1))}" cy="{_fmt_xy(y(vals[-1]))}" '
                 f'r="2.6" fill="{color}"/></svg>')
    return "".join(parts)


def _triangle(cx: float, cy: float, kind: str, r: float) -> str:
    up = kind == "regression"
    color = REGRESSION if up else IMPROVEMENT
    d = r if up else -r
    pts = f"{_fmt_xy(cx - r)},{_fmt_xy(cy + d)} {_fmt_xy(cx + r)},{_fmt_xy(cy + d)} " \
          f"{_fmt_xy(cx)},{_fmt_xy(cy - d)}"
    return f'<polygon class="mark-{"regression" if up else "improvement"}" points="{pts}" ' \
           f'fill="{color}" fill-opacity="0.85"/>'


def panel_ticks(lo: float, hi: float, max_ticks: int = 5) -> list[tuple[float, str]]:
    """Round ticks between ``lo`` and ``hi`` with their labels: at most ``max_ticks``, at a
    1-2-5 step, each label with as many decimals as the step needs, so that two ticks never
    read the same (``18.0 / 18.5 / 19.0``, never ``0.018 / 0.018``)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [(lo, tick(lo))] if math.isfinite(lo) else []
    base = 10.0 ** math.floor(math.log10((hi - lo) / max(max_ticks, 2)))
    step = base
    for m in (1, 2, 5, 10, 20, 50, 100):  # the finest 1-2-5 step with at most max_ticks
        step = base * m
        if math.floor(hi / step + 1e-9) - math.ceil(lo / step - 1e-9) + 1 <= max_ticks:
            break
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    first = math.ceil(lo / step - 1e-9)
    out = []
    k = first
    while k * step <= hi * (1 + 1e-12) + 1e-15:
        v = k * step
        out.append((v, f"{v:,.{decimals}f}"))
        k += 1
    return out


def _history_points(out: list[str], xs: Sequence[float],
                    points: Sequence[tuple[str, float, bool]], alerts: Mapping[int, str] | None,
                    events: Mapping[int, str] | None, unit: str, x, y) -> None:
    """Append a history panel's points (a confirmation open), each with its tooltip, and a
    triangle at each alert."""
    for i, (xi, (version, v, confirm)) in enumerate(zip(xs, points, strict=True)):
        kind = (alerts or {}).get(i)
        tip = f"{version}: {readable(v)} {unit}" + (" (confirming re-measurement)"
                                                      if confirm else "")
        if (events or {}).get(i):
            tip += f" ({(events or {})[i]})"
        if kind:
            tip += f" - {kind}"
            out.append(_triangle(x(xi), y(v) - (7 if kind == "regression" else -7), kind, 5))
        fill = "#fff" if confirm else PALETTE[0]
        out.append(f'<circle cx="{_fmt_xy(x(xi))}" cy="{_fmt_xy(y(v))}" r="3" fill="{fill}" '
                   f'stroke="{PALETTE[0]}" stroke-width="1.3"><title>{esc(tip)}</title>'
                   "</circle>")


def history_panel(points: Sequence[tuple[str, float, bool]], *, title: str, unit: str,
                  baseline: float | None = None, alerts: Mapping[int, str] | None = None,
                  events: Mapping[int, str] | None = None, scale: float = 1.0,
                  width: int = 240, height: int = 130) -> str:
    """One batch size's history: ``points`` are ``(version, value, is_confirmation)`` oldest
    first; a confirmation is drawn as an open point beside its night's. ``alerts`` maps a
    point's index to ``regression``/``improvement`` (a triangle, explained by its tooltip);
    ``events`` a point's index to a runtime upgrade or model edit that came with it (a dashed
    line before the point, class ``event``, its text as tooltip and in the point's).

    Values (and the baseline) are multiplied by ``scale`` and shown in ``unit`` (the title
    says it). The y range is PlotHistory's (:func:`mlprof.report.history.history_y_range`:
    never narrower than 20 % of its level, so a 0.3 % wobble is not a cliff), with round
    ticks whose labels differ (:func:`panel_ticks`).
    """
    if not points:
        return ""
    points = [(v, float(x) * scale, c) for v, x, c in points]
    if baseline is not None:
        baseline = float(baseline) * scale
    vals = [p[1] for p in points]
    lo, hi = history_y_range(vals + ([baseline] if baseline else []), 0.1)
    kinds = set((alerts or {}).values())  # room for an alert's triangle, as PlotHistory
    lo, hi = (lo - (0.15 * (hi - lo) if "improvement" in kinds else 0.0),
              hi + (0.15 * (hi - lo) if "regression" in kinds else 0.0))
    # nights on the x axis: a confirmation sits beside its night, not as a night of its own
    xs, night = [], -1
    for _, _, confirm in points:
        night += 0 if confirm and night >= 0 else 1
        xs.append(night + (0.35 if confirm else 0.0))
    ticks = panel_ticks(lo, hi, 4)
    label_w = max((len(t) for _, t in ticks), default=3)
    left, right, top, bottom = 10 + 6 * label_w, width - 8, 18, height - 18
    x = _scale(0, max(max(xs), 1), left + 4, right - 4, False)
    y = _scale(lo, hi, bottom, top, False)
    head = f"{title} [{unit}]" if unit else title
    out = [f'<svg class="hist" width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
           ' role="img">', f"<title>{esc(head)}</title>",
           f'<text x="{left}" y="12" class="ttl">{esc(head)}</text>',
           f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
           'fill="#fafbfc" stroke="#d5d9e0"/>']
    for v, text in ticks:
        yy = _fmt_xy(y(v))
        out.append(f'<line x1="{left}" x2="{right}" y1="{yy}" y2="{yy}" stroke="#e6e9ee"/>'
                   f'<text x="{left - 3}" y="{yy}" class="tick" text-anchor="end" '
                   f'dominant-baseline="middle">{esc(text)}</text>')
    out.append(f'<text x="{left}" y="{height - 4}" class="tick">'
               f"{esc(short_version(points[0][0]))}</text>")
    if len(points) > 1:
        out.append(f'<text x="{right}" y="{height - 4}" class="tick" text-anchor="end">'
                   f"{esc(short_version(points[-1][0]))}</text>")
    if baseline is not None and math.isfinite(baseline):
        yb = _fmt_xy(y(baseline))
        out.append(f'<line x1="{left}" x2="{right}" y1="{yb}" y2="{yb}" stroke="#9aa3b2" '
                   'stroke-dasharray="4,3"><title>baseline '
                   f"{esc(readable(baseline))} {esc(unit)}</title></line>")
    for i, text in sorted((events or {}).items()):
        if 0 < i < len(xs):
            xe = _fmt_xy(x((xs[i - 1] + xs[i]) / 2))
            out.append(f'<line class="event" x1="{xe}" x2="{xe}" y1="{top}" y2="{bottom}" '
                       f'stroke="#6a3d9a" stroke-width="1.2" stroke-dasharray="3,2">'
                       f"<title>{esc(text)}</title></line>")
    line = " ".join(f"{_fmt_xy(x(xi))},{_fmt_xy(y(v))}"
                    for xi, (_, v, c) in zip(xs, points, strict=True) if not c)
    out.append(f'<polyline fill="none" stroke="{PALETTE[0]}" stroke-width="1.6" '
               f'points="{line}"/>')
    _history_points(out, xs, points, alerts, events, unit, x, y)
    out.append("</svg>")
    return "".join(out)


def box_plot(samples: Mapping[str, Mapping[int, np.ndarray]], *, unit: str = "ms",
             width: int = 640, height: int = 300) -> str:
    """Latency distributions: ``{curve label: {batch size: samples}}`` as boxes per batch size
    (16-84 percentiles, median line, whiskers 1-99 percentiles) on a log axis."""
    labels = [lb for lb, per in samples.items() if per]
    if not labels:
        return ""
    sizes = sorted({int(b) for lb in labels for b in samples[lb]})
    stats: dict[tuple[str, int], tuple[float, ...]] = {}
    for lb in labels:
        for b, s in samples[lb].items():
            s = np.asarray(s, dtype=float)
            s = s[np.isfinite(s) & (s > 0)]
            if s.size:
                stats[(lb, int(b))] = tuple(float(q) for q in np.percentile(s, [1, 16, 50, 84,
                                                                                99]))
    if not stats:
        return ""
    lo, hi = _range([v for st in stats.values() for v in (st[0], st[4])], 0.05, log=True)
    left, right, top = 62, width - 10, 10
    height += 16 * max(0, len(labels) - 1)
    bottom = height - 34 - 16 * len(labels)
    y = _scale(lo, hi, bottom, top, True)
    slot = (right - left) / len(sizes)
    bw = slot * 0.8 / len(labels)
    out = [f'<svg class="box" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           'role="img"><title>Latency per call, distribution per batch size</title>'
           "<style>text{font-size:10px;fill:#4a5160}</style>",
           f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
           'fill="#fff" stroke="#c9ced8"/>']
    for t in _log_ticks(lo, hi):
        yy = _fmt_xy(y(t))
        out.append(f'<line x1="{left}" x2="{right}" y1="{yy}" y2="{yy}" stroke="#eceef2"/>'
                   f'<text x="{left - 4}" y="{yy}" class="tick" text-anchor="end" '
                   f'dominant-baseline="middle">{esc(tick(t))}</text>')
    out.append(f'<text x="12" y="{(top + bottom) / 2:.0f}" class="tick" text-anchor="middle" '
               f'transform="rotate(-90 12 {(top + bottom) / 2:.0f})">latency per call '
               f"[{esc(unit)}]</text>")
    for k, b in enumerate(sizes):
        cx = left + slot * (k + 0.5)
        out.append(f'<text x="{_fmt_xy(cx)}" y="{bottom + 14}" class="tick" '
                   f'text-anchor="middle">{b}</text>')
        for j, lb in enumerate(labels):
            st = stats.get((lb, b))
            if st is None:
                continue
            x0 = cx - slot * 0.4 + j * bw
            xm = x0 + bw / 2
            color = PALETTE[j % len(PALETTE)]
            tip = (f"{lb}, batch size {b}: median {readable(st[2])}, 16-84% "
                   f"{readable(st[1])}-{readable(st[3])}, 1-99% {readable(st[0])}-"
                   f"{readable(st[4])} {unit}")
            out.append(
                f'<g><title>{esc(tip)}</title>'
                f'<line x1="{_fmt_xy(xm)}" x2="{_fmt_xy(xm)}" y1="{_fmt_xy(y(st[0]))}" '
                f'y2="{_fmt_xy(y(st[4]))}" stroke="{color}"/>'
                f'<rect x="{_fmt_xy(x0 + bw * 0.1)}" y="{_fmt_xy(y(st[3]))}" '
                f'width="{_fmt_xy(bw * 0.8)}" height="{_fmt_xy(max(y(st[1]) - y(st[3]), 1))}" '
                f'fill="{color}" fill-opacity="0.45" stroke="{color}"/>'
                f'<line x1="{_fmt_xy(x0 + bw * 0.1)}" x2="{_fmt_xy(x0 + bw * 0.9)}" '
                f'y1="{_fmt_xy(y(st[2]))}" y2="{_fmt_xy(y(st[2]))}" stroke="#111" '
                'stroke-width="1.5"/></g>')
    out.append(f'<text x="{(left + right) / 2:.0f}" y="{bottom + 28}" class="tick" '
               'text-anchor="middle">batch size (box 16-84%, line median, whiskers 1-99%)'
               "</text>")
    for j, lb in enumerate(labels):
        lx = left
        ly = bottom + 44 + 16 * j
        out.append(f'<rect x="{_fmt_xy(lx)}" y="{ly - 9}" width="12" height="10" '
                   f'fill="{PALETTE[j % len(PALETTE)]}" fill-opacity="0.6"/>'
                   f'<text x="{_fmt_xy(lx + 16)}" y="{ly}" class="tick">{esc(lb)}</text>')
    out.append("</svg>")
    return "".join(out)


def _log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks between ``lo`` and ``hi`` (every decade when they span many)."""
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for subs in ((1, 2, 5), (1,)):
        ticks = [m * 10.0 ** k for k in range(k0, k1 + 1) for m in subs]
        ticks = [t for t in ticks if lo <= t <= hi]
        if len(ticks) <= 9:
            return ticks
    return ticks[:: max(1, len(ticks) // 8)]


@dataclass
class XYCurve:
    """One curve of :func:`line_chart`: points (x, y), an optional band (lo, hi) and the
    points drawn open (not to be trusted: unstable or contended)."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    lo: Sequence[float] | None = None
    hi: Sequence[float] | None = None
    open: Sequence[bool] | None = None


#: marker shapes per curve, so that curves on top of each other stay visible
_MARKERS = ("circle", "square", "diamond", "triangle")


def _marker(shape: str, cx: float, cy: float, r: float, color: str, hollow: bool) -> str:
    fill = "#fff" if hollow else color
    common = f'fill="{fill}" stroke="{color}" stroke-width="1.4"'
    if shape == "square":
        return (f'<rect x="{_fmt_xy(cx - r)}" y="{_fmt_xy(cy - r)}" width="{_fmt_xy(2 * r)}" '
                f'height="{_fmt_xy(2 * r)}" {common}/>')
    if shape == "diamond":
        return (f'<polygon points="{_fmt_xy(cx)},{_fmt_xy(cy - r * 1.3)} '
                f'{_fmt_xy(cx + r * 1.3)},{_fmt_xy(cy)} {_fmt_xy(cx)},{_fmt_xy(cy + r * 1.3)} '
                f'{_fmt_xy(cx - r * 1.3)},{_fmt_xy(cy)}" {common}/>')
    if shape == "triangle":
        return (f'<polygon points="{_fmt_xy(cx - r * 1.2)},{_fmt_xy(cy + r)} '
                f'{_fmt_xy(cx + r * 1.2)},{_fmt_xy(cy + r)} {_fmt_xy(cx)},{_fmt_xy(cy - r * 1.2)}"'
                f" {common}/>")
    return f'<circle cx="{_fmt_xy(cx)}" cy="{_fmt_xy(cy)}" r="{_fmt_xy(r)}" {common}/>'


#: the dash patterns of curves beyond the markers' count
_DASHES = ("", "6,3", "2,3", "8,3,2,3")


def _curve_svg(out: list[str], c: XYCurve, i: int, x, y, y_log: bool) -> tuple:
    """Append curve ``i`` (its band, line and markers) to ``out``; its legend entry."""
    color, shape, dash = (PALETTE[i % len(PALETTE)], _MARKERS[i % len(_MARKERS)],
                          _DASHES[(i // len(_MARKERS)) % len(_DASHES)])
    flags = list(c.open) if c.open is not None else [False] * len(c.x)
    pts = [(float(a), float(b), bool(f)) for a, b, f in zip(c.x, c.y, flags, strict=True)
           if a and b is not None and math.isfinite(float(b))
           and (float(b) > 0 or not y_log)]
    if c.lo is not None and c.hi is not None:
        band = [(float(a), float(lo_), float(hi_)) for a, lo_, hi_ in zip(
            c.x, c.lo, c.hi, strict=True) if lo_ and hi_ and math.isfinite(float(lo_))
            and math.isfinite(float(hi_)) and (float(lo_) > 0 or not y_log)]
        if len(band) > 1:
            poly = [f"{_fmt_xy(x(a))},{_fmt_xy(y(h))}" for a, _, h in band] + [
                f"{_fmt_xy(x(a))},{_fmt_xy(y(lw))}" for a, lw, _ in reversed(band)]
            out.append(f'<polygon points="{" ".join(poly)}" fill="{color}" '
                       'fill-opacity="0.15" stroke="none"/>')
    line = " ".join(f"{_fmt_xy(x(a))},{_fmt_xy(y(b))}" for a, b, _ in pts)
    d = f' stroke-dasharray="{dash}"' if dash else ""
    out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.8"{d} '
               f'points="{line}"/>')
    for a, b, hollow in pts:
        out.append(_marker(shape, x(a), y(b), 3.6, color, hollow))
    return (color, shape, dash, c.label, False)


def _legend_svg(legend: Sequence[tuple], left: int, bottom: int) -> str:
    """The legend under a chart: a line (and marker) and the label of each entry."""
    out = []
    for j, (color, shape, dash, label, hollow) in enumerate(legend):
        ly = bottom + 48 + 15 * j
        d = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{left}" x2="{left + 26}" y1="{ly - 4}" y2="{ly - 4}" '
                   f'stroke="{color}" stroke-width="1.8"{d}/>')
        if shape:
            out.append(_marker(shape, left + 13, ly - 4, 3.4, color, hollow))
        out.append(f'<text x="{left + 34}" y="{ly}">{esc(label)}</text>')
    return "".join(out)


def line_chart(curves: Sequence[XYCurve], *, x_label: str, y_label: str,
               y_log: bool | None = None, reference: float | None = None,
               reference_label: str = "", width: int = 640, height: int = 400,
               title: str = "") -> str:
    """Curves against the batch size (log-2 x axis, every batch size a tick): a log y axis
    when the values span more than a decade (``y_log`` forces it), a band per curve where
    given, a distinct colour, marker and dash per curve, open markers for points not to be
    trusted (explained in the legend), and a dashed horizontal ``reference`` line."""
    curves = [c for c in curves if len(c.x)]
    if not curves:
        return ""
    ys = [float(v) for c in curves for v in [*c.y, *(c.lo or []), *(c.hi or [])]
          if v is not None and math.isfinite(float(v))]
    if reference is not None:
        ys.append(reference)
    pos = [v for v in ys if v > 0]
    if y_log is None:
        y_log = bool(pos) and max(pos) / min(pos) > 10
    lo, hi = _range(pos if y_log else ys, 0.06, log=y_log)
    if not y_log:
        lo = min(lo, 0.0) if all(v >= 0 for v in ys) else lo
    xs = sorted({float(v) for c in curves for v in c.x if v and v > 0})
    n_open = any(any(c.open or []) for c in curves)
    legend_rows = len(curves) + (1 if reference is not None else 0) + (1 if n_open else 0)
    left, right, top = 70, width - 12, 12
    bottom = height - 44 - 15 * legend_rows
    x = _scale(min(xs) / 1.2, max(xs) * 1.2, left, right, True) if len(xs) > 1 else \
        (lambda v: (left + right) / 2)
    y = _scale(lo, hi, bottom, top, y_log)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
           'font-family="system-ui,sans-serif">'
           f"<title>{esc(title or y_label)}</title>"
           '<style>text{font-size:11px;fill:#333}</style>'
           f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
           'fill="#fff" stroke="#b9bfca"/>']
    ticks = _log_ticks(lo, hi) if y_log else _lin_ticks(lo, hi)
    for t in ticks:
        yy = _fmt_xy(y(t))
        out.append(f'<line x1="{left}" x2="{right}" y1="{yy}" y2="{yy}" stroke="#eceef2"/>'
                   f'<text x="{left - 5}" y="{yy}" text-anchor="end" '
                   f'dominant-baseline="middle">{esc(tick(t))}</text>')
    for b in xs:
        xx = _fmt_xy(x(b))
        out.append(f'<line x1="{xx}" x2="{xx}" y1="{top}" y2="{bottom}" stroke="#f1f2f5"/>'
                   f'<text x="{xx}" y="{bottom + 14}" text-anchor="middle">{readable(b)}</text>')
    mid = (top + bottom) / 2
    out.append(f'<text x="14" y="{mid:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 14 {mid:.0f})">{esc(y_label)}</text>'
               f'<text x="{(left + right) / 2:.0f}" y="{bottom + 30}" text-anchor="middle">'
               f"{esc(x_label)}</text>")
    if reference is not None:
        yr = _fmt_xy(y(reference))
        out.append(f'<line x1="{left}" x2="{right}" y1="{yr}" y2="{yr}" stroke="{NEUTRAL}" '
                   'stroke-dasharray="6,4" stroke-width="1.5"/>')
    legend = [_curve_svg(out, c, i, x, y, y_log) for i, c in enumerate(curves)]
    if reference is not None:
        legend.append((NEUTRAL, "", "6,4", reference_label, False))
    if n_open:
        legend.append(("#555", "circle", "", "open marker: unstable or contended, not to be "
                       "trusted", True))
    out.append(_legend_svg(legend, left, bottom))
    out.append("</svg>")
    return "".join(out)


def _lin_ticks(lo: float, hi: float) -> list[float]:
    """About five round ticks between ``lo`` and ``hi``."""
    span = hi - lo
    if span <= 0:
        return [lo]
    step = 10 ** math.floor(math.log10(span / 5))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    start = math.ceil(lo / step) * step
    return [round(start + k * step, 12) for k in range(int((hi - start) / step) + 1)]
