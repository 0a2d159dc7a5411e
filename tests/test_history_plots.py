"""History plots: one panel per batch size, distinct colours, confirmations at their night,
alerts in the legend, no single-point plots; and PlotHistory's files on a multi-night store.

The figures are checked through their artists (axes, lines, legend texts, limits), not pixels.
The store is one real measurement copied into nights, as a nightly run writes them, with the
samples scaled per night: a steady history, then a +50 % regression at batch size 1 that the
confirming re-measurement repeats.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlprof.plotting.history import (
    ALERT_LABELS,
    CONFIRM_LABEL,
    MEASUREMENT_LABEL,
    figure_info,
    plot_history,
    save_history,
    series_colors,
    series_markers,
)
from tests.helpers import FAST, files_in, law_run

BATCH_SIZES = [2 ** i for i in range(11)]  # 1 ... 1024
NIGHTS = [f"nightly-2026-11-{d:02d}" for d in range(10, 17)]


def sweep_lines(regress_bs: int = 1, factor: float = 1.05) -> dict:
    """11 batch sizes over 7 nights (µs at batch size 1, ms at 1024); ``regress_bs`` is
    ``factor`` slower from the 6th night on, which a confirmation repeats."""
    lines = {}
    for bs in BATCH_SIZES:
        base = 0.004 + 0.004 * bs  # ms
        jitter = [1.0, 1.004, 0.997, 1.002, 0.999, 1.001, 1.0]
        vs, ys = [], []
        for i, (night, j) in enumerate(zip(NIGHTS, jitter, strict=True)):
            f = factor if bs == regress_bs and i >= 5 else 1.0
            vs.append(night)
            ys.append(base * j * f)
            if bs == regress_bs and i == 5:
                vs.append(f"{night}.confirm")
                ys.append(base * factor * 1.002)
        lines[f"batch size {bs}"] = (vs, ys)
    return lines


def confirmation_lines(ax) -> list:
    return [ln for ln in ax.lines if ln.get_gid() == "confirmation"]


def test_one_panel_per_batch_size_with_two_nights() -> None:
    lines = sweep_lines()
    lines["batch size 2048"] = ([NIGHTS[-1]], [9.0])  # one night: no history
    lines["batch size 4096"] = ([NIGHTS[-1], f"{NIGHTS[-1]}.confirm"], [18.0, 18.1])  # still one
    fig = plot_history(lines)
    info = figure_info(fig)
    assert info["panels"] == [f"batch size {bs}" for bs in BATCH_SIZES]
    footnote = [t.get_text() for t in fig.texts if "not drawn" in t.get_text()]
    assert footnote == ["not drawn (a single night): batch size 2048, batch size 4096"]
    # a figure where no series has two nights is refused, not drawn as lone points
    with pytest.raises(ValueError, match="two or more nights"):
        plot_history({"batch size 1": (["n1", "n1.confirm"], [1.0, 1.1])})


def test_each_panel_has_its_own_y_range_and_unit() -> None:
    """A +5 % regression at batch size 1 (µs) fills a visible part of its panel, where on one
    linear axis with batch size 1024 (4 ms) it was a fraction of a pixel."""
    lines = sweep_lines(factor=1.05)
    fig = plot_history(lines)
    axes = fig.axes
    lims = [ax.get_ylim() for ax in axes]
    assert len(set(lims)) == len(lims)  # no shared y axis
    for ax, (_, ys) in zip(axes, lines.values(), strict=True):
        lo, hi = ax.get_ylim()
        scale = 1000.0 if ax.get_ylabel() == "\u00b5s" else 1.0
        assert lo <= min(ys) * scale and max(ys) * scale <= hi
    assert axes[0].get_ylabel() == "\u00b5s" and axes[-1].get_ylabel() == "ms"
    lo, hi = axes[0].get_ylim()
    step = (lines["batch size 1"][1][-1] - lines["batch size 1"][1][0]) * 1000
    assert step / (hi - lo) > 0.15
    # quiet panels are not blown up: at least 20 % of their level wide
    lo, hi = axes[5].get_ylim()
    assert axes[5].get_ylabel() == "ms"
    assert (hi - lo) >= 0.2 * lines["batch size 32"][1][0] * 0.99


def test_plain_tick_labels() -> None:
    fig = plot_history({"batch size 1": (["a", "b", "c"], [1.2e-3, 1.21e-3, 1.19e-3]),
                        "batch size 8": (["a", "b", "c"], [123456.0, 123500.0, 123400.0])},
                       statistic="throughput")
    fig.canvas.draw()
    for ax in fig.axes:
        assert ax.yaxis.get_offset_text().get_text() == ""
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert labels and not any("e" in s or "\u00d7" in s for s in labels), labels


def test_colours_and_markers_stay_distinct_for_many_series() -> None:
    for n in (11, 24, 60):
        colors = series_colors(n)
        assert len({tuple(round(c, 3) for c in rgba) for rgba in colors}) == n
    assert len(set(series_markers(11))) == 11
    assert not {"^", "v"} & set(series_markers(13))  # triangles are the alerts
    fig = plot_history(sweep_lines(), view="change")
    (ax,) = fig.axes
    series = [ln for ln in ax.lines if ln.get_label() in {f"batch size {b}" for b in BATCH_SIZES}]
    assert len(series) == 11
    assert len({tuple(round(c, 3) for c in ln.get_color()) for ln in series}) == 11
    assert len({ln.get_marker() for ln in series}) == 11
    # batch sizes 1 and 1024 are no longer the same blue
    assert series[0].get_color() != series[-1].get_color()


def test_confirmation_is_a_second_point_of_its_night() -> None:
    lines = sweep_lines()
    fig = plot_history(lines)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert len(labels) == len(NIGHTS) and not any("confirm" in s for s in labels)
    (conf,) = confirmation_lines(ax)
    assert conf.get_markerfacecolor() == "white"  # hollow
    night = NIGHTS.index(NIGHTS[5])
    assert list(conf.get_xdata()) == [night]
    assert conf.get_ydata()[0] == pytest.approx(lines["batch size 1"][1][6] * 1000)
    # the line joins the nights, not the confirmation
    (series,) = [ln for ln in ax.lines if len(ln.get_xdata()) > 2]
    assert list(series.get_xdata()) == list(range(len(NIGHTS)))
    assert all(not confirmation_lines(a) for a in fig.axes[1:])


def test_nights_keep_time_order_across_series() -> None:
    """A night that only some batch sizes have goes between its neighbours, not to the end;
    a shared date prefix goes into the axis label once."""
    from mlprof.plotting.history import night_labels, nights

    lines = {"batch size 1": (["2026-11-01", "2026-11-03"], [1.0, 1.0]),
             "batch size 8": (["2026-11-02", "2026-11-02.confirm", "2026-11-03"], [2.0] * 3)}
    assert nights(lines) == ["2026-11-01", "2026-11-02", "2026-11-03"]
    fig = plot_history(lines)
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == ["01", "02", "03"]
    assert any(t.get_text() == "Night (version 2026-11-...)" for t in fig.texts)
    assert night_labels(["v1", "v2"]) == ("", ["v1", "v2"])  # nothing worth cutting


def test_legend_explains_alerts_and_confirmations() -> None:
    lines = sweep_lines()
    alert = ("batch size 1", f"{NIGHTS[5]}.confirm", "regression")
    legend = figure_info(plot_history(lines, alerts=[alert]))["legend"]
    assert legend == [MEASUREMENT_LABEL, CONFIRM_LABEL, ALERT_LABELS["regression"]]
    assert "regression alert (confirmed)" in legend
    fig = plot_history(lines, alerts=[alert, ("batch size 8", NIGHTS[6], "improvement")])
    assert figure_info(fig)["legend"][-1] == "improvement alert (confirmed)"
    # the alert marker is at the alerting night, over its highest point (drawn just above it)
    (mark,) = [ln for ln in fig.axes[0].lines if ln.get_gid() == "alert-regression"]
    assert list(mark.get_xdata()) == [5]
    night = lines["batch size 1"][1][5:7]  # the night and its confirmation
    assert mark.get_ydata()[0] == pytest.approx(max(night) * 1000)
    # nothing to explain: no alert and no confirmation entries
    quiet = {k: ([v for v in vs if "confirm" not in v], ys[:len(NIGHTS)])
             for k, (vs, ys) in sweep_lines(factor=1.0).items()}
    assert figure_info(plot_history(quiet))["legend"] == [MEASUREMENT_LABEL]


def test_change_view_is_relative_to_the_first_nights() -> None:
    lines = sweep_lines(regress_bs=64, factor=1.5)
    fig = plot_history(lines, view="change", alerts=[("batch size 64", NIGHTS[6], "regression")])
    (ax,) = fig.axes
    (bs64,) = [ln for ln in ax.lines if ln.get_label() == "batch size 64"]
    ys = list(bs64.get_ydata())
    assert ys[-1] == pytest.approx(50.0, abs=1.0) and abs(ys[0]) < 1.0
    assert "Change vs baseline [%]" in ax.get_ylabel()
    assert ALERT_LABELS["regression"] in figure_info(fig)["legend"]


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_saved_files_are_high_resolution_with_truetype_fonts(tmp_path: Path) -> None:
    from PIL import Image

    png, pdf = tmp_path / "h.png", tmp_path / "h.pdf"
    save_history(plot_history(sweep_lines()), [str(png), str(pdf)])
    dpi = Image.open(png).info["dpi"]
    assert min(dpi) >= 199.5
    data = pdf.read_bytes()
    assert b"/FontFile2" in data and b"/Type3" not in data  # TrueType, not Type 3


# -- PlotHistory over a generated multi-night store -----------------------------------------

STORE_BATCH_SIZES = (1, 8, 64, 512)
#: a steady history (a few per cent of run-to-run noise), then +50 % at batch size 1
STEADY = [1.0, 1.03, 0.98, 1.01, 0.99, 1.02]


def copy_night(src: Path, dst: Path, version: str, timestamp: str, scale, *,
               host: str | None = None, batch_sizes=None) -> None:
    """The measurement in ``src`` as version ``version`` in ``dst``: provenance rewritten
    (version, timestamp, host), samples scaled by ``scale(batch_size)``."""
    dst.mkdir(parents=True)
    for js in sorted(src.glob("runtime_bs_*.json")):
        bs = int(js.stem.rsplit("_", 1)[1])
        if batch_sizes is not None and bs not in batch_sizes:
            continue
        prov = json.loads(js.read_text())
        prov["timestamp"] = timestamp
        prov["task"]["version"] = prov["task"]["params"]["version"] = version
        if host:
            prov["host"] = host
        (dst / js.name).write_text(json.dumps(prov, indent=1) + "\n")
        lines = js.with_suffix(".csv").read_text().splitlines()
        rows = [",".join([*ln.split(",")[:3], repr(float(ln.split(",")[3]) * scale(bs))])
                for ln in lines[1:]]
        (dst / js.with_suffix(".csv").name).write_text("\n".join([lines[0], *rows]) + "\n")


def make_history_store(store: Path, measured: Path, factor: float = 1.5) -> None:
    """Nights n1..n6 steady, n7 ``factor`` slower at batch size 1 and its confirmation
    n7.confirm (batch size 1 only, as ConfirmResults measures); batch size 8 only on n7 (a
    single night); a second host with one night (a configuration without history)."""
    settings = store / measured.relative_to(measured.parents[4]).parent
    for i, s in enumerate(STEADY):
        copy_night(measured, settings / f"n{i + 1}", f"n{i + 1}",
                   f"2000-01-0{i + 1}T00:00:00+00:00", lambda bs, s=s: s,
                   batch_sizes=[b for b in STORE_BATCH_SIZES if b != 8])
    slow = lambda bs: factor if bs == 1 else 1.0  # noqa: E731
    copy_night(measured, settings / "n7", "n7", "2000-01-07T00:00:00+00:00", slow)
    copy_night(measured, settings / "n7.confirm", "n7.confirm", "2000-01-07T01:00:00+00:00",
               slow, batch_sizes=[1])
    # another host: another configuration, one night
    copy_night(measured, settings / "o7", "o7", "2000-01-07T00:00:00+00:00", lambda bs: 1.0,
               host="other-host")


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real sweep of the example DNN (the samples every night is made of)."""
    store = tmp_path_factory.mktemp("measured")
    proc = law_run("MeasureRuntime", "--version", "m", "--batch-sizes",
                   ",".join(map(str, STORE_BATCH_SIZES)), *FAST, store=store)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (path,) = store.glob("MeasureRuntime/*/*/*/m")
    return path


def test_plot_history_writes_one_figure_per_configuration(tmp_path: Path,
                                                          measured: Path) -> None:
    store = tmp_path / "nights"
    make_history_store(store, measured)
    proc = law_run("PlotHistory", "--version", "h1", "--stores", str(store),
                   store=tmp_path / "out")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = files_in(tmp_path / "out")
    plots = [p for p in out if p.suffix in (".png", ".pdf")]
    # one configuration with history -> one figure (PNG and PDF); the single-night one: none
    assert sorted(p.suffix for p in plots) == [".pdf", ".png"], plots
    assert "1 configuration(s) with a single night not drawn" in proc.stdout + proc.stderr
    import pandas as pd

    (alerts,) = [p for p in out if p.name == "alerts_median_ms.csv"]
    rows = pd.read_csv(alerts).to_dict("records")
    assert [(r["batch_size"], r["kind"], r["first_version"], r["version"]) for r in rows] == [
        (1, "regression", "n7", "n7.confirm")]

    # the same figure in-process: panels for the batch sizes with two nights, the alert
    from mlprof.report import collect, to_frame
    from mlprof.report.history import alerts_table, history_groups

    report = to_frame(collect([store]))
    groups = history_groups(report, alerts_table(report).to_dict("records"))
    assert "other-host" in {g["host"] for g, _, _ in groups}
    (group,) = [g for g in groups if g[0]["host"] != "other-host"]
    _, lines, marks = group
    fig = plot_history(lines, alerts=marks)
    info = figure_info(fig)
    assert info["panels"] == ["batch size 1", "batch size 64", "batch size 512"]
    assert ALERT_LABELS["regression"] in info["legend"] and CONFIRM_LABEL in info["legend"]
    bottom = fig.axes[-1]  # the bottom row carries the nights' names
    assert [t.get_text() for t in bottom.get_xticklabels()] == [f"n{i}" for i in range(1, 8)]
    (conf,) = confirmation_lines(fig.axes[0])
    assert list(conf.get_xdata()) == [6]  # n7's x


def test_plot_history_change_view_is_another_directory(tmp_path: Path) -> None:
    from mlprof.tasks.history import PlotHistory

    a = PlotHistory(version="h1", stores=(str(tmp_path),))
    b = PlotHistory(version="h1", stores=(str(tmp_path),), view="change")
    assert a.output()["plots"].path.endswith("/history_median_ms")
    assert b.output()["plots"].path.endswith("/history_median_ms__change")
