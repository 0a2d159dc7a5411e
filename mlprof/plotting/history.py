"""A statistic over nights (versions): one panel per batch size, or the change vs a baseline.

Why panels: the batch sizes of one configuration span decades (µs at batch size 1, ms at
1024); on one linear axis the small ones lie flat on zero and a regression there
is invisible. Each panel has its own y range (never narrower than 20 % of its level, so noise
does not look like a cliff) and the panels share the x axis (the nights).

The confirming re-measurement of a night (version ``<night>.confirm``, see
:func:`mlprof.report.nightly.confirm_version`) is drawn as a hollow marker at the x of its night,
not as a night of its own; an alert is a triangle over the alerting point, its night shaded,
and the legend explains both. A series with a
single night is not drawn (a point is no history); the figure says which were left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mlprof.plotting import use_backend
from mlprof.plotting.labels import plot_text
from mlprof.plotting.runtimes import _style_context
from mlprof.plotting.scales import history_unit, history_y_range
from mlprof.results.layout import CONFIRM_SUFFIX

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: what the y axis of a statistic shows (the unit is added per panel)
_LABELS = {"median_ms": "Median latency per call", "mean_ms": "Mean latency per call",
           "p84_ms": "84th percentile latency per call",
           "p99_ms": "99th percentile latency per call",
           "throughput": "Throughput"}

#: the views of :func:`plot_history`
VIEWS = ("panels", "change")

#: legend texts (tests and docs/reports.md quote them)
MEASUREMENT_LABEL = "nightly measurement"
CONFIRM_LABEL = "confirmation re-measurement (same night)"
ALERT_LABELS = {"regression": "regression alert (confirmed)",
                "improvement": "improvement alert (confirmed)"}
_ALERT_STYLE = {"regression": ("^", "#d62728"), "improvement": ("v", "#2ca02c")}

#: series markers (no triangles: those are the alerts)
MARKERS = ("o", "s", "D", "P", "X", "p", "h", "*", "d", "8", "H", "<", ">")

#: resolution of the PNGs (and of the figure)
DPI = 200

#: how many first nights make the baseline of the "change" view
BASELINE_NIGHTS = 3


def night_of(version: str, confirm_suffix: str = CONFIRM_SUFFIX) -> str:
    """The night a version belongs to: ``n3.confirm`` -> ``n3``; any other version is a night."""
    v = str(version)
    return v[:-len(confirm_suffix)] if confirm_suffix and v.endswith(confirm_suffix) else v


def is_confirmation(version: str, confirm_suffix: str = CONFIRM_SUFFIX) -> bool:
    """Whether ``version`` is the confirming re-measurement of a night."""
    return bool(confirm_suffix) and str(version).endswith(confirm_suffix)


def nights(lines: Mapping[str, tuple[Sequence[str], Sequence[float]]],
           confirm_suffix: str = CONFIRM_SUFFIX) -> list[str]:
    """The nights of ``lines`` in time order (confirmations fold into theirs).

    Each series is in time order; the nights of all of them are merged keeping every series'
    order (a night only some series have goes between its neighbours, not to the end), ties
    by first appearance.
    """
    first: dict[str, int] = {}
    after: dict[str, set[str]] = {}
    for vs, _ in lines.values():
        seq = list(dict.fromkeys(night_of(v, confirm_suffix) for v in vs))
        for a, b in zip(seq, seq[1:], strict=False):
            after.setdefault(a, set()).add(b)
        for v in seq:
            first.setdefault(v, len(first))
    indegree = dict.fromkeys(first, 0)
    for bs in after.values():
        for b in bs:
            indegree[b] += 1
    out: list[str] = []
    left = set(first)
    while left:
        ready = [v for v in left if indegree[v] == 0] or list(left)  # a cycle: by appearance
        v = min(ready, key=first.__getitem__)
        out.append(v)
        left.discard(v)
        for b in after.get(v, ()):
            indegree[b] -= 1
    return out


def drawable(lines: Mapping[str, tuple[Sequence[str], Sequence[float]]], min_nights: int = 2,
             confirm_suffix: str = CONFIRM_SUFFIX) -> dict[str, tuple[list[str], list[float]]]:
    """The series of ``lines`` with finite values on at least ``min_nights`` distinct nights
    (a night and its confirmation are one night): what :func:`plot_history` draws."""
    out = {}
    for label, (vs, ys) in lines.items():
        pts = [(str(v), float(y)) for v, y in zip(vs, ys, strict=True)
               if y is not None and math.isfinite(float(y))]
        if len({night_of(v, confirm_suffix) for v, _ in pts}) >= min_nights:
            out[label] = ([v for v, _ in pts], [y for _, y in pts])
    return out


def series_colors(n: int) -> list[tuple[float, float, float, float]]:
    """``n`` colours sampled evenly from viridis (dark to light-green, the too-light yellow end
    left out): perceptually ordered (small batch sizes dark) and distinct for any ``n``, where a
    10-colour cycle repeats itself at the 11th series."""
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    if n <= 1:
        return [cmap(0.0)]
    return [cmap(0.88 * i / (n - 1)) for i in range(n)]


def series_markers(n: int) -> list[str]:
    """``n`` markers; distinct up to ``len(MARKERS)``, then repeating (with distinct colours)."""
    return [MARKERS[i % len(MARKERS)] for i in range(n)]


def _plain_ticks(ax) -> None:
    """Plain numbers on the y axis: no offset (``+1.2e1``) and no ``1e-3`` multiplier."""
    from matplotlib.ticker import ScalarFormatter

    fmt = ScalarFormatter(useOffset=False, useMathText=False)
    fmt.set_scientific(False)
    ax.yaxis.set_major_formatter(fmt)


def night_labels(names: Sequence[str]) -> tuple[str, list[str]]:
    """``(common prefix, tick labels)``: the prefix all nights share, cut after a separator
    (``-``, ``_``, ``.``, ``/``), goes once into the axis label, so that
    ``nightly-2026-11-14 ... nightly-2026-12-02`` are ticked ``11-14 ... 12-02``."""
    names = [str(n) for n in names]
    if len(names) < 2:
        return "", names
    prefix = names[0]
    for n in names[1:]:
        while not n.startswith(prefix):
            prefix = prefix[:-1]
    cut = max(prefix.rfind(c) for c in "-_./") + 1
    prefix = prefix[:cut]
    if len(prefix) < 4 or any(len(n) == len(prefix) for n in names):
        return "", names
    return prefix, [n[len(prefix):] for n in names]


def _split_points(vs: Sequence[str], ys: Sequence[float], pos: Mapping[str, int],
                  confirm_suffix: str) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """``(nightly points, confirmation points)`` as ``(x, y)``."""
    main: list[tuple[int, float]] = []
    conf: list[tuple[int, float]] = []
    for v, y in zip(vs, ys, strict=True):
        (conf if is_confirmation(v, confirm_suffix) else main).append(
            (pos[night_of(v, confirm_suffix)], y))
    return main, conf


#: confirmations are drawn this many points right of their night (same x in data
#: coordinates): beside the night's own point instead of hiding it or being hidden
CONFIRM_SHIFT_PT = 7.0


def _draw_series(ax, main, conf, color, marker: str, label: str | None, zorder: float = 3
                 ) -> None:
    """A series: a line through its nights, filled markers, hollow ones for confirmations
    (at their night's x, shifted a few points right on the page) joined to their night's point
    by a dotted stroke."""
    from matplotlib.transforms import ScaledTranslation

    if main:
        ax.plot([x for x, _ in main], [y for _, y in main], marker=marker, color=color,
                markersize=6, linewidth=1.8, label=label, zorder=zorder)
    elif label:  # only confirmations (cannot happen from a nightly run): still a legend entry
        ax.plot([], [], marker=marker, color=color, label=label)
    shifted = ax.transData + ScaledTranslation(CONFIRM_SHIFT_PT / 72, 0,
                                               ax.figure.dpi_scale_trans)
    at = dict(main)
    for x, y in conf:
        if x in at:
            ax.plot([x, x], [at[x], y], linestyle=":", color=color, linewidth=1.2,
                    zorder=zorder - 0.1, transform=shifted)
        ax.plot([x], [y], linestyle="none", marker=marker, markersize=7, color=color,
                markerfacecolor="white", markeredgewidth=1.6, zorder=zorder + 0.1,
                transform=shifted, gid="confirmation")


def _draw_alerts(ax, marks, pos, values: Mapping[str, float], confirm_suffix: str) -> set[str]:
    """Alerts: the night shaded in the alert's colour and a triangle just above the night's
    highest point (regression) or below its lowest (improvement): its ``ydata`` is that point's,
    the offset is on the page, so it never hides the point or its confirmation. Returns the
    kinds drawn."""
    from matplotlib.transforms import ScaledTranslation

    kinds = set()
    for version, kind in marks:
        if version not in values:
            continue
        marker, color = _ALERT_STYLE.get(kind, ("^", "#d62728"))
        night = night_of(version, confirm_suffix)
        x = pos[night]
        same = [y for v, y in values.items() if night_of(v, confirm_suffix) == night]
        y = max(same) if marker == "^" else min(same)
        ax.axvspan(x - 0.42, x + 0.42, color=color, alpha=0.10, linewidth=0, zorder=0.5)
        dy = 12.0 if marker == "^" else -12.0
        shifted = ax.transData + ScaledTranslation(0, dy / 72, ax.figure.dpi_scale_trans)
        ax.plot([x], [y], linestyle="none", marker=marker, markersize=11, color=color,
                markeredgecolor="black", markeredgewidth=0.8, zorder=4, transform=shifted,
                gid=f"alert-{kind}", clip_on=False)
        kinds.add(kind)
    return kinds


def _legend_handles(series_marker: str, any_confirm: bool, kinds: set[str]) -> list:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="0.35", marker=series_marker, markersize=6,
                      label=MEASUREMENT_LABEL)]
    if any_confirm:
        handles.append(Line2D([], [], color="0.35", marker=series_marker, markersize=7,
                              linestyle="none", markerfacecolor="white", markeredgewidth=1.6,
                              label=CONFIRM_LABEL))
    for kind in ("regression", "improvement"):
        if kind in kinds:
            marker, color = _ALERT_STYLE[kind]
            handles.append(Line2D([], [], linestyle="none", marker=marker, markersize=12,
                                  color=color, markeredgecolor="black", markeredgewidth=0.8,
                                  alpha=0.75, label=ALERT_LABELS[kind]))
    return handles


def _rotate(labels: Sequence[str], per_inch: float) -> bool:
    """Whether tick labels must be rotated to fit: more characters than the room per tick."""
    longest = max((len(s) for s in labels), default=0)
    return longest * 0.085 > 0.9 / per_inch  # ~0.085 in per character at "small"


def _footer_in(labels: Sequence[str], rotate: bool) -> float:
    """Room under the lowest axes for tick labels and the x label, in inches."""
    longest = max((len(s) for s in labels), default=0)
    return 0.75 + _NOTES_IN + (0.06 * longest if rotate else 0.0)


def _x_axis(ax, labels: Sequence[str], show_labels: bool, rotate: bool) -> None:
    n = len(labels)
    step = max(1, math.ceil(n / 12))  # at most ~12 labels
    ticks = list(range(0, n, step))
    ax.set_xticks(ticks)
    ax.set_xticks(range(n), minor=True)
    ax.set_xlim(-0.5, n - 0.5)
    ax.tick_params(axis="x", which="minor", length=2, top=False)
    ax.tick_params(axis="x", which="major", top=False)
    if show_labels:
        ax.set_xticklabels([plot_text(labels[i]) for i in ticks], rotation=35 if rotate else 0,
                           ha="right" if rotate else "center", rotation_mode="anchor",
                           fontsize="small")
    else:
        ax.set_xticklabels([])


def plot_history(lines: Mapping[str, tuple[Sequence[str], Sequence[float]]], *,
                 statistic: str = "median_ms",
                 alerts: Sequence[tuple[str, str, str]] = (),
                 title: str | None = None, top_right_label: str | None = None,
                 caption: str | None = None, view: str = "panels",
                 confirm_suffix: str = CONFIRM_SUFFIX,
                 events: Sequence[tuple[str, str]] = ()) -> Figure:
    """Plot ``{label: (versions, values)}`` (versions in time order) over the nights.

    ``view="panels"``: one panel per series (batch size) with its own y range, the x axis (the
    nights) shared. ``view="change"``: one axis, every series as its percent change vs its
    baseline (the median of its first ``BASELINE_NIGHTS`` nights, fewer when it has fewer than
    ``BASELINE_NIGHTS + 1``), distinct colours and markers. Confirmations (``<night>
    <confirm_suffix>``) are hollow markers at their night. ``alerts`` are ``(label, version,
    kind)`` rows (a kind of ``regression`` or ``improvement``), drawn as triangles and named in
    the legend. ``events`` are ``(version, text)`` of runtime upgrades and model edits
    (:func:`mlprof.results.identity.events`): a dashed line before that night in every panel,
    named at the top ("onnxruntime 1.31.1 -> 1.32.0"), so that a step at an upgrade reads as
    one. Series with fewer than two nights are left out and named under the plot, next to
    ``caption`` (e.g. the measurement settings); raises ``ValueError`` when no series has two
    nights.
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    if not lines:
        raise ValueError("no history to plot")
    drawn = drawable(lines, confirm_suffix=confirm_suffix)
    if not drawn:
        raise ValueError("no series has results of two or more nights: nothing to plot")
    left_out = [label for label in lines if label not in drawn]
    names = nights(drawn, confirm_suffix)
    pos = {n: i for i, n in enumerate(names)}
    colors = series_colors(len(drawn))
    markers = series_markers(len(drawn))
    marks: dict[str, list[tuple[str, str]]] = {}
    for label, version, kind in alerts:
        marks.setdefault(label, []).append((str(version), str(kind)))
    what = _LABELS.get(statistic, statistic)
    any_confirm = any(is_confirmation(v, confirm_suffix) for vs, _ in drawn.values() for v in vs)
    kinds = {k for label, ms in marks.items() if label in drawn for v, k in ms
             if v in drawn[label][0]}
    plt = use_backend()
    with _style_context():
        handles = _legend_handles("o", any_confirm, kinds)
        shown = [(pos[night_of(str(v), confirm_suffix)], text) for v, text in events
                 if night_of(str(v), confirm_suffix) in pos]
        if shown:
            from matplotlib.lines import Line2D

            handles.append(Line2D([], [], color=_EVENT_COLOR, linestyle="--",
                                  label=EVENT_LABEL))
        if view == "panels":
            fig = _panels(plt, drawn, names, pos, colors, marks, statistic, what,
                          confirm_suffix, handles)
        else:
            fig = _change(plt, drawn, names, pos, colors, markers, marks, what, confirm_suffix,
                          handles)
        _draw_events(fig, shown)
        _header(fig, title, top_right_label, left_out, caption)
    return fig


#: the legend entry of a runtime upgrade or model edit
EVENT_LABEL = "runtime or model changed"
_EVENT_COLOR = "#6a3d9a"


def _draw_events(fig, shown: Sequence[tuple[int, str]]) -> None:
    """A dashed line just before each event's night in every axes of data, the event's text
    along it (``gid`` ``event`` and ``event-text``: what tests look for)."""
    for ax in [ax for ax in fig.axes if ax.get_visible() and ax.lines]:
        for x, text in shown:
            ax.axvline(x - 0.5, color=_EVENT_COLOR, linestyle="--", linewidth=1.0, zorder=1.5,
                       gid="event")
            ax.text(x - 0.45, 0.97, plot_text(text), transform=ax.get_xaxis_transform(),
                    rotation=90, ha="left", va="top", fontsize="x-small", color=_EVENT_COLOR,
                    gid="event-text")


def _grid(n: int) -> tuple[int, int]:
    ncols = 1 if n <= 2 else 2 if n <= 6 else 3
    return math.ceil(n / ncols), ncols


#: the line under the x label (settings caption, series left out), in inches
_NOTES_IN = 0.22

#: layout in inches: a panel row, margins, gaps between panels
_ROW_IN, _LEFT_IN, _RIGHT_IN, _GAP_W_IN, _GAP_H_IN = 1.9, 1.05, 0.3, 0.75, 0.45
#: the header: corner labels and title above the legend, a legend row, room for panel titles
_LEGEND_TOP_IN, _LEGEND_ROW_IN, _HEADER_GAP_IN = 0.95, 0.26, 0.42


def _legend_columns(handles: Sequence, width_in: float) -> tuple[int, int]:
    """``(columns, rows)`` of a legend of ``handles`` that fits ``width_in`` inches."""
    widths = [0.5 + 0.075 * len(h.get_label()) for h in handles]
    for ncol in range(len(widths), 0, -1):
        rows = math.ceil(len(widths) / ncol)
        cols = [max(widths[c::ncol]) for c in range(ncol)]
        if sum(cols) <= width_in - 0.3 or ncol == 1:
            return ncol, rows
    return 1, len(widths)


def _figure_legend(fig, handles: Sequence, ncol: int, height: float, x: float = 0.5) -> None:
    if handles:
        fig.legend(handles=handles, loc="upper center", ncol=ncol, frameon=False,
                   fontsize="small", bbox_to_anchor=(x, 1 - _LEGEND_TOP_IN / height),
                   handlelength=2.2, columnspacing=1.2)


def _x_label(prefix: str) -> str:
    return f"Night (version {prefix}...)" if prefix else "Night (version)"


def _panels(plt, drawn, names, pos, colors, marks, statistic, what, confirm_suffix,
            handles) -> Figure:
    n = len(drawn)
    nrows, ncols = _grid(n)
    panel_w = {1: 6.4, 2: 4.2}.get(ncols, 3.6)
    prefix, labels = night_labels(names)
    rotate = _rotate(labels, len(labels) / panel_w)
    footer = _footer_in(labels, rotate)
    width = _LEFT_IN + _RIGHT_IN + ncols * panel_w + (ncols - 1) * _GAP_W_IN
    legend_cols, legend_rows = _legend_columns(handles, width)
    header = _LEGEND_TOP_IN + legend_rows * _LEGEND_ROW_IN + _HEADER_GAP_IN
    height = header + nrows * _ROW_IN + footer
    fig, axs = plt.subplots(nrows, ncols, figsize=(width, height), dpi=DPI, squeeze=False)
    fig.subplots_adjust(left=_LEFT_IN / width, right=1 - _RIGHT_IN / width,
                        top=1 - header / height, bottom=footer / height,
                        hspace=_GAP_H_IN / (_ROW_IN - _GAP_H_IN), wspace=_GAP_W_IN / panel_w)
    flat = list(axs.flat)
    for ax in flat[n:]:
        ax.remove()
    for i, (ax, (label, (vs, ys))) in enumerate(zip(flat, drawn.items(), strict=False)):
        unit, scale = history_unit(statistic, ys)
        ys_s = [y * scale for y in ys]
        main, conf = _split_points(vs, ys_s, pos, confirm_suffix)
        _draw_series(ax, main, conf, colors[i], "o", None)
        drawn_kinds = _draw_alerts(ax, marks.get(label, []), pos,
                                   dict(zip(vs, ys_s, strict=True)), confirm_suffix)
        lo, hi = history_y_range(ys_s)
        # room for an alert's triangle inside the panel
        ax.set_ylim(lo - (0.15 * (hi - lo) if "improvement" in drawn_kinds else 0.0),
                    hi + (0.15 * (hi - lo) if "regression" in drawn_kinds else 0.0))
        _plain_ticks(ax)
        ax.set_ylabel(unit, fontsize="small")
        ax.tick_params(axis="y", labelsize="small")
        ax.set_title(plot_text(label), loc="left", fontsize="medium", pad=4)
        ax.grid(True, alpha=0.3)
        _x_axis(ax, labels, show_labels=i + ncols >= n, rotate=rotate)  # none below it
    fig.text(0.012, (footer + nrows * _ROW_IN / 2) / height, what, rotation=90,
             ha="left", va="center")
    fig.text(0.5, (0.04 + _NOTES_IN) / height, plot_text(_x_label(prefix)), ha="center",
             va="bottom")
    _figure_legend(fig, handles, legend_cols, height)
    return fig


def _baseline(main: Sequence[tuple[int, float]]) -> float:
    ys = [y for _, y in sorted(main)]
    k = min(BASELINE_NIGHTS, max(1, len(ys) - 1))
    first = sorted(ys[:k])
    mid = len(first) // 2
    return first[mid] if len(first) % 2 else (first[mid - 1] + first[mid]) / 2


def _change(plt, drawn, names, pos, colors, markers, marks, what, confirm_suffix,
            handles) -> Figure:
    axes_w, axes_h, legend_w = 6.4, 4.6, 2.4
    prefix, labels = night_labels(names)
    rotate = _rotate(labels, len(labels) / axes_w)
    footer = _footer_in(labels, rotate)
    width = _LEFT_IN + 0.3 + axes_w + legend_w
    legend_cols, legend_rows = _legend_columns(handles, width)
    header = _LEGEND_TOP_IN + legend_rows * _LEGEND_ROW_IN + _HEADER_GAP_IN
    height = header + axes_h + footer
    fig, ax = plt.subplots(figsize=(width, height), dpi=DPI)
    fig.subplots_adjust(left=(_LEFT_IN + 0.3) / width, right=1 - legend_w / width,
                        top=1 - header / height, bottom=footer / height)
    all_y: list[float] = [0.0]
    for i, (label, (vs, ys)) in enumerate(drawn.items()):
        main, _ = _split_points(vs, ys, pos, confirm_suffix)
        base = _baseline(main) if main else ys[0]
        rel = [100.0 * (y / base - 1.0) if base else 0.0 for y in ys]
        all_y.extend(rel)
        main, conf = _split_points(vs, rel, pos, confirm_suffix)
        _draw_series(ax, main, conf, colors[i], markers[i], plot_text(label))
        _draw_alerts(ax, marks.get(label, []), pos, dict(zip(vs, rel, strict=True)),
                     confirm_suffix)
    ax.axhline(0.0, color="0.2", linewidth=0.8, zorder=1)
    lo, hi = min(all_y), max(all_y)
    span = max(hi - lo, 20.0)  # at least 20 percentage points: noise is not a cliff
    ax.set_ylim(min(lo, hi - span) - 0.12 * span, max(hi, lo + span) + 0.12 * span)
    _plain_ticks(ax)
    ax.set_ylabel(f"Change vs baseline [%]\n({what.lower()})", fontsize="medium")
    ax.grid(True, alpha=0.3)
    _x_axis(ax, labels, show_labels=True, rotate=rotate)
    fig.text(0.5 * (1 - legend_w / width + (_LEFT_IN + 0.3) / width),
             (0.04 + _NOTES_IN) / height,
             plot_text(_x_label(prefix)), ha="center", va="bottom")
    series_legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
                              fontsize="small", title=f"baseline: median of\nfirst "
                              f"{BASELINE_NIGHTS} nights", title_fontsize="small")
    ax.add_artist(series_legend)
    _figure_legend(fig, handles, legend_cols, height)
    return fig


def _header(fig, title: str | None, top_right_label: str | None, left_out: Sequence[str],
            caption: str | None = None) -> None:
    """Corner labels and title over the plot; the caption and the left-out series under it."""
    height = fig.get_figheight()
    y = 1 - 0.12 / height
    fig.text(0.012, y, "mlprof", fontweight="bold", ha="left", va="top")
    if top_right_label:
        fig.text(0.988, y, plot_text(top_right_label), ha="right", va="top", fontsize="small")
    if title:
        fig.text(0.5, 1 - 0.5 / height, plot_text(title), ha="center", va="top",
                 fontsize="large")
    if left_out:
        text = ", ".join(left_out)
        if len(text) > 110:
            text = text[:107] + "..."
        fig.text(0.988, 0.04 / height, plot_text(f"not drawn (a single night): {text}"),
                 ha="right", va="bottom", fontsize="x-small", color="0.35")
    if caption:
        fig.text(0.012, 0.04 / height, plot_text(caption), ha="left", va="bottom",
                 fontsize="x-small", color="0.35")


def save_history(fig: Figure, paths: Sequence[str]) -> None:
    """Save like :func:`mlprof.plotting.save_figure` (atomically, then close), with TrueType
    fonts in PDFs (fonttype 42: text stays text, editable and searchable) whatever the
    process's rcParams: they are read when the file is written, after the style is gone."""
    from mlprof.plotting.runtimes import save_figure

    plt = use_backend()
    with plt.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
        save_figure(fig, paths)


def figure_info(fig: Figure) -> dict[str, Any]:
    """What a history figure shows, read from its artists: panel titles, y limits, legend
    texts (used by tests and handy when checking a plot without looking at it)."""
    legend_texts = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    axes = [ax for ax in fig.axes if ax.get_visible()]
    return {"panels": [ax.get_title(loc="left") for ax in axes],
            "ylims": [tuple(ax.get_ylim()) for ax in axes],
            "legend": legend_texts, "dpi": fig.dpi}
