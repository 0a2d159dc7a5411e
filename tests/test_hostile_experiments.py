"""Issue 22, part B: hostile experiment files cost their own experiment only, never the night.

Each case of the issue is a file beside good ones: an alias bomb in ``title:``, a FIFO, a link
to ``/dev/zero``, an oversized file, a non-UTF-8 file, malformed YAML, an unknown runtime,
``runtimes: [tfaot]`` on an ONNX model, a lone surrogate in the title, a FIFO as a model file
and a directory named ``*.yaml``. Each must be one line naming the file (and the field), in
bounded time (a thread join or a subprocess timeout, so that a regression hangs no CI); the
good experiments are measured, confirmed and on the dashboard. Also: ``PlotMultiRuntimes``
with a runtime that cannot measure the model, and the Nightly's ``--version`` room for
``.confirm``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from mlprof.errors import MLProfError
from mlprof.report.nightly import summary_line
from tests.helpers import REPO, bounded, law_run

DNN = REPO / "examples" / "dnn" / "model_onnx_l10u128.yaml"

#: the cheapest measurement: one batch size, a few calls, no minimum duration
CHEAP = "batch_sizes: [1]\nsettings: {n_calls: 5, warmup: 1, min_duration: 0}\n"

#: 519 bytes that expand to 9**9 strings once aliases are resolved ("billion laughs")
ALIAS_BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    f"title: *i\nmodel_files: [{DNN}]\n"
)


def _write(text: str | bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    return make


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _model_fifo(path: Path) -> None:
    fifo = path.parent.parent / "model_fifo.onnx"
    os.mkfifo(fifo)
    path.write_text(f"title: FIFO model\nmodel_files: [{fifo}]\n{CHEAP}")


def _directory(path: Path) -> None:
    path.mkdir()


#: file stem -> (how to make it, (field or "", a fragment of its one-line message))
HOSTILE: dict[str, tuple[Callable[[Path], None], tuple[str, str]]] = {
    "alias_bomb": (_write(ALIAS_BOMB),
                   ("", "line 2: YAML aliases (*a) are not accepted in experiment files")),
    "fifo": (_fifo, ("", "is a FIFO, not a regular file")),
    "zero": (_zero, ("", "is a device, not a regular file")),
    "huge": (_write(f"title: huge\nmodel_files: [{DNN}]\n" + "#" * (2 << 20) + "\n"),
             ("", "an experiment file has at most 1048576")),
    "latin1": (_write(f"title: caf\xe9\nmodel_files: [{DNN}]\n".encode("latin-1")),
               ("", "not a text file: cannot be decoded as UTF-8 (byte 10)")),
    "malformed": (_write(f"title: [\nmodel_files: [{DNN}]\n"),
                  ("", "malformed YAML: line 3, column 1: expected ',' or ']'")),
    "unknown_runtime": (_write(f"model_files: [{DNN}]\nruntimes: [tensorflow2]\n{CHEAP}"),
                        ("runtimes", "unknown runtime 'tensorflow2'")),
    "tfaot_on_onnx": (_write(f"title: AOT on ONNX\nmodel_files: [{DNN}]\nruntimes: [tfaot]\n"
                             f"{CHEAP}"), ("", "none of the runtimes (tfaot) measures it")),
    "surrogate": (_write(f'title: "\\ud800 x"\nmodel_files: [{DNN}]\n'),
                  ("title", "contains the lone surrogate U+D800: not Unicode text")),
    "model_fifo": (_model_fifo, ("model_files[0]", "model_fifo.onnx is a FIFO, not a regular "
                                 "file")),
    "directory": (_directory, ("", "is a directory, not a regular file")),
}

#: cases refused when the file is loaded (the others load and fail when planned or run)
LOAD_ERRORS = [k for k in HOSTILE if k != "tfaot_on_onnx"]


def hostile_directory(root: Path, good: dict[str, str]) -> Path:
    """``root/experiments`` with every hostile file and the ``good`` ones."""
    exps = root / "experiments"
    exps.mkdir(parents=True)
    for stem, (make, _) in HOSTILE.items():
        make(exps / f"{stem}.yaml")
    for stem, text in good.items():
        (exps / f"{stem}.yaml").write_text(text)
    return exps


def test_each_hostile_file_is_one_line_and_the_good_one_loads(tmp_path: Path) -> None:
    from mlprof.experiments import load_experiments

    exps = hostile_directory(tmp_path, {"good": f"title: Good\nmodel_files: [{DNN}]\n{CHEAP}"})
    loaded = {Path(f).stem: (exp, err) for f, exp, err in bounded(
        lambda: load_experiments(exps))}
    assert set(loaded) == set(HOSTILE) | {"good"}
    exp, err = loaded["good"]
    assert err is None and exp.title == "Good"
    for stem in LOAD_ERRORS:
        exp, err = loaded[stem]
        field, fragment = HOSTILE[stem][1]
        assert exp is None and isinstance(err, MLProfError), stem
        assert err.file == str(exps / f"{stem}.yaml"), (stem, str(err))
        assert (err.field or "") == field, (stem, str(err))
        assert fragment in err.message and "\n" not in str(err), (stem, str(err))
    # AOT on ONNX loads (the runtime name is right): its plan says no runtime measures the model
    from mlprof.experiments import plan

    todo = plan(loaded["tfaot_on_onnx"][0])
    assert todo.pairs == ()
    assert todo.errors == ("model_onnx_l10u128.yaml: none of the runtimes (tfaot) measures it",)
    assert todo.skipped[0].startswith("skipped tfaot on model_onnx_l10u128.yaml: runtime tfaot "
                                      "measures AOT TensorFlow models")


def test_title_control_and_bidi_characters_are_refused_and_nfc_normalized(
        tmp_path: Path) -> None:
    from mlprof.experiments import load_experiment

    path = tmp_path / "t.yaml"
    for title, message in ((r"red \e[31m", "contains the control character U+001B"),
                           (r"a \u202e b", "contains the control character U+202E")):
        path.write_text(f'title: "{title}"\nmodel_files: [{DNN}]\n')
        with pytest.raises(MLProfError) as info:
            load_experiment(path)
        assert info.value.field == "title" and message in info.value.message
    path.write_text(f'title: "  cafe\\u0301  "\nmodel_files: [{DNN}]\n')
    assert load_experiment(path).title == "caf\u00e9"


def test_unreadable_experiment_files_get_their_own_path_in_bounded_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RunExperiment hashes the file for its output path: a FIFO hung the scheduler there and
    /dev/zero filled the memory."""
    from mlprof.tasks.nightly import RunExperiment

    monkeypatch.setenv("MLP_STORE", str(tmp_path / "store"))
    exps = hostile_directory(tmp_path, {})
    paths = {stem: bounded(lambda s=stem: RunExperiment(
        version="v1", experiment_file=str(exps / f"{s}.yaml")).output().path)
        for stem in ("fifo", "zero", "huge", "directory", "latin1")}
    assert len(set(paths.values())) == len(paths)  # each its own status file


def test_an_unexpected_exception_in_one_experiment_is_its_failed_status(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-experiment boundary: a bug triggered by one experiment (injected here) is that
    experiment's failed status with one line, never a failed task (which stops the night)."""
    import luigi

    import mlprof.tasks.nightly as nightly

    def broken_plan(exp):  # an injected bug, deterministic: the experiment's planning raises
        raise ZeroDivisionError("injected\nover two lines")

    monkeypatch.setattr(nightly, "plan", broken_plan)
    monkeypatch.setenv("MLP_STORE", str(tmp_path / "store"))
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"title: Exp\nmodel_files: [{DNN}]\n{CHEAP}")
    task = nightly.RunExperiment(version="v1", experiment_file=str(exp))
    # in the main thread (luigi's worker sets signal handlers); the injected error never hangs
    assert luigi.build([task], local_scheduler=True, workers=1)
    status = json.loads(Path(task.output().path).read_text())
    assert status["status"] == "failed"
    assert status["errors"] == [f"{exp}: unexpected ZeroDivisionError: injected over two lines"]


def test_nightly_version_leaves_room_for_confirm(tmp_path: Path) -> None:
    from mlprof.report.nightly import VERSION_MAX_CHARS, check_version_room
    from mlprof.results.layout import check_segment

    # the limit is the store's: the longest version it takes
    check_segment("v" * VERSION_MAX_CHARS, "--version")
    with pytest.raises(MLProfError):
        check_segment("v" * (VERSION_MAX_CHARS + 1), "--version")
    check_version_room("v" * 192)
    with pytest.raises(MLProfError, match="must be at most 192 characters for a Nightly, got "
                       "193"):
        check_version_room("v" * 193)

    exps = tmp_path / "experiments"
    exps.mkdir()
    (exps / "good.yaml").write_text(f"title: Good\nmodel_files: [{DNN}]\n{CHEAP}")
    r = law_run("Nightly", "--version", "n" * 195, "--experiments", str(exps),
                store=tmp_path / "store", timeout=120)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 40, out[-2000:]
    assert out == ("ERROR: luigi-interface - mlprof error: --version: must be at most 192 "
                   "characters for a Nightly, got 195: suspicious results are measured again "
                   "under '<version>.confirm', and a version has at most 200")
    assert not (tmp_path / "store").exists()  # refused before anything was measured


def test_plot_multi_runtimes_skips_a_runtime_that_cannot_measure_the_model(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    args = ("--model-files", str(DNN), "--batch-sizes", "1", "--n-calls", "5",
            "--min-duration", "0")
    r = law_run("PlotMultiRuntimes", "--version", "v1", "--runtimes", "onnxruntime,tfaot",
                *args, store=store, timeout=300, env={"MLP_QUICK": "1"})
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "Traceback" not in out
    skipped = [line for line in out.splitlines() if "skipped tfaot" in line]
    assert skipped == [f"WARNING: mlprof - skipped tfaot: runtime tfaot measures AOT TensorFlow "
                       f"models (inference_engine: tfaot); {DNN} is an ONNX/YAML model: use "
                       "onnxruntime or openvino"]
    (plot,) = store.glob("PlotMultiRuntimes/**/*.pdf")
    # measured and plotted with onnxruntime only; the file name says tfaot was left out
    assert "/onnxruntime-" in str(plot) and plot.name == "runtimes_no-tfaot_bs_1.pdf"
    assert plot.read_bytes().startswith(b"%PDF")

    # no runtime measures it: one line, exit 40 (was a 27-line IndexError traceback)
    r = law_run("PlotMultiRuntimes", "--version", "v1", "--runtimes", "tfaot", *args,
                store=tmp_path / "store2", timeout=120)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 40, out[-3000:]
    assert out == ("ERROR: luigi-interface - mlprof error: --runtime: runtime tfaot measures "
                   f"AOT TensorFlow models (inference_engine: tfaot); {DNN} is an ONNX/YAML "
                   "model: use onnxruntime or openvino")


@pytest.mark.slow
def test_nightly_over_hostile_experiment_files(tmp_path: Path) -> None:
    """The acceptance test: Nightly over every hostile file beside two good experiments."""
    good = {"good_a": f"title: Good A\npriority: 1\nmodel_files: [{DNN}]\n{CHEAP}",
            "good_b": f"title: Good B\nmodel_files: [{DNN}]\nruntimes: [onnxruntime, tfaot]\n"
                      + CHEAP.replace("[1]", "[2]")}
    exps = hostile_directory(tmp_path, good)
    store = tmp_path / "store"
    r = law_run("Nightly", "--version", "h1", "--experiments", str(exps), store=store,
                timeout=900, env={"MLP_QUICK": "1"})
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "Traceback" not in out
    (path,) = store.glob("Nightly/*/h1/nightly.json")
    summary = json.loads(path.read_text())
    statuses = {e["name"]: e for e in summary["experiments"]}
    assert set(statuses) == set(HOSTILE) | set(good)
    for stem in good:  # measured and plotted
        assert statuses[stem]["status"] == "ok", statuses[stem]
        assert statuses[stem]["errors"] == [] and statuses[stem]["plots"]
    assert statuses["good_b"]["skipped"][0].startswith("skipped tfaot on model_onnx_l10u128")
    for stem, (_, (field, fragment)) in HOSTILE.items():
        (error,) = statuses[stem]["errors"]  # one line each
        assert statuses[stem]["status"] == "failed"
        assert fragment in error and "\n" not in error, (stem, error)
        if stem in LOAD_ERRORS:
            assert error.startswith(f"{exps / stem}.yaml: {field + ': ' if field else ''}"), \
                error
        # and one line in the run's output: its status line
        lines = [line for line in out.splitlines() if error in line]
        assert lines == [f"{statuses[stem]['title']}: failed ({error})"], (stem, lines)
    assert summary["counts"] == {"ok": 2, "partial": 0, "failed": len(HOSTILE), "inactive": 0}
    # the night's summary line is printed once (it was twice: publish_message and run_summary)
    assert [line for line in out.splitlines() if line.startswith("nightly h1: ")] == [
        summary_line(summary)]
    # confirmed: ConfirmResults ran over the night's results
    (confirm,) = store.glob("ConfirmResults/*/h1/confirm.json")
    assert json.loads(confirm.read_text())["version"] == "h1"
    # on the dashboard: every experiment, hostile ones with their message
    page = Path(summary["dashboard"]).read_text()
    for stem in HOSTILE:
        assert f"{stem}.yaml" in page, stem
    assert "Good A" in page and "Good B" in page
    assert "YAML aliases (*a) are not accepted" in page
