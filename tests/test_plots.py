"""Plots for a talk (issue 15): checked on matplotlib's artists and on the files' headers, not
on pixels. Legends and corners name runtime, version, CPU, threads and host; curves differ in
marker and line style; a 1-1024 sweep gets a logarithmic y axis with plain tick labels; PNGs at
>= 200 dpi, PDFs without Type 3 fonts; the CMS style draws no text outside the figure;
unstable points are open; PlotThroughput and PlotSpeedup run with law, a model script's
speed-up included."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from mlprof.measure.stats import read_stats_csv, summarize, throughput, write_stats_csv
from mlprof.plotting import Curve, plot_runtimes, save_figure, use_backend
from mlprof.plotting.dashboard import plot_speedup, plot_throughput
from mlprof.plotting.labels import CurveInfo, corner_label, curve_labels
from tests.helpers import DNN, FAST, REPO, files_in, law_run

SWEEP = np.array([2 ** i for i in range(11)])  # 1 ... 1024


def sweep_stats(per_call_ms: np.ndarray, unstable=()) -> dict:
    """Statistics columns of a sweep over :data:`SWEEP` with a +-5 % band."""
    med = np.asarray(per_call_ms, dtype=float)
    return {"batch_size": SWEEP, "median_ms": med, "p16_ms": med * 0.95,
            "p84_ms": med * 1.05, "unstable": np.isin(SWEEP, unstable)}


def dnn_like(factor: float = 1.0, **kw) -> dict:
    """Per call: 12 us of overhead plus 1.3 us per event: per event from 13 us at batch size 1
    to 1.3 us at 1024, more than a decade."""
    return sweep_stats(factor * (0.012 + 0.0013 * SWEEP), **kw)


INFOS = [CurveInfo("DNN 10x128", "onnxruntime", ("1.32.0",), "AMD EPYC 7763 64-Core Processor",
                   "node1"),
         CurveInfo("DNN 10x128", "torch", ("2.14.1",), "AMD EPYC 7763 64-Core Processor",
                   "node1"),
         CurveInfo("DNN 10x128", "torch-compile", ("2.14.1",),
                   "AMD EPYC 7763 64-Core Processor", "node1")]


def three_runtimes(**kw):
    """The plot of one model on three runtimes, ORT and torch exactly equal."""
    curves = [Curve(label, dnn_like(f)) for label, f in zip(curve_labels(INFOS), (1, 1, 1.4),
                                                             strict=True)]
    return plot_runtimes(curves, x_log=True, top_right_label=corner_label(INFOS, "cpu", 1),
                         **kw)


def close(fig) -> None:
    use_backend().close(fig)


def test_legend_and_corner_name_runtime_version_cpu_threads_and_host():
    fig = three_runtimes()
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts[:3] == ["onnxruntime 1.32.0", "torch 2.14.1", "torch-compile 2.14.1"]
    corner = next(t.get_text() for t in ax.texts if t.get_gid() == "mlprof-top-right")
    assert corner == "DNN 10x128 | AMD EPYC 7763, 1 thread | host node1"
    close(fig)
    # one runtime: its version in the corner; two versions of one runtime: in the legend
    one = [INFOS[0]]
    assert corner_label(one, "cpu", 2).startswith("onnxruntime 1.32.0 | AMD EPYC 7763, 2 threads")
    two = [INFOS[0], CurveInfo("DNN 10x128", "onnxruntime", ("1.20.1",))]
    assert curve_labels(two) == ["onnxruntime 1.32.0", "onnxruntime 1.20.1"]
    # several models on several runtimes (each its own): model and runtime with version
    mixed = [INFOS[0], CurveInfo("DNN (TF)", "tensorflow", ("2.21.0",))]
    assert curve_labels(mixed) == ["DNN 10x128, onnxruntime 1.32.0", "DNN (TF), tensorflow 2.21.0"]


def test_curves_differ_in_marker_and_line_style():
    fig = three_runtimes()
    handles, labels = fig.axes[0].get_legend_handles_labels()
    lines = [h for h, lbl in zip(handles, labels, strict=True) if "." in lbl]
    assert len(lines) == 3
    assert len({ln.get_marker() for ln in lines}) == 3
    assert len({str(ln.get_linestyle()) for ln in lines}) == 3
    # ORT and torch lie exactly on each other: the first one's markers are larger
    assert lines[0].get_markersize() > lines[1].get_markersize()
    close(fig)


def test_y_axis_is_log_for_a_1_to_1024_sweep_and_linear_when_forced():
    fig = three_runtimes()
    assert fig.axes[0].get_yscale() == "log"
    close(fig)
    fig = three_runtimes(y_log=False)
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
    close(fig)
    # less than a decade: linear by default
    flat = plot_runtimes([Curve("a", sweep_stats(0.01 * SWEEP))])
    assert flat.axes[0].get_yscale() == "linear"
    close(flat)
    # throughput (events/s) of the same sweep spans a decade too
    fig = plot_throughput([Curve("a", dnn_like())])
    assert fig.axes[0].get_yscale() == "log"
    close(fig)


@pytest.mark.parametrize("make", [
    lambda: three_runtimes(),
    lambda: three_runtimes(y_log=True, y_min=0.0021, y_max=0.0029),  # a third of a decade
    lambda: plot_throughput([Curve("a", dnn_like())]),
], ids=["latency", "narrow", "throughput"])
def test_log_tick_labels_are_plain_numbers(make):
    fig = make()
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert len(labels) >= 2, labels
    assert all(re.fullmatch(r"[0-9][0-9.,]*[kM]?", t) for t in labels), labels
    close(fig)


def test_png_has_200_dpi_and_pdf_has_no_type3_fonts(tmp_path: Path):
    from PIL import Image

    png, pdf = tmp_path / "p.png", tmp_path / "p.pdf"
    save_figure(three_runtimes(), [str(png), str(pdf)])
    with Image.open(png) as im:
        assert min(im.info["dpi"]) >= 199.5
        assert im.size[0] >= 1600
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    assert b"/Type3" not in data
    assert b"/FontFile2" in data  # TrueType, embedded


def embedded_fonts(pdf: Path) -> dict:
    """The TrueType fonts embedded in ``pdf`` (its FlateDecode'd ``FontFile2`` streams), read
    by fontTools, by PostScript name."""
    import io
    import zlib

    from fontTools.ttLib import TTFont

    fonts = {}
    for raw in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf.read_bytes(), re.DOTALL):
        try:
            data = zlib.decompress(raw)
        except zlib.error:
            continue
        if data[:4] == b"\x00\x01\x00\x00":  # an sfnt with TrueType outlines
            font = TTFont(io.BytesIO(data))
            fonts[font["name"].getDebugName(6)] = font
    return fonts


def test_pdf_fonts_are_embedded_without_layout_tables_and_the_same_glyphs(tmp_path: Path):
    """save_figure embeds font subsets without the layout tables no PDF viewer reads (half of
    writing a PlotRuntimes PDF): the glyphs drawn (outlines, advance widths, the character
    map) are those matplotlib's own subsets hold, and fontTools' defaults are as before."""
    from fontTools import subset

    from mlprof.plotting.runtimes import LAYOUT_TABLES, SAVE_RC

    before = list(subset.Options._drop_tables_default)
    lean, full = tmp_path / "lean.pdf", tmp_path / "full.pdf"
    save_figure(three_runtimes(), [str(lean)])
    assert subset.Options._drop_tables_default == before
    fig = three_runtimes()  # the same figure, saved by matplotlib alone
    with use_backend().rc_context(SAVE_RC):
        fig.savefig(full)
    close(fig)
    got, want = embedded_fonts(lean), embedded_fonts(full)
    assert len(got) == 2 and sorted(got) == sorted(want)  # DejaVu Sans and its bold
    for name, font in got.items():
        ref = want[name]
        assert not set(LAYOUT_TABLES) & set(font.keys()), name
        assert set(LAYOUT_TABLES) & set(ref.keys()), name  # what was left out
        assert set(font.keys()) == set(ref.keys()) - set(LAYOUT_TABLES)
        cmap = font.getBestCmap()
        assert cmap and cmap == ref.getBestCmap()
        for glyph in cmap.values():
            assert font["hmtx"][glyph] == ref["hmtx"][glyph]
            assert font["glyf"][glyph].compile(font["glyf"]) == \
                ref["glyf"][glyph].compile(ref["glyf"]), (name, glyph)


@pytest.mark.parametrize("style", ["cms", "default"])
def test_no_text_outside_the_figure_or_its_legend(style, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    """The extents of every text as drawn into the file (a draw_event during savefig) lie in
    the figure, and the legend's texts in its frame (CMS text was clipped: "16-84% banc")."""
    from matplotlib.text import Text

    if style == "cms":
        pytest.importorskip("mplhep")
    monkeypatch.setenv("MLP_PLOT_STYLE", style)
    fig = three_runtimes(caption="ONNX export for onnxruntime: opset 18, fp32; torch and "
                         "torch-compile run the script itself")
    seen: list[str] = []

    def check(event) -> None:
        r = event.renderer
        box = fig.bbox
        for t in fig.findobj(Text):
            if not (t.get_visible() and t.get_text().strip()):
                continue
            e = t.get_window_extent(r)
            assert box.x0 - 1 <= e.x0 and e.x1 <= box.x1 + 1, t.get_text()
            assert box.y0 - 1 <= e.y0 and e.y1 <= box.y1 + 1, t.get_text()
            seen.append(t.get_text())
        leg = fig.axes[0].get_legend()
        frame = leg.get_frame().get_window_extent(r)
        for t in [leg.get_title(), *leg.get_texts()]:
            e = t.get_window_extent(r)
            assert frame.x0 <= e.x0 and e.x1 <= frame.x1, t.get_text()

    fig.canvas.mpl_connect("draw_event", check)
    save_figure(fig, [str(tmp_path / "cms.png")])
    assert any("host node1" in s for s in seen) and any("ONNX export" in s for s in seen)


def test_unstable_points_are_open_and_explained():
    fig = plot_runtimes([Curve("a", dnn_like(unstable=(4, 64)))], x_log=True)
    ax = fig.axes[0]
    opened = [ln for ln in ax.get_lines() if ln.get_markerfacecolor() in ("white", "w")
              and len(ln.get_xdata())]
    assert len(opened) == 1 and list(opened[0].get_xdata()) == [4, 64]
    assert any("unstable" in t.get_text() for t in ax.get_legend().get_texts())
    close(fig)
    fig = plot_speedup(Curve("ref", dnn_like()), [Curve("b", dnn_like(0.5, unstable=(8,)))])
    opened = [ln for ln in fig.axes[0].get_lines() if ln.get_markerfacecolor() in ("white", "w")
              and len(ln.get_xdata())]
    assert [list(ln.get_xdata()) for ln in opened] == [[8]]
    assert np.allclose(fig.axes[0].get_lines()[0].get_ydata(), 2.0)  # twice as fast
    close(fig)


def test_throughput_is_events_per_second_at_the_median(tmp_path: Path):
    samples = np.array([1.0] * 9 + [100.0])  # one slow outlier: mean 10.9 ms, median 1 ms
    row = summarize(samples, 8)
    assert row["throughput"] == pytest.approx(8 * 1000 / 1.0)
    assert throughput(8, 1.0) == pytest.approx(8000.0)
    assert np.isnan(throughput(8, 0.0))
    # a statistics file written with the mean-based number reads with the median-based one
    path = tmp_path / "stats.csv"
    write_stats_csv(path, [{**row, "throughput": 8 * 1000 / samples.mean()}])
    assert read_stats_csv(path)["throughput"][0] == pytest.approx(8000.0)


# --- the tasks, with law -------------------------------------------------------------------


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_throughput_and_speedup_tasks_on_the_example_dnn(store: Path):
    from mlprof.runtimes import runtime_version

    args = ["--version", "v1", "--model-files", str(DNN), "--runtimes", "onnxruntime,openvino",
            "--batch-sizes", "1,64", "--file-types", "png,svg", *FAST]
    for task in ("PlotThroughput", "PlotSpeedup"):
        r = law_run(task, *args, store=store)
        assert r.returncode == 0, r.stderr[-3000:]
    (tp_svg,) = [p for p in files_in(store / "PlotThroughput") if p.suffix == ".svg"]
    (sp_svg,) = [p for p in files_in(store / "PlotSpeedup") if p.suffix == ".svg"]
    assert tp_svg.name == "throughput_onnxruntime-openvino_bs_1_64.svg"
    assert sp_svg.name == "speedup_vs-onnxruntime_onnxruntime-openvino_bs_1_64.svg"
    ov = runtime_version("openvino")
    sp = sp_svg.read_text()  # svg.fonttype none: the texts are in the file as text
    assert f"openvino {ov}" in sp and f"onnxruntime {runtime_version('onnxruntime')} " \
        "(reference)" in sp
    assert "Throughput [events/s]" in tp_svg.read_text()
    # the measurements were shared: one MergeRuntimes per runtime
    assert len([p for p in files_in(store / "MergeRuntimes") if p.name.startswith("stats_")]) \
        == 2
    bad = law_run("PlotSpeedup", *args[:4], "--runtimes", "openvino", store=store)
    assert bad.returncode != 0
    assert "--reference-runtime: onnxruntime is not one of the runtimes" in bad.stderr


@pytest.mark.slow
def test_speedup_of_the_shipped_linear_runtimes_experiment(store: Path):
    """experiments/linear_runtimes.yaml (a model script on ONNX Runtime and PyTorch, speed-ups
    vs ONNX Runtime) gives a speed-up plot: ONNX Runtime measures the script's export (its
    settings key has the export part), torch the script itself; they are compared on their
    measurement settings, and the export is named in the caption."""
    from mlprof.experiments import load_experiment
    from mlprof.runtimes import runtime_version

    exp = load_experiment(REPO / "experiments" / "linear_runtimes.yaml")
    assert exp.reference_runtime == "onnxruntime" and len(exp.runtimes) == 2
    r = law_run("PlotSpeedup", "--version", "v1", "--model-files", ",".join(exp.model_files),
                "--runtimes", ",".join(exp.runtimes), "--reference-runtime",
                exp.reference_runtime, "--batch-sizes", ",".join(map(str, exp.batch_sizes)),
                "--file-types", "png,svg", *FAST, store=store, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    settings = {p.parts[-3] for p in files_in(store / "MergeRuntimes")
                if p.name.startswith("stats_")}
    assert len(settings) == 2 and len({s.split("__")[0] for s in settings}) == 1, settings
    (svg,) = [p for p in files_in(store / "PlotSpeedup") if p.suffix == ".svg"]
    assert svg.name.startswith("speedup_vs-onnxruntime_onnxruntime-torch_")
    text = svg.read_text()
    assert f"torch {runtime_version('torch')}" in text
    assert "ONNX export for onnxruntime: opset" in text and "torch runs the script itself" in text
    assert [p for p in files_in(store / "PlotSpeedup") if p.suffix == ".png"]
    # and as the nightly runs it: RunExperiment on the shipped file, with its own settings
    r = law_run("RunExperiment", "--version", "nightly-2026-11-24", "--experiment-file",
                str(REPO / "experiments" / "linear_runtimes.yaml"), store=store, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    (status,) = [p for p in files_in(store / "RunExperiment") if p.name == "status.json"]
    plots = json.loads(status.read_text())["plots"]
    speedups = [p for p in plots if "/PlotSpeedup/" in p]
    assert len(speedups) == 1 and Path(speedups[0]).is_file(), plots
    assert "mindur0p5" in speedups[0]  # the experiment's settings, not the test's
