"""The load points as a table, and the answer in one line: the highest throughput that meets
the latency bound and its configuration (server), or the highest throughput and what adding
streams gains (streams). Pure functions: load records in, a DataFrame or text out; PlotLoad,
the dashboard and the console read them the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

#: the columns of PlotLoad's CSV, in order
COLUMNS = ("scenario", "streams", "threads", "sessions", "batch_size", "max_batch",
           "max_wait_ms", "rate", "requests", "calls", "events_per_s", "events_per_cpu_s",
           "p50_ms", "p99_ms", "percentile", "percentile_ms", "bound_ms", "verdict",
           "lateness_p99_us", "contended", "host", "chosen")


#: what tells one configuration's points from another's (the host: branches that ran as jobs
#: on different nodes are compared)
CONFIG_KEYS = ("host", "streams", "threads", "sessions", "batch_size", "max_batch",
               "max_wait_ms")


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
                "lateness_p99_us": late.get("p99"), "host": rec.get("host"),
                "contended": (p.get("environment") or {}).get("contended") is True,
                "chosen": best is not None and p.get("rate") == best, "_best": best,
                "_record": id(rec)})
    df = pd.DataFrame(rows, columns=[*COLUMNS, "_best", "_record"])
    # several nodes (jobs on a cluster): each configuration label names its node
    df["_hosts"] = df["host"].nunique(dropna=True)
    if df.empty:
        return df.drop(columns=["_best", "_record"])
    if (df["scenario"] == "streams").all():  # the highest throughput (per node)
        df["chosen"] = False
        for _, grp in df.groupby("host", dropna=False):
            df.loc[grp["events_per_s"].astype(float).idxmax(), "chosen"] = True
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
    if row.get("_hosts", 1) > 1 and row.get("host"):
        text += f" on {row['host']}"
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
    """The one-line answer (:func:`_answer`), with a warning where points were contended:
    a p99 misses its bound on one stall, so the answer may be low."""
    line = _answer(df, missing)
    if not df.empty and df["contended"].any():
        n = int(df["contended"].sum())
        line += (f" [{n} of {len(df)} points contended: other processes used the CPUs; "
                 f"measure on a quiet machine]")
    return line


def _answer(df: pd.DataFrame, missing: Sequence[str] = ()) -> str:
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
        row = [("*" if r["chosen"] else "") + ("!" if r["contended"] else ""), config_label(r)]
        if server:
            row.append(_num(float(r["rate"])) if not pd.isna(r["rate"]) else "")
        row += [_num(float(r["events_per_s"])), f(r["events_per_cpu_s"], ",.0f"),
                f(r["p50_ms"]), f(r["p99_ms"])]
        if server:
            late = r["lateness_p99_us"]
            row += [f(r["percentile_ms"]), r["verdict"] or "",
                    "" if late is None or pd.isna(late) else _num(float(late))]
        lines.append(row)
    widths = [max(len(str(row[i])) for row in lines) for i in range(len(head))]
    text = "\n".join("  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                     for row in lines) + "\n"
    legend = ["* the chosen operating point"]
    if df["contended"].any():
        legend.append("! contended: other processes used the CPUs meanwhile")
    return text + "; ".join(legend) + "\n"
