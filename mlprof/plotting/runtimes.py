"""Latency vs batch size plots: median with the 16-84 percentile range."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from mlprof.plotting import use_backend
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
    "lines.markersize": 6,
    "pdf.fonttype": 42,
    "svg.fonttype": "none",
}


@dataclass
class Curve:
    """One curve: a label and statistics columns (batch_size, median_ms, p16_ms, p84_ms).

    ``stats`` is a pandas DataFrame or any mapping of column name to array.
    """

    label: str
    stats: Any


def _style_context():
    """mplhep's style when ``MLP_PLOT_STYLE`` names one (cms, atlas, lhcb, alice, root)."""
    plt = use_backend()
    name = os.environ.get("MLP_PLOT_STYLE", "").strip().lower()
    if name and name != "default":
        try:
            import mplhep

            styles = {"cms": "CMS", "atlas": "ATLAS", "lhcb": "LHCb2", "alice": "ALICE",
                      "root": "ROOT"}
            return plt.style.context(getattr(mplhep.style, styles.get(name, name.upper())))
        except (ImportError, AttributeError):
            pass
    return plt.style.context(STYLE)


def decorate(ax, top_left_label: str = "mlprof", top_right_label: str | None = None,
             title: str | None = None) -> None:
    """The labels over the axes' corners (bold on the left, small on the right) and a title."""
    from mlprof.plotting.labels import plot_text

    ax.text(0.0, 1.01, plot_text(top_left_label), transform=ax.transAxes, ha="left",
            va="bottom", fontweight="bold")
    if top_right_label:
        ax.text(1.0, 1.01, plot_text(top_right_label), transform=ax.transAxes, ha="right",
                va="bottom", fontsize="small")
    if title:
        ax.set_title(plot_text(title), pad=24)


def log2_batch_axis(ax, batch_sizes) -> None:
    """A base-2 log x-axis with the batch sizes as ticks (every other power of two if many)."""
    ax.set_xscale("log", base=2)
    ticks = sorted({int(b) for b in batch_sizes})
    if len(ticks) > 12:  # keep every other power of two readable
        ticks = [b for b in ticks if b & (b - 1) == 0][::2] or ticks
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _contended(st: Any) -> np.ndarray:
    """The ``contended`` column in batch-size order (all False where the statistics have none:
    older results; see :mod:`mlprof.measure.contention`)."""
    bs = np.asarray(st["batch_size"], dtype=float)
    try:
        flags = np.asarray(st["contended"], dtype=bool)
    except (KeyError, ValueError, TypeError):
        return np.zeros(bs.size, dtype=bool)
    return flags[np.argsort(bs, kind="stable")] if flags.shape == bs.shape else \
        np.zeros(bs.size, dtype=bool)


def plot_runtimes(curves: Sequence[Curve], *, x_log: bool = False, y_log: bool = False,
                  y_min: float | None = None, y_max: float | None = None,
                  bs_normalized: bool = True, error_style: str = "band",
                  top_right_label: str | None = None, top_left_label: str = "mlprof",
                  title: str | None = None) -> Figure:
    """Plot median latency vs batch size with the 16-84 percentile range for each curve.

    With ``bs_normalized`` the values are divided by the batch size (time per event). Points
    measured under contention (a true ``contended`` column) are drawn with open markers, and
    the legend says so.
    """
    if not curves:
        raise ValueError("no curves to plot")
    if error_style not in ("band", "bars"):
        raise ValueError(f"error_style must be 'band' or 'bars', got {error_style!r}")
    # milliseconds, or microseconds when every value is below 0.1 ms
    def values(st: Any, col: str) -> np.ndarray:
        bs = np.asarray(st["batch_size"], dtype=float)
        order = np.argsort(bs, kind="stable")
        v = np.asarray(st[col], dtype=float)[order]
        return v / bs[order] if bs_normalized else v

    peak = max(float(values(c.stats, "median_ms").max()) for c in curves)
    unit, scale = ("us", 1000.0) if peak < 0.1 else ("ms", 1.0)
    unit_tex = "\u00b5s" if unit == "us" else "ms"  # plain text: no mathtext parser needed

    from mlprof.plotting.labels import plot_text

    plt = use_backend()
    with _style_context():
        fig, ax = plt.subplots()
        all_bs: set[int] = set()
        any_contended = False
        for i, c in enumerate(curves):
            bs = np.sort(np.asarray(c.stats["batch_size"], dtype=int))
            med = values(c.stats, "median_ms") * scale
            lo = values(c.stats, "p16_ms") * scale
            hi = values(c.stats, "p84_ms") * scale
            all_bs.update(int(b) for b in bs)
            color = f"C{i % 10}"
            if error_style == "band":
                ax.plot(bs, med, marker="o", color=color, label=plot_text(c.label))
                ax.fill_between(bs, lo, hi, color=color, alpha=0.25, linewidth=0)
            else:
                ax.errorbar(bs, med, yerr=[med - lo, hi - med], marker="o", color=color,
                            capsize=4, label=plot_text(c.label))
            hit = _contended(c.stats)
            if hit.any():  # open markers: measured while other processes used the CPUs
                ax.plot(bs[hit], med[hit], linestyle="none", marker="o", color=color,
                        markerfacecolor="white", markeredgewidth=1.5, zorder=3)
                any_contended = True
        ax.set_xlabel("Batch size")
        what = "Latency per event" if bs_normalized else "Latency per batch"
        ax.set_ylabel(f"{what} [{unit_tex}]")
        if x_log:
            log2_batch_axis(ax, all_bs)
        if y_log:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        if y_min is not None or y_max is not None:  # given in ms
            ax.set_ylim(bottom=None if y_min is None else y_min * scale,
                        top=None if y_max is None else y_max * scale)
        ax.margins(x=0.03)
        decorate(ax, top_left_label, top_right_label, title)
        band = "16-84% band" if error_style == "band" else "16-84% bars"
        if any_contended:
            ax.plot([], [], linestyle="none", marker="o", color="0.3", markerfacecolor="white",
                    markeredgewidth=1.5, label="open: contended (other processes busy)")
        leg = ax.legend(title=f"median, {band}", loc="best", frameon=True, framealpha=0.85)
        leg.get_title().set_fontsize("small")
        fig.tight_layout()
    return fig


def save_figure(fig: Figure, paths: Sequence[str]) -> None:
    """Save ``fig`` to each path (format from the extension), atomically, and close it."""
    plt = use_backend()
    try:
        for path in paths:
            ext = os.path.splitext(path)[1].lstrip(".")
            with atomic_path(path) as tmp:
                fig.savefig(tmp, format=ext)
    finally:
        plt.close(fig)
