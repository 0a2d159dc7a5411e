"""Efficiency vs batch size: the achieved fraction of the runtime's GEMM peak.

A model's achieved GFLOP/s (its ONNX graph's FLOPs per call at the median latency, see
:mod:`mlprof.model.flops`) over the machine's sustained GEMM GFLOP/s on the same runtime and
thread count (:mod:`mlprof.measure.peak`), raised to the best rate any curve of the plot that
shares that peak (or the store's measurements given as ``other_rates``) achieved: a GEMM
benchmark is not a bound on every kernel (here it measured 73 GFLOP/s, the 10x128 DNN's Gemm
nodes ran at ~100), and an efficiency above 1 would be a wrong plot, not a finding. The caption
says which measurement set the peak and what the GEMM benchmark measured.

Small batches are memory- or overhead-bound (at batch size 1 each call of the example DNN
moves 0.63 MB of weights for 0.32 MFLOP), large ones approach the compute limit as the weights
are reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.peak import PeakInUse, achieved_rates, peak_in_use
from mlprof.plotting.labels import plot_text
from mlprof.plotting.runtimes import (
    Curve,
    _style_context,
    curve_style,
    decorate,
    draw_curve,
    finish,
    log2_batch_axis,
    mark_open,
    new_figure,
    open_legend_entries,
    point_flags,
    set_y_scale,
    use_log_y,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def efficiency_values(stats, peak_gflops: float) -> tuple[np.ndarray, ...]:
    """(batch sizes, median, p16-latency and p84-latency efficiency), sorted by batch size: the
    achieved GFLOP/s over ``peak_gflops`` (a faster call, p16, is the upper end)."""
    bs = np.asarray(stats["batch_size"], dtype=float)
    order = np.argsort(bs, kind="stable")
    gflop = np.asarray(stats["gflop_per_call"], dtype=float)[order]

    def at(col: str) -> np.ndarray:
        return gflop / (np.asarray(stats[col], dtype=float)[order] / 1e3) / peak_gflops

    return bs[order], at("median_ms"), at("p84_ms"), at("p16_ms")


def peaks_in_use(curves: Sequence[Curve], peaks: Sequence[float],
                 contended: Sequence[bool] | None = None,
                 other_rates: Sequence[Sequence[tuple[float, str]]] | None = None,
                 ) -> list[PeakInUse]:
    """The peak each curve is divided by: curves with the same measured peak (one MeasurePeak:
    host, runtime version, threads) share one, at least the best rate any of them, or any of
    their ``other_rates`` (GFLOP/s, what), achieved (:func:`mlprof.measure.peak.peak_in_use`)."""
    if not curves or len(curves) != len(peaks):
        raise ValueError("one peak per curve, at least one curve")
    flags = list(contended) if contended is not None else [False] * len(curves)
    others = list(other_rates) if other_rates is not None else [[]] * len(curves)
    groups: dict[tuple[float, bool], list[tuple[float, str]]] = {}
    for c, peak, flag, extra in zip(curves, peaks, flags, others, strict=True):
        group = groups.setdefault((float(peak), bool(flag)), [])
        group += achieved_rates(c.stats, c.label) + list(extra)
    used = {key: peak_in_use(key[0], rates, key[1]) for key, rates in groups.items()}
    return [used[(float(p), bool(f))] for p, f in zip(peaks, flags, strict=True)]


def plot_efficiency(curves: Sequence[Curve], peaks: Sequence[float], *, x_log: bool = True,
                    y_log: bool | None = None, error_style: str = "band",
                    top_right_label: str | None = None, top_left_label: str = "mlprof",
                    title: str | None = None, caption: str | None = None,
                    contended: Sequence[bool] | None = None,
                    other_rates: Sequence[Sequence[tuple[float, str]]] | None = None,
                    ) -> Figure:
    """Achieved fraction of the peak vs batch size, one curve per ``(curve, measured peak
    GFLOP/s)``; the band is the fraction at the 84th and 16th latency percentiles. ``y_log``
    None: logarithmic when the fractions span more than a decade; unstable or contended points
    open.

    The peak divided by is :func:`peaks_in_use`'s, so no value drawn exceeds 1; the caption
    (under ``caption``) names what set it."""
    used = peaks_in_use(curves, peaks, contended, other_rates)
    notes = list(dict.fromkeys(u.note() for u in used))
    caption = "; ".join([*notes, *([caption] if caption else [])])
    data = [efficiency_values(c.stats, u.gflops) for c, u in zip(curves, used, strict=True)]
    log = use_log_y(y_log, [d[1] for d in data])
    with _style_context():
        fig, ax = new_figure()
        all_bs: set[int] = set()
        opened: list[str] = []
        for i, (c, u, (bs, med, lo, hi)) in enumerate(zip(curves, used, data, strict=True)):
            all_bs.update(int(b) for b in bs)
            style = curve_style(i, len(curves))
            label = plot_text(f"{c.label} (peak {u.gflops:.0f} GFLOP/s)")
            draw_curve(ax, bs, med, lo, hi, label, style, error_style)
            hit = point_flags(c.stats, "unstable") | point_flags(c.stats, "contended")
            mark_open(ax, bs, med, hit, style)
            opened += [k for k in ("contended", "unstable") if point_flags(c.stats, k).any()]
        ax.set_xlabel("Batch size")
        ax.set_ylabel("Achieved fraction of the peak")
        if x_log:
            log2_batch_axis(ax, all_bs)
        ax.margins(x=0.03)
        set_y_scale(ax, log)
        decorate(ax, top_left_label, top_right_label, title)
        open_legend_entries(ax, opened)
        leg = ax.legend(title="median, 16-84% band", loc="best", frameon=True, framealpha=0.85)
        leg.get_title().set_fontsize("small")
        finish(fig, ax, caption)
    return fig


def check_efficiency_stats(stats, path: str) -> None:
    """One line naming the statistics file when it has no FLOP count to plot."""

    if "gflop_per_call" not in stats:
        raise MLProfError("written before FLOPs were counted: merge again under a new "
                          "--version", path, "gflop_per_call")
    if not np.isfinite(np.asarray(stats["gflop_per_call"], dtype=float)).any():
        raise MLProfError("no FLOP count (no ONNX graph measured, or nodes not counted: see "
                          "'cost' in the provenance next to it)", path, "gflop_per_call")
