"""The load points as a table, and the answer in one line: the highest throughput that meets
the latency bound and its configuration (server), or the highest throughput and what adding
streams gains (streams). Pure functions: load records in, a DataFrame or text out; PlotLoad,
the dashboard and the console read them the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from mlprof.measure.contention import causes_of, is_contended
from mlprof.measure.trust import NOT_MEASURABLE, UNEXPLAINED, causes_over, row_not_measurable
from mlprof.plotting.labels import CONFIG_KEYS, config_label
from mlprof.results import identity

#: the columns of PlotLoad's CSV, in order
COLUMNS = ("scenario", "streams", "threads", "sessions", "batch_size", "max_batch",
           "max_wait_ms", "rate", "requests", "calls", "events_per_s", "events_per_cpu_s",
           "p50_ms", "p99_ms", "percentile", "percentile_ms", "latency_bound_ms", "verdict",
           "lateness_p99_us", "contended", "host", "chosen", "busy", "causes")


def points_table(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per point of the load records (``read_load``'s), with :data:`COLUMNS`; the
    chosen operating point (``chosen``): per record, the search's best rate, else its highest
    throughput that meets its bound (or its highest throughput without a bound)."""
    rows = []
    for rec in records:
        load = rec.get("load", {})
        best = (load.get("search") or {}).get("best_rate")
        # the newest point at the best rate (a search can measure a rate twice); records
        # written before ``best_point`` was: the point at the best rate
        at = (load.get("search") or {}).get("best_point")
        for i, p in enumerate(rec.get("points", [])):
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
                "latency_bound_ms": p.get("latency_bound_ms"), "verdict": p.get("verdict"),
                "lateness_p99_us": late.get("p99"), "host": rec.get("host"),
                "busy": p.get("busy"),
                "contended": (p.get("environment") or {}).get("contended") is True,
                # what disturbed a contended point, comma-separated (mlprof.measure.causes)
                "causes": ",".join(causes_of(p)) if is_contended(p) else "",
                "chosen": best is not None and (i == at if at is not None
                                                else p.get("rate") == best), "_best": best,
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
        cand = grp[grp["verdict"] == "met"] if grp["latency_bound_ms"].notna().any() else grp
        if len(cand):
            df.loc[cand["events_per_s"].astype(float).idxmax(), "chosen"] = True
    return df.drop(columns=["_best", "_record"])


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
        n, causes = int(df["contended"].sum()), causes_over(df.to_dict("records"))
        line += f" [{n} of {len(df)} points contended ({causes}): measure on a quiet machine]"
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
            bound = df["latency_bound_ms"].dropna()
            if len(bound):
                pct = df["percentile"].dropna().iloc[0]
                return (f"no rate meets p{float(pct):g} <= {float(bound.iloc[0]):g} ms: "
                        f"none of {len(df)} measured")
            return "no point met"
        best = chosen.loc[chosen["events_per_s"].astype(float).idxmax()]
        if pd.isna(best["latency_bound_ms"]):
            return (f"max {_num(float(best['events_per_s']))} events/s at "
                    f"{_num(float(best['rate']))} requests/s (p99 {float(best['p99_ms']):.3g} "
                    f"ms) with {config_label(best)}")
        return (f"max {_num(float(best['events_per_s']))} events/s at "
                f"p{float(best['percentile']):g} <= {float(best['latency_bound_ms']):g} ms "
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
        threads = df[df["sessions"] != "process"] if "sessions" in df else df
        if (gain < 1.1 and len(threads) and threads["streams"].max() > n1
                and str(best.get("sessions")) != "process"):
            # measured: the DNN's 17 us calls, 2 threads 0.77x of one, 2 processes 1.88x
            text += ("; streams as threads share Python's GIL: --sessions process runs each "
                     "stream as a process")
    return text


def format_table(df: pd.DataFrame) -> str:
    """The points as an aligned text table (the chosen point marked ``*``)."""
    if df.empty:
        return ""
    server = (df["scenario"] == "server").any()
    head = ["", "configuration"] + (["rate/s"] if server else []) + [
        "events/s", "events/cpu-s", "p50 ms", "p99 ms"] + (
        ["busy", "p(bound) ms", "verdict", "late p99 us"] if server else [])
    lines = [head]
    for _, r in df.iterrows():
        def f(v: Any, digits: str = ".3g") -> str:
            return "" if v is None or pd.isna(v) else format(float(v), digits)
        row = [("*" if r["chosen"] else "") + ("!" if r["contended"] else ""), config_label(r)]
        if server:
            row.append(_num(float(r["rate"])) if not pd.isna(r["rate"]) else "")
        # a contended point whose calls spread over more than 10x (p50 to p99): no number
        rate = NOT_MEASURABLE if row_not_measurable(r) else _num(float(r["events_per_s"]))
        row += [rate, f(r["events_per_cpu_s"], ",.0f"),
                f(r["p50_ms"]), f(r["p99_ms"])]
        if server:
            late = r["lateness_p99_us"]
            busy = r["busy"]
            row += ["" if busy is None or pd.isna(busy) else f"{float(busy):.0%}",
                    f(r["percentile_ms"]), r["verdict"] or "",
                    "" if late is None or pd.isna(late) else _num(float(late))]
        lines.append(row)
    widths = [max(len(str(row[i])) for row in lines) for i in range(len(head))]
    text = "\n".join("  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                     for row in lines) + "\n"
    legend = ["* the chosen operating point"]
    if server:
        legend.append("busy: the workers' share of the time in calls")
    if df["contended"].any():
        causes = causes_over(df.to_dict("records"))
        legend.append(f"! contended: disturbed while measuring ({causes})")
    return text + "; ".join(legend) + "\n"


#: what makes one load history: the same model (name and file content), runtime (by name;
#: an upgrade continues the history, as an event on it), device, host and measurement
#: settings. Each load point (its file tag: streams, workers, bound, ...) is one series.
LOAD_GROUP_KEY = ("model", "model_hash", "runtime", "device", "settings_key", "host")


def _order(row: Mapping[str, Any]) -> tuple[str, float]:
    """When a load record was measured: its timestamp, else its file's time."""
    return (str(row.get("timestamp") or ""), float(row.get("mtime") or 0.0))


def newest_loads(rows: Sequence[Mapping[str, Any]],
                 versions: Sequence[str] | None = None) -> list[dict]:
    """Of load rows (:func:`mlprof.report.collect.collect_loads`), those of ``versions`` when
    given, else the newest of each model, runtime, settings and load point; sorted by model,
    runtime and point."""
    chosen: dict[tuple, dict] = {}
    for r in rows:
        if versions and r.get("version") not in versions:
            continue
        key = (r.get("model"), r.get("model_hash"), r.get("runtime"), r.get("settings_key"),
               r.get("point"))
        if key not in chosen or _order(r) >= _order(chosen[key]):
            chosen[key] = dict(r)
    return sorted(chosen.values(), key=lambda r: (str(r.get("model")), str(r.get("runtime")),
                                                  str(r.get("point"))))


def _finite(v: Any) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _point_label(row: Mapping[str, Any]) -> str:
    """A load history panel's title: ``server, 1 worker x 1 thread, bound 5 ms``."""
    text = f"{row.get('scenario')}, {row.get('config')}"
    bound: Any = row.get("latency_bound_ms")
    return text + (f", bound {float(bound):g} ms" if _finite(bound) else "")


def load_history_groups(rows: Sequence[Mapping[str, Any]]
                        ) -> list[tuple[dict, dict[str, tuple[list[str], list[float]]],
                                        list[tuple[str, str]]]]:
    """The load answers over versions, for PlotHistory: one entry per configuration
    (:data:`LOAD_GROUP_KEY`), as ``(configuration, {label: (versions, events/s)}, events)``
    with one label per load point (``server, 1 worker x 1 thread, bound 5 ms``; its file tag
    where two points would read the same).

    Each series is one load point's chosen events/s (the answer) in time order (the record's
    timestamp). A point without an answer (no rate met its bound) is left out of its series.
    The configuration has ``runtime_version`` (``a -> b`` when it changed); ``events`` are the
    ``(version, "onnxruntime a -> b")`` of each runtime upgrade, as PlotHistory marks them.
    """
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for r in rows:
        if _finite(r.get("events_per_s")):
            groups.setdefault(tuple(r.get(k) for k in LOAD_GROUP_KEY), []).append(r)
    out = []
    for key, members in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        members = sorted(members, key=_order)
        labels = {str(r.get("point")): _point_label(r) for r in members}
        clash = {lb for lb in labels.values() if list(labels.values()).count(lb) > 1}
        lines: dict[str, tuple[list[str], list[float]]] = {}
        for r in members:
            point = str(r.get("point"))
            label = labels[point] if labels[point] not in clash else point
            vs, ys = lines.setdefault(label, ([], []))
            vs.append(str(r.get("version")))
            ys.append(float(r["events_per_s"]))
        g = dict(zip(LOAD_GROUP_KEY, key, strict=True))
        seen = [str(r.get("runtime_version") or "") for r in members]
        seen = [v for v in seen if v]
        first, last = (seen[0], seen[-1]) if seen else ("", "")
        g["runtime_version"] = last if first == last else f"{first} -> {last}"
        events: list[tuple[str, str]] = []
        for e in identity.events(members, runtime=str(g["runtime"])):
            version = str(members[e.index].get("version"))
            if version not in dict(events):
                events.append((version, e.text))
        g["events"] = events
        out.append((g, lines, events))
    return out


#: the columns of Report's ``load.csv``, in order (one row per load point and version);
#: ``p50_ms`` and ``p99_ms`` are the chosen point's, ``causes`` what disturbed the contended
#: points, ``not_measurable`` whether the summary says "not measurable now" instead of the
#: answer (:func:`load_not_measurable`; the numbers stay in the CSV)
LOAD_CSV_COLUMNS = ("model", "model_hash", "runtime", "runtime_version", "device",
                    "settings_key", "version", "point", "scenario", "config", "events_per_s",
                    "p50_ms", "p99_ms", "latency_bound_ms", "points", "contended", "causes",
                    "not_measurable", "host", "timestamp", "answer", "path")


def load_not_measurable(row: Mapping[str, Any]) -> bool:
    """Whether a load row (:func:`mlprof.report.collect.collect_loads`) is
    :data:`~mlprof.measure.trust.NOT_MEASURABLE`: contended, and its chosen point's calls
    spread from ``p50_ms`` to ``p99_ms`` over more than 10x
    (:func:`~mlprof.measure.trust.row_not_measurable`, as the dashboard's load rows and
    PlotLoad's table judge it): the issue's streams point, 12,068 events/s where 1/p50 is
    53,800/s, waited for a CPU most of the time, and its throughput says how busy the
    machine was that minute."""
    return row_not_measurable(row)


def not_measurable_text(row: Mapping[str, Any]) -> str:
    """What Report's summary says of a :func:`load_not_measurable` row instead of its answer:
    ``not measurable now: calls p50 0.05 ms to p99 3.2 ms (64x) on contended points
    (cpu-wait); the numbers are in load.csv``."""
    p50, p99 = float(row["p50_ms"]), float(row["p99_ms"])
    causes = ", ".join(c for c in str(row.get("causes") or "").split(",") if c) or UNEXPLAINED
    return (f"{NOT_MEASURABLE}: calls p50 {p50:.3g} ms to p99 {p99:.3g} ms ({p99 / p50:.0f}x) "
            f"on contended points ({causes}); the numbers are in load.csv")


def load_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Load rows (:func:`mlprof.report.collect.collect_loads`) as Report's ``load.csv``: the
    columns of :data:`LOAD_CSV_COLUMNS`, in time order (the header alone without rows)."""
    ordered = sorted(rows, key=lambda r: (str(r.get("model")), str(r.get("runtime")),
                                          str(r.get("point")), _order(r)))
    return pd.DataFrame([{**{c: r.get(c) for c in LOAD_CSV_COLUMNS},
                          "not_measurable": load_not_measurable(r)} for r in ordered],
                        columns=list(LOAD_CSV_COLUMNS))


def load_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """Report's summary of load results: the newest answer of each load point, one line each
    (``model on runtime, point: answer``); :func:`not_measurable_text` instead of the answer
    of a :func:`load_not_measurable` row."""
    newest = newest_loads(rows)
    lines = [f"load ({len(newest)} load point{'s' if len(newest) != 1 else ''}, the newest "
             "record of each; all versions in load.csv):"]
    lines += [f"  {r.get('model')} on {r.get('runtime')} {r.get('runtime_version') or ''}"
              f"".rstrip() + f", {r.get('point')} ({r.get('version')}): "
              + (not_measurable_text(r) if load_not_measurable(r) else str(r.get('answer')))
              for r in newest]
    return "\n".join(lines)
