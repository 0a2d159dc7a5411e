"""Latency vs batch size plots: median with the 16-84 percentile range.

Also the pieces every mlprof plot shares, so that each reads the same on a slide:

- one marker *and* one line style per curve (:func:`curve_style`), so two curves that lie on
  top of each other (ONNX Runtime and PyTorch on a small model) are both visible;
- a logarithmic y axis when the plotted values span more than a decade (:func:`use_log_y`;
  ``y_log=False`` forces a linear one), with plain tick labels (``6, 20, 30``, never
  ``6×10^0``: :func:`plain_log_ticks`);
- open markers where a point is not to be trusted: measured while other processes used the
  CPUs (``contended``) or with a coefficient of variation above 10 % (``unstable``), and a
  legend entry that says which;
- corner labels that never overlap (:func:`finish`), and an optional caption under the axes;
- files written with the figure's own style (mplhep's experiment styles lay text out in their
  fonts: drawn in another, it was clipped), PNGs at :data:`PNG_DPI` and PDFs with embedded
  TrueType fonts (:func:`save_figure`).
"""

from __future__ import annotations

import math
import os
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from mlprof.plotting.backend import use_backend
from mlprof.plotting.labels import plot_text
from mlprof.util import atomic_path

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: rcParams of the default look: readable on a slide
STYLE = {
    "figure.figsize": (8.0, 6.0),
    "font.size": 14,
    "axes.labelsize": 16,
    "axes.titlesize": 14,
    "legend.fontsize": 12,
    "xtick.labelsize": 13,
    "ytick.labelsize": 13,
    "xtick.direction": "in",
    "ytick.direction": "in",
    "xtick.top": True,
    "ytick.right": True,
    "xtick.minor.visible": True,
    "ytick.minor.visible": True,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 2.0,
    "lines.markersize": 7,
    "pdf.fonttype": 42,
    "svg.fonttype": "none",
}

#: resolution of raster files (PNG): 1600x1200 pixels for the default 8x6 inch figure
PNG_DPI = 200

#: what every file is written with, whatever the style says: PDF and PostScript embed TrueType
#: (Type 42) fonts, not Type 3 ones (which some journals and slide tools refuse), and SVG keeps
#: text as text
SAVE_RC = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none"}

#: font tables left out of the TrueType fonts embedded in PDF and PostScript files: OpenType
#: layout (substitutions, positioning, glyph classes), math layout and old-style kerning. A
#: PDF viewer draws the glyphs the file names, by number, and never lays text out with these
#: (matplotlib laid it out already, from the font file itself); subsetting them was half of
#: writing a PlotRuntimes PDF (:func:`_lean_font_subsets`)
LAYOUT_TABLES = ("GSUB", "GPOS", "GDEF", "MATH", "kern")

#: file formats that embed subsets of TrueType fonts (:data:`SAVE_RC`)
_EMBEDDING = ("pdf", "ps", "eps")

#: markers and line styles of consecutive curves (with the colour cycle: no two of the first ten
#: curves share a colour or a marker, no two of the first six a line style)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
LINESTYLES = ("-", "--", "-.", ":", (0, (6, 2, 1, 2, 1, 2)), (0, (10, 3)))

#: plotted values spanning more than this factor get a logarithmic y axis by default
LOG_Y_SPAN = 10.0

#: mplhep's styles by MLP_PLOT_STYLE value
_MPLHEP_STYLES = {"cms": "CMS", "atlas": "ATLAS", "lhcb": "LHCb2", "alice": "ALICE",
                  "root": "ROOT"}


@dataclass
class Curve:
    """One curve: a label and statistics columns (batch_size, median_ms, p16_ms, p84_ms;
    optionally ``unstable`` and ``contended``).

    ``stats`` is a pandas DataFrame or any mapping of column name to array.
    """

    label: str
    stats: Any


def style_name() -> str:
    """The plot style ``MLP_PLOT_STYLE`` asks for (``default`` when unset)."""
    return os.environ.get("MLP_PLOT_STYLE", "").strip().lower() or "default"


def _style_context(name: str | None = None):
    """mplhep's style when ``name`` (default: ``MLP_PLOT_STYLE``) names one (cms, atlas, lhcb,
    alice, root), else :data:`STYLE`."""
    plt = use_backend()
    name = style_name() if name is None else name
    if name != "default":
        try:
            import mplhep

            return plt.style.context(getattr(mplhep.style,
                                             _MPLHEP_STYLES.get(name, name.upper())))
        except (ImportError, AttributeError):
            pass
    return plt.style.context(STYLE)


def new_figure() -> tuple[Figure, Any]:
    """A figure and its axes in the current style (call inside :func:`_style_context`); the
    figure remembers the style, so that :func:`save_figure` draws it in the same fonts."""
    plt = use_backend()
    fig, ax = plt.subplots()
    fig.mlprof_style = style_name()
    return fig, ax


def curve_style(i: int, n: int = 1) -> dict:
    """Colour, marker, line style and marker size of the ``i``-th of ``n`` curves (see
    :data:`MARKERS`; call inside the style context). Earlier curves get larger markers (the
    first 1.4 times the style's size, the last the style's size), so that a curve drawn exactly
    over another one (two runtimes equally fast) leaves the other's markers visible around its
    own."""
    import matplotlib as mpl

    size = float(mpl.rcParams["lines.markersize"])
    grow = 0.4 * (n - 1 - i) / (n - 1) if n > 1 and i < n else 0.0
    return {"color": f"C{i % 10}", "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[i % len(LINESTYLES)], "markersize": size * (1 + grow)}


def use_log_y(y_log: bool | None, values: Sequence[np.ndarray] | np.ndarray,
              y_min: float | None = None) -> bool:
    """Whether the y axis is logarithmic: ``y_log`` when given; by default (None) when the
    positive ``values`` span more than a decade (:data:`LOG_Y_SPAN`; on a linear axis a sweep
    from batch size 1 to 1024 puts everything beyond 32 on zero) and ``y_min`` is not <= 0."""
    if y_log is not None:
        return bool(y_log)
    if y_min is not None and y_min <= 0:
        return False
    arrays = values if isinstance(values, (list, tuple)) else [values]
    flat = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in arrays]) if arrays \
        else np.array([])
    flat = flat[np.isfinite(flat) & (flat > 0)]
    return bool(flat.size) and float(flat.max()) / float(flat.min()) > LOG_Y_SPAN


def plain_number(value: float, _pos: Any = None) -> str:
    """A tick label without exponents: ``0.05``, ``6``, ``20``, ``1,500``, ``20k``, ``3M``."""
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else ""
    a = abs(v)
    if a >= 1e6:
        return f"{float(f'{v / 1e6:.3g}'):g}M"
    if a >= 1e4:
        return f"{float(f'{v / 1e3:.3g}'):g}k"
    if a >= 1000:
        return f"{round(v):,}"
    return np.format_float_positional(float(f"{v:.3g}"), trim="-")


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Readable ticks between ``lo`` and ``hi`` (> 0) on a log axis: 1-2-5 steps or finer,
    whole decades for wide ranges, four or more where the range allows."""
    k0, k1 = math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1
    best: list[float] = []
    for subs in ((1,), (1, 2, 5), (1, 2, 3, 5, 7), tuple(range(1, 10))):
        ticks = [float(f"{m * 10.0 ** k:.12g}") for k in range(k0, k1 + 1) for m in subs]
        ticks = [t for t in ticks if lo <= t <= hi]
        if len(ticks) > 10:  # many decades: every decade is enough
            return best if len(best) >= 3 else ticks[::max(1, len(ticks) // 8)]
        best = ticks
        if len(ticks) >= 4:
            return ticks
    if len(best) >= 2:
        return best
    from matplotlib.ticker import MaxNLocator

    return [t for t in MaxNLocator(4).tick_values(lo, hi) if lo <= t <= hi and t > 0]


def plain_log_ticks(ax, axis: str = "y") -> None:
    """Fix the (already scaled) log ``axis``'s limits and give it plain tick labels at readable
    values (:func:`_log_ticks`); minor ticks stay, unlabelled."""
    lo, hi = ax.get_ylim() if axis == "y" else ax.get_xlim()
    lo, hi = min(lo, hi), max(lo, hi)
    if axis == "y":
        ax.set_ylim(lo, hi)
    else:
        ax.set_xlim(lo, hi)
    a = ax.yaxis if axis == "y" else ax.xaxis
    a.set_major_locator(FixedLocator(_log_ticks(lo, hi)))
    a.set_major_formatter(FuncFormatter(plain_number))
    a.set_minor_locator(LogLocator(subs="all"))
    a.set_minor_formatter(NullFormatter())


def set_y_scale(ax, log: bool, y_min: float | None = None, y_max: float | None = None,
                bottom_zero: bool = True) -> None:
    """Log (with plain ticks) or linear (from zero unless ``bottom_zero`` is False) y axis with
    the given limits (in plotted units)."""
    if log:
        ax.set_yscale("log")
    elif bottom_zero:
        ax.set_ylim(bottom=0)
    if y_min is not None or y_max is not None:
        ax.set_ylim(bottom=y_min, top=y_max)
    if log:
        plain_log_ticks(ax, "y")
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(plain_number))


def point_flags(st: Any, column: str) -> np.ndarray:
    """A boolean column (``unstable``, ``contended``) in batch-size order; all False where the
    statistics have none (older results, see :mod:`mlprof.measure.contention`)."""
    bs = np.asarray(st["batch_size"], dtype=float)
    try:
        flags = np.asarray(st[column], dtype=bool)
    except (KeyError, ValueError, TypeError):
        return np.zeros(bs.size, dtype=bool)
    return flags[np.argsort(bs, kind="stable")] if flags.shape == bs.shape else \
        np.zeros(bs.size, dtype=bool)


def _contended(st: Any) -> np.ndarray:
    """The ``contended`` column in batch-size order (see :func:`point_flags`)."""
    return point_flags(st, "contended")


def draw_curve(ax, x: np.ndarray, y: np.ndarray, lo: np.ndarray, hi: np.ndarray, label: str,
               style: dict, error_style: str) -> None:
    """One curve with its 16-84 % range as a band (``error_style`` "band") or error bars."""
    if error_style == "band":
        ax.plot(x, y, label=label, **style)
        ax.fill_between(x, lo, hi, color=style["color"], alpha=0.2, linewidth=0)
    else:
        ax.errorbar(x, y, yerr=[y - lo, hi - y], capsize=4, label=label, **style)


def mark_open(ax, x: np.ndarray, y: np.ndarray, hit: np.ndarray, style: dict) -> None:
    """Draw the points ``hit`` open (white face, the curve's marker and colour) over the curve."""
    if hit.any():
        ax.plot(np.asarray(x)[hit], np.asarray(y)[hit], linestyle="none",
                marker=style["marker"], color=style["color"], markerfacecolor="white",
                markersize=style.get("markersize"), markeredgewidth=1.5, zorder=3)


#: legend texts of the open markers
OPEN_TEXTS = {"unstable": "open: unstable (CV > 10%)",
              "contended": "open: contended (disturbed: docs/noise.md)"}


def open_legend_entries(ax, kinds: Sequence[str]) -> None:
    """One legend entry per kind of open point drawn (``unstable``, ``contended``)."""
    for kind in dict.fromkeys(kinds):
        ax.plot([], [], linestyle="none", marker="o", color="0.3", markerfacecolor="white",
                markeredgewidth=1.5, label=OPEN_TEXTS[kind])


def decorate(ax, top_left_label: str = "mlprof", top_right_label: str | None = None,
             title: str | None = None) -> None:
    """The labels over the axes' corners (bold on the left, small on the right) and a title."""

    ax.text(0.0, 1.01, plot_text(top_left_label), transform=ax.transAxes, ha="left",
            va="bottom", fontweight="bold", gid="mlprof-top-left")
    if top_right_label:
        ax.text(1.0, 1.01, plot_text(top_right_label), transform=ax.transAxes, ha="right",
                va="bottom", fontsize="small", gid="mlprof-top-right")
    if title:
        ax.set_title(plot_text(title), pad=24)


def _by_gid(ax, gid: str):
    return next((t for t in ax.texts if t.get_gid() == gid), None)


def _retick(ax) -> None:
    """Fixed plain log ticks again after :func:`mlprof.plotting.legend.keep_off_data` raised
    the top of a log y axis (a linear axis finds its own)."""
    if ax.get_yscale() == "log" and isinstance(ax.yaxis.get_major_locator(), FixedLocator):
        plain_log_ticks(ax, "y")


def finish(fig: Figure, ax, caption: str | None = None, headroom: bool = True) -> None:
    """Lay ``fig`` out (in the current style): room for a ``caption`` under the axes, a top
    right label that would run into the top left one broken at its ``|`` into lines (then made
    smaller if still too wide), and the legend where it covers no data
    (:func:`mlprof.plotting.legend.keep_off_data`; ``headroom`` False: without changing the y
    limits, which the user gave)."""
    _layout(fig, ax, caption)
    from mlprof.plotting.legend import keep_off_data

    keep_off_data(fig, ax, headroom=headroom, retick=_retick,
                  relayout=lambda: _layout(fig, ax, caption, again=True))


def _layout(fig: Figure, ax, caption: str | None = None, again: bool = False) -> None:
    """:func:`finish`'s layout: the caption (made once; ``again``: laid out anew) and the
    corners."""

    renderer = fig._get_renderer()  # what tight_layout measures with, for any canvas
    bottom = 0.0
    made = next((t for t in fig.texts if t.get_gid() == "mlprof-caption"), None)
    if again and made is not None:
        bottom = (made.get_window_extent(renderer).height + 4) / fig.bbox.height + 0.01
    elif caption:
        size = fig.get_size_inches()[0] * 72
        from matplotlib.font_manager import FontProperties

        pts = FontProperties(size="x-small").get_size_in_points()
        width = max(30, int(size / (0.55 * pts)))
        text = "\n".join(textwrap.wrap(caption, width)) or caption
        t = fig.text(0.01, 0.01, plot_text(text), ha="left", va="bottom", fontsize="x-small",
                     gid="mlprof-caption")
        bottom = (t.get_window_extent(renderer).height + 4) / fig.bbox.height + 0.01
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fit_corners(fig, ax, (0, bottom, 1, 1))


def finish_panels(fig: Figure, corner_ax, caption: str | None = None) -> None:
    """Lay out a figure of several axes (the generation and load plots): a ``caption`` in
    small type under them, then :func:`fit_corners` on the axes that carry the corner labels.
    Unlike :func:`finish` the legends stay where each plot put them (their panels are too
    small to move a legend off the data)."""
    if caption:
        fig.text(0.01, 0.005, caption, fontsize=7, va="bottom", ha="left", wrap=True)
    rect = (0, 0.04 if caption else 0, 1, 1)
    fig.tight_layout(rect=rect)
    fit_corners(fig, corner_ax, rect)


def fit_corners(fig: Figure, ax, rect: tuple[float, float, float, float]) -> None:
    """Break the top right label (:func:`decorate`) at its ``|`` into lines where it would run
    into the top left one, then make it smaller if still too wide, laying ``fig`` out again
    (``tight_layout(rect=rect)``) after each step. A long corner (a CPU model with nine
    instruction-set extensions) otherwise pushed the axes off the figure."""
    renderer = fig._get_renderer()  # type: ignore[attr-defined]  # what tight_layout uses
    left, right = _by_gid(ax, "mlprof-top-left"), _by_gid(ax, "mlprof-top-right")
    if left is None or right is None:
        return
    for step in ("lines", "smaller"):
        lb, rb = left.get_window_extent(renderer), right.get_window_extent(renderer)
        if rb.x0 >= lb.x1 + 6:
            return
        if step == "lines":
            right.set_text(right.get_text().replace(" | ", "\n"))
        else:
            right.set_fontsize("x-small")
        if ax.get_title():  # the title goes over the corner's lines, not through them
            height = right.get_window_extent(renderer).height * 72 / fig.dpi
            ax.set_title(ax.get_title(), pad=max(24.0, height + 8))
        fig.tight_layout(rect=rect)


def sorted_values(st: Any, col: str) -> tuple[np.ndarray, np.ndarray]:
    """(batch sizes, ``col``) in batch-size order."""
    bs = np.asarray(st["batch_size"], dtype=float)
    order = np.argsort(bs, kind="stable")
    return bs[order], np.asarray(st[col], dtype=float)[order]


def events_per_call(st: Any) -> np.ndarray:
    """The events per call of each point, in batch-size order: the ``events_per_call`` column
    (1 for a model without a batch dimension), the batch size where the statistics have none
    (written before it was recorded); what a time per event and a throughput divide by."""
    bs = np.asarray(st["batch_size"], dtype=float)
    if "events_per_call" not in st:
        return np.sort(bs, kind="stable")
    return sorted_values(st, "events_per_call")[1]


def log2_batch_axis(ax, batch_sizes) -> None:
    """A base-2 log x-axis with the batch sizes as ticks (every other power of two if many)."""
    ax.set_xscale("log", base=2)
    ticks = sorted({int(b) for b in batch_sizes})
    if len(ticks) > 12:  # keep every other power of two readable
        ticks = [b for b in ticks if b & (b - 1) == 0][::2] or ticks
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_runtimes(curves: Sequence[Curve], *, x_log: bool = False, y_log: bool | None = None,
                  y_min: float | None = None, y_max: float | None = None,
                  bs_normalized: bool = True, error_style: str = "band",
                  top_right_label: str | None = None, top_left_label: str = "mlprof",
                  title: str | None = None, caption: str | None = None) -> Figure:
    """Plot median latency vs batch size with the 16-84 percentile range for each curve.

    With ``bs_normalized`` the values are divided by the events per call (time per event: the
    batch size, or 1 for a model without a batch dimension, :func:`events_per_call`).
    ``y_log`` None (the default) makes the y axis logarithmic when what is drawn (medians and
    bands) spans more than a decade (:func:`use_log_y`); True or False forces it. Points
    measured under contention or with a CV above 10 % (true ``contended`` / ``unstable``
    columns) are drawn with open markers, and the legend says so. ``caption`` goes under the
    axes (e.g. export settings).
    """
    if not curves:
        raise ValueError("no curves to plot")
    if error_style not in ("band", "bars"):
        raise ValueError(f"error_style must be 'band' or 'bars', got {error_style!r}")

    # milliseconds, or microseconds when every value is below 0.1 ms
    def values(st: Any, col: str) -> np.ndarray:
        _, v = sorted_values(st, col)
        return v / events_per_call(st) if bs_normalized else v

    medians = [values(c.stats, "median_ms") for c in curves]
    peak = max(float(np.nanmax(m)) for m in medians)
    unit, scale = ("us", 1000.0) if peak < 0.1 else ("ms", 1.0)
    unit_tex = "\u00b5s" if unit == "us" else "ms"  # plain text: no mathtext parser needed
    # the span of what is drawn: a wide band squashes the medians on a linear axis as well
    drawn = medians + [values(c.stats, col) for c in curves for col in ("p16_ms", "p84_ms")]
    log = use_log_y(y_log, drawn, y_min)

    with _style_context():
        fig, ax = new_figure()
        all_bs: set[int] = set()
        opened: list[str] = []
        for i, c in enumerate(curves):
            style = curve_style(i, len(curves))
            bs = np.sort(np.asarray(c.stats["batch_size"], dtype=int))
            med = values(c.stats, "median_ms") * scale
            lo = values(c.stats, "p16_ms") * scale
            hi = values(c.stats, "p84_ms") * scale
            all_bs.update(int(b) for b in bs)
            draw_curve(ax, bs, med, lo, hi, plot_text(c.label), style, error_style)
            for kind in ("contended", "unstable"):
                hit = point_flags(c.stats, kind)
                if hit.any():
                    opened.append(kind)
            hit = point_flags(c.stats, "contended") | point_flags(c.stats, "unstable")
            mark_open(ax, bs, med, hit, style)
        ax.set_xlabel("Batch size")
        what = "Latency per event" if bs_normalized else "Latency per batch"
        ax.set_ylabel(f"{what} [{unit_tex}]")
        if x_log:
            log2_batch_axis(ax, all_bs)
        ax.margins(x=0.03)
        set_y_scale(ax, log, None if y_min is None else y_min * scale,
                    None if y_max is None else y_max * scale)
        decorate(ax, top_left_label, top_right_label, title)
        band = "16-84% band" if error_style == "band" else "16-84% bars"
        open_legend_entries(ax, opened)
        leg = ax.legend(title=f"median, {band}", loc="best", frameon=True, framealpha=0.85)
        leg.get_title().set_fontsize("small")
        finish(fig, ax, caption, headroom=y_max is None)  # a given --y-max stays
    return fig


def save_figure(fig: Figure, paths: Sequence[str]) -> None:
    """Save ``fig`` to each path (format from the extension), atomically, and close it.

    The figure is drawn in the style it was made in (text measured in one font and drawn in
    another is clipped), with :data:`SAVE_RC` (TrueType fonts in PDFs, subsets without
    :data:`LAYOUT_TABLES`: :func:`_lean_font_subsets`) and raster formats at :data:`PNG_DPI` or
    more.
    """
    plt = use_backend()
    embeds = any(_extension(p) in _EMBEDDING for p in paths)
    try:
        _no_second_layout(fig)
        with _style_context(getattr(fig, "mlprof_style", None)), plt.rc_context(SAVE_RC), \
                _lean_font_subsets() if embeds else nullcontext():
            for path in paths:
                ext = _extension(path)
                kw = {"dpi": max(PNG_DPI, fig.dpi)} if ext in ("png", "jpg", "jpeg", "tif",
                                                                 "tiff", "webp") else {}
                with atomic_path(path) as tmp:
                    fig.savefig(tmp, format=ext, **kw)
    finally:
        plt.close(fig)


def _extension(path: str) -> str:
    """The file format of ``path``: its extension, lower case, without the dot."""
    return os.path.splitext(path)[1].lstrip(".").lower()


@contextmanager
def _lean_font_subsets() -> Iterator[None]:
    """While saving: the fonts matplotlib embeds (subsets made by fontTools) without
    :data:`LAYOUT_TABLES`; the files look the same, byte for byte in every glyph drawn.

    Why: matplotlib's subsetter keeps every table it does not know to drop, and reading
    DejaVu Sans' GSUB, GPOS and MATH tables to subset them was half of writing the two fonts
    of a PlotRuntimes PDF: 0.17-0.25 s CPU of the about 1 s its plot takes (load ~1), 0.10-0.12
    s without them. The PDF is 1.7 kB smaller, renders pixel-identical (``pdftoppm`` at 80 and
    300 dpi) and its text is still TrueType (Type 42), searchable. matplotlib has no option
    for this: fontTools' default list of tables to drop (``Options._drop_tables_default``, read
    by every ``Options()``) is extended for the call and restored after it; a fontTools without
    that list subsets as before."""
    try:
        from fontTools import subset
    except ImportError:  # matplotlib >= 3.5 needs it to write a PDF; nothing to change then
        yield
        return
    default = getattr(subset.Options, "_drop_tables_default", None)
    if not isinstance(default, list):
        yield
        return
    subset.Options._drop_tables_default = default + [t for t in LAYOUT_TABLES
                                                     if t not in default]
    try:
        yield
    finally:
        subset.Options._drop_tables_default = default


def _no_second_layout(fig: Figure) -> None:
    """Drop the placeholder layout engine ``fig.tight_layout()`` leaves behind (:func:`finish`
    laid the figure out already), so that ``savefig`` draws the figure once, not twice.

    Why: with any layout engine set, even the do-nothing placeholder, matplotlib's
    ``print_figure`` draws the whole figure (rendering disabled) before the real draw, for a
    layout engine that might move things: 0.12 s of PlotRuntimes' 0.25 s of drawing here (load
    ~5). Only the placeholder is dropped (a figure made with a real engine keeps it), and with
    ``figure.autolayout``/``constrained_layout`` off for the call, so that no engine is chosen
    in its place."""
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        import matplotlib as mpl

        with mpl.rc_context({"figure.autolayout": False,
                             "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)
