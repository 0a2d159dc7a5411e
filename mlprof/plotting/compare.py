"""The speed-up plot of an interleaved comparison: speed-up vs batch size with its 95 %
confidence band per configuration, and a line at 1 (no difference).

Points whose interval contains 1 (not significant), and points whose speed-up is within this
host's noise floor (the verdict ``within this host's noise (floor X %)``,
:func:`mlprof.measure.noise.within_noise`), are drawn open, so a difference the data or the
host cannot support does not look like one; the floor itself is drawn as dotted lines at
1 ± floor where the rows have one (a calibrated host, ``law run CalibrateNoise``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from mlprof.plotting.labels import plot_text
from mlprof.plotting.runtimes import (
    _style_context,
    curve_style,
    decorate,
    finish,
    log2_batch_axis,
    mark_open,
    new_figure,
)


def comparison_texts(provenance: Mapping[str, Any], device: str, threads: int | str,
                     model_labels: Mapping[str, str] | None = None) -> tuple[dict[str, str], str]:
    """``(legend label per configuration, corner)`` of an interleaved comparison, from its
    provenance (``batch_sizes`` -> ``configs`` with runtime and measured version, and the
    machine's ``cpu_model`` and ``host``): the same texts as every other runtime plot
    (:func:`~mlprof.plotting.labels.curve_labels`, :func:`~mlprof.plotting.labels.
    corner_label`), and the rounds in the corner. ``model_labels`` renames a configuration's
    model (by its ``model``)."""
    from mlprof.plotting.labels import corner_label, curve_info, curve_labels

    model_labels = dict(model_labels or {})
    per_bs = list((provenance.get("batch_sizes") or {}).values())
    infos: list = []
    seen: dict[str, int] = {}
    for record in per_bs:
        for c in record.get("configs", []):
            if c.get("label") in seen:
                continue
            seen[c["label"]] = len(infos)
            model = str(c.get("model") or "")
            infos.append(curve_info(model_labels.get(model, model), str(c.get("runtime", "")),
                                    str(c.get("runtime_version") or ""), record))
    if not infos:
        return {}, ""
    labels = dict(zip(seen, curve_labels(infos), strict=True))
    rounds = {r.get("rounds") for r in per_bs if r.get("rounds")}
    corner = corner_label(infos, device, threads)
    if len(rounds) == 1:
        corner += f" | interleaved x{rounds.pop()}"
    return labels, corner


#: the legend's title for the open points: one entry, however many curves have them
OPEN_TITLE = "open: not significant"
#: the same where the host has a noise floor (some points may be within it)
OPEN_TITLE_FLOOR = "open: not significant or within this host's noise"


def is_open(row: Mapping[str, Any]) -> bool:
    """Whether a comparison row's point is drawn open: its interval contains 1, or its
    speed-up is within this host's noise floor (the verdict says so). A row read from a
    table has its ``floor``; the verdict is what :func:`~mlprof.measure.interleave.
    comparison_rows` judged, so the plot and the table never disagree."""
    return not row["significant"] or str(row.get("verdict", "")).startswith(
        "within this host's noise")


def _floors(rows: Sequence[Mapping[str, Any]]) -> list[tuple[int, float]]:
    """``(batch size, floor)`` of the rows that have a floor (one per batch size)."""
    out: dict[int, float] = {}
    for r in rows:
        floor = r.get("floor")
        if isinstance(floor, (int, float)) and floor == floor and floor > 0:
            out.setdefault(int(r["batch_size"]), float(floor))
    return sorted(out.items())


def plot_comparison(rows: Sequence[Mapping[str, Any]], *, labels: Mapping[str, str] | None = None,
                    x_log: bool = True, top_right_label: str | None = None) -> Figure:
    """Rows of :func:`mlprof.measure.interleave.comparison_rows` (any batch sizes) in one
    figure; ``labels`` renames configurations in the legend."""
    labels = dict(labels or {})
    others = [r for r in rows if r["verdict"] != "reference"]  # none: only the line at 1
    reference = rows[0]["reference"]
    with _style_context():
        fig, ax = new_figure()
        configs = list(dict.fromkeys(r["config"] for r in others))
        for i, c in enumerate(configs):
            pts = sorted((r for r in others if r["config"] == c), key=lambda r: r["batch_size"])
            bs = [r["batch_size"] for r in pts]
            style = curve_style(i + 1, len(configs) + 1)  # style 0 is the reference's
            color = style["color"]
            ax.fill_between(bs, [r["ci_low"] for r in pts], [r["ci_high"] for r in pts],
                            color=color, alpha=0.25, linewidth=0)
            ax.plot(bs, [r["speedup"] for r in pts], label=plot_text(labels.get(c, c)),
                    **style)
            mark_open(ax, bs, [r["speedup"] for r in pts],
                      np.array([is_open(r) for r in pts], dtype=bool), style)
        ax.axhline(1.0, color="C0", linestyle="--", linewidth=1.5,
                   label=plot_text(f"{labels.get(reference, reference)} (reference)"))
        floors = _floors(rows)
        if floors:  # this host's noise: 1 +- floor per batch size (the floor of its class)
            fbs: list[float] = [float(b) for b, _ in floors]
            if len(fbs) == 1:  # one batch size: a line across the axes
                fbs = [fbs[0] * 0.9, fbs[0] * 1.1]
                floors = floors * 2
            for sign, label in ((1, "this host's noise floor (1 ± floor)"), (-1, None)):
                ax.plot(fbs, [1 + sign * f for _, f in floors], color="0.45", linestyle=":",
                        linewidth=1.2, drawstyle="steps-mid",
                        label=plot_text(label) if label else None)
        all_bs = [r["batch_size"] for r in rows]
        if x_log:
            log2_batch_axis(ax, all_bs)
        ax.set_xlabel("Batch size")
        ax.set_ylabel("Speed-up vs reference (interleaved, 95% CI)")
        decorate(ax, "mlprof", top_right_label)
        ax.legend(loc="best", frameon=True, framealpha=0.85,
                  title=OPEN_TITLE_FLOOR if floors else OPEN_TITLE)
        finish(fig, ax)
    return fig
