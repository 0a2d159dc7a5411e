"""Legends that never cover data (pure functions, no law).

matplotlib's ``loc="best"`` weighs only the vertices of lines: it happily puts a legend over a
16-84 % band, a stacked bar or the segment between two points, and when nothing is free it
takes the least bad place, over data. :func:`keep_off_data` instead tries the inside corners
and edges in turn and accepts one only where the legend's box touches nothing drawn (lines with
their markers, bands, bars, error bars); failing that it makes headroom above the data (at
most :data:`MAX_HEADROOM` of the axes), and failing that it moves the legend outside, right of
the axes, widening the figure by the legend's width so the axes keep their size.

:func:`overlapping` is the check itself, in display coordinates, for a figure laid out and
drawn: the tests use it on every plot kind mlprof makes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend
    from matplotlib.transforms import Bbox

#: the places tried inside the axes, in order (the upper corners first: a reader looks there)
INSIDE: tuple[Any, ...] = ("upper left", "upper right", "lower left", "lower right", "upper center",
          "lower center", "center left", "center right")

#: at most this fraction of the axes' height is given to headroom for the legend
MAX_HEADROOM = 0.45

#: pixels kept free around the legend's box (at the figure's dpi, points * dpi / 72)
GAP_PT = 3.0


def _drawn(ax: Axes) -> Iterator[tuple[Any, str, float]]:
    """``(path in display coordinates, kind, pixels)`` of everything drawn as data in ``ax``:
    ``points`` (markers, their radius), ``line`` (segments, half their width) and ``area``
    (bands, bars and other filled collections or patches). Artists without data (legend
    proxies) are skipped."""
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    dpi = ax.figure.dpi
    for artist in ax.get_children():
        if not artist.get_visible():
            continue
        if isinstance(artist, Line2D):
            if np.asarray(artist.get_xydata(), dtype=float).size == 0:
                continue
            path = artist.get_transform().transform_path(artist.get_path())
            if artist.get_marker() not in (None, "None", "none", "", " "):
                yield path, "points", (artist.get_markersize() / 2
                                       + artist.get_markeredgewidth()) * dpi / 72
            if artist.get_linestyle() not in ("None", "none", "", " "):
                yield path, "line", artist.get_linewidth() * dpi / 144
        elif isinstance(artist, Collection):
            filled = bool(np.asarray(artist.get_facecolor()).size)
            transform = artist.get_transform()
            for p in artist.get_paths():
                if np.asarray(p.vertices).size:
                    width = float(np.max(np.asarray(artist.get_linewidth()), initial=1.0))
                    yield (transform.transform_path(p), "area" if filled else "line",
                           width * dpi / 144)
        elif isinstance(artist, Patch) and artist is not ax.patch:
            path = artist.get_transform().transform_path(artist.get_path())
            if np.asarray(path.vertices).size:
                yield path, "area", 0.0


def _finite(path: Any) -> Any:
    """``path`` without its non-finite vertices (a NaN splits a line; its pieces are drawn)."""
    from matplotlib.path import Path

    v = np.asarray(path.vertices, dtype=float)
    keep = np.isfinite(v).all(axis=1)
    if keep.all():
        return path
    codes = None if path.codes is None else np.asarray(path.codes)[keep]
    return Path(v[keep], codes)


def covers_data(ax: Axes, box: Bbox) -> bool:
    """Whether ``box`` (display coordinates) touches anything drawn as data in ``ax``, within
    the axes (what is clipped away is not drawn)."""
    from matplotlib.transforms import Bbox

    inside = Bbox.intersection(box, ax.bbox)
    if inside is None or inside.width <= 0 or inside.height <= 0:
        return False
    for path, kind, pixels in _drawn(ax):
        path = _finite(path)
        if not len(path.vertices):
            continue
        v = np.asarray(path.vertices, dtype=float)
        if kind == "points":
            hit = ((v[:, 0] >= inside.x0 - pixels) & (v[:, 0] <= inside.x1 + pixels)
                   & (v[:, 1] >= inside.y0 - pixels) & (v[:, 1] <= inside.y1 + pixels))
            if hit.any():
                return True
        elif path.intersects_bbox(inside.padded(pixels), filled=kind == "area"):
            return True
    return False


def overlapping(fig: Figure) -> list[tuple[str, str]]:
    """``(legend title or first entry, axes label)`` of every legend of ``fig`` (of its axes
    and of the figure) whose box covers data of any axes; ``fig`` must have been drawn."""
    renderer = _renderer(fig)
    legends = [leg for ax in fig.axes if (leg := ax.get_legend()) is not None]
    legends += list(fig.legends)
    out = []
    for leg in legends:
        box = leg.get_window_extent(renderer).padded(GAP_PT * fig.dpi / 72 / 2)
        for ax in fig.axes:
            if ax.get_visible() and covers_data(ax, box):
                name = leg.get_title().get_text() or next(
                    (t.get_text() for t in leg.get_texts()), "")
                out.append((str(name), str(ax.get_label() or fig.axes.index(ax))))
    return out


def _renderer(fig: Figure) -> Any:
    """What tight_layout measures with, for any canvas (matplotlib's own helper)."""
    return fig._get_renderer()  # type: ignore[attr-defined]


def _free(ax: Axes, leg: Legend, renderer: Any) -> bool:
    box = leg.get_window_extent(renderer).padded(GAP_PT * ax.figure.dpi / 72)
    return not any(covers_data(a, box) for a in ax.figure.axes if a.get_visible())


def _data_top(ax: Axes) -> float | None:
    """The highest point drawn as data, as a fraction of the axes' height (None: nothing)."""
    tops = []
    for path, _, radius in _drawn(ax):
        v = np.asarray(_finite(path).vertices, dtype=float)
        v = v[np.isfinite(v).all(axis=1)]
        v = v[(v[:, 0] >= ax.bbox.x0) & (v[:, 0] <= ax.bbox.x1)] if len(v) else v
        if len(v):
            tops.append((float(v[:, 1].max()) + radius - ax.bbox.y0) / ax.bbox.height)
    return max(tops) if tops else None


def _headroom(ax: Axes, leg: Legend, renderer: Any,
              retick: Callable[[Axes], None] | None) -> bool:
    """Raise the top of the y axis so that the data end under the legend's height; False
    (limits unchanged) where that would take more than :data:`MAX_HEADROOM` of the axes."""
    top = _data_top(ax)
    if top is None or ax.yaxis_inverted():
        return False
    height = (leg.get_window_extent(renderer).height + 2 * GAP_PT * ax.figure.dpi / 72) \
        / ax.bbox.height
    target = 1.0 - height
    if target < 1.0 - MAX_HEADROOM or top <= 0:
        return False
    lo, hi = ax.get_ylim()
    scale = ax.yaxis.get_transform()
    b, t = (float(v) for v in scale.transform([lo, hi]))
    d = b + min(top, 1.0) * (t - b)
    new_t = b + (d - b) / target
    if not new_t > t:
        return False
    ax.set_ylim(lo, float(scale.inverted().transform([new_t])[0]))
    if retick is not None:
        retick(ax)
    for loc in ("upper left", "upper right", "upper center"):
        leg.set_loc(loc)
        if _free(ax, leg, renderer):
            return True
    ax.set_ylim(lo, hi)
    if retick is not None:
        retick(ax)
    return False


def keep_off_data(fig: Figure, ax: Axes, leg: Legend | None = None, *, headroom: bool = True,
                  relayout: Callable[[], None] | None = None,
                  retick: Callable[[Axes], None] | None = None) -> str:
    """Place ``ax``'s legend (or ``leg``) where it covers no data, for the figure as laid out
    now; returns where: an :data:`INSIDE` location, ``"headroom"`` or ``"outside"``.

    ``headroom`` False keeps the y limits (the user gave them); ``relayout`` lays the figure
    out again after the legend went outside (default: ``tight_layout``); ``retick`` redoes the
    y ticks after the limits changed (fixed log ticks)."""
    leg = leg if leg is not None else ax.get_legend()
    if leg is None:
        return ""
    renderer = _renderer(fig)
    outside = bool(getattr(leg, "mlprof_outside", False))  # placed outside before
    leg.set_bbox_to_anchor(None)  # the axes' box: the inside places
    for loc in INSIDE:
        leg.set_loc(loc)
        if _free(ax, leg, renderer):
            return loc
    if headroom and _headroom(ax, leg, renderer, retick):
        return "headroom"
    leg.set_loc("upper left")
    leg.set_bbox_to_anchor((1.02, 1.0), transform=ax.transAxes)
    if not outside:  # once: the figure grew by the legend's width already
        width = leg.get_window_extent(renderer).width / fig.dpi
        w, h = fig.get_size_inches()
        fig.set_size_inches(w + width + 0.15, h)
        leg.mlprof_outside = True  # type: ignore[attr-defined]
    (relayout or fig.tight_layout)()
    return "outside"
