"""Issue 36's last gaps, on injected rows (no timed asserts): the speed-up plot draws a point
within this host's noise open, ComparePrecisions' CSV keeps the rounds' causes and the floor
(an older CSV still reads), and Report's load summary says "not measurable now" for a
disturbed load point whose calls spread over more than 10x."""

from __future__ import annotations

from mlprof.measure.noise import within_noise
from mlprof.plotting import use_backend


def _speedup_rows(floor: float | None) -> list[dict]:
    """A reference and one configuration at batch sizes 1 and 8: at 1 a significant 1.02x
    (interval [1.01, 1.03]), at 8 a significant 1.30x."""
    rows = []
    for bs, (s, lo, hi) in ((1, (1.02, 1.01, 1.03)), (8, (1.30, 1.25, 1.35))):
        rows.append({"batch_size": bs, "config": "a", "reference": "a", "speedup": 1.0,
                     "ci_low": 1.0, "ci_high": 1.0, "significant": False,
                     "verdict": "reference", "floor": floor})
        within = floor is not None and abs(s - 1) <= floor
        rows.append({"batch_size": bs, "config": "b", "reference": "a", "speedup": s,
                     "ci_low": lo, "ci_high": hi, "significant": True, "floor": floor,
                     "verdict": within_noise(floor) if within else "faster"})
    return rows


def _open_points(ax) -> list[tuple[float, float]]:
    """The points drawn open (white face, no line) on ``ax``."""
    from matplotlib.colors import to_rgba

    out = []
    for line in ax.get_lines():
        if (line.get_linestyle() == "None" and len(line.get_xdata())
                and to_rgba(line.get_markerfacecolor()) == to_rgba("white")):
            out += list(zip(line.get_xdata(), line.get_ydata(), strict=True))
    return out


def test_speedup_plot_draws_within_noise_open_with_one_legend_entry() -> None:
    """A significant 1.02x on a host whose floor is 3 % reads "within this host's noise" in
    the table: the plot draws it open as it does a not significant one, the legend says so
    once, and the floor is drawn at 1 +- 3 %; the 1.30x stays filled."""
    from mlprof.plotting.compare import OPEN_TITLE, OPEN_TITLE_FLOOR, plot_comparison

    fig = plot_comparison(_speedup_rows(0.03))
    ax = fig.axes[0]
    assert _open_points(ax) == [(1, 1.02)]
    legend = ax.get_legend()
    assert legend.get_title().get_text() == OPEN_TITLE_FLOOR
    texts = [t.get_text() for t in legend.get_texts()]
    assert sum("noise" in t for t in texts) == 1, texts
    floor_lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert sorted(round(float(y), 6) for ln in floor_lines for y in ln.get_ydata()) == [
        0.97, 0.97, 1.03, 1.03]
    use_backend().close(fig)

    # not calibrated: the same points, judged by their intervals alone: both filled
    fig = plot_comparison(_speedup_rows(None))
    ax = fig.axes[0]
    assert _open_points(ax) == []
    assert ax.get_legend().get_title().get_text() == OPEN_TITLE
    assert not [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    use_backend().close(fig)


def test_is_open_reads_the_verdict() -> None:
    from mlprof.plotting.compare import is_open

    assert is_open({"significant": False, "verdict": "not significant"})
    assert is_open({"significant": True, "verdict": within_noise(0.031)})
    assert not is_open({"significant": True, "verdict": "slower"})
