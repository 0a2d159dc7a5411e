"""What ``law run`` prints: mlprof's lines and luigi's outcome in one line by default, luigi's
INFO log with ``MLP_VERBOSE=1`` (issue 23: 60 of the quick start's 114 lines were luigi's)."""

from __future__ import annotations

import pytest

from mlprof.measure.quiet import QUIET_ENV, child_env, verbose
from tests.helpers import DNN, FAST, REPO, law_run, skip_without

TF_MODEL = REPO / "examples" / "dnn" / "model_tf_l10u128.yaml"
#: what TensorFlow's and torch's C++ start-up logs print in a child (none is a problem)
CHATTER = ("absl::InitializeLog", "cpu_feature_guard", "oneDNN custom operations",
           "XLA service", "gpuGetDeviceCount", "profiler_start", "profiler_stop",
           "No CUDA runtime is found")


def _chatter(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(m in line for m in CHATTER)]


def _run(store, verbose: str):
    return law_run("PlotRuntimes", "--version", "c1", "--model-file", str(DNN),
                   "--batch-sizes", "1,2", *FAST, store=store, env={"MLP_VERBOSE": verbose})


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_quiet_by_default_and_verbose_on_request(tmp_path):
    r = _run(tmp_path / "a", "")
    assert r.returncode == 0, r.stderr[-3000:]
    out = (r.stdout + r.stderr).splitlines()
    assert not [line for line in out if line.startswith("INFO: luigi-interface")], out
    assert "Luigi Execution Summary" not in r.stdout + r.stderr
    outcome = [line for line in out if line.startswith("luigi: ")]
    assert outcome == ["luigi: 5 ran, 0 complete already :) there were no failed tasks or "
                       "missing dependencies"], out
    assert any(line.startswith("measuring ") for line in out)
    # the plot's path once, in the outputs at the end (not also as "plot: <path>" while it
    # runs), the medians once, in the table (not also a line per point)
    paths = [line.strip() for line in out if line.strip().endswith(".pdf")]
    assert len(paths) == 1 and r.stdout.splitlines()[-1] == f"  {paths[0]}", out
    assert not [line for line in out if " ms over " in line], out
    assert len(out) <= 22, "\n".join(out)  # 2 batch sizes: progress, outcome, table, paths

    # again: everything complete, the outcome says so
    r = _run(tmp_path / "a", "")
    outcome = [line for line in (r.stdout + r.stderr).splitlines() if line.startswith("luigi: ")]
    assert outcome == ["luigi: 0 ran, 1 complete already :) there were no failed tasks or "
                       "missing dependencies"], r.stdout

    r = _run(tmp_path / "b", "1")
    assert r.returncode == 0, r.stderr[-3000:]
    text = r.stdout + r.stderr
    assert "INFO: luigi-interface - Informed scheduler" in text
    assert "Luigi Execution Summary" in text
    assert not [line for line in text.splitlines() if line.startswith("luigi: ")]
    # and mlprof's lines that the table or the outputs repeat
    assert any(line.startswith("plot: ") for line in text.splitlines()), text
    assert len([line for line in text.splitlines() if " ms over " in line]) == 2, text


def test_a_failure_is_counted_in_the_outcome(tmp_path):
    r = law_run("PlotRuntimes", "--version", "c2", "--model-file", str(DNN),
                "--batch-sizes", "1", *FAST, store=tmp_path / "s",
                env={"MLP_VERBOSE": "", "MLP_TIMEOUT": "0.01"})
    assert r.returncode == 30, (r.stdout + r.stderr)[-3000:]
    outcome = [line for line in (r.stdout + r.stderr).splitlines() if line.startswith("luigi: ")]
    assert outcome == ["luigi: 0 ran, 0 complete already, 1 failed (MeasureRuntime), 3 not run "
                       "because of that :( there were failed tasks"], r.stdout


def test_children_get_the_quiet_environment_unless_verbose_or_set_by_the_user():
    assert child_env({}) == QUIET_ENV
    assert QUIET_ENV["TF_CPP_MIN_LOG_LEVEL"] == "2"  # 3 would hide TensorFlow's errors
    mine = child_env({"TF_CPP_MIN_LOG_LEVEL": "0"})  # the user's own setting is kept
    assert "TF_CPP_MIN_LOG_LEVEL" not in mine and mine["KINETO_LOG_LEVEL"] == "6"
    assert child_env({"MLP_VERBOSE": "1"}) == {}
    assert child_env({"MLP_VERBOSE": "0"}) == QUIET_ENV
    assert verbose({"MLP_VERBOSE": " yes "}) and not verbose({"MLP_VERBOSE": " "})


@pytest.mark.slow  # two TensorFlow runs: ~25 s each on 2 busy cores
def test_a_tensorflow_sweep_has_no_start_up_chatter_unless_verbose(tmp_path, monkeypatch):
    """Each TensorFlow child printed absl's notice and TensorFlow's start-up INFO lines;
    MLP_VERBOSE=1 brings them back with luigi's log."""
    skip_without("tensorflow")  # not importorskip: TensorFlow must not load in pytest
    for var in QUIET_ENV:  # the children's defaults, not this shell's
        monkeypatch.delenv(var, raising=False)
    args = ["--version", "tf", "--model-file", str(TF_MODEL), "--runtime", "tf",
            "--batch-sizes", "1", *FAST]
    r = law_run("PlotRuntimes", *args, store=tmp_path / "a", env={"MLP_VERBOSE": ""})
    text = r.stdout + r.stderr
    assert r.returncode == 0, text[-3000:]
    assert _chatter(text) == [], text
    assert "INFO: luigi-interface" not in text
    assert len(text.splitlines()) <= 12, text  # progress, outcome, table, path

    r = law_run("PlotRuntimes", *args, store=tmp_path / "b", env={"MLP_VERBOSE": "1"})
    text = r.stdout + r.stderr
    assert r.returncode == 0, text[-3000:]
    assert "INFO: luigi-interface - Informed scheduler" in text
    # TensorFlow logs at least absl's notice with its first INFO line (cpu_feature_guard here)
    assert _chatter(text), text


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_a_torch_profile_has_no_kineto_lines(tmp_path, monkeypatch):
    """torch.profiler's kineto printed profiler_start/profiler_stop and, on a machine without
    a GPU, ``ERROR ... gpuGetDeviceCount failed``: an error that is none."""
    pytest.importorskip("torch")
    for var in QUIET_ENV:
        monkeypatch.delenv(var, raising=False)
    r = law_run("PlotProfile", "--version", "p", "--model-file",
                str(REPO / "models" / "selftest" / "linear.py"), "--runtime", "torch",
                "--batch-sizes", "1", *FAST, store=tmp_path / "s", env={"MLP_VERBOSE": ""})
    text = r.stdout + r.stderr
    assert r.returncode == 0, text[-3000:]
    assert _chatter(text) == [], text
    assert "ERROR" not in text, text
    assert "aten::linear" in text  # the profile's table


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_a_model_that_fails_in_a_quiet_child_still_shows_its_error(tmp_path):
    """The quiet environment hides start-up logs, never the error of a model that fails: a
    TensorFlow graph asked for an input it does not have fails in the child, in one line."""
    skip_without("tensorflow")  # not importorskip: TensorFlow must not load in pytest
    model = tmp_path / "bad.yaml"
    model.write_text(TF_MODEL.read_text().replace("name: input", "name: no_such_input")
                     .replace("./frozen_graph", str(TF_MODEL.parent / "frozen_graph")))
    r = law_run("PlotRuntimes", "--version", "bad", "--model-file", str(model),
                "--runtime", "tf", "--batch-sizes", "1", *FAST, store=tmp_path / "s",
                env={"MLP_VERBOSE": ""})
    text = r.stdout + r.stderr
    assert r.returncode == 30, text[-3000:]
    errors = [line for line in text.splitlines() if "no_such_input" in line]
    assert errors and "is not in the graph; its inputs: input" in errors[0], text
    assert _chatter(text) == [], text
    assert any(line.startswith("luigi: ") and "1 failed (MeasureRuntime)" in line
               for line in text.splitlines()), text


def test_the_stderr_filter_drops_only_the_known_notices():
    """A quiet worker's fd 2 passes everything but TensorFlow's start-up notices, which absl
    prints before TF_CPP_MIN_LOG_LEVEL applies (on CPUs where oneDNN is on by default); a
    partial last line is kept."""
    import subprocess
    import sys

    code = ("import os; from mlprof.measure.quiet import StderrFilter; f = StderrFilter(); "
            "os.write(2, b'WARNING: All log messages before absl::InitializeLog() is called "
            "are written to STDERR\\nI0000 00:00:1.2 7 port.cc:153] oneDNN custom operations "
            "are on. You may see\\nE0000 a real error\\nlast, no newline'); f.close()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=REPO,
                       timeout=60)
    assert r.returncode == 0 and r.stderr == b"E0000 a real error\nlast, no newline", r.stderr
