"""How much one node delivers, drawn: latency against throughput per configuration (the
frontier) for the server scenario, throughput and latency against streams x threads for the
streams scenario, and the answer in one line (pure functions, no law).

The input is a table of load points, one row per measured point
(:func:`points_table` builds it from MeasureLoad's records).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from mlprof.plotting.backend import use_backend
from mlprof.plotting.runtimes import _style_context, curve_style, decorate, plain_number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: the columns of PlotLoad's CSV, in order
COLUMNS = ("scenario", "streams", "threads", "sessions", "batch_size", "max_batch",
           "max_wait_ms", "rate", "requests", "calls", "events_per_s", "events_per_cpu_s",
           "p50_ms", "p99_ms", "percentile", "percentile_ms", "bound_ms", "verdict",
           "lateness_p99_us", "chosen")


#: what tells one configuration's points from another's
CONFIG_KEYS = ("streams", "threads", "sessions", "batch_size", "max_batch", "max_wait_ms")


def points_table(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per point of the load records (``read_load``'s), with :data:`COLUMNS`; the
    chosen operating point (``chosen``): per record, the search's best rate, else its highest
    throughput that meets its bound (or its highest throughput without a bound)."""
    rows = []
    for rec in records:
        load = rec.get("load", {})
        best = (load.get("search") or {}).get("best_rate")
        for p in rec.get("points", []):
            late = p.get("lateness_us") or {}
            rows.append({
                "scenario": p.get("scenario", load.get("scenario")),
                "streams": p.get("streams"), "threads": p.get("threads"),
                "sessions": p.get("sessions"), "batch_size": p.get("batch_size"),
                "max_batch": p.get("max_batch"), "max_wait_ms": p.get("max_wait_ms"),
                "rate": p.get("rate"), "requests": p.get("requests"), "calls": p.get("calls"),
                "events_per_s": p.get("events_per_s"),
                "events_per_cpu_s": p.get("events_per_cpu_s"),
                "p50_ms": p.get("p50_ms"), "p99_ms": p.get("p99_ms"),
                "percentile": p.get("percentile"), "percentile_ms": p.get("percentile_ms"),
                "bound_ms": p.get("bound_ms"), "verdict": p.get("verdict"),
                "lateness_p99_us": late.get("p99"),
                "chosen": best is not None and p.get("rate") == best, "_best": best,
                "_record": id(rec)})
    df = pd.DataFrame(rows, columns=[*COLUMNS, "_best", "_record"])
    if df.empty:
        return df.drop(columns=["_best", "_record"])
    if (df["scenario"] == "streams").all():  # one answer: the highest throughput
        df["chosen"] = False
        df.loc[df["events_per_s"].astype(float).idxmax(), "chosen"] = True
        return df.drop(columns=["_best", "_record"])
    # server: per configuration, the search's best rate, else its highest throughput that
    # meets the bound (the highest throughput without a bound)
    for _, grp in df.groupby(list(CONFIG_KEYS), dropna=False):
        if grp["_best"].notna().any():
            continue
        cand = grp[grp["verdict"] == "met"] if grp["bound_ms"].notna().any() else grp
        if len(cand):
            df.loc[cand["events_per_s"].astype(float).idxmax(), "chosen"] = True
    return df.drop(columns=["_best", "_record"])


def config_label(row: Mapping[str, Any]) -> str:
    """``2 streams x 1 thread``, with ``, dynamic batch 8 (wait 2 ms)`` where it batches."""
    s, t = int(row["streams"]), int(row["threads"])
    who = "stream" if row["scenario"] == "streams" else "worker"
    text = f"{s} {who}{'s' if s != 1 else ''} x {t} thread{'s' if t != 1 else ''}"
    if row["scenario"] == "streams" and int(row["batch_size"]) != 1:
        text += f", batch {int(row['batch_size'])}"
    mb = row.get("max_batch")
    if row["scenario"] == "server" and mb is not None and not pd.isna(mb) and int(mb) > 1:
        text += f", dynamic batch {int(mb)} (wait {float(row['max_wait_ms']):g} ms)"
    if row.get("sessions") == "shared":
        text += ", one session"
    return text


def _num(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:,.3g}"


def no_rate_lines(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per search that found no rate: ``no rate meets p99 <= 1 ms with 1 worker x 1 thread:
    <why the search ended>``."""
    out = []
    for rec in records:
        load = rec.get("load") or {}
        search = load.get("search") or {}
        if not search or search.get("best_rate") is not None:
            continue
        config = config_label({"scenario": "server", "streams": load.get("streams", 1),
                               "threads": (rec.get("settings") or {}).get("threads", 1),
                               "batch_size": rec.get("batch_size", 1),
                               "max_batch": load.get("max_batch", 1),
                               "max_wait_ms": load.get("max_wait_ms", 0.0),
                               "sessions": load.get("sessions")})
        out.append(f"no rate meets p{float(load.get('percentile', 99.0)):g} <= "
                   f"{float(load.get('latency_bound_ms') or 0):g} ms with {config}: "
                   f"{search.get('ended')}")
    return out


def answer(df: pd.DataFrame, missing: Sequence[str] = ()) -> str:
    """The one-line answer: the highest throughput that meets the bound, with its
    configuration (server), or the highest throughput and where adding streams stops paying
    (streams); ``missing``: the searches that found no rate (:func:`no_rate_lines`), the answer
    when no configuration has one."""
    if df.empty:
        return "; ".join(missing) or "no load point measured"
    if (df["scenario"] == "server").any():
        chosen = df[df["chosen"] & (df["verdict"].isna() | (df["verdict"] == "met"))]
        if chosen.empty:
            if missing:
                return "; ".join(missing)
            bound = df["bound_ms"].dropna()
            if len(bound):
                pct = df["percentile"].dropna().iloc[0]
                return (f"no rate meets p{float(pct):g} <= {float(bound.iloc[0]):g} ms: "
                        f"none of {len(df)} measured")
            return "no point met"
        best = chosen.loc[chosen["events_per_s"].astype(float).idxmax()]
        if pd.isna(best["bound_ms"]):
            return (f"max {_num(float(best['events_per_s']))} events/s at "
                    f"{_num(float(best['rate']))} requests/s (p99 {float(best['p99_ms']):.3g} "
                    f"ms) with {config_label(best)}")
        return (f"max {_num(float(best['events_per_s']))} events/s at "
                f"p{float(best['percentile']):g} <= {float(best['bound_ms']):g} ms "
                f"(measured p{float(best['percentile']):g} {float(best['percentile_ms']):.3g} "
                f"ms) with {config_label(best)}")
    d = df.sort_values("events_per_s")
    best = d.iloc[-1]
    text = (f"max {_num(float(best['events_per_s']))} events/s with {config_label(best)} "
            f"(p99 {float(best['p99_ms']):.3g} ms per call)")
    one = df[df["streams"] == df["streams"].min()]
    if len(df) > 1 and len(one):
        base = float(one["events_per_s"].max())
        gain = float(best["events_per_s"]) / base if base > 0 else float("nan")
        n1 = int(one["streams"].iloc[0])
        text += f"; {gain:.2f}x the throughput of {n1} stream{'s' if n1 != 1 else ''}"
    return text


def format_table(df: pd.DataFrame) -> str:
    """The points as an aligned text table (the chosen point marked ``*``)."""
    if df.empty:
        return ""
    server = (df["scenario"] == "server").any()
    head = ["", "configuration"] + (["rate/s"] if server else []) + [
        "events/s", "events/cpu-s", "p50 ms", "p99 ms"] + (
        ["p(bound) ms", "verdict", "late p99 us"] if server else [])
    lines = [head]
    for _, r in df.iterrows():
        def f(v: Any, digits: str = ".3g") -> str:
            return "" if v is None or pd.isna(v) else format(float(v), digits)
        row = ["*" if r["chosen"] else "", config_label(r)]
        if server:
            row.append(_num(float(r["rate"])) if not pd.isna(r["rate"]) else "")
        row += [_num(float(r["events_per_s"])), f(r["events_per_cpu_s"], ",.0f"),
                f(r["p50_ms"]), f(r["p99_ms"])]
        if server:
            row += [f(r["percentile_ms"]), r["verdict"] or "", f(r["lateness_p99_us"], ".2g")]
        lines.append(row)
    widths = [max(len(str(row[i])) for row in lines) for i in range(len(head))]
    return "\n".join("  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                     for row in lines) + "\n"


def plot_load(df: pd.DataFrame, *, title: str = "", top_right_label: str | None = None,
              top_left_label: str = "mlprof", y_log: bool | None = None,
              caption: str | None = None) -> Figure:
    """Server: the median and p99 latency against the delivered throughput, one curve per
    configuration, the bound as a line and the chosen point circled. Streams: throughput
    (events/s) and the p99 per call against streams, one curve per threads and batch size."""
    if df.empty:
        raise ValueError("no load points to plot")
    plt = use_backend()
    with _style_context():
        server = (df["scenario"] == "server").any()
        if server:
            fig, ax = plt.subplots(figsize=(7.5, 5.2))
            groups = list(df.groupby(list(CONFIG_KEYS), dropna=False, sort=True))
            for i, (_, g) in enumerate(groups):
                g = g.sort_values("events_per_s")
                st = curve_style(i, len(groups))
                color = st.get("color")
                label = config_label(g.iloc[0])
                ax.plot(g["events_per_s"], g["p99_ms"], marker="o", color=color,
                        label=f"{label}: p99")
                ax.plot(g["events_per_s"], g["p50_ms"], marker=".", ls="--", color=color,
                        alpha=0.7, label=f"{label}: median")
                ch = g[g["chosen"]]
                if len(ch):
                    ax.scatter(ch["events_per_s"], ch["p99_ms"], s=180, facecolors="none",
                               edgecolors="k", linewidths=1.5, zorder=5,
                               label="chosen operating point" if i == 0 else None)
            bound = df["bound_ms"].dropna()
            if len(bound):
                ax.axhline(float(bound.iloc[0]), color="0.3", lw=1, ls=":",
                           label=f"bound {float(bound.iloc[0]):g} ms")
            ax.set_xlabel("throughput (events/s)")
            ax.set_ylabel("latency per request (ms)")
            vals = df[["p50_ms", "p99_ms"]].astype(float).to_numpy().ravel()
            vals = vals[vals > 0]
            if y_log is None:
                y_log = len(vals) > 0 and vals.max() / max(vals.min(), 1e-9) > 30
            if y_log:
                ax.set_yscale("log")
            ax.xaxis.set_major_formatter(plain_number)
            ax.legend(fontsize=8, loc="upper left")
            axes = [ax]
        else:
            fig, axes = plt.subplots(2, 1, figsize=(7.5, 6.4), sharex=True)
            groups = list(df.groupby(["threads", "batch_size", "sessions"], sort=True))
            for i, (_, g) in enumerate(groups):
                g = g.sort_values("streams")
                st = curve_style(i, len(groups))
                r = g.iloc[0]
                label = (f"{int(r['threads'])} thread{'s' if int(r['threads']) != 1 else ''} "
                         f"per stream, batch {int(r['batch_size'])}"
                         + (", one session" if r["sessions"] == "shared" else ""))
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
            axes[0].set_ylabel("throughput (events/s)")
            axes[0].yaxis.set_major_formatter(plain_number)
            axes[0].set_ylim(bottom=0)
            axes[1].set_ylabel("latency per call (ms)")
            axes[1].set_xlabel("concurrent streams")
            axes[1].set_xticks(sorted(df["streams"].astype(int).unique()))
            for a in axes:
                a.legend(fontsize=8, loc="best")
        if title:
            axes[0].set_title(title, fontsize=11)
        decorate(axes[0], top_left_label, top_right_label)
        if caption:
            fig.text(0.01, 0.005, caption, fontsize=7, va="bottom", ha="left", wrap=True)
        fig.tight_layout(rect=(0, 0.04 if caption else 0, 1, 1))
    return fig
