"""The dashboard's plots besides latency: throughput, speed-up and latency distributions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.ticker import FixedLocator

from mlprof.measure.stats import throughput
from mlprof.plotting.labels import plot_text
from mlprof.plotting.runtimes import (
    Curve,
    _style_context,
    curve_style,
    decorate,
    draw_curve,
    events_per_call,
    finish,
    log2_batch_axis,
    mark_open,
    new_figure,
    open_legend_entries,
    plain_log_ticks,
    point_flags,
    set_y_scale,
    sorted_values,
    use_log_y,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _sorted(stats: Any, col: str) -> tuple[np.ndarray, np.ndarray]:
    return sorted_values(stats, col)


def _open_points(stats: Any) -> np.ndarray:
    """Unstable or contended points, in batch-size order."""
    return point_flags(stats, "unstable") | point_flags(stats, "contended")


def _open_kinds(stats: Any) -> list[str]:
    return [k for k in ("contended", "unstable") if point_flags(stats, k).any()]


def _batch_size_axes(ax, batch_sizes: list[int], x_log: bool, ylabel: str, log: bool) -> None:
    """The batch-size x axis (log2 ticks at the measured sizes with ``x_log``) and the y label
    and scale, the same for the throughput and the speed-up plot."""
    if x_log:
        log2_batch_axis(ax, batch_sizes)
    ax.margins(x=0.03)
    ax.set_xlabel("Batch size")
    ax.set_ylabel(ylabel)
    set_y_scale(ax, log)


def _titled_legend(ax, title: str) -> None:
    """The dashboard plots' legend: titled with what the marks mean, placed where it covers
    the fewest points, on a mostly opaque frame."""
    leg = ax.legend(title=title, loc="best", frameon=True, framealpha=0.85)
    leg.get_title().set_fontsize("small")


def plot_throughput(curves: Sequence[Curve], *, top_right_label: str | None = None,
                    title: str | None = None, x_log: bool = True, y_log: bool | None = None,
                    error_style: str = "band", top_left_label: str = "mlprof",
                    caption: str | None = None) -> Figure:
    """Throughput (events per second at the median latency, :func:`mlprof.measure.stats.
    throughput`) vs batch size, one line per curve, with the throughput at the 84th and 16th
    latency percentiles as band or bars.

    ``y_log`` None: logarithmic when the throughputs span more than a decade (as from batch
    size 1 to 1024), else linear from zero.
    """
    if not curves:
        raise ValueError("no curves to plot")
    if error_style not in ("band", "bars"):
        raise ValueError(f"error_style must be 'band' or 'bars', got {error_style!r}")

    def rates(c: Curve) -> tuple[np.ndarray, ...]:
        bs, med = _sorted(c.stats, "median_ms")
        _, p16 = _sorted(c.stats, "p16_ms") if "p16_ms" in c.stats else (bs, med)
        _, p84 = _sorted(c.stats, "p84_ms") if "p84_ms" in c.stats else (bs, med)
        # a slower call (p84) is the lower throughput; events per call: the batch size, or 1
        # for a model without a batch dimension
        ev = events_per_call(c.stats)
        return bs, throughput(ev, med), throughput(ev, p84), throughput(ev, p16)

    data = [rates(c) for c in curves]
    log = use_log_y(y_log, [v for d in data for v in d[1:]])  # medians and bands
    with _style_context():
        fig, ax = new_figure()
        all_bs: list[int] = []
        opened: list[str] = []
        for i, (c, (bs, tp, lo, hi)) in enumerate(zip(curves, data, strict=True)):
            style = curve_style(i, len(curves))
            all_bs.extend(int(b) for b in bs)
            draw_curve(ax, bs, tp, lo, hi, plot_text(c.label), style, error_style)
            mark_open(ax, bs, tp, _open_points(c.stats), style)
            opened += _open_kinds(c.stats)
        _batch_size_axes(ax, all_bs, x_log, "Throughput [events/s]", log)
        decorate(ax, top_left_label, top_right_label, title)
        open_legend_entries(ax, opened)
        band = "16-84% band" if error_style == "band" else "16-84% bars"
        _titled_legend(ax, f"at the median latency, {band}")
        finish(fig, ax, caption)
    return fig


def speedups(reference: Curve, curves: Sequence[Curve]) -> dict[str, tuple[np.ndarray,
                                                                            np.ndarray]]:
    """``{label: (batch sizes, reference median / curve median)}`` on common batch sizes."""
    return {label: (bs, s) for label, (bs, s, _) in _speedups(
        [(reference, c) for c in curves]).items()}


def _speedups(pairs: Sequence[tuple[Curve, Curve]]
              ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``{label: (batch sizes, speed-ups, open)}`` of ``(reference, curve)`` pairs on their
    common batch sizes; ``open`` where either point is unstable or contended."""
    out = {}
    for reference, c in pairs:
        rbs, rmed = _sorted(reference.stats, "median_ms")
        ref = dict(zip(rbs.astype(int), zip(rmed, _open_points(reference.stats),
                                            strict=True), strict=True))
        bs, med = _sorted(c.stats, "median_ms")
        common = [(int(b), ref[int(b)][0] / m, bool(ref[int(b)][1] or o))
                  for b, m, o in zip(bs, med, _open_points(c.stats), strict=True)
                  if int(b) in ref and m > 0]
        if common:
            out[c.label] = (np.array([b for b, _, _ in common]),
                            np.array([s for _, s, _ in common]),
                            np.array([o for _, _, o in common], dtype=bool))
    return out


def plot_speedup(reference: Curve, curves: Sequence[Curve], *,
                 top_right_label: str | None = None, title: str | None = None,
                 references: Sequence[Curve] | None = None, x_log: bool = True,
                 y_log: bool | None = None, top_left_label: str = "mlprof",
                 caption: str | None = None, reference_label: str | None = None) -> Figure:
    """Speed-up of each curve over ``reference`` (median latency ratio) vs batch size.

    Above 1: faster than the reference. ``references`` (one per curve) compares each curve with
    its own reference instead (several models, each against itself on the reference runtime);
    ``reference_label`` names the line at 1 (default: the reference's label). Points where
    either measurement is unstable or contended are drawn open. ``y_log`` None: logarithmic
    when the speed-ups span more than a decade.
    """
    refs = list(references) if references is not None else [reference] * len(curves)
    if len(refs) != len(curves):
        raise ValueError("one reference per curve")
    ratios = _speedups(list(zip(refs, curves, strict=True)))
    if not ratios:
        raise ValueError("no batch size in common with the reference")
    log = use_log_y(y_log, [s for _, s, _ in ratios.values()] + [np.array([1.0])])
    with _style_context():
        fig, ax = new_figure()
        all_bs: list[int] = []
        any_open = False
        for i, (label, (bs, s, hollow)) in enumerate(ratios.items()):
            style = curve_style(i + 1, len(ratios) + 1)  # style 0 is the reference's
            all_bs.extend(int(b) for b in bs)
            ax.plot(bs, s, label=plot_text(label), **style)
            mark_open(ax, bs, s, hollow, style)
            any_open = any_open or bool(hollow.any())
        ax.axhline(1.0, color="C0", linestyle="--", linewidth=1.5, label=plot_text(
            f"{reference_label or reference.label} (reference)"))
        _batch_size_axes(ax, all_bs, x_log, "Speed-up vs reference", log)
        if not log:
            ax.set_ylim(top=max(ax.get_ylim()[1], 1.1))
        decorate(ax, top_left_label, top_right_label, title)
        if any_open:
            ax.plot([], [], linestyle="none", marker="o", color="0.3", markerfacecolor="white",
                    markeredgewidth=1.5, label="open: unstable or contended")
        _titled_legend(ax, "reference median / median latency (> 1: faster)")
        finish(fig, ax, caption)
    return fig


def plot_distributions(samples: Mapping[str, Mapping[int, np.ndarray]], *,
                       top_right_label: str | None = None,
                       title: str | None = None) -> Figure:
    """Latency per call distributions: ``{label: {batch size: samples in ms}}`` as box plots.

    Boxes span the 16-84 percentiles with the median marked, whiskers 1-99 percentiles.
    """
    if not samples or not any(len(v) for v in samples.values()):
        raise ValueError("no samples to plot")
    all_bs = sorted({int(b) for per in samples.values() for b in per})
    n = len(samples)
    width = 0.8 / n
    with _style_context():
        fig, ax = new_figure()
        for i, (label, per) in enumerate(samples.items()):
            pos = [all_bs.index(int(b)) + (i - (n - 1) / 2) * width for b in sorted(per)]
            data = [np.asarray(per[b], dtype=float) for b in sorted(per)]
            stats = []
            for d in data:
                p1, p16, p50, p84, p99 = np.percentile(d, [1, 16, 50, 84, 99])
                stats.append({"med": p50, "q1": p16, "q3": p84, "whislo": p1, "whishi": p99,
                              "fliers": []})
            color = f"C{i % 10}"
            ax.bxp(stats, positions=pos, widths=width * 0.9, patch_artist=True,
                   showfliers=False, boxprops={"facecolor": color, "alpha": 0.5},
                   medianprops={"color": "black"})
            ax.plot([], [], color=color, linewidth=8, alpha=0.5, label=plot_text(label))
        ax.set_xticks(range(len(all_bs)))
        ax.set_xticklabels([str(b) for b in all_bs])
        ax.xaxis.set_minor_locator(FixedLocator([]))
        ax.set_xlabel("Batch size")
        ax.set_yscale("log")
        plain_log_ticks(ax, "y")
        ax.set_ylabel("Latency per call [ms]")
        decorate(ax, "mlprof", top_right_label, title)
        _titled_legend(ax, "box 16-84%, median, whiskers 1-99%")
        finish(fig, ax)
    return fig
