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

from mlprof.plotting.runtimes import Curve, _style_context, decorate, log2_batch_axis

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
                    y_log: bool = False, error_style: str = "band",
                    top_right_label: str | None = None, top_left_label: str = "mlprof",
                    title: str | None = None) -> Figure:
    """Achieved fraction of the peak vs batch size, one curve per ``(curve, peak GFLOP/s)``;
    the band is the fraction at the 84th and 16th latency percentiles."""
    if not curves or len(curves) != len(peaks):
        raise ValueError("one peak per curve, at least one curve")
    from mlprof.plotting import use_backend
    from mlprof.plotting.labels import plot_text

    plt = use_backend()
    with _style_context():
        fig, ax = plt.subplots()
        all_bs: set[int] = set()
        for i, (c, peak) in enumerate(zip(curves, peaks, strict=True)):
            bs, med, lo, hi = efficiency_values(c.stats, peak)
            all_bs.update(int(b) for b in bs)
            color = f"C{i % 10}"
            label = plot_text(f"{c.label} (peak {peak:.0f} GFLOP/s)")
            if error_style == "band":
                ax.plot(bs, med, marker="o", color=color, label=label)
                ax.fill_between(bs, lo, hi, color=color, alpha=0.25, linewidth=0)
            else:
                ax.errorbar(bs, med, yerr=[med - lo, hi - med], marker="o", color=color,
                            capsize=4, label=label)
        ax.set_xlabel("Batch size")
        ax.set_ylabel("Achieved fraction of GEMM peak")
        if x_log:
            log2_batch_axis(ax, all_bs)
        if y_log:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.margins(x=0.03)
        decorate(ax, top_left_label, top_right_label, title)
        leg = ax.legend(title="median, 16-84% band", loc="best", frameon=True, framealpha=0.85)
        leg.get_title().set_fontsize("small")
        fig.tight_layout()
    return fig


def check_efficiency_stats(stats, path: str) -> None:
    """One line naming the statistics file when it has no FLOP count to plot."""
    from mlprof.errors import MLProfError

    if "gflop_per_call" not in stats:
        raise MLProfError("written before FLOPs were counted: merge again under a new "
                          "--version", path, "gflop_per_call")
    if not np.isfinite(np.asarray(stats["gflop_per_call"], dtype=float)).any():
        raise MLProfError("no FLOP count (no ONNX graph measured, or nodes not counted: see "
                          "'cost' in the provenance next to it)", path, "gflop_per_call")
