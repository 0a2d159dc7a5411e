"""Where the time goes, against the batch size: the share of each operator type (stacked), the
time per event of each (stacked) under the profiled calls' wall time, and the top operators as
a table (pure functions, no law)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mlprof.plotting.backend import use_backend
from mlprof.plotting.labels import plot_text
from mlprof.plotting.legend import keep_off_data
from mlprof.plotting.runtimes import _layout, _style_context, decorate, log2_batch_axis
from mlprof.runtimes.base import RUNTIME_OVERHEAD

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from mlprof.measure.profile import OpRow

#: the label of the operator types beyond the top N
OTHER = "other"


@dataclass
class Profile:
    """One batch size's profile: its rows (:func:`mlprof.measure.profile.read_profile`) and
    the profiled calls' wall times in ms."""

    batch_size: int
    ops: Sequence[OpRow]
    wall_ms: Sequence[float]
    #: events per call: the batch size (None: not recorded), or 1 for a model without a batch
    #: dimension; what a time per event divides by
    events_per_call: int | None = None

    @property
    def events(self) -> int:
        """The events of one call (the batch size where the record does not say)."""
        return self.events_per_call or self.batch_size


def top_types(profiles: Sequence[Profile], top: int) -> list[str]:
    """The ``top`` operator types with the largest mean share over the batch sizes (each batch
    size weighs the same, so the large ones do not decide alone); the runtime's overhead
    (:data:`~mlprof.runtimes.base.RUNTIME_OVERHEAD`) is not an operator and not among them."""
    mean: dict[str, float] = {}
    for p in profiles:
        for r in p.ops:
            if r.op_type != RUNTIME_OVERHEAD:
                mean[r.op_type] = mean.get(r.op_type, 0.0) + r.share / len(profiles)
    return [t for t, _ in sorted(mean.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]


def stacked(profiles: Sequence[Profile], top: int, column: str) -> dict[str, np.ndarray]:
    """Per shown type (the top ones, then :data:`OTHER` if any remain, then the runtime's
    overhead if the profiles have it, drawn on top): ``column`` (``share``, ``ms_per_call``,
    or ``typical_ms``: the median over the profiled calls where the profile has it) per batch
    size, in the order of ``profiles``."""
    types = top_types(profiles, top)
    out = {t: np.zeros(len(profiles)) for t in types}
    overhead = np.zeros(len(profiles))
    has_overhead = False
    for i, p in enumerate(profiles):
        for r in p.ops:
            if r.op_type == RUNTIME_OVERHEAD:
                overhead[i] += getattr(r, column)
                has_overhead = True
                continue
            key = r.op_type if r.op_type in out else OTHER
            out.setdefault(key, np.zeros(len(profiles)))[i] += getattr(r, column)
    if has_overhead:
        out[RUNTIME_OVERHEAD] = overhead
    return out


def _bars(ax, x: np.ndarray, series: dict[str, np.ndarray], x_log: bool,
          colors: dict[str, Any]) -> None:
    """Stacked bars at the batch sizes (a fixed width on a log2 axis, else 60 % of the
    smallest gap)."""
    if x_log:
        left, width = x * 2 ** -0.35, x * (2 ** 0.35 - 2 ** -0.35)
    else:
        gap = np.diff(np.sort(x)).min() if len(x) > 1 else max(float(x[0]), 1.0)
        left, width = x - 0.3 * gap, np.full(len(x), 0.6 * gap)
    bottom = np.zeros(len(x))
    for name, values in series.items():
        ax.bar(left, values, width=width, bottom=bottom, align="edge", color=colors[name],
               label=name, edgecolor="white", linewidth=0.5,
               hatch="///" if name == RUNTIME_OVERHEAD else None)
        bottom = bottom + values


def plot_profile(profiles: Sequence[Profile], *, top: int = 8, x_log: bool = True,
                 y_log: bool = False, y_min: float | None = None, y_max: float | None = None,
                 bs_normalized: bool = True, error_style: str = "band",
                 top_right_label: str | None = None, top_left_label: str = "mlprof",
                 title: str | None = None, caption: str | None = None) -> Figure:
    """Two panels against the batch size: above, the share of each operator type in the
    operators' time (stacked bars, the top ``top`` types and :data:`OTHER`); below, their time
    per event (``bs_normalized``) or per batch, stacked, with the median wall time of the
    profiled calls and its 16-84 percentile range as a ``band`` or ``bars`` (``error_style``):
    the band's own centre, so the line always lies in its band (a mean, pulled up by a few
    slow calls, was drawn above its 84th percentile). The operators' times are their medians
    over the profiled calls where the profiler tells the calls apart (ONNX Runtime, OpenVINO:
    one stalled call does not move them), else means (torch.profiler), which where the calls'
    times are skewed may reach past the median line. Where the profiler records the runtime's call
    (ONNX Runtime), the call's time outside operators is a hatched gray part of its own on top
    of the stack, and the gap up to the wall time is what the profile does not see (the
    Python binding); otherwise the gap is all the time outside operators. ``y_log``,
    ``y_min`` and ``y_max`` (ms) apply to the lower panel. The legends cover no data
    (:func:`mlprof.plotting.legend.keep_off_data`); ``caption`` goes under the panels (how
    many calls were profiled: :func:`calls_caption`)."""

    if not profiles:
        raise ValueError("no profiles to plot")
    if error_style not in ("band", "bars"):
        raise ValueError(f"error_style must be 'band' or 'bars', got {error_style!r}")
    profiles = sorted(profiles, key=lambda p: p.batch_size)
    x = np.array([p.batch_size for p in profiles], dtype=float)
    norm = np.array([p.events for p in profiles], dtype=float) if bs_normalized \
        else np.ones(len(x))
    shares = stacked(profiles, top, "share")
    times = {k: v / norm for k, v in stacked(profiles, top, "typical_ms").items()}
    walls = [np.asarray(p.wall_ms, dtype=float) for p in profiles]
    mid = np.array([np.median(w) for w in walls]) / norm
    lo = np.array([np.percentile(w, 16) for w in walls]) / norm
    hi = np.array([np.percentile(w, 84) for w in walls]) / norm
    unit, scale = ("us", 1000.0) if mid.max() < 0.1 else ("ms", 1.0)
    unit_tex = "\u00b5s" if unit == "us" else "ms"
    plt = use_backend()
    import matplotlib

    palette = matplotlib.colormaps["tab20"].colors
    grays = {OTHER: "0.6", RUNTIME_OVERHEAD: "0.85"}
    colors = {name: grays.get(name, palette[i % len(palette)]) for i, name in enumerate(shares)}
    with _style_context():
        fig, (ax_share, ax_time) = plt.subplots(2, 1, sharex=True, figsize=(8.0, 9.0),
                                                gridspec_kw={"height_ratios": [1, 1]})
        _bars(ax_share, x, {k: v * 100 for k, v in shares.items()}, x_log, colors)
        ax_share.set_ylabel("Share of profiled time [%]" if RUNTIME_OVERHEAD in shares
                            else "Share of operator time [%]")
        ax_share.set_ylim(0, 100)
        _bars(ax_time, x, {k: v * scale for k, v in times.items()}, x_log, colors)
        what = "Time per event" if bs_normalized else "Time per batch"
        wall_label = "wall time of the profiled calls\n(median, 16-84%)"
        if error_style == "band":
            ax_time.plot(x, mid * scale, color="black", marker="o", label=wall_label,
                         gid="mlprof-wall")
            ax_time.fill_between(x, lo * scale, hi * scale, color="black", alpha=0.15,
                                 linewidth=0)
        else:
            ax_time.errorbar(x, mid * scale, yerr=[(mid - lo) * scale, (hi - mid) * scale],
                             color="black", marker="o", capsize=4, label=wall_label,
                             gid="mlprof-wall")
        ax_time.set_ylabel(f"{what} [{unit_tex}]")
        ax_time.set_xlabel("Batch size")
        if x_log:
            log2_batch_axis(ax_time, x.astype(int))
            ax_time.set_xlim(x.min() * 2 ** -0.6, x.max() * 2 ** 0.6)
        if y_log:
            ax_time.set_yscale("log")
        else:
            ax_time.set_ylim(bottom=0)
        if y_min is not None or y_max is not None:  # given in ms
            ax_time.set_ylim(bottom=None if y_min is None else y_min * scale,
                             top=None if y_max is None else y_max * scale)
        for ax in (ax_share, ax_time):
            ax.grid(axis="x", visible=False)
        # the title over both panels, above the corners (a corner broken into lines beside a
        # narrow panel ran into a title of the upper panel)
        decorate(ax_share, top_left_label, top_right_label)
        if title:
            fig.suptitle(plot_text(title))
        handles, labels = ax_share.get_legend_handles_labels()
        ax_share.legend(handles[::-1], [plot_text(lb) for lb in labels[::-1]], loc="upper left",
                        bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False,
                        title="operator type")
        wall_handles = [h for h, lb in zip(*ax_time.get_legend_handles_labels(), strict=True)
                        if lb == wall_label]
        ax_time.legend(wall_handles, [wall_label], loc="upper left", fontsize="small",
                       framealpha=0.85)
        _layout(fig, ax_share, caption)
        keep_off_data(fig, ax_time, headroom=y_max is None,
                      relayout=lambda: _layout(fig, ax_share, caption, again=True))
    return fig


def calls_caption(records: Sequence[dict[str, Any]]) -> str:
    """What a profile's caption says about its calls, from the branches' provenance: the
    profiled calls per batch size, and where a time budget cut them (or the warm-up) short of
    the settings, that it did, by how much, and how to get them all."""
    records = sorted(records, key=lambda r: int(r.get("batch_size", 0)))
    calls = ", ".join(f"{r.get('n_profiled_calls')} at batch size {r.get('batch_size')}"
                      for r in records)
    text = f"profiled calls: {calls}"
    cut = [r for r in records if r.get("cut_by_budget")]
    if cut:
        budget = cut[0].get("budget_s", 0)
        warm = ", ".join(f"{r.get('warmup_calls')} at batch size {r.get('batch_size')}"
                         for r in cut)
        asked = cut[0].get("settings", {})
        text += (f"; cut short by the time budget of {budget:g} s per batch size (asked: "
                 f"{asked.get('n_calls', '?')} calls per event, {asked.get('warmup', '?')} "
                 f"warm-up; warm-up calls made: {warm}; --time-budget 0 for all)")
    return text


def top_table(profiles: Sequence[Profile], top: int) -> list[dict[str, Any]]:
    """The ``top`` most expensive operator types of each batch size, as rows: batch_size,
    rank, op_type, calls, ms_per_call, ms_per_event, share."""
    rows = []
    for p in sorted(profiles, key=lambda p: p.batch_size):
        ranked = sorted(p.ops, key=lambda r: (-r.ms_per_call, r.op_type))[:top]
        for rank, r in enumerate(ranked, start=1):
            rows.append({"batch_size": p.batch_size, "rank": rank, "op_type": r.op_type,
                         "calls": r.calls, "ms_per_call": r.ms_per_call,
                         "ms_per_event": r.ms_per_call / p.events, "share": r.share})
    return rows


def format_top_table(rows: Sequence[dict[str, Any]]) -> str:
    """:func:`top_table`'s rows as aligned text, one block per batch size."""
    lines = []
    for bs in dict.fromkeys(r["batch_size"] for r in rows):
        block = [r for r in rows if r["batch_size"] == bs]
        width = max(len("operator type"), *(len(r["op_type"]) for r in block))
        lines.append(f"batch size {bs}")
        lines.append(f"  {'#':>2}  {'operator type':<{width}}  {'runs':>6}  {'ms/call':>10}  "
                     f"{'share':>6}")
        lines.extend(f"  {r['rank']:>2}  {r['op_type']:<{width}}  {r['calls']:>6g}  "
                     f"{r['ms_per_call']:>10.4f}  {100 * r['share']:>5.1f}%" for r in block)
        lines.append("")
    return "\n".join(lines)
