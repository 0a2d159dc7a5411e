"""Store management (mlprof.results.store and ``mlprof store``) on a store built by real law
pipelines."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlprof.cli import EXIT_BAD_INPUT, main
from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.results import scan as scan_module
from mlprof.results import store as st
from tests.helpers import FAST, REPO, files_in, law_run

LINEAR = REPO / "tests" / "scripts" / "linear.py"
L20 = REPO / "examples" / "dnn" / "model_onnx_l20u128.yaml"
BS = ["--batch-sizes", "1,2"]


# --- without pipelines ------------------------------------------------------------------------


def test_segments_parse_runtimes_and_models():
    one = layout.parse_runtime_segment("onnxruntime-1.31.1__cpu")
    assert (one["runtime"], one["runtime_version"], one["device"]) == (
        "onnxruntime", "1.31.1", "cpu")
    multi = layout.parse_runtime_segment(
        "onnxruntime-1.31.1-torch-compile-2.14.1-torch-2.14.1__cpu")
    assert multi["runtimes"] == ["onnxruntime", "torch-compile", "torch"]
    assert multi["runtime_version"] == "1.31.1,2.14.1,2.14.1"
    m = layout.parse_model_segment("linear-ee07f9c5__11eb62f5")
    assert (m["model"], m["model_hash"]) == ("linear-ee07f9c5", "11eb62f5")
    joined = layout.parse_model_segment("dnn_l10u128__bb7860fc-dnn_l20u128__0123abcd")
    assert joined["models"] == ["dnn_l10u128", "dnn_l20u128"]
    assert layout.parse_model_segment("stores_59adfd6a")["models"] == ["stores_59adfd6a"]


def test_bad_store_and_missing_selector_fail_in_one_line(tmp_path):
    proc = _cli("list", "--store", str(tmp_path / "nope"))
    assert proc.returncode == 40
    assert proc.stderr.strip() == f"mlprof error: {tmp_path / 'nope'}: --store: store " \
                                  "directory does not exist"
    (tmp_path / "s").mkdir()
    proc = _cli("delete", "--store", str(tmp_path / "s"))
    assert proc.returncode == 40 and "--all" in proc.stderr and len(proc.stderr.splitlines()) == 1
    with pytest.raises(MLProfError, match="--runtime"):
        st.select([], runtimes=["nosuchruntime"])


def test_a_home_or_root_store_is_refused():
    with pytest.raises(MLProfError, match="refusing"):
        st.resolve_store("/")


def test_sources_are_never_cleaned_and_non_task_directories_never_touched(tmp_path, capsys):
    store = tmp_path / "s"
    api = store / "ApiModels" / "net__abcdef012345"
    api.mkdir(parents=True)
    (api / "model.pt").write_bytes(b"\0" * 100)
    (api / "net.py").write_text("# loader\n")
    other = store / "notes" / "v1"  # not a task name: ignored
    other.mkdir(parents=True)
    (other / "model.onnx").write_bytes(b"\0" * 10)
    new = store / "SomeNewTask" / "m__0123abcd" / "v7"  # an unknown task: layout guessed
    new.mkdir(parents=True)
    (new / "out.npz").write_bytes(b"\0" * 50)
    (new / "out.json").write_text("{}\n")
    foreign = store / "X11" / "fonts" / "v1"  # CamelCase, but not laid out like mlprof's
    foreign.mkdir(parents=True)
    (foreign / "font.pt").write_bytes(b"\0" * 10)
    entries = st.scan(store).entries
    assert [(e.task, e.model, e.version, e.status) for e in entries] == [
        ("ApiModels", "net", None, "source"), ("SomeNewTask", "m", "v7", "ok")]
    removed = st.clean(entries, store)
    assert [Path(r.path).name for r in removed] == ["out.npz"]
    assert (api / "model.pt").exists() and (new / "out.json").exists()
    assert st.select(entries, versions=["*"])[0].task == "SomeNewTask"  # sources have none
    assert main(["store", "delete", "--all", "--store", str(store)]) == 0
    assert "2 item(s)" in capsys.readouterr().out
    assert files_in(store) == [foreign / "font.pt", other / "model.onnx"]


# --- file systems, links, leftovers, read-only stores (synthetic stores, no pipelines) ------

RESULT = ("MeasureRuntime", "dnn__0123abcd", "onnxruntime-1.31.1__cpu",
          "calls10_events1_warmup1_mindur0_threads1_input-random")


def _synthetic(store: Path, versions=("v1", "v2")) -> dict[str, Path]:
    """A store with one MeasureRuntime result per version (and an export to clean)."""
    out = {}
    for v in versions:
        d = store.joinpath(*RESULT, v)
        d.mkdir(parents=True)
        (d / "runtime_bs_1.csv").write_text("batch_size,event,call,runtime_ms\n1,0,0,0.1\n")
        (d / "runtime_bs_1.json").write_text("{}\n")
        out[v] = d
    export = store / "ExportOnnx" / "net__89abcdef" / "onnx-op18-fp32" / "v1"
    export.mkdir(parents=True)
    (export / "export.json").write_text("{}\n")
    (export / "model.onnx").write_bytes(b"\0" * 1000)
    out["export"] = export
    return out


@contextlib.contextmanager
def _mounted(target: Path, *args: str):
    """``mount ARGS TARGET`` for the block (skips the test where mounting is not allowed)."""
    target.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount here (root in a VM needed): {proc.stderr.strip()}")
    try:
        yield target
    finally:
        if subprocess.run(["umount", str(target)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(target)], capture_output=True)


def _tmpfs(target: Path, *options: str):
    return _mounted(target, "-t", "tmpfs", *(["-o", ",".join(options)] if options else []),
                    "tmpfs")


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The error line (after the notes on what was not followed), the only one."""
    lines = [ln for ln in proc.stderr.strip().splitlines() if not ln.startswith("not followed")]
    assert proc.returncode != 0 and len(lines) == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_delete_and_clean_never_enter_a_mount_point(tmp_path):
    store = tmp_path / "store"
    dirs = _synthetic(store)
    with _tmpfs(dirs["v1"] / "mnt") as mnt:
        (mnt / "precious.csv").write_text("not the store's\n")
        (mnt / "big.onnx").write_bytes(b"\0" * 100)
        before = _snapshot(store)
        # listed without entering it, and said so
        proc = _cli("list", "--store", str(store))
        assert proc.returncode == 0
        assert f"not followed: another file system mounted at {mnt}" in proc.stderr
        # delete: one line naming the mount point, nothing removed (not even v2)
        for args in (("delete", "--all"), ("delete", "--version", "v1"),
                     ("delete", "--all", "--dry-run")):
            line = _one_error_line(_cli(*args, "--store", str(store)))
            assert line == (f"mlprof error: {mnt}: --store: another file system is mounted "
                            "here: refusing to remove anything (nothing was removed)"), line
            assert _snapshot(store) == before
        # clean: the mount is not entered (its big.onnx stays), the store's model.onnx goes
        proc = _cli("clean", "--store", str(store))
        assert proc.returncode == 0, proc.stderr
        assert (mnt / "big.onnx").exists() and (mnt / "precious.csv").exists()
        assert not (dirs["export"] / "model.onnx").exists()
        # the API refuses a removal that holds the mount, too
        with pytest.raises(MLProfError, match="another file system"):
            st.delete([st.StoreEntry("MeasureRuntime", "v1", str(dirs["v1"]))], store)
        assert (mnt / "precious.csv").read_text() == "not the store's\n"


def test_a_mounted_model_directory_is_never_entered(tmp_path):
    store = tmp_path / "store"
    _synthetic(store)
    model = store / "MeasureRuntime" / "evil__deadbeef"
    with _tmpfs(model) as mnt:
        inner = mnt / "onnxruntime-1.31.1__cpu" / "default" / "v1"
        inner.mkdir(parents=True)
        (inner / "runtime_bs_1.csv").write_text("mounted\n")
        scanned = st.scan(store)
        assert scanned.skipped_mounts == [str(mnt)]
        assert not any("evil" in e.path for e in scanned.entries)
        proc = _cli("delete", "--all", "--store", str(store))
        assert proc.returncode == 0, proc.stderr
        assert (inner / "runtime_bs_1.csv").read_text() == "mounted\n"
        assert files_in(store) == [inner / "runtime_bs_1.csv"]  # everything else went


def test_a_bind_mount_of_the_same_file_system_is_a_boundary_too(tmp_path):
    store = tmp_path / "store"
    dirs = _synthetic(store)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.csv").write_text("keep\n")
    with _mounted(dirs["v2"] / "bound", "--bind", str(outside)) as bound:
        assert bound.stat().st_dev == store.stat().st_dev  # st_dev alone cannot tell
        line = _one_error_line(_cli("delete", "--version", "v2", "--store", str(store)))
        assert f"{bound}: --store: another file system is mounted here" in line
        assert (outside / "precious.csv").exists() and (dirs["v2"] / "runtime_bs_1.csv").exists()


def test_links_to_outside_are_removed_as_links(tmp_path):
    store = tmp_path / "store"
    dirs = _synthetic(store)
    outside = tmp_path / "outside"
    (outside / "v9").mkdir(parents=True)
    (outside / "v9" / "precious.csv").write_text("keep\n")
    (outside / "big.onnx").write_bytes(b"\0" * 64)
    keep = _snapshot(outside)
    (dirs["v1"] / "escape").symlink_to(outside, target_is_directory=True)
    (dirs["export"] / "linked.onnx").symlink_to(outside / "big.onnx")
    (store / "MeasureRuntime" / "evil__deadbeef").symlink_to(outside, target_is_directory=True)
    proc = _cli("clean", "--store", str(store))
    assert proc.returncode == 0 and "linked.onnx" not in proc.stdout
    assert "not followed: symbolic link" in proc.stderr and "evil__deadbeef" in proc.stderr
    proc = _cli("delete", "--all", "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    assert _snapshot(outside) == keep
    assert not (dirs["v1"] / "escape").is_symlink() and not dirs["v1"].exists()
    assert (store / "MeasureRuntime" / "evil__deadbeef").is_symlink()  # never a removal


def test_a_read_only_store_is_one_line(tmp_path):
    store = tmp_path / "store"
    with _tmpfs(store):
        _synthetic(store)
        (store / "MeasureRuntime" / ".x.mlprof-deleting-0badf00d").mkdir()
        remount = subprocess.run(["mount", "-o", "remount,ro", str(store)],
                                 capture_output=True, text=True)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
        before = _snapshot(store)
        for args in (("delete", "--all"), ("clean",), ("delete", "--version", "v1")):
            proc = _cli(*args, "--store", str(store))
            line = _one_error_line(proc)
            assert line == f"mlprof error: {store}: --store: the store is read-only", line
            assert proc.returncode == EXIT_BAD_INPUT
        assert _snapshot(store) == before
        # reading still works: list, and what a clean would do
        assert _cli("list", "--store", str(store)).returncode == 0
        proc = _cli("clean", "--dry-run", "--store", str(store))
        assert proc.returncode == 0 and "would remove" in proc.stdout


def test_no_permission_is_one_line(tmp_path):
    """A store this user may not write (root without the capabilities that override file
    permissions, on a store owned by someone else): one line, nothing removed."""
    store = tmp_path / "store"
    _synthetic(store)
    for p in [store, *store.rglob("*")]:
        os.chown(p, 65534, 65534)  # nobody
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv (util-linux) to drop the override capabilities")
    before = _snapshot(store)
    proc = subprocess.run([setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner",
                           "--", sys.executable, "-m", "mlprof.cli", "store", "delete", "--all",
                           "--store", str(store)], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    line = _one_error_line(proc)
    assert line.startswith(f"mlprof error: {store}") and line.endswith(
        ": --store: the store is read-only (permission denied)"), line
    assert _snapshot(store) == before


def test_leftovers_are_listed_and_cleaned(tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    dirs = _synthetic(store)
    settings = dirs["v1"].parent
    deleting = settings / ".v0.mlprof-deleting-0badf00d"  # a deletion that was interrupted
    (deleting / "sub").mkdir(parents=True)
    (deleting / "sub" / "runtime_bs_8.csv").write_bytes(b"x" * 300)
    partial = dirs["v1"] / ".runtime_bs_2.csv.k3j4h5g6.tmp"  # an interrupted atomic write
    partial.write_bytes(b"y" * 200)
    site = store / "Dashboard" / "stores_0123abcd" / "median_ms_ref-onnxruntime" / "d1"
    (site / ".dashboard.ab_12cd3").mkdir(parents=True)  # an interrupted atomic directory
    (site / ".dashboard.ab_12cd3" / "index.html").write_text("<html>")
    luigi = dirs["v2"] / "runtime_bs_1.json-luigi-tmp-012345678"
    luigi.write_text("{")
    hidden_other = dirs["v2"] / ".notes"  # hidden, but not a name mlprof writes: left alone
    hidden_other.write_text("mine\n")
    leftovers = {deleting, partial, site / ".dashboard.ab_12cd3", luigi}
    # young: maybe a task or a deletion still running, so not listed
    assert not [e for e in st.scan(store).entries if e.status == "leftover"]
    monkeypatch.setattr(scan_module, "LEFTOVER_AGE", 0.0)
    listed = _json(capsys, "list", "--store", str(store))["entries"]
    found = {Path(e["path"]): e for e in listed if e["status"] == "leftover"}
    assert set(found) == leftovers
    assert found[deleting]["version"] == "v0" and found[deleting]["model"] == "dnn"
    assert found[deleting]["size"] == 300 and found[partial]["version"] == "v1"
    assert found[site / ".dashboard.ab_12cd3"]["task"] == "Dashboard"
    # a version's size no longer counts its leftovers
    v1 = next(e for e in listed if e["path"] == str(dirs["v1"]))
    assert v1["size"] == sum(p.stat().st_size for p in files_in(dirs["v1"])) - 200
    assert main(["store", "list", "--store", str(store)]) == 0
    assert "leftover" in capsys.readouterr().out
    # selectors apply: only v1's leftover
    assert [Path(e["path"]) for e in _json(capsys, "list", "--store", str(store), "--version",
                                           "v1")["entries"] if e["status"] == "leftover"] == [
        partial]
    before = _snapshot(store)
    out = _json(capsys, "clean", "--dry-run", "--store", str(store))
    assert {Path(r["path"]) for r in out["removed"] if r["kind"] == "leftover"} == leftovers
    assert _snapshot(store) == before
    out = _json(capsys, "clean", "--store", str(store))
    assert {Path(r["path"]) for r in out["removed"] if r["kind"] == "leftover"} == leftovers
    for p in leftovers:
        assert not p.exists() and not p.is_symlink()
    assert hidden_other.exists() and (dirs["v1"] / "runtime_bs_1.csv").exists()
    assert not any(e.status == "leftover" for e in st.scan(store).entries)


def test_delete_takes_leftovers_inside_a_version_with_it(tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    dirs = _synthetic(store)
    (dirs["v1"] / ".runtime_bs_2.csv.k3j4h5g6.tmp").write_text("partial")
    monkeypatch.setattr(scan_module, "LEFTOVER_AGE", 0.0)
    out = _json(capsys, "delete", "--version", "v1", "--task", "Measure*", "--store", str(store))
    assert [Path(r["path"]) for r in out["removed"]] == [dirs["v1"]]  # once, with its version
    assert not dirs["v1"].exists() and dirs["v2"].exists()
    assert not list(dirs["v1"].parent.glob(".*"))  # the renamed directory is gone too


def test_an_empty_store_option_is_the_default_store(tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    _synthetic(store)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    (elsewhere / "Stray").mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("MLP_STORE", str(store))
    out = _json(capsys, "list", "--store", "")
    assert out["store"] == str(store) and len(out["entries"]) == 3
    assert st.resolve_store("") == st.resolve_store(None) == str(store)
    # MLP_STORE="" too: the default $MLP_BASE/data/store
    monkeypatch.setenv("MLP_STORE", "")
    monkeypatch.setenv("MLP_BASE", str(tmp_path))
    (tmp_path / "data" / "store").mkdir(parents=True)
    assert _json(capsys, "list", "--store", "")["store"] == str(tmp_path / "data" / "store")
    assert main(["store", "delete", "--all", "--store", ""]) == 0
    assert (elsewhere / "Stray").is_dir() and files_in(store)  # neither cwd nor MLP_STORE


# --- a store built by real pipelines ----------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """Two versions, two YAML models, a script model (ONNX export + torch), plots, a history."""
    pytest.importorskip("torch", reason="the script model needs PyTorch")
    path = tmp_path_factory.mktemp("template") / "store"
    runs = [
        ("PlotRuntimes", "--version", "v1", *BS, *FAST),
        ("PlotRuntimes", "--version", "v1", "--model-file", str(L20), *BS, *FAST),
        ("PlotRuntimes", "--version", "v2", *BS, *FAST),
        ("PlotMultiRuntimes", "--version", "v2", "--model-files", str(LINEAR),
         "--runtimes", "onnxruntime,torch", *BS, *FAST),
        ("PlotHistory", "--version", "h1"),
    ]
    for task, *args in runs:
        proc = law_run(task, *args, store=path)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return path


@pytest.fixture
def built(template: Path, store: Path) -> Path:
    """A private copy of the template store (times kept) as this test's $MLP_STORE."""
    shutil.copytree(template, store, symlinks=True)
    return store


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mlprof.cli", "store", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def _snapshot(path: Path) -> dict[str, tuple[int, int]]:
    """Relative path -> (size, mtime_ns) of every file."""
    return {str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in files_in(path)}


def _json(capsys, *args: str) -> dict:
    assert main(["store", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


pipeline = pytest.mark.slow


@pipeline
def test_list_counts_sizes_and_status(built, capsys):
    out = _json(capsys, "list", "--store", str(built))
    entries = out["entries"]
    by_task: dict[str, int] = {}
    for e in entries:
        by_task[e["task"]] = by_task.get(e["task"], 0) + 1
    assert by_task == {"DiscoverModels": 1, "ExportOnnx": 1, "MeasureRuntime": 5,
                       "MergeRuntimes": 5, "PlotRuntimes": 3, "PlotMultiRuntimes": 1,
                       "PlotHistory": 1}
    assert {e["version"] for e in entries} == {"v1", "v2", "h1"}
    assert all(e["status"] == "ok" and e["complete"] for e in entries)
    # sizes and counts are those of the files on disk
    files = files_in(built)
    assert out["totals"]["size"] == sum(p.stat().st_size for p in files)
    assert out["totals"]["files"] == len(files)
    assert out["totals"]["versions"] == 3
    linear = [e for e in entries if e["task"] == "MeasureRuntime" and e["runtime"] == "torch"]
    assert len(linear) == 1 and linear[0]["model"].startswith("linear-")
    assert linear[0]["runtime_version"] and linear[0]["device"] == "cpu"
    measure = Path(linear[0]["path"])
    assert linear[0]["size"] == sum(p.stat().st_size for p in files_in(measure))
    # selectors: a version, a model glob, a runtime alias
    sel = _json(capsys, "list", "--store", str(built), "--version", "v1", "--model", "dnn_l20*")
    assert {(e["task"], e["model"]) for e in sel["entries"]} == {
        ("MeasureRuntime", "dnn_l20u128"), ("MergeRuntimes", "dnn_l20u128"),
        ("PlotRuntimes", "dnn_l20u128")}
    ort = _json(capsys, "list", "--store", str(built), "--runtime", "ort", "--task", "Merge*")
    assert len(ort["entries"]) == 4
    # the text table ends with the totals
    assert main(["store", "list", "--store", str(built)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("17 entries, 3 versions, ") and str(built) in last


@pipeline
def test_dry_run_changes_nothing(built, capsys):
    before = _snapshot(built)
    assert main(["store", "clean", "--plots", "--dry-run", "--store", str(built)]) == 0
    text = capsys.readouterr().out
    assert "would remove" in text and "model.onnx" in text and "history_median_ms/" in text
    assert main(["store", "delete", "--all", "--dry-run", "--store", str(built)]) == 0
    text = capsys.readouterr().out
    assert text.count("would remove") == 18  # 17 entries + the summary line
    assert f"{sum(s for s, _ in before.values())} bytes" in text
    assert _snapshot(built) == before


@pipeline
def test_clean_removes_exactly_the_large_artifacts(built, capsys):
    before = _snapshot(built)
    out = _json(capsys, "clean", "--store", str(built))
    after = _snapshot(built)
    gone = set(before) - set(after)
    assert len(gone) == 1 and gone.pop().startswith("ExportOnnx/linear-")
    assert [Path(r["path"]).name for r in out["removed"]] == ["model.onnx"]
    assert out["bytes"] == sum(before[k][0] for k in set(before) - set(after))
    assert all(after[k] == before[k] for k in after)  # nothing else touched
    assert any(k.endswith("export.json") for k in after)
    # the export now counts as not done; the measurements it made stay complete
    status = {e.task: e.status for e in st.scan(built).entries}
    assert status["ExportOnnx"] == "cleaned" and status["MeasureRuntime"] == "ok"
    # a second clean finds nothing
    assert _json(capsys, "clean", "--store", str(built))["removed"] == []


@pipeline
def test_rerun_after_clean_measures_nothing_and_reexports_only_when_needed(built, capsys):
    _json(capsys, "clean", "--store", str(built))
    before = _snapshot(built)
    args = ["--version", "v2", "--model-files", str(LINEAR), "--runtimes", "onnxruntime,torch",
            *FAST]
    proc = law_run("PlotMultiRuntimes", *args, *BS, store=built)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _snapshot(built) == before  # complete: nothing measured, nothing re-exported
    # a new batch size needs the model again: re-exported once, old samples kept as they are
    proc = law_run("PlotMultiRuntimes", *args, "--batch-sizes", "1,2,4", store=built)
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = _snapshot(built)
    onnx = [k for k in after if k.startswith("ExportOnnx/") and k.endswith("model.onnx")]
    assert len(onnx) == 1
    for k, v in before.items():
        if "/runtime_bs_" in k:
            assert after[k] == v, k
    assert any(k.endswith("/v2/runtime_bs_4.csv") for k in after)


@pipeline
def test_clean_plots_removes_output_directories_whole(built, template, capsys):
    out = _json(capsys, "clean", "--plots", "--store", str(built))
    kinds = {Path(r["path"]).name: r["kind"] for r in out["removed"]}
    assert kinds["history_median_ms"] == "dir" and kinds["model.onnx"] == "file"
    assert not any(p.suffix in (".pdf", ".png", ".svg") for p in files_in(built))
    history = [e for e in st.scan(built).entries if e.task == "PlotHistory"]
    assert history[0].status == "partial"  # the directory output is gone, not half-empty
    assert any(p.name.startswith("alerts_") for p in files_in(Path(history[0].path)))
    # and law redraws it (the history's path holds a hash of the store it reads)
    proc = law_run("PlotHistory", "--version", "h1", "--stores", str(template), store=built)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert any(p.suffix == ".pdf" for p in files_in(Path(history[0].path)))


@pipeline
def test_delete_by_version_removes_only_that_version(built, capsys):
    before = _snapshot(built)
    out = _json(capsys, "delete", "--version", "v1", "--store", str(built))
    assert len(out["removed"]) == 6  # {Measure, Merge, Plot}Runtimes x 2 models
    after = _snapshot(built)
    assert not any("/v1/" in k for k in after)
    assert {k: v for k, v in before.items() if "/v1/" not in k} == after
    assert out["bytes"] == sum(v[0] for k, v in before.items() if "/v1/" in k)
    # empty parents are gone (dnn_l20u128 only had v1), others stay
    assert not list(built.glob("*/dnn_l20u128__*"))
    assert list(built.glob("*/dnn_l10u128__*/*/*/v2"))
    assert (built / "MeasureRuntime").is_dir()


@pipeline
def test_delete_by_model_glob_then_rerun_of_the_others_measures_nothing(built, capsys):
    before = _snapshot(built)
    out = _json(capsys, "delete", "--model", "lin*", "--store", str(built))
    assert {Path(r["path"]).relative_to(built).parts[0] for r in out["removed"]} == {
        "DiscoverModels", "ExportOnnx", "MeasureRuntime", "MergeRuntimes", "PlotMultiRuntimes"}
    after = _snapshot(built)
    # (the history's plots are named after the models they show: it is the store's history)
    assert not any("linear" in k for k in after if not k.startswith("PlotHistory/"))
    assert {k: v for k, v in before.items() if "linear" not in k or
            k.startswith("PlotHistory/")} == after
    assert not (built / "DiscoverModels").exists()  # emptied parents go up to the store
    proc = law_run("PlotRuntimes", "--version", "v2", *BS, *FAST, store=built)
    assert proc.returncode == 0 and _snapshot(built) == after


@pipeline
def test_delete_without_selector_is_refused(built, capsys):
    before = _snapshot(built)
    proc = _cli("delete", "--store", str(built))
    assert proc.returncode == 40 and "needs a selector" in proc.stderr
    proc = _cli("delete", "--version", "", "--store", str(built))  # an empty selector is none
    assert proc.returncode == 40
    assert _snapshot(built) == before
    # --all is explicit: everything goes, the store itself stays
    proc = _cli("delete", "--all", "--store", str(built))
    assert proc.returncode == 0, proc.stderr
    assert files_in(built) == [] and built.is_dir()


@pipeline
def test_symlinks_to_outside_are_never_followed(built, tmp_path, capsys):
    outside = tmp_path / "outside"
    (outside / "v1").mkdir(parents=True)
    (outside / "v1" / "precious.csv").write_text("keep me\n")
    (outside / "big.onnx").write_bytes(b"\0" * 4096)
    keep = _snapshot(outside)
    # a link as a model directory, one inside a version directory, one as a large artifact
    (built / "MeasureRuntime" / "evil__deadbeef").symlink_to(outside, target_is_directory=True)
    version = next(Path(e.path) for e in st.scan(built).entries if e.task == "MergeRuntimes")
    (version / "escape").symlink_to(outside, target_is_directory=True)
    export = next(Path(e.path) for e in st.scan(built).entries if e.task == "ExportOnnx")
    (export / "linked.onnx").symlink_to(outside / "big.onnx")
    # the store given through a link: resolved, and still nothing outside it is touched
    link_store = tmp_path / "link_store"
    link_store.symlink_to(built, target_is_directory=True)
    proc = _cli("clean", "--store", str(link_store))
    assert proc.returncode == 0 and "linked.onnx" not in proc.stdout
    assert "not followed" in proc.stderr and "evil__deadbeef" in proc.stderr
    proc = _cli("delete", "--all", "--store", str(link_store))
    assert proc.returncode == 0, proc.stderr
    assert _snapshot(outside) == keep
    assert not (version / "escape").is_symlink()  # removed as a link with its version
    # a path that leaves the store is refused before anything is removed
    bad = st.StoreEntry(task="MeasureRuntime", version="v1",
                        path=str(built / "MeasureRuntime" / ".." / ".." / "outside" / "v1"))
    with pytest.raises(MLProfError, match="outside the store"):
        st.delete([bad], built)
    with pytest.raises(MLProfError, match="outside the store"):
        st.delete([st.StoreEntry(task="X", version="v1", path=str(outside / "v1"))], built)
    assert _snapshot(outside) == keep


@pipeline
def test_dashboard_and_nightly_entries_have_their_versions(store, capsys):
    """The report, dashboard and nightly tasks' directories are read with their own layout."""
    exps = store.parent / "experiments"
    exps.mkdir()
    (exps / "one.yaml").write_text(f"model_files: [{REPO}/examples/dnn/model_onnx_l10u128.yaml]\n"
                                   "batch_sizes: [1]\nsettings: {n_calls: 10, min_duration: 0}\n")
    r = law_run("Nightly", "--version", "n1", "--experiments", str(exps), store=store)
    assert r.returncode == 0, r.stderr[-2000:]
    entries = _json(capsys, "list", "--store", str(store))["entries"]
    by_task = {e["task"]: e for e in entries}
    for task in ("RunExperiment", "ConfirmResults", "Dashboard", "Nightly", "MeasureRuntime"):
        assert by_task[task]["version"] == "n1" and by_task[task]["status"] == "ok", by_task[task]
    # the host's noise floor, which the night calibrated first: its revision, not the night's
    noise = by_task["CalibrateNoise"]
    assert (noise["version"], noise["status"]) == (layout.NOISE_REVISION, "ok"), noise
    assert {e["version"] for e in entries} == {"n1", layout.NOISE_REVISION}
