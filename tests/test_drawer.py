"""The drawing process of a sweep's plot (mlprof.plotting.drawer): the same file as drawn in
``law run`` itself, the figure's errors as they are, a gone process costs nothing but its
time, and no measurement starts beside its imports."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from mlprof.errors import MLProfError
from mlprof.plotting import drawer
from tests.helpers import REPO

FIGURE = "mlprof.plotting.curves:runtimes_figure"
OPTIONS = {"x_log": True, "y_log": None, "y_min": None, "y_max": None, "bs_normalized": True,
           "error_style": "band", "top_right_label": None}


def _args(path: str = "stats.csv") -> tuple:
    from mlprof.plotting.curves import merged_curve_info

    stats = {"batch_size": [1, 4, 16], "median_ms": [0.02, 0.03, 0.06],
             "p16_ms": [0.018, 0.028, 0.055], "p84_ms": [0.025, 0.033, 0.07]}
    info = merged_curve_info("dnn", "onnxruntime", [], "1.0", [])
    return [info], [stats], OPTIONS, ("cpu", 1), None, None, [path]


@pytest.fixture
def started():
    assert drawer.start(["png"])
    yield drawer._drawer
    drawer.stop()


def test_the_drawing_process_writes_the_file_this_process_writes(tmp_path: Path, started,
                                                                monkeypatch):
    here, there = tmp_path / "here.png", tmp_path / "there.png"
    drawer._draw_here(FIGURE, [str(here)], _args(), {})

    def not_here(*args):
        raise AssertionError("drawn in the test's process")

    monkeypatch.setattr(drawer, "_draw_here", not_here)  # the drawing process has its own
    drawer.render(FIGURE, [there], *_args())
    assert started.proc.poll() is None  # still there for the next plot
    assert there.read_bytes() == here.read_bytes()


def test_the_figures_errors_arrive_as_raised(tmp_path: Path, started):
    """A one-line error stays one (file and field); a defect keeps its traceback as a note."""
    infos, stats, options, corner, _, caption, files = _args(str(tmp_path / "stats.csv"))
    efficiency = {"peak_gflops": 10.0}  # the statistics lack the FLOPs the efficiency needs
    with pytest.raises(MLProfError) as err:
        drawer.render(FIGURE, [tmp_path / "e.png"], infos, stats, options, corner, efficiency,
                      caption, files)
    assert str(tmp_path / "stats.csv") in str(err.value)
    with pytest.raises(ValueError) as defect:  # two curves, one table (zip strict)
        drawer.render(FIGURE, [tmp_path / "d.png"], infos * 2, stats, options, corner)
    assert any("in the drawing process" in n for n in getattr(defect.value, "__notes__", []))
    assert not list(tmp_path.glob("*.png"))
    assert started.proc.poll() is None  # still there for the next plot


def test_a_forked_worker_draws_there_and_a_dead_senders_answer_is_skipped(tmp_path: Path,
                                                                         started):
    """A luigi worker forked from ``law run`` (``--workers N``) sends its plot to the drawing
    process too, one job at a time with the parent's; the answer of a job whose sender died
    waiting is not taken for the next one's."""
    here = tmp_path / "here.png"
    drawer._draw_here(FIGURE, [str(here)], _args(), {})
    # a job sent by a process that died before reading its answer: it stays in the pipe
    stale = pickle.dumps(((1, 1), "no.such.module:figure", [str(tmp_path / "x.png")], (), {}),
                         pickle.HIGHEST_PROTOCOL)
    started.jobs.write(stale)
    started.jobs.flush()
    pid = os.fork()
    if pid == 0:  # the worker: draws there (drawing here would fail) or exits 1
        code = 1
        try:
            drawer._draw_here = None  # type: ignore[assignment]
            drawer.render(FIGURE, [tmp_path / "worker.png"], *_args())
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (tmp_path / "worker.png").read_bytes() == here.read_bytes()
    drawer.render(FIGURE, [tmp_path / "parent.png"], *_args())  # and the parent's, after it
    assert (tmp_path / "parent.png").read_bytes() == here.read_bytes()
    assert started.proc.poll() is None


def test_a_gone_drawing_process_leaves_the_plot_to_this_one(tmp_path: Path, started):
    started.proc.kill()
    started.proc.wait()
    drawer.render(FIGURE, [tmp_path / "p.png"], *_args())
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    assert not drawer.running()  # forgotten: the next plot does not try it again


def test_no_measurement_starts_beside_its_imports(tmp_path: Path, monkeypatch, caplog):
    """The measurement lock waits for the drawing process to have imported (the tests' slow
    machine: its imports made longer by 1.5 s) before it lets the measurement start, and says
    so while it waits."""
    import logging

    from mlprof.measure.lock import measurement_lock

    monkeypatch.setenv("MLP_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("MLP_TEST_SLOW_PHASE", f"{drawer.IMPORTS}=1.5")
    monkeypatch.setattr(drawer, "SAY_EVERY_S", 0.3)
    assert drawer.start(["png"])
    try:
        assert not drawer._drawer.is_ready()
        with caplog.at_level(logging.INFO, logger="mlprof"), measurement_lock("test"):
            assert drawer._drawer.is_ready()
    finally:
        drawer.stop()
    assert "waiting for the drawing process to finish importing" in caplog.text


_LAWCLI = """
import sys
from mlprof import lawcli
from mlprof.plotting import drawer
started = []
drawer.start = lambda types=("pdf",): started.append(list(types)) or True
sys.argv = ["law", *sys.argv[1:]]
try:
    lawcli.main()
except SystemExit:
    pass
print(started)
"""


@pytest.mark.parametrize("argv, started", [
    (["PlotRuntimes", "--version", "v", "--print-status", "0"], "[]"),
    (["PlotRuntimes", "--version", "v", "--file-types", "png,svg", "--help"], "[]"),
    (["PlotMultiRuntimes", "--version", "v", "--interleave", "4", "--help"], "[]"),
    (["MergeRuntimes", "--version", "v", "--batch-sizes", "x"], "[]"),
    (["PlotRuntimes", "--version", "v", "--batch-sizes", "x"], "[['pdf']]"),
    (["PlotRuntimes", "--version", "v", "--model-file", "models/selftest/linear.py",
      "--batch-sizes", "x"], "[]"),
    (["PlotMultiRuntimes", "--version", "v", "--file-types", "png", "--batch-sizes", "x"],
     "[['png']]"),
])
def test_law_run_starts_it_only_for_a_sweeps_plot_it_draws(tmp_path: Path, argv, started):
    """A sweep's plot starts it before law's imports (here the parameter check fails after),
    with the writers of its file types; looking (``--print-status``, ``--help``), an
    interleaved comparison (drawn by its task), a model script (whose measurement server starts
    there) and tasks without that plot start none."""
    env = dict(os.environ, MLP_STORE=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", _LAWCLI, "run", *argv], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip().splitlines()[-1] == started, proc.stderr[-2000:]


def test_the_file_types_it_imports_ahead_are_the_tasks():
    from mlprof.lawcli import file_types_of

    assert file_types_of(["--version", "v"]) == ["pdf"]
    assert file_types_of(["--file-types", "png,SVG"]) == ["png", "svg"]
    assert file_types_of(["--file-types=pdf,png", "--version", "v"]) == ["pdf", "png"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_law_run_of_a_sweeps_plot_imports_no_matplotlib(tmp_path: Path, workers: str):
    """The plot of ``law run PlotRuntimes`` is drawn by its drawing process: law run itself
    imports none of matplotlib (its own imports, from ``-X importtime``, which the drawing
    process does not inherit), nor do the luigi worker processes it forks with ``--workers 2``
    (which inherit it), and the plot is there."""
    from tests.helpers import FAST

    env = dict(os.environ, MLP_STORE=str(tmp_path), MLP_BASE=str(REPO))
    proc = subprocess.run([sys.executable, "-X", "importtime", str(REPO / "bin" / "law"), "run",
                           "PlotRuntimes", "--version", "t", "--batch-sizes", "1", *FAST,
                           "--workers", workers],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(list(tmp_path.rglob("PlotRuntimes/**/runtimes_*.pdf"))) == 1
    imported = [ln for ln in proc.stderr.splitlines()
                if ln.startswith("import time:") and "matplotlib" in ln]
    assert not imported, imported[:5]


def test_a_hostile_file_type_is_refused_and_never_runs(tmp_path: Path):
    """``--file-types`` reaches the drawing process's command line before any parameter check:
    a value written to break out of it runs nothing there, and the task's check refuses it in
    one line naming the parameter, exit 40, nothing written."""
    marker = tmp_path / "ran"
    # on a command line that pasted it unquoted: the condition, run before serve(...), makes
    # the marker (no comma: the value is split at commas; lower case: it is lowered)
    hostile = f"pdf'])if __import__('os').mkdir({str(marker).lower()!r})else 0#"
    store = tmp_path / "store"
    env = dict(os.environ, MLP_STORE=str(store), MLP_BASE=str(REPO))
    proc = subprocess.run([sys.executable, str(REPO / "bin" / "law"), "run", "PlotRuntimes",
                           "--version", "t", "--batch-sizes", "1", "--file-types", hostile],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 40, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and "file-types" in errors[0], proc.stderr[-3000:]
    assert not Path(str(marker).lower()).exists()
    assert not store.exists() or not [p for p in store.rglob("*") if p.is_file()]
