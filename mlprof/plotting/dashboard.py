"""The dashboard's plots besides latency: throughput, speed-up and latency distributions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.ticker import FixedLocator

from mlprof.plotting import use_backend
from mlprof.plotting.labels import plot_text
from mlprof.plotting.runtimes import Curve, _style_context, decorate, log2_batch_axis

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _sorted(stats: Any, col: str) -> tuple[np.ndarray, np.ndarray]:
    bs = np.asarray(stats["batch_size"], dtype=float)
    order = np.argsort(bs, kind="stable")
    return bs[order], np.asarray(stats[col], dtype=float)[order]


def plot_throughput(curves: Sequence[Curve], *, top_right_label: str | None = None,
                    title: str | None = None) -> Figure:
    """Throughput (events per second at the median latency) vs batch size, one line per curve."""
    if not curves:
        raise ValueError("no curves to plot")
    plt = use_backend()
    with _style_context():
        fig, ax = plt.subplots()
        all_bs: list[int] = []
        for i, c in enumerate(curves):
            bs, med = _sorted(c.stats, "median_ms")
            all_bs.extend(int(b) for b in bs)
            ax.plot(bs, bs / (med / 1000.0), marker="o", color=f"C{i % 10}",
                    label=plot_text(c.label))
        log2_batch_axis(ax, all_bs)
        ax.set_xlabel("Batch size")
        ax.set_yscale("log")
        ax.set_ylabel("Throughput [events/s] (at the median)")
        decorate(ax, "mlprof", top_right_label, title)
        ax.legend(loc="best", frameon=True, framealpha=0.85)
        fig.tight_layout()
    return fig


def speedups(reference: Curve, curves: Sequence[Curve]) -> dict[str, tuple[np.ndarray,
                                                                            np.ndarray]]:
    """``{label: (batch sizes, reference median / curve median)}`` on common batch sizes."""
    rbs, rmed = _sorted(reference.stats, "median_ms")
    ref = dict(zip(rbs.astype(int), rmed, strict=True))
    out = {}
    for c in curves:
        bs, med = _sorted(c.stats, "median_ms")
        common = [(int(b), ref[int(b)] / m) for b, m in zip(bs, med, strict=True)
                  if int(b) in ref and m > 0]
        if common:
            out[c.label] = (np.array([b for b, _ in common]), np.array([s for _, s in common]))
    return out


def plot_speedup(reference: Curve, curves: Sequence[Curve], *,
                 top_right_label: str | None = None, title: str | None = None) -> Figure:
    """Speed-up of each curve over ``reference`` (median latency ratio) vs batch size.

    Above 1: faster than the reference.
    """
    ratios = speedups(reference, curves)
    if not ratios:
        raise ValueError("no batch size in common with the reference")
    plt = use_backend()
    with _style_context():
        fig, ax = plt.subplots()
        all_bs: list[int] = []
        for i, (label, (bs, s)) in enumerate(ratios.items()):
            all_bs.extend(int(b) for b in bs)
            ax.plot(bs, s, marker="o", color=f"C{(i + 1) % 10}", label=plot_text(label))
        ax.axhline(1.0, color="C0", linestyle="--", linewidth=1.5,
                   label=plot_text(f"{reference.label} (reference)"))
        log2_batch_axis(ax, all_bs)
        ax.set_xlabel("Batch size")
        ax.set_ylabel("Speed-up vs reference (median latency ratio)")
        ax.set_ylim(bottom=0)
        decorate(ax, "mlprof", top_right_label, title)
        ax.legend(loc="best", frameon=True, framealpha=0.85)
        fig.tight_layout()
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
    plt = use_backend()
    with _style_context():
        fig, ax = plt.subplots()
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
        ax.set_ylabel("Latency per call [ms]")
        decorate(ax, "mlprof", top_right_label, title)
        leg = ax.legend(title="box 16-84%, median, whiskers 1-99%", loc="best", frameon=True,
                        framealpha=0.85)
        leg.get_title().set_fontsize("small")
        fig.tight_layout()
    return fig
