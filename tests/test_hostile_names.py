"""Issue 22, part D: names and versions from outside, the remote bootstrap's environment and
options given for an upstream task.

Each test reproduces a case of the issue with the real commands (``law run``, ``mlprof``, the
bootstrap script run by bash) and asserts the new behaviour: the one-line message and exit code
40 where the input is refused. Every subprocess has a time bound.
"""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.results.scan import is_leftover_name
from tests.helpers import DNN, REPO, law_run

HASH_A = "1234abcd" * 8
HASH_B = "9876fedc" * 8


def _mlprof(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "mlprof.cli", *args], cwd=REPO, env=full,
                          capture_output=True, text=True, timeout=120)


def _error_line(proc: subprocess.CompletedProcess) -> str:
    """The one ``mlprof error:`` line of a refused command (asserting there is exactly one and
    no traceback)."""
    out = proc.stdout + proc.stderr
    lines = [ln for ln in out.splitlines() if "mlprof error:" in ln]
    assert len(lines) == 1, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    return lines[0].split("mlprof error: ", 1)[1]


# --- model names that could parse as several segments -------------------------------------------


def test_a_name_holding_the_separator_is_one_model() -> None:
    """``a__deadbeef-b`` as a model name read back as two models ``a`` and ``b`` (without a
    hash); now it is hashed and reads back as one model with its own content hash."""
    seg_a = layout.model_segment("a__deadbeef-b", HASH_A)
    seg_b = layout.model_segment("a__deadbeef-b", HASH_B)
    for seg, h in ((seg_a, HASH_A), (seg_b, HASH_B)):
        parsed = layout.parse_model_segment(seg)
        assert parsed["model_hash"] == h[:8], seg
        assert len(parsed["models"]) == 1 and "b" not in parsed["models"], parsed
        assert "__" not in parsed["model"]
    # two different models of that name: two series (the name part alike, the hash not)
    assert seg_a != seg_b
    assert layout.parse_model_segment(seg_a)["model"] == \
        layout.parse_model_segment(seg_b)["model"]
    # distinct names stay distinct after hashing
    assert layout.model_segment("a__b", HASH_A) != layout.model_segment("a_b", HASH_A)
    assert layout.model_segment("a___b", HASH_A) != layout.model_segment("a__b", HASH_A)
    # a plain name is unchanged (old stores are read as before)
    assert layout.model_segment("dnn_l10u128", HASH_A) == f"dnn_l10u128__{HASH_A[:8]}"


def test_model_name_with_separator_reaches_one_segment_via_law_run(store: Path) -> None:
    """``law run MergeRuntimes --model-name a__deadbeef-b``: the output path's model segment
    parses as one model (``--print-output`` builds the task, measures nothing)."""
    proc = law_run("MergeRuntimes", "--version", "n1", "--batch-sizes", "1",
                   "--model-file", str(DNN), "--model-name", "a__deadbeef-b",
                   "--print-output", "0", store=store, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    paths = [ln.split("file://", 1)[1] for ln in proc.stdout.splitlines() if "file://" in ln]
    assert paths, proc.stdout
    parsed = layout.parse_result_path(paths[0], str(store)).parsed()
    assert len(parsed["models"]) == 1 and parsed["model_hash"], parsed
    assert parsed["model"].startswith("a_deadbeef-b-")


def test_store_delete_model_b_leaves_a_model_named_a__deadbeef_b(tmp_path: Path) -> None:
    """``mlprof store delete --model b`` removed the results of a model named
    ``a__deadbeef-b``; now it matches nothing, and the model's own name selects it."""
    store = tmp_path / "store"
    segs = {"model": layout.model_segment("a__deadbeef-b", HASH_A),
            "runtime": "onnxruntime-1.32.0__cpu",
            "settings": "calls10_events1_warmup1_mindur0_threads1_input-random"}
    vdir = Path(layout.result_dir("MeasureRuntime", "n1", segs, store=str(store)))
    vdir.mkdir(parents=True)
    (vdir / "runtime_bs_1.csv").write_text("x\n")
    proc = _mlprof("store", "delete", "--store", str(store), "--model", "b")
    assert proc.returncode == 0, proc.stderr
    assert "nothing to remove" in proc.stdout and vdir.is_dir()
    name = layout.parse_model_segment(segs["model"])["model"]
    proc = _mlprof("store", "delete", "--store", str(store), "--model", name, "--dry-run")
    assert proc.returncode == 0 and "would remove 1 item(s)" in proc.stdout, proc.stdout


# --- versions ----------------------------------------------------------------------------------

REFUSED_VERSIONS = [
    ("n3.confirm", "--version: 'n3.confirm' ends in '.confirm', the suffix of a Nightly's "
                   "confirming re-measurements; choose another"),
    ("v1-luigi-tmp-123456789", "--version: 'v1-luigi-tmp-123456789' is a name reserved for "
                               "luigi's and the store's temporary files (mlprof store clean "
                               "would delete it); choose another"),
    ("v1.mlprof-deleting-0a1b2c3d", "--version: 'v1.mlprof-deleting-0a1b2c3d' is a name "
                                    "reserved for luigi's and the store's temporary files"),
    ("a\u202eb", "--version: contains the control character U+202E; names are printable text"),
    ("a\x1b[31mb", "--version: contains the control character U+001B; names are printable "
                   "text"),
    ("a\u200fb", "--version: contains the control character U+200F"),
]


@pytest.mark.parametrize(("version", "message"), REFUSED_VERSIONS,
                         ids=["confirm", "luigi-tmp", "deleting", "bidi", "escape", "rlm"])
def test_reserved_and_control_versions_are_refused_by_law_run(store: Path, version: str,
                                                              message: str) -> None:
    proc = law_run("MergeRuntimes", "--version", version, "--batch-sizes", "1",
                   "--model-file", str(DNN), store=store, timeout=120)
    assert proc.returncode == 40, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert _error_line(proc).startswith(message)
    assert not store.exists() or not any(store.rglob("*.csv"))


def test_versions_that_look_alike_are_one_directory(store: Path) -> None:
    """NFC and NFD spellings of ``café`` and ``' v1 '`` were distinct directories."""
    def output_dir(version: str) -> str:
        proc = law_run("MergeRuntimes", "--version", version, "--batch-sizes", "1",
                       "--model-file", str(DNN), "--print-output", "0", store=store,
                       timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        line = next(ln for ln in proc.stdout.splitlines() if "file://" in ln)
        return os.path.dirname(line.split("file://", 1)[1])

    nfd = unicodedata.normalize("NFD", "café")
    assert nfd != "café"
    assert output_dir(nfd) == output_dir("café")
    assert os.path.basename(output_dir(nfd)) == unicodedata.normalize("NFC", "café")
    assert os.path.basename(output_dir(" v1 ")) == "v1"


def test_no_accepted_version_is_a_leftover_for_store_clean() -> None:
    """Every version the tasks accept is one that ``mlprof store clean`` never takes for a
    leftover, and every name it takes for one is refused as a version."""
    names = ["v1", "nightly-2026-01-04", "x-luigi-tmp-1", "x-luigi-tmp-123456789",
             "-luigi-tmp-123456789", "x-luigi-tmp-12345678a", "a.mlprof-deleting-12345678",
             ".a.mlprof-deleting-12345678", ".hidden.tmp", "a.tmp", ".tmp1", ".x.abcdefgh",
             "run.confirm", "luigi-tmp", "v1-luigi-tmp-"]
    for name in names:
        try:
            accepted = layout.check_version(name) == name
        except MLProfError:
            accepted = False
        if accepted:
            assert not is_leftover_name(name, is_dir=True), name
        else:
            assert name not in ("v1", "nightly-2026-01-04", "run.confirm", "luigi-tmp", "a.tmp")
    # the command line's versions: the Nightly's own suffix too
    with pytest.raises(MLProfError, match="ends in '.confirm'"):
        layout.check_version("run.confirm", given=True)


def test_internal_confirm_version_is_accepted_by_the_tasks() -> None:
    """ConfirmResults re-measures under ``<night>.confirm``: the task itself accepts it (only a
    version a user gives is refused)."""
    from mlprof.report.nightly import CONFIRM_SUFFIX, confirm_version
    from mlprof.tasks.runtime import MeasureRuntime

    assert CONFIRM_SUFFIX == layout.CONFIRM_SUFFIX
    task = MeasureRuntime(version=confirm_version("n3"), model_file=str(DNN),
                          batch_sizes=(1,))
    assert task.version == "n3.confirm"


def test_model_name_with_control_characters_is_refused(store: Path) -> None:
    proc = law_run("MergeRuntimes", "--version", "v1", "--batch-sizes", "1",
                   "--model-file", str(DNN), "--model-name", "evil\u202egnp", store=store,
                   timeout=120)
    assert proc.returncode == 40
    assert _error_line(proc) == ("--model-name: contains the control character U+202E; names "
                                 "are printable text")


def test_mlprof_cli_and_api_refuse_a_reserved_version(tmp_path: Path) -> None:
    proc = _mlprof("corpus", str(tmp_path), "--version", "n1.confirm")
    assert proc.returncode == 40, proc.stderr
    assert _error_line(proc) == ("--version: 'n1.confirm' ends in '.confirm', the suffix of a "
                                 "Nightly's confirming re-measurements; choose another")
    from mlprof import api

    with pytest.raises(MLProfError, match="reserved for luigi"):
        api.benchmark_files(str(DNN), version="x-luigi-tmp-000000001")


# --- terminal output ---------------------------------------------------------------------------


def test_store_list_escapes_control_characters(tmp_path: Path) -> None:
    """A version directory named with an escape sequence (a store written before, or someone
    else's store) was printed raw by ``mlprof store list``, retitling and recolouring the
    terminal."""
    store = tmp_path / "store"
    segs = {"model": layout.model_segment("m", HASH_A), "runtime": "onnxruntime-1.32.0__cpu",
            "settings": "calls10_events1_warmup1_mindur0_threads1_input-random"}
    vdir = Path(layout.result_dir("MeasureRuntime", "v1", segs, store=str(store)))
    hostile = vdir.parent / "ev\x1b]0;pwned\x07\x1b[31mil"
    hostile.mkdir(parents=True)
    (hostile / "runtime_bs_1.csv").write_text("x\n")
    proc = _mlprof("store", "list", "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "ev\\x1b]0;pwned\\x07\\x1b[31mil" in proc.stdout
    proc = _mlprof("store", "delete", "--store", str(store), "--version", "ev*", "--dry-run")
    assert proc.returncode == 0 and "\x1b" not in proc.stdout
    assert "ev\\x1b]0;pwned" in proc.stdout


# --- the Slurm/HTCondor bootstrap ------------------------------------------------------------


def test_bootstrap_never_runs_a_command_in_a_variable_name(tmp_path: Path) -> None:
    """``export MLP_$(cmd)=1`` ran the command in every job; such a name is now skipped (a
    warning names it), values stay quoted, and the script parses."""
    from mlprof.tasks.framework.remote import bootstrap_text

    planted = tmp_path / "planted"
    missing = tmp_path / "not-here" / "store"  # the bootstrap stops before setup.sh
    env = {"MLP_BASE": str(REPO), "MLP_STORE": str(missing),
           f"MLP_$(touch {planted})": "1", f"MLP_`touch {planted}`": "1",
           "MLP_X;touch": "1", "MLP_VALUE": f"$(touch {planted}); `touch {planted}`",
           "MLP_OK": "it's fine"}
    text = bootstrap_text("slurm", env=env)
    assert "touch" not in "\n".join(ln for ln in text.splitlines()
                                    if ln.startswith("export") and "MLP_VALUE" not in ln)
    script = tmp_path / "bootstrap.sh"
    script.write_text(text)
    assert subprocess.run(["bash", "-n", str(script)], timeout=30).returncode == 0
    proc = subprocess.run(["bash", "-c", f"source {script}; echo \"ok=$MLP_OK\"; "
                           "echo \"value=$MLP_VALUE\""], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert not planted.exists(), proc.stdout + proc.stderr
    assert proc.returncode == 0 or "is not visible" in proc.stderr


def test_bootstrap_exports_quoted_values(tmp_path: Path) -> None:
    from mlprof.tasks.framework.remote import bootstrap_text

    planted = tmp_path / "planted"
    text = bootstrap_text("htcondor", env={"MLP_BASE": str(REPO),
                                           "MLP_VALUE": f"$(touch {planted})",
                                           "MLP_OK": "it's fine"})
    exports = "\n".join(ln for ln in text.splitlines() if ln.startswith("export MLP_"))
    proc = subprocess.run(["bash", "-c", exports + "\necho \"$MLP_OK|$MLP_VALUE\""],
                          capture_output=True, text=True, timeout=30)
    assert proc.stdout.strip() == f"it's fine|$(touch {planted})"
    assert not planted.exists()


def test_bootstrap_warns_about_a_skipped_name(caplog: pytest.LogCaptureFixture) -> None:
    from mlprof.tasks.framework.remote import bootstrap_text

    with caplog.at_level("WARNING", logger="mlprof"):
        bootstrap_text("slurm", env={"MLP_BASE": str(REPO), "MLP_$(id)": "1"})
    assert ["mlprof: the environment variable 'MLP_$(id)' is not passed to the jobs (not a "
            "shell variable name)"] == [r.getMessage() for r in caplog.records]


# --- options given for an upstream task -------------------------------------------------------


def test_option_for_an_upstream_task_that_would_be_ignored_is_refused(store: Path) -> None:
    """``--MeasureRuntime-n-calls -5`` under ``law run MergeRuntimes`` was type-checked and then
    ignored (MergeRuntimes passes its own n_calls): one line, exit 40, nothing measured."""
    proc = law_run("MergeRuntimes", "--version", "v1", "--batch-sizes", "1",
                   "--model-file", str(DNN), "--MeasureRuntime-n-calls", "-5", store=store,
                   timeout=120)
    assert proc.returncode == 40, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert _error_line(proc) == ("--MeasureRuntime-n-calls: not applied: MergeRuntimes passes "
                                 "its own n_calls (100) to MeasureRuntime; give --n-calls "
                                 "instead")
    assert not store.exists() or not any(store.rglob("*.csv"))
    # two levels up: PlotRuntimes passes n_calls to MergeRuntimes
    proc = law_run("PlotRuntimes", "--version", "v1", "--batch-sizes", "1",
                   "--model-file", str(DNN), "--MergeRuntimes-warmup", "3", store=store,
                   timeout=120)
    assert proc.returncode == 40
    assert _error_line(proc) == ("--MergeRuntimes-warmup: not applied: PlotRuntimes passes "
                                 "its own warmup (10) to MergeRuntimes; give --warmup instead")


def test_option_for_an_upstream_task_that_arrives_is_accepted(store: Path) -> None:
    """A parameter the requiring task does not pass on (``--MeasureRuntime-workflow``, the
    documented way to run the measurements on Slurm) and a value equal to the one passed on
    arrive: accepted. Built with luigi's own command-line parser in this process (law's
    ``--print-output`` would answer while the root task is built, before the check)."""
    import luigi.cmdline_parser

    from mlprof.tasks.framework import cmdline

    cmdline.install()
    argv = ["MergeRuntimes", "--version", "v1", "--batch-sizes", "1", "--model-file", str(DNN),
            "--MeasureRuntime-workflow", "local", "--n-calls", "20",
            "--MeasureRuntime-n-calls", "20"]
    with luigi.cmdline_parser.CmdlineParser.global_instance(argv) as cp:
        root = cp.get_task_obj()
        measure = root.requires()
        assert (measure.n_calls, measure.workflow) == (20, "local")
    with luigi.cmdline_parser.CmdlineParser.global_instance(
            [*argv[:-1], "21"]) as cp, pytest.raises(MLProfError, match="give --n-calls"):
        cp.get_task_obj()
