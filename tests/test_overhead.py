"""The tool's own time per point (issue 38): what a measurement child inherits from the
measurement server instead of doing again, branch files read once per process, and a plot
drawn without pandas."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from mlprof.measure import MeasureSettings
from mlprof.measure.harness import measure
from mlprof.measure.isolate import run_isolated
from mlprof.measure.results import (
    branch_problem,
    merge_branches,
    read_branch,
    read_checked_branch,
    write_branch,
)
from mlprof.results import layout
from tests.helpers import DNN


def child_state(progress=None) -> dict:
    """Run in a measurement child: what it found already done by the server."""
    from mlprof.util import dist_version

    return {"frozen": gc.get_freeze_count(), "numpy.ma": "numpy.ma" in sys.modules,
            "contention": "mlprof.measure.contention" in sys.modules,
            "versions_cached": dist_version.cache_info().currsize}


def test_a_child_starts_with_the_servers_work_done():
    """Every point is a fresh fork of the server: the modules a measurement imports, the
    package versions and a frozen GC (no full collection walking the server's objects) come
    with the fork."""
    state = run_isolated(child_state, {}, timeout=120, label="state")
    assert state["frozen"] > 10_000, state  # numpy, onnx, onnxruntime's objects
    assert state["numpy.ma"] and state["contention"], state
    assert state["versions_cached"] >= 2, state


def _branch(tmp_path: Path, bs: int) -> dict[str, str]:
    result = measure(str(DNN), MeasureSettings(batch_size=bs, n_calls=5, warmup=1,
                                               min_duration=0))
    paths = {k: str(tmp_path / n) for k, n in layout.branch_files(bs).items()}
    write_branch(result, paths, task={"family": "MeasureRuntime", "version": "t"})
    return paths


def test_a_checked_branch_is_not_read_again_until_it_changes(tmp_path: Path):
    """MergeRuntimes reads the branches luigi's completeness check just read and checked: it
    gets them from memory, as long as the files are the same; a changed file is read again."""
    paths = _branch(tmp_path, 2)
    assert branch_problem(paths["csv"], paths["json"]) is None
    samples, prov = read_checked_branch(paths["csv"], paths["json"])
    again, prov2 = read_checked_branch(paths["csv"], paths["json"])
    assert again is samples and not samples.flags.writeable  # the one array kept, read-only
    fresh, fresh_prov = read_branch(paths["csv"], paths["json"])
    np.testing.assert_array_equal(samples, fresh)
    assert prov == fresh_prov
    prov["n_samples"] = -1  # the caller's copy
    assert read_checked_branch(paths["csv"], paths["json"])[1]["n_samples"] == samples.size

    # the file changes (another sample value, so another size and time): read again
    text = Path(paths["csv"]).read_text().splitlines()
    text[1] = text[1].rsplit(",", 1)[0] + ",123.5"
    Path(paths["csv"]).write_text("\n".join(text) + "\n")
    changed, _ = read_checked_branch(paths["csv"], paths["json"])
    assert changed[0] == 123.5 and changed is not samples


def test_merge_of_checked_branches_equals_a_merge_that_reads_them(tmp_path: Path):
    """The merged files are the same whether the branches were checked (kept in memory) first
    or read from the files."""
    branches = [_branch(tmp_path, bs) for bs in (1, 4)]
    merged = {}
    for name in ("read", "checked"):
        if name == "checked":
            assert all(branch_problem(b["csv"], b["json"]) is None for b in branches)
        d = tmp_path / name
        d.mkdir()
        outputs = {k: str(d / n) for k, n in layout.merged_files("bs_1_4").items()}
        rows = merge_branches(branches, outputs, {"model_name": "dnn"})
        merged[name] = (rows, {k: Path(p).read_text() for k, p in outputs.items()})
    assert [r["batch_size"] for r in merged["read"][0]] == [1, 4]
    assert merged["checked"][1] == merged["read"][1]  # the files, byte for byte


def test_a_plot_is_drawn_once_when_saved(tmp_path: Path):
    """save_figure draws a laid-out figure once per file: matplotlib drew it twice (a first
    draw for the placeholder layout engine tight_layout leaves behind)."""
    import matplotlib.figure

    from mlprof.plotting import Curve, plot_runtimes, save_figure

    stats = {"batch_size": [1, 2, 4], "median_ms": [1.0, 1.5, 2.5], "p16_ms": [0.9, 1.4, 2.3],
             "p84_ms": [1.1, 1.7, 2.8]}
    fig = plot_runtimes([Curve("dnn", stats)], caption="a caption under the axes")
    draws = []
    original = matplotlib.figure.Figure.draw

    def counted(self, renderer):
        draws.append(type(renderer).__name__)
        return original(self, renderer)

    matplotlib.figure.Figure.draw = counted  # type: ignore[method-assign]
    try:
        save_figure(fig, [str(tmp_path / "a.pdf"), str(tmp_path / "a.png")])
    finally:
        matplotlib.figure.Figure.draw = original  # type: ignore[method-assign]
    assert len(draws) == 2, draws  # one per file
    assert (tmp_path / "a.pdf").stat().st_size > 0 and (tmp_path / "a.png").stat().st_size > 0


_PLOT_PATH = """
import sys
from mlprof.measure.results import measured_versions, read_merged_provenance  # PlotRuntimes'
from mlprof.measure.stats import read_stats_csv                                # run imports
from mlprof.plotting import save_figure
from mlprof.plotting.curves import merged_curve_info, runtimes_figure

options = {"x_log": True, "y_log": None, "y_min": None, "y_max": None, "bs_normalized": True,
           "error_style": "band", "top_right_label": None}
info = merged_curve_info("dnn", "onnxruntime", [], "1.0", [])
save_figure(runtimes_figure([info], [read_stats_csv(sys.argv[1])], options, ("cpu", 1)),
            [sys.argv[2]])
print("pandas imported" if "pandas" in sys.modules else "no pandas")
"""


def test_the_plot_of_a_sweep_imports_no_pandas(tmp_path: Path):
    """PlotRuntimes' plot reads its statistics as a dict of arrays: importing pandas (for a
    type annotation of plotting/curves.py) was 0.25-0.4 s of the 1.3 s the plot took. Run in a
    fresh interpreter, the modules PlotRuntimes' run imports and the plot itself."""
    import subprocess

    from tests.helpers import REPO

    stats = tmp_path / "stats.csv"
    stats.write_text("batch_size,median_ms,p16_ms,p84_ms\n1,0.02,0.018,0.025\n"
                     "4,0.03,0.028,0.033\n16,0.06,0.055,0.07\n")
    pdf = tmp_path / "plot.pdf"
    proc = subprocess.run([sys.executable, "-c", _PLOT_PATH, str(stats), str(pdf)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "no pandas"
    assert pdf.read_bytes().startswith(b"%PDF")


def test_the_kept_branches_stay_within_their_bound_newest_kept(tmp_path: Path, monkeypatch):
    """What :func:`branch_problem` keeps for :func:`read_checked_branch` stays within
    ``KEEP_SAMPLES`` (the oldest branches dropped first, read again from the file when asked),
    with the count of samples kept as a running total, right after every check and recheck."""
    from mlprof.measure import results

    branches = [_branch(tmp_path, bs) for bs in (1, 2, 3)]
    per_branch = read_branch(branches[0]["csv"], branches[0]["json"])[0].size
    monkeypatch.setattr(results, "_CONTENT", results.OrderedDict())
    monkeypatch.setattr(results, "_CONTENT_SAMPLES", 0)
    monkeypatch.setattr(results, "_CHECKED", {})
    monkeypatch.setattr(results, "KEEP_SAMPLES", 2 * per_branch + per_branch // 2)

    def kept() -> list[str]:
        assert results._CONTENT_SAMPLES == sum(v[1].size for v in results._CONTENT.values())
        return [Path(k[0]).name for k in results._CONTENT]

    for b in branches:
        assert branch_problem(b["csv"], b["json"]) is None
    assert kept() == [Path(b["csv"]).name for b in branches[1:]]  # the oldest dropped
    samples, _ = read_checked_branch(branches[0]["csv"], branches[0]["json"])  # from the file
    np.testing.assert_array_equal(samples, read_branch(branches[0]["csv"],
                                                       branches[0]["json"])[0])
    # a branch whose file changed is checked and kept again, replacing its old entry
    st = os.stat(branches[2]["csv"])
    os.utime(branches[2]["csv"], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert branch_problem(branches[2]["csv"], branches[2]["json"]) is None
    assert kept() == [Path(b["csv"]).name for b in branches[1:]]


def test_the_csv_parses_back_to_the_samples_bit_for_bit(tmp_path: Path):
    """The raw CSV's 6-decimal milliseconds parse back to ``samples_ns / 1e6`` exactly, over
    the whole range a sample may take (1 ns to an hour), and the text is what a formatted line
    per row gave: what lets :func:`write_branch` remember the samples it wrote."""
    from mlprof.measure.harness import MeasureResult
    from mlprof.measure.results import read_samples

    rng = np.random.default_rng(3)
    ns = np.concatenate([[1, 999_999, 1_000_000, 3_600_000_000_000],
                         np.exp(rng.uniform(0, np.log(3.6e12), 20_000)).astype(np.int64)])
    events = np.repeat([0, 1], ns.size // 2)
    calls = np.concatenate([np.arange(ns.size // 2)] * 2)
    result = MeasureResult(8, ns, events, calls)
    text = result.csv_text()
    per_row = "".join(f"8,{e},{c},{x / 1e6:.6f}\n" for e, c, x in
                      zip(events.tolist(), calls.tolist(), ns.tolist(), strict=True))
    assert text == "batch_size,event,call,runtime_ms\n" + per_row
    path = tmp_path / layout.branch_files(8)["csv"]
    path.write_text(text)
    read = read_samples(path, 8, ns.size)
    assert read.tobytes() == result.samples_ms.tobytes()


def test_a_written_branch_is_known_without_parsing_it_again(tmp_path: Path, monkeypatch):
    """luigi's completeness check right after a branch and MergeRuntimes get the branch this
    process wrote from memory (the CSV parsed 10-11 ms of a 27,000-sample point); a file changed
    after the write is read and checked again."""
    from mlprof.measure import results

    paths = _branch(tmp_path, 4)
    parsed = []
    original = results.read_samples

    def counted(*args, **kwargs):
        parsed.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(results, "read_samples", counted)
    assert branch_problem(paths["csv"], paths["json"]) is None
    samples, prov = read_checked_branch(paths["csv"], paths["json"])
    assert parsed == []
    fresh, fresh_prov = read_branch(paths["csv"], paths["json"])
    assert samples.tobytes() == fresh.tobytes() and prov == fresh_prov
    parsed.clear()
    text = Path(paths["csv"]).read_text().replace(",", ";", 5)  # damaged after the write
    Path(paths["csv"]).write_text(text)
    problem = branch_problem(paths["csv"], paths["json"])
    assert problem is not None and parsed == [paths["csv"]]


def test_implausible_written_samples_are_not_remembered(tmp_path: Path):
    """What the reader would refuse (here a sample over an hour) is not taken from memory: the
    check reads the file and names it."""
    from mlprof.measure.harness import MeasureResult

    good = measure(str(DNN), MeasureSettings(batch_size=2, n_calls=5, warmup=1,
                                             min_duration=0))
    ns = good.samples_ns.copy()
    ns[2] = 4_000_000_000_000  # 4000 s
    paths = {k: str(tmp_path / n) for k, n in layout.branch_files(2).items()}
    write_branch(MeasureResult(2, ns, good.events, good.calls, good.provenance), paths,
                 task={"family": "MeasureRuntime", "version": "t"})
    problem = branch_problem(paths["csv"], paths["json"])
    assert problem is not None and "longer than an hour" in str(problem)
    # a batch size 2 result written under batch size 4's names: read, and named
    other = {k: str(tmp_path / n) for k, n in layout.branch_files(4).items()}
    write_branch(good, other, task={"family": "MeasureRuntime", "version": "t"})
    problem = branch_problem(other["csv"], other["json"])
    assert problem is not None and "batch size" in str(problem)


_PRELOAD = """
import sys
from mlprof.tasks.framework.workflow import note_pending_plot
from mlprof.tasks.load import MeasureLoad
from mlprof.tasks.profile import ProfileRuntime
from mlprof.tasks.runtime import MeasureRuntime
import mlprof.measure.forkserver as fs

if sys.argv[1] == "plot":
    note_pending_plot(["pdf", "svg"])
kind = {"MeasureRuntime": MeasureRuntime, "MeasureLoad": MeasureLoad,
        "ProfileRuntime": ProfileRuntime}[sys.argv[3]]
task = kind(version="v1", batch_sizes=(1,), model_file=sys.argv[2])
task.workflow_requires()
mods = ("matplotlib.pyplot", "matplotlib.backends.backend_pdf", "matplotlib.backends.backend_svg",
        "mlprof.plotting.curves")
print(" ".join(m for m in mods if m in sys.modules) or "none",
      fs.multiprocessing.forkserver._forkserver._forkserver_pid is not None)
"""


@pytest.mark.parametrize("kind", ["MeasureRuntime", "MeasureLoad", "ProfileRuntime"])
def test_a_sweep_with_a_plot_to_draw_imports_it_while_the_server_starts(tmp_path: Path, kind):
    """A local measuring workflow, of every measurement kind, starts the measurement server
    while scheduling; with a plot noted as missing (a plot task found incomplete) it imports
    pyplot, mlprof's plot modules and the writers of the plot's file types meanwhile, in the
    scheduling thread (never beside a measurement): 0.42 s of a 0.52 s plot. Without a plot to
    draw it imports none of them. Fresh interpreters. (MeasureLoad did neither until
    2026-11-29: PlotLoad of two stream points took 4.9 s, now 4.0 s.)"""
    import subprocess

    from tests.helpers import REPO

    env = dict(os.environ, MLP_STORE=str(tmp_path), MLP_BASE=str(REPO))
    out = {}
    for case in ("plot", "no-plot"):
        proc = subprocess.run([sys.executable, "-c", _PRELOAD, case, str(DNN), kind], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        out[case] = proc.stdout.strip()
    assert out["plot"] == ("matplotlib.pyplot matplotlib.backends.backend_pdf "
                           "matplotlib.backends.backend_svg mlprof.plotting.curves True")
    assert out["no-plot"] == "none True"


def test_every_measurement_kind_prestarts_the_server_its_children_need():
    """The server started while scheduling imports torch where the branches' children will
    ask for it (else each child imports torch itself, 1.2 s here): every generation runtime;
    not an ONNX model on onnxruntime (1.2 s of a server's start for nothing)."""
    from mlprof.tasks.generation import MeasureGeneration
    from mlprof.tasks.load import MeasureLoad
    from mlprof.tasks.profile import ProfileRuntime
    from mlprof.tasks.runtime import MeasureRuntime

    for kind in (MeasureRuntime, MeasureLoad, ProfileRuntime):
        assert kind.prestarts_server
        assert kind(version="v1", model_file=str(DNN), batch_sizes=(1,)).prestart_torch() \
            is False
    assert MeasureGeneration.prestarts_server and MeasureGeneration.prestart_torch(
        None)  # type: ignore[arg-type]


def test_an_incomplete_plot_task_notes_its_file_types(tmp_path: Path, monkeypatch):
    """PlotMixin's completeness check notes a missing plot's file types for the sweep's early
    imports; a complete one notes nothing."""
    from mlprof.tasks.framework import workflow
    from mlprof.tasks.plotting import PlotRuntimes

    monkeypatch.setenv("MLP_STORE", str(tmp_path))
    monkeypatch.setattr(workflow, "_PENDING_PLOT_TYPES", set())
    task = PlotRuntimes(version="v1", batch_sizes=(1,), model_file=str(DNN),
                        file_types=("png", "svg"))
    assert not task.complete()
    assert workflow._PENDING_PLOT_TYPES == {"png", "svg"}
    workflow._PENDING_PLOT_TYPES.clear()
    for target in task.output().values():
        Path(target.path).parent.mkdir(parents=True, exist_ok=True)
        Path(target.path).write_bytes(b"x")
    assert task.complete()
    assert workflow._PENDING_PLOT_TYPES == set()
