"""A generation measurement, drawn: TTFT and TPOT against prompt length (one curve per runtime
and batch size) and decode tokens/s against batch size (one curve per runtime and prompt
length), each point the median with its 95 % interval as error bars (pure functions, no law).
The table is :mod:`mlprof.report.generation`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mlprof.plotting.backend import use_backend
from mlprof.plotting.labels import device_label
from mlprof.plotting.runtimes import _style_context, curve_style, decorate, finish_panels

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def corner_text(recs: Sequence[Mapping[str, Any]]) -> str:
    """The top right label: the runtimes with their versions, then the device, threads and CPU
    (the other plots' corner convention: ``|`` between the parts, where
    :func:`~mlprof.plotting.runtimes.fit_corners` breaks it into lines when it is too long)."""
    if not recs:
        return ""
    rec = recs[0]
    runtimes = ", ".join(f"{r['runtime']} {r.get('version') or ''}".strip()
                         for r in rec["runtimes"])
    threads = rec.get("threads")
    return f"{runtimes} | " + device_label(
        "cpu", threads if isinstance(threads, int) else "?", str(rec.get("cpu_model") or ""))


def _errors(g: pd.DataFrame, col: str) -> np.ndarray | None:
    """Asymmetric error bars from the interval columns (None where there are none)."""
    lo, hi = g[f"{col}_low"].astype(float), g[f"{col}_high"].astype(float)
    if lo.isna().all() or hi.isna().all():
        return None
    v = g[col].astype(float)
    return np.vstack([(v - lo).clip(lower=0).fillna(0), (hi - v).clip(lower=0).fillna(0)])


def _curves(ax: Axes, df: pd.DataFrame, x: str, y: str, by: str, by_label: str,
            runtimes: list[str]) -> None:
    """One curve per runtime and value of ``by``: colour by runtime, marker and line style by
    ``by`` (so the runtimes stay told apart however many batch sizes there are)."""
    values = sorted(df[by].unique())
    for i, rt in enumerate(runtimes):
        color = curve_style(i, len(runtimes))["color"]
        for j, v in enumerate(values):
            g = df[(df["runtime"] == rt) & (df[by] == v)].sort_values(x)
            if g.empty or g[y].isna().all():
                continue
            st = curve_style(j, len(values))
            label = f"{rt}, {by_label} {int(v)}" if len(values) > 1 else rt
            ax.errorbar(g[x].astype(float), g[y].astype(float), yerr=_errors(g, y),
                        color=color, marker=st["marker"], linestyle=st["linestyle"],
                        markersize=st["markersize"], capsize=3, label=label)


def plot_generation(df: pd.DataFrame, *, title: str = "", top_right_label: str | None = None,
                    top_left_label: str = "mlprof", caption: str | None = None) -> Figure:
    """Three panels from :func:`mlprof.report.generation.points_table`'s rows: TTFT (ms) and
    TPOT (ms) against prompt length, one curve per runtime and batch size; decode tokens/s
    against batch size, one curve per runtime and prompt length. Error bars: the 95 %
    bootstrap intervals of the medians. An axis with one prompt length (or one batch size)
    draws points, not lines."""
    if df.empty:
        raise ValueError("no generation points to plot")
    plt = use_backend()
    runtimes = list(dict.fromkeys(df.sort_values("_order")["runtime"])) \
        if "_order" in df else list(dict.fromkeys(df["runtime"]))
    with _style_context():
        fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.8))
        _curves(axes[0], df, "prompt_length", "ttft_ms", "batch_size", "batch", runtimes)
        axes[0].set_ylabel("time to first token (ms)")
        _curves(axes[1], df, "prompt_length", "tpot_ms", "batch_size", "batch", runtimes)
        axes[1].set_ylabel("time per output token (ms)")
        for ax in axes[:2]:
            ax.set_xlabel("prompt length (tokens)")
            prompts = sorted(df["prompt_length"].astype(int).unique())
            if len(prompts) > 1 and prompts[-1] / prompts[0] >= 4:
                ax.set_xscale("log", base=2)
            ax.set_xticks(prompts)
            ax.set_xticklabels([str(p) for p in prompts])
            ax.set_ylim(bottom=0)
        _curves(axes[2], df, "batch_size", "decode_tokens_per_s", "prompt_length", "prompt",
                runtimes)
        axes[2].set_xlabel("batch size (sequences)")
        axes[2].set_ylabel("decode tokens/s")
        batches = sorted(df["batch_size"].astype(int).unique())
        axes[2].set_xticks(batches)
        axes[2].set_xticklabels([str(b) for b in batches])
        axes[2].set_ylim(bottom=0)
        for ax in axes:  # headroom above the curves for the legend (it covered them)
            top = ax.get_ylim()[1]
            ax.set_ylim(0, top * 1.45)
            ax.legend(fontsize=7, loc="upper left", ncol=1)
        decorate(axes[0], top_left_label, None, None)
        decorate(axes[2], "", top_right_label, None)
        if title:
            fig.suptitle(title)
        finish_panels(fig, axes[2], caption)
    return fig
