"""The figures of measured sweeps (PlotRuntimes, PlotMultiRuntimes, PlotThroughput,
PlotSpeedup): latency, efficiency, throughput or speed-up curves from each curve's statistics
table, the curve's facts from its provenance, and which curve is a speed-up's reference. Pure
functions (tables and records in, a figure or indices out); the tasks only find the files and
hand the figure to the drawing process (:mod:`mlprof.plotting.drawer`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlprof.plotting.labels import CurveInfo, corner_label, curve_labels, isa_text

if TYPE_CHECKING:  # a table is a DataFrame or a dict of column arrays (read_stats_csv's)
    import pandas as pd


def merged_curve_info(label: str, runtime: str, versions: Sequence[str], fallback_version: str,
                      measurements: Sequence[dict]) -> CurveInfo:
    """The :class:`CurveInfo` of a merged sweep: the runtime versions it was measured with
    (``fallback_version`` when none is recorded), the CPU model, host and instruction sets of
    its ``measurements`` (the merged provenance's records), each distinct value once."""
    def joined(key: str) -> str:
        return "/".join(dict.fromkeys(str(m.get(key) or "") for m in measurements
                                      if m.get(key)))

    return CurveInfo(label, runtime, tuple(versions) or (fallback_version,),
                     cpu_model=joined("cpu_model"), host=joined("host"),
                     isa="/".join(dict.fromkeys(isa_text(m.get("isa")) for m in measurements
                                                if m.get("isa"))))


def runtimes_figure(infos: Sequence[CurveInfo], stats: Sequence[pd.DataFrame],
                    options: dict[str, Any], corner: tuple[str, int],
                    efficiency: dict | None = None, caption: str | None = None,
                    stats_files: Sequence[str] = ()) -> Any:
    """The latency plot of the curves (``stats``: each curve's statistics table, in the order
    of ``infos``), or with ``efficiency`` (:func:`mlprof.tasks.peak.efficiency_inputs`) the
    efficiency plot (``--y-axis efficiency``; ``stats_files`` name a table that lacks what it
    needs). ``options`` are the task's plot options; an empty corner label is made of the
    curves' facts and ``corner`` (device, threads)."""
    from mlprof.plotting import Curve, plot_runtimes

    options = dict(options)
    if not options["top_right_label"]:
        options["top_right_label"] = corner_label(infos, *corner)
    plotted = [Curve(label, table)
               for label, table in zip(curve_labels(infos), stats, strict=True)]
    if efficiency is None:
        return plot_runtimes(plotted, caption=caption, **options)
    from mlprof.plotting.efficiency import check_efficiency_stats, plot_efficiency

    for c, path in zip(plotted, stats_files or [""] * len(plotted), strict=True):
        check_efficiency_stats(c.stats, path)
    return plot_efficiency(plotted, caption=caption, **efficiency, **{k: options[k] for k in (
        "x_log", "y_log", "error_style", "top_right_label")})


def throughput_figure(curves: Sequence[tuple[str, Any]], **options: Any) -> Any:
    """PlotThroughput's figure of ``(label, statistics table)`` pairs
    (:func:`mlprof.plotting.dashboard.plot_throughput` with ``options``): the tables travel to
    the drawing process as they are read (:mod:`mlprof.plotting.drawer`)."""
    from mlprof.plotting import Curve
    from mlprof.plotting.dashboard import plot_throughput

    return plot_throughput([Curve(label, table) for label, table in curves], **options)


def speedup_figure(reference: tuple[str, Any], curves: Sequence[tuple[str, Any]],
                   references: Sequence[tuple[str, Any]], **options: Any) -> Any:
    """PlotSpeedup's figure (:func:`mlprof.plotting.dashboard.plot_speedup`), its curves as
    ``(label, statistics table)`` pairs (as :func:`throughput_figure`)."""
    from mlprof.plotting import Curve
    from mlprof.plotting.dashboard import plot_speedup

    return plot_speedup(Curve(*reference), [Curve(*c) for c in curves],
                        references=[Curve(*c) for c in references], **options)


def version_key(version: str) -> tuple:
    """Sort key of a version string: 1.9.0 < 1.20.1 (numbers compared as numbers)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in re.split(r"[.+/-]", version))


def reference_curves(infos: Sequence[CurveInfo], models: Sequence[str],
                     reference_runtime: str) -> tuple[dict[str, int], list[int]]:
    """Per model (``models``: each curve's model file and, for a script, the model in it) the
    index of its reference curve: ``reference_runtime``'s newest version; and the indices of
    the other curves (each compared with its model's)."""
    refs: dict[str, int] = {}
    for i, info in enumerate(infos):
        if info.runtime == reference_runtime:
            j = refs.get(models[i])
            if j is None or version_key(info.version) > version_key(infos[j].version):
                refs[models[i]] = i
    return refs, [i for i in range(len(infos)) if refs.get(models[i]) not in (None, i)]


def choice_text(kinds: str, runtimes: Sequence[str], missing: Sequence[str]) -> str:
    """A speed-up plot's title when the runtimes were chosen for the models (``kinds``, as
    :func:`mlprof.runtimes.kinds_text` words them): which, and those not installed, e.g.
    ``runtimes: every installed one that measures a Python model script`` and the list."""
    text = (f"runtimes: every installed one that measures {kinds}\n("
            + ", ".join(runtimes) + ")")
    if missing:
        text += f"; not installed: {', '.join(missing)}"
    return text
