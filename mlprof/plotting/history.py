"""A statistic over time (versions), one line per batch size, alerts marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from mlprof.plotting import use_backend
from mlprof.plotting.labels import plot_text
from mlprof.plotting.runtimes import _style_context, decorate

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_LABELS = {"median_ms": "Median latency per call [ms]", "mean_ms": "Mean latency per call [ms]",
           "p84_ms": "84th percentile latency [ms]", "p99_ms": "99th percentile latency [ms]",
           "throughput": "Throughput [events/s]"}


def plot_history(lines: Mapping[str, tuple[Sequence[str], Sequence[float]]], *,
                 statistic: str = "median_ms",
                 alerts: Sequence[tuple[str, str, str]] = (),
                 title: str | None = None, top_right_label: str | None = None) -> Figure:
    """Plot ``{label: (versions, values)}`` over versions (in the order given).

    ``alerts`` are ``(label, version, kind)``; regressions are marked with a red triangle up,
    improvements with a green triangle down.
    """
    if not lines:
        raise ValueError("no history to plot")
    versions: list[str] = []
    for vs, _ in lines.values():
        versions.extend(v for v in vs if v not in versions)
    pos = {v: i for i, v in enumerate(versions)}
    plt = use_backend()
    with _style_context():
        fig, ax = plt.subplots()
        for i, (label, (vs, ys)) in enumerate(lines.items()):
            ax.plot([pos[v] for v in vs], ys, marker="o", color=f"C{i % 10}",
                    label=plot_text(label))
            for a_label, a_version, kind in alerts:
                if a_label == label and a_version in vs:
                    y = ys[list(vs).index(a_version)]
                    ax.plot([pos[a_version]], [y], linestyle="none", markersize=14,
                            marker="^" if kind == "regression" else "v",
                            color="red" if kind == "regression" else "green", alpha=0.7)
        ax.set_xticks(range(len(versions)))
        ax.set_xticklabels([plot_text(v) for v in versions],
                           rotation=30 if len(versions) > 4 else 0, ha="right"
                           if len(versions) > 4 else "center")
        ax.set_xlabel("Version")
        ax.set_ylabel(_LABELS.get(statistic, statistic))
        ax.set_ylim(bottom=0)
        decorate(ax, "mlprof", top_right_label, title)
        ax.legend(loc="best", frameon=True, framealpha=0.85)
        fig.tight_layout()
    return fig
