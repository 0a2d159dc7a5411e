"""Efficiency vs batch size: the achieved fraction of the runtime's GEMM peak.

A model's achieved GFLOP/s (its ONNX graph's FLOPs per call at the median latency, see
:mod:`mlprof.model.flops`) over the machine's sustained GEMM GFLOP/s on the same runtime and
thread count (:mod:`mlprof.measure.peak`). Small batches are memory- or overhead-bound (the
example DNN reached 11 % of a 235 GFLOP/s peak at batch size 1, 49 % at 8, 85 % at 64 and
92 % at 512 on one thread: at batch size 1 each call moves 0.63 MB of
weights for 0.32 MFLOP), large ones approach the compute limit as the weights are reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from mlprof.errors import MLProfError
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


def plot_efficiency(curves: Sequence[Curve], peaks: Sequence[float], *, x_log: bool = True,
                    y_log: bool | None = None, error_style: str = "band",
                    top_right_label: str | None = None, top_left_label: str = "mlprof",
                    title: str | None = None) -> Figure:
    """Achieved fraction of the peak vs batch size, one curve per ``(curve, peak GFLOP/s)``;
    the band is the fraction at the 84th and 16th latency percentiles. ``y_log`` None:
    logarithmic when the fractions span more than a decade; unstable or contended points open."""
    if not curves or len(curves) != len(peaks):
        raise ValueError("one peak per curve, at least one curve")

    data = [efficiency_values(c.stats, peak) for c, peak in zip(curves, peaks, strict=True)]
    log = use_log_y(y_log, [d[1] for d in data])
    with _style_context():
        fig, ax = new_figure()
        all_bs: set[int] = set()
        opened: list[str] = []
        for i, (c, peak, (bs, med, lo, hi)) in enumerate(zip(curves, peaks, data, strict=True)):
            all_bs.update(int(b) for b in bs)
            style = curve_style(i, len(curves))
            label = plot_text(f"{c.label} (peak {peak:.0f} GFLOP/s)")
            draw_curve(ax, bs, med, lo, hi, label, style, error_style)
            hit = point_flags(c.stats, "unstable") | point_flags(c.stats, "contended")
            mark_open(ax, bs, med, hit, style)
            opened += [k for k in ("contended", "unstable") if point_flags(c.stats, k).any()]
        ax.set_xlabel("Batch size")
        ax.set_ylabel("Achieved fraction of GEMM peak")
        if x_log:
            log2_batch_axis(ax, all_bs)
        ax.margins(x=0.03)
        set_y_scale(ax, log)
        decorate(ax, top_left_label, top_right_label, title)
        open_legend_entries(ax, opened)
        leg = ax.legend(title="median, 16-84% band", loc="best", frameon=True, framealpha=0.85)
        leg.get_title().set_fontsize("small")
        finish(fig, ax)
    return fig


def check_efficiency_stats(stats, path: str) -> None:
    """One line naming the statistics file when it has no FLOP count to plot."""

    if "gflop_per_call" not in stats:
        raise MLProfError("written before FLOPs were counted: merge again under a new "
                          "--version", path, "gflop_per_call")
    if not np.isfinite(np.asarray(stats["gflop_per_call"], dtype=float)).any():
        raise MLProfError("no FLOP count (no ONNX graph measured, or nodes not counted: see "
                          "'cost' in the provenance next to it)", path, "gflop_per_call")
