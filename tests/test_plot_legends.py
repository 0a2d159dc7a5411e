"""What a plot shows a person (issue 21): no legend over data, and a corner that names the
runtime and its version, the CPU and the host, for every plot kind mlprof makes.

The legend check is independent of :mod:`mlprof.plotting.legend` (which places the legends):
after ``fig.canvas.draw()``, the points drawn (line vertices and points along the segments
between them, band and bar outlines and interiors) are taken in display coordinates and none
may lie in a legend's box. The data are shaped like real sweeps (the numbers of docs/tasks.md
and docs/profiles.md: the DNN's time per event falls from 13 to 1.3 us over batch sizes 1-1024,
the efficiency rises from 0.11 to 0.92, ONNX Runtime and PyTorch equal on small models).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mlprof.plotting import Curve, plot_runtimes, use_backend
from mlprof.plotting.compare import plot_comparison
from mlprof.plotting.dashboard import plot_distributions, plot_speedup, plot_throughput
from mlprof.plotting.efficiency import plot_efficiency
from mlprof.plotting.history import plot_history
from mlprof.plotting.labels import CurveInfo, corner_label, curve_labels
from mlprof.plotting.profile import Profile, plot_profile
from tests.helpers import DNN, FAST, REPO, files_in, law_run

SWEEP = np.array([2 ** i for i in range(11)])  # 1 ... 1024
FOUR = np.array([1, 8, 64, 512])
CPU, HOST = "AMD EPYC 7763 64-Core Processor", "node1"
INFOS = [CurveInfo("DNN 10x128", "onnxruntime", ("1.32.0",), CPU, HOST),
         CurveInfo("DNN 10x128", "torch", ("2.9.1",), CPU, HOST),
         CurveInfo("DNN 10x128", "openvino", ("2025.3.0",), CPU, HOST)]
ONE = [INFOS[0]]


def stats(bs: np.ndarray, per_call_ms: np.ndarray, spread: float = 0.05, **flags) -> dict:
    """Statistics columns: medians, a +-``spread`` band, optional flag columns (batch sizes
    given in ``flags`` are True)."""
    med = np.asarray(per_call_ms, dtype=float)
    out = {"batch_size": bs, "median_ms": med, "p16_ms": med * (1 - spread),
           "p84_ms": med * (1 + spread), "events_per_call": bs}
    out.update({k: np.isin(bs, v) for k, v in flags.items()})
    return out


def dnn(factor: float = 1.0, bs: np.ndarray = SWEEP, **flags) -> dict:
    """Per call 12 us of overhead plus 1.3 us per event."""
    return stats(bs, factor * (0.012 + 0.0013 * bs), **flags)


def three(bs: np.ndarray = SWEEP, factors=(1.0, 1.0, 0.7), **flags) -> list[Curve]:
    return [Curve(label, dnn(f, bs, **flags)) for label, f in
            zip(curve_labels(INFOS), factors, strict=True)]


SIX = [CurveInfo(m, rt, (v,), CPU, HOST) for m in ("linear (Linear 3f2a1b)",
                                                   "mlp (MLP 9c0d11)")
       for rt, v in (("onnxruntime", "1.32.0"), ("torch", "2.9.1"), ("openvino", "2025.3.0"))]


def six() -> list[Curve]:
    """Two script models on three runtimes, per event from 20 to 2 us, close together."""
    return [Curve(label, dnn(1.0 + 0.08 * i, FOUR)) for i, label in
            enumerate(curve_labels(SIX))]


def corner(infos=INFOS) -> str:
    return corner_label(infos, "cpu", 1)


def profiles() -> list[Profile]:
    """A CNN's profile: Conv dominates, the wall time per event falls with the batch size,
    the calls' spread is skewed (a few slow calls pull the mean up)."""
    from mlprof.measure.profile import OpRow

    rng = np.random.default_rng(1)
    out = []
    for bs in (1, 8, 64, 512):
        per_event = 0.065 / bs + 0.0075
        # 5 % of the calls ten times slower (the profiler's buffer flushed, a page fault): the
        # mean lies above the 84th percentile
        wall = per_event * bs * (1 + rng.gamma(1.0, 0.02, 200))
        wall[::20] *= 10
        op = 0.9 * per_event * bs
        shares = {"Conv": 0.6, "Relu": 0.1, "MaxPool": 0.12, "Gemm": 0.08, "Reshape": 0.02,
                  "Flatten": 0.01, "Add": 0.03, "Softmax": 0.04}
        rows = [OpRow(k, 1.0, op * v, v) for k, v in shares.items()]
        out.append(Profile(bs, rows, list(wall), bs))
    return out


COMPARED = [(1.46, 1.40, 1.52), (1.21, 1.15, 1.27), (1.02, 0.99, 1.05), (0.97, 0.95, 0.99)]
#: few rounds: a wide interval around a steady speed-up (a band under the whole legend)
COMPARED_WIDE = [(1.2, 0.9, 1.5)] * 4


def comparison_rows(compared=COMPARED) -> list[dict]:
    rows = []
    for bs, (s, lo, hi) in zip(FOUR, compared, strict=True):
        rows.append({"batch_size": int(bs), "config": "onnxruntime", "reference": "onnxruntime",
                     "speedup": 1.0, "ci_low": 1.0, "ci_high": 1.0, "significant": False,
                     "verdict": "reference"})
        rows.append({"batch_size": int(bs), "config": "torch", "reference": "onnxruntime",
                     "speedup": s, "ci_low": lo, "ci_high": hi,
                     "significant": not lo <= 1 <= hi,
                     "verdict": "faster" if lo > 1 else "slower" if hi < 1 else "n.s."})
    return rows


def history_lines() -> dict:
    nights = [f"nightly-2026-11-{d:02d}" for d in range(10, 24)]
    rng = np.random.default_rng(3)
    lines = {}
    for bs in (1, 8, 64, 512):
        level = 0.012 + 0.0013 * bs
        ys = level * (1 + rng.normal(0, 0.01, len(nights)))
        ys[9:] *= 1.15  # a regression
        lines[f"batch size {bs}"] = (nights, list(ys))
    return lines


#: every plot kind mlprof makes, with data shaped as measured; (figure factory, the texts that
#: must name runtime with version, CPU and host: the corner's)
KINDS: dict[str, Callable] = {
    "runtimes-3rt-log": lambda: plot_runtimes(three(), x_log=True, top_right_label=corner()),
    "runtimes-1rt-xlin": lambda: plot_runtimes([Curve("DNN 10x128", dnn(bs=FOUR))],
                                               top_right_label=corner(ONE)),
    "runtimes-per-batch": lambda: plot_runtimes(three(FOUR), x_log=True, bs_normalized=False,
                                                top_right_label=corner()),
    "runtimes-flagged": lambda: plot_runtimes(three(unstable=(4, 64), contended=(1024,)),
                                              x_log=True, error_style="bars",
                                              top_right_label=corner()),
    "runtimes-linear-y": lambda: plot_runtimes(three(FOUR, (1.0, 1.05, 1.1)), x_log=True,
                                               y_log=False, top_right_label=corner()),
    "runtimes-6-long-labels": lambda: plot_runtimes(six(), x_log=True, y_log=False,
                                                    top_right_label=corner_label(
                                                        SIX, "cpu", 1)),
    "efficiency": lambda: plot_efficiency(
        [Curve("DNN 10x128", {**stats(FOUR, np.array([0.0291, 0.0522, 0.241, 1.78])),
                              "gflop_per_call": 0.00032 * FOUR})], [100.0],
        top_right_label=corner(ONE)),
    "throughput": lambda: plot_throughput(three(), top_right_label=corner()),
    "throughput-wide-bands": lambda: plot_throughput(
        [Curve(c.label, {**c.stats, "p16_ms": c.stats["median_ms"] * 0.7,
                         "p84_ms": c.stats["median_ms"] * 1.4}) for c in three(FOUR)],
        y_log=False, top_right_label=corner()),
    "speedup-crossing": lambda: plot_speedup(
        Curve("onnxruntime 1.32.0", dnn(bs=FOUR)),
        [Curve("torch 2.9.1", stats(FOUR, dnn(bs=FOUR)["median_ms"] / [0.6, 0.9, 1.2, 1.6])),
         Curve("openvino 2025.3.0", stats(FOUR, dnn(bs=FOUR)["median_ms"]
                                          / [1.5, 1.3, 1.0, 0.8]))],
        top_right_label=corner()),
    "speedup": lambda: plot_speedup(Curve("onnxruntime 1.32.0", dnn()),
                                    [Curve("torch 2.9.1", dnn(1.4)),
                                     Curve("openvino 2025.3.0", dnn(0.7))],
                                    top_right_label=corner()),
    "comparison": lambda: plot_comparison(comparison_rows(), top_right_label=corner()),
    "comparison-wide-ci": lambda: plot_comparison(comparison_rows(COMPARED_WIDE),
                                                  top_right_label=corner()),
    "profile": lambda: plot_profile(profiles(), title="CNN",
                                    top_right_label=corner(ONE)),
    "distributions": lambda: plot_distributions(
        {c.label: {int(b): np.random.default_rng(int(b)).gamma(8, 0.012 * b / 8, 400)
                   for b in FOUR} for c in three(FOUR)}, top_right_label=corner()),
    "history-panels": lambda: plot_history(history_lines(), top_right_label=corner(ONE),
                                           title="DNN 10x128 on onnxruntime 1.32.0"),
    "history-change": lambda: plot_history(history_lines(), view="change",
                                           top_right_label=corner(ONE),
                                           title="DNN 10x128 on onnxruntime 1.32.0"),
}


def drawn_points(ax, box) -> int:
    """How many drawn points of ``ax`` lie in ``box`` (display coordinates), inside the
    axes: line vertices (with their marker's radius) and 20 points along each drawn segment,
    and a 40 x 20 grid over ``box`` tested against every band and bar (filled polygons)."""
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Rectangle

    b = ax.bbox
    x0, x1 = max(box.x0, b.x0), min(box.x1, b.x1)
    y0, y1 = max(box.y0, b.y0), min(box.y1, b.y1)
    if x0 >= x1 or y0 >= y1:
        return 0
    hits = 0
    for ln in ax.get_lines():
        xy = np.asarray(ln.get_xydata(), dtype=float)
        if not ln.get_visible() or xy.size == 0:
            continue
        v = ln.get_transform().transform(xy)
        v = v[np.isfinite(v).all(axis=1)]
        pad = 0.0
        if ln.get_marker() not in ("None", "none", "", None):
            pad = ln.get_markersize() / 2 * ax.figure.dpi / 72
        pts = [v]
        if ln.get_linestyle() not in ("None", "none", "") and len(v) > 1:
            t = np.linspace(0, 1, 20)[:, None, None]
            pts.append((v[:-1] + t * (v[1:] - v[:-1])).reshape(-1, 2))
            pad = max(pad, 1.0)
        p = np.concatenate(pts)
        hits += int(((p[:, 0] > x0 - pad) & (p[:, 0] < x1 + pad) & (p[:, 1] > y0 - pad)
                     & (p[:, 1] < y1 + pad)).sum())
    gx, gy = np.meshgrid(np.linspace(x0, x1, 40), np.linspace(y0, y1, 20))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    polys = [coll.get_transform().transform_path(p) for coll in ax.collections
             if isinstance(coll, PolyCollection) for p in coll.get_paths()]
    polys += [r.get_transform().transform_path(r.get_path()) for r in ax.patches
              if isinstance(r, Rectangle)]
    for path in polys:
        hits += int(path.contains_points(grid).sum())
    return hits


def legends_over_data(fig) -> list[str]:
    """The legends (title or first entry) with drawn points in their box."""
    fig.canvas.draw()
    legends = [leg for ax in fig.axes if (leg := ax.get_legend()) is not None]
    legends += list(fig.legends)
    bad = []
    for leg in legends:
        box = leg.get_window_extent()
        n = sum(drawn_points(ax, box) for ax in fig.axes if ax.get_visible())
        if n:
            bad.append(f"{leg.get_title().get_text() or leg.get_texts()[0].get_text()}: "
                       f"{n} point(s)")
    return bad


@pytest.mark.parametrize("kind", list(KINDS))
def test_no_legend_over_data(kind: str) -> None:
    fig = KINDS[kind]()
    try:
        assert legends_over_data(fig) == []
        # and every legend is drawn at all: inside the figure
        for leg in [a.get_legend() for a in fig.axes if a.get_legend()] + list(fig.legends):
            box = leg.get_window_extent()
            assert fig.bbox.x0 - 1 <= box.x0 and box.x1 <= fig.bbox.x1 + 1, kind
            assert fig.bbox.y0 - 1 <= box.y0 and box.y1 <= fig.bbox.y1 + 1, kind
    finally:
        use_backend().close(fig)


def test_profile_draws_the_median_inside_its_band() -> None:
    """The wall-time line of the profile's lower panel is the calls' median, inside the
    16-84 % band drawn around it (the mean of these calls lies above the band)."""
    profs = profiles()
    walls = [np.asarray(p.wall_ms) / p.events for p in profs]
    assert any(np.mean(w) > np.percentile(w, 84) for w in walls)  # the old line was outside
    for style in ("band", "bars"):
        fig = plot_profile(profs, error_style=style)
        ax = fig.axes[1]
        (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "mlprof-wall"
                   and ln.get_marker() == "o"]  # not the error bars' caps
        y = np.asarray(line.get_ydata(), dtype=float) / 1000  # drawn in us
        np.testing.assert_allclose(y, [np.median(w) for w in walls], rtol=1e-9)
        assert all(np.percentile(w, 16) <= v <= np.percentile(w, 84)
                   for w, v in zip(walls, y, strict=True))
        assert "median" in ax.get_legend().get_texts()[0].get_text()
        use_backend().close(fig)


# -- corners --------------------------------------------------------------------------------

def corner_ok(text: str, runtime_versions: dict[str, str], cpu: str, host: str) -> None:
    """``text`` (the corner, or the corner with the legend where runtimes differ) names each
    runtime with its version, the CPU (short) and the host."""
    from mlprof.plotting.labels import short_cpu_model

    flat = " ".join(text.split())
    for rt, v in runtime_versions.items():
        assert f"{rt} {v}" in flat, (rt, v, flat)
    assert short_cpu_model(cpu) in flat, flat
    assert f"host {host}" in flat, flat


def test_comparison_corner_and_legend_name_versions_cpu_and_host() -> None:
    """An interleaved comparison's texts come from its provenance: the runtimes with their
    versions in the legend, the model, CPU, threads, host and rounds in the corner."""
    from mlprof.plotting.compare import comparison_texts

    record = {"cpu_model": CPU, "host": HOST, "rounds": 20, "configs": [
        {"label": "onnxruntime", "model": "dnn", "runtime": "onnxruntime",
         "runtime_version": "1.32.0"},
        {"label": "torch", "model": "dnn", "runtime": "torch", "runtime_version": "2.9.1"}]}
    labels, corner = comparison_texts({"batch_sizes": {"1": record, "8": record}}, "cpu", 1,
                                      {"dnn": "DNN 10x128"})
    assert labels == {"onnxruntime": "onnxruntime 1.32.0", "torch": "torch 2.9.1"}
    assert corner == "DNN 10x128 | AMD EPYC 7763, 1 thread | host node1 | interleaved x20"
    fig = plot_comparison(comparison_rows(), labels=labels, top_right_label=corner)
    texts = [t.get_text() for t in fig.axes[0].texts] + [
        t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    corner_ok(" ".join(texts), {"onnxruntime": "1.32.0", "torch": "2.9.1"}, CPU, HOST)
    use_backend().close(fig)


def test_history_corner_names_runtime_version_cpu_and_host() -> None:
    from mlprof.tasks.history import machine_text

    text = machine_text({"model": "dnn", "runtime": "onnxruntime", "runtime_version": "1.32.0",
                         "device": "cpu", "threads": 1.0, "cpu_model": CPU, "host": HOST})
    assert text == "onnxruntime 1.32.0 | AMD EPYC 7763, 1 thread | host node1"


def pdf_text(path: Path) -> str:
    import subprocess

    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout


def installed(runtime: str) -> str:
    from mlprof.runtimes import runtime_version

    return runtime_version(runtime)


def here() -> tuple[str, str]:
    from mlprof.sysinfo import cpu_model

    return cpu_model(), socket.gethostname()


CNN = str(REPO / "examples" / "cnn" / "model_onnx_cnn.yaml")


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
@pytest.mark.parametrize("task,args,runtimes", [
    ("PlotRuntimes", ["--model-file", str(DNN), "--batch-sizes", "1,8", *FAST],
     ("onnxruntime",)),
    ("PlotProfile", ["--model-file", CNN, "--batch-sizes", "1,8", "--n-calls", "5",
                     "--warmup", "1", "--min-duration", "0"], ("onnxruntime",)),
    # two runtimes each: 3.9 s and 4.7 s, slow
    pytest.param("PlotSpeedup", ["--model-files", str(DNN), "--runtimes", "onnxruntime,openvino",
                                 "--batch-sizes", "1,8", *FAST], ("onnxruntime", "openvino"),
                 marks=pytest.mark.slow),
    pytest.param("PlotMultiRuntimes", ["--model-files", str(DNN), "--runtimes",
                                       "onnxruntime,openvino", "--batch-sizes", "1,8",
                                       "--n-calls", "10", "--warmup", "1", "--interleave", "6"],
                 ("onnxruntime", "openvino"), marks=pytest.mark.slow),
])
def test_plot_files_name_runtime_version_cpu_and_host(task: str, args: list[str],
                                                      runtimes: tuple[str, ...],
                                                      store: Path) -> None:
    """The PDF a user opens names the measured runtime(s) with version, this machine's CPU
    and its host (read back with pdftotext), and its legends cover no data."""
    if "openvino" in runtimes:
        pytest.importorskip("openvino")
    proc = law_run(task, "--version", "corner", *args, store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (pdf,) = [p for p in files_in(store) if p.suffix == ".pdf" and task in p.parts]
    cpu, host = here()
    text = pdf_text(pdf)
    corner_ok(text, {rt: installed(rt) for rt in runtimes}, cpu, host)


def test_a_legend_with_no_free_place_goes_outside_and_the_axes_keep_their_size() -> None:
    """A band over the whole axes and a --y-max (no headroom allowed): the legend goes right
    of the axes, the figure grows by about its width, the axes stay as wide as before."""
    from mlprof.plotting.legend import keep_off_data

    bs = FOUR
    full = {"batch_size": bs, "median_ms": np.full(4, 0.5), "p16_ms": np.full(4, 0.0),
            "p84_ms": np.full(4, 5.0)}
    small = plot_runtimes([Curve("a", dict(full))], x_log=True, y_log=False, y_min=0.0,
                          y_max=1.0, bs_normalized=False)
    # the same figure, legend left where matplotlib put it: over the band
    ax = small.axes[0]
    small.canvas.draw()
    leg = ax.get_legend()
    assert leg.get_window_extent().x1 > ax.bbox.x1  # it is outside already ...
    assert small.get_size_inches()[0] > 8.0  # ... and the figure wider than 8 in
    assert ax.get_ylim() == (0.0, 1.0)  # the given limits stay
    assert legends_over_data(small) == []
    width = ax.bbox.width
    # placing it again finds no inside place either and keeps it outside
    assert keep_off_data(small, ax, headroom=False) == "outside"
    use_backend().close(small)
    plain = plot_runtimes([Curve("a", dnn(bs=FOUR))], x_log=True)
    assert abs(plain.axes[0].bbox.width - width) / width < 0.15
    use_backend().close(plain)
