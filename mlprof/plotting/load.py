"""How much one node delivers, drawn: latency against throughput per configuration (the
frontier) for the server scenario, throughput and latency against streams for the streams
scenario (pure functions, no law). The table and the answer line are
:mod:`mlprof.report.load`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from mlprof.plotting.backend import use_backend
from mlprof.plotting.labels import CONFIG_KEYS, config_label
from mlprof.plotting.runtimes import (
    _style_context,
    curve_style,
    decorate,
    finish_panels,
    plain_log_ticks,
    plain_number,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_load(df: pd.DataFrame, *, title: str = "", top_right_label: str | None = None,
              top_left_label: str = "mlprof", y_log: bool | None = None,
              caption: str | None = None) -> Figure:
    """Server: the median and p99 latency against the offered load (requests/s x events per
    request), one curve per configuration in rate order, points not met hollow, the bound as a
    line and the chosen point circled. The offered load, not the delivered throughput, is the
    x axis: an overloaded rate delivers less than a lower one (its queue grows), which drew
    the curve back over itself. Streams: throughput (events/s) and the p99 per call against
    streams, one curve per threads and batch size."""
    if df.empty:
        raise ValueError("no load points to plot")
    plt = use_backend()
    with _style_context():
        server = (df["scenario"] == "server").any()
        if server:
            fig, ax = plt.subplots(figsize=(7.5, 5.2))
            groups = list(df.groupby(list(CONFIG_KEYS), dropna=False, sort=True))
            for i, (_, g) in enumerate(groups):
                g = g.sort_values("rate")
                x = g["rate"].astype(float) * g["batch_size"].astype(float)
                st = curve_style(i, len(groups))
                color = st.get("color")
                label = config_label(g.iloc[0])
                ax.plot(x, g["p99_ms"], color=color, label=f"{label}: p99")
                ax.plot(x, g["p50_ms"], marker=".", ls="--", color=color, alpha=0.7,
                        label=f"{label}: median")
                # not met: missed, or undecided (a p99 under the bound on too few requests to
                # be sure, which counts as not met: drawn filled, it looked like a met point
                # above the answer)
                judged = g["verdict"].notna().to_numpy()
                missed = judged & (g["verdict"] != "met").to_numpy()
                ax.scatter(x[~missed], g["p99_ms"][~missed], color=color, zorder=4)
                ax.scatter(x[missed], g["p99_ms"][missed], facecolors="white",
                           edgecolors=color, zorder=4,
                           label="not met (missed or undecided)" if i == 0 and missed.any()
                           else None)
                ch = g[g["chosen"]]
                if len(ch):
                    ax.scatter(ch["rate"].astype(float) * ch["batch_size"].astype(float),
                               ch["p99_ms"], s=180, facecolors="none", edgecolors="k",
                               linewidths=1.5, zorder=5,
                               label="chosen operating point" if i == 0 else None)
            bound = df["latency_bound_ms"].dropna()
            if len(bound):
                ax.axhline(float(bound.iloc[0]), color="0.3", lw=1, ls=":",
                           label=f"bound {float(bound.iloc[0]):g} ms")
            ax.set_xlabel("offered load (events/s)")
            ax.set_ylabel("latency per request (ms)")
            vals = df[["p50_ms", "p99_ms"]].astype(float).to_numpy().ravel()
            vals = vals[vals > 0]
            if y_log is None:
                y_log = len(vals) > 0 and vals.max() / max(vals.min(), 1e-9) > 30
            if y_log:
                ax.set_yscale("log")
                plain_log_ticks(ax)
            ax.xaxis.set_major_formatter(plain_number)
            ax.legend(fontsize=8, loc="best")
            axes = [ax]
        else:
            fig, axes = plt.subplots(2, 1, figsize=(7.5, 6.4), sharex=True)
            groups = list(df.groupby(["host", "threads", "batch_size", "sessions"],
                                     dropna=False, sort=True))
            for i, (_, g) in enumerate(groups):
                g = g.sort_values("streams")
                st = curve_style(i, len(groups))
                r = g.iloc[0]
                label = (f"{int(r['threads'])} thread{'s' if int(r['threads']) != 1 else ''} "
                         f"per stream, batch {int(r['batch_size'])}"
                         + (", one session" if r["sessions"] == "shared" else "")
                         + (f" on {r['host']}" if r.get("_hosts", 1) > 1 else ""))
                axes[0].plot(g["streams"], g["events_per_s"], marker="o",
                             color=st.get("color"), label=label)
                axes[1].plot(g["streams"], g["p99_ms"], marker="o", color=st.get("color"),
                             label=f"{label}: p99")
                axes[1].plot(g["streams"], g["p50_ms"], marker=".", ls="--",
                             color=st.get("color"), alpha=0.7, label=f"{label}: median")
                ch = g[g["chosen"]]
                if len(ch):
                    axes[0].scatter(ch["streams"], ch["events_per_s"], s=180,
                                    facecolors="none", edgecolors="k", linewidths=1.5,
                                    zorder=5)
            axes[0].set_ylabel("events/s")
            axes[0].yaxis.set_major_formatter(plain_number)
            axes[0].set_ylim(bottom=0)
            axes[1].set_ylabel("ms per call")
            axes[1].set_xlabel("concurrent streams")
            axes[1].set_xticks(sorted(df["streams"].astype(int).unique()))
            for a in axes:
                a.legend(fontsize=8, loc="best")
        decorate(axes[0], top_left_label, top_right_label, title or None)
        finish_panels(fig, axes[0], caption)
    return fig
