"""What ``law run`` prints: mlprof's lines and luigi's outcome in one line by default, luigi's
INFO log with ``MLP_VERBOSE=1`` (issue 23: 60 of the quick start's 114 lines were luigi's)."""

from __future__ import annotations

from tests.helpers import DNN, FAST, law_run


def _run(store, verbose: str):
    return law_run("PlotRuntimes", "--version", "c1", "--model-file", str(DNN),
                   "--batch-sizes", "1,2", *FAST, store=store, env={"MLP_VERBOSE": verbose})


def test_quiet_by_default_and_verbose_on_request(tmp_path):
    r = _run(tmp_path / "a", "")
    assert r.returncode == 0, r.stderr[-3000:]
    out = (r.stdout + r.stderr).splitlines()
    assert not [line for line in out if line.startswith("INFO: luigi-interface")], out
    assert "Luigi Execution Summary" not in r.stdout + r.stderr
    outcome = [line for line in out if line.startswith("luigi: ")]
    assert outcome == ["luigi: 5 ran, 0 complete already :) there were no failed tasks or "
                       "missing dependencies"], out
    assert any(line.startswith("plot: ") for line in out)
    assert any(line.startswith("measuring ") for line in out)
    assert len(out) <= 25, "\n".join(out)  # 2 batch sizes: progress, plot, outcome, table, paths

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


def test_a_failure_is_counted_in_the_outcome(tmp_path):
    r = law_run("PlotRuntimes", "--version", "c2", "--model-file", str(DNN),
                "--batch-sizes", "1", *FAST, store=tmp_path / "s",
                env={"MLP_VERBOSE": "", "MLP_TIMEOUT": "0.01"})
    assert r.returncode == 30, (r.stdout + r.stderr)[-3000:]
    outcome = [line for line in (r.stdout + r.stderr).splitlines() if line.startswith("luigi: ")]
    assert outcome == ["luigi: 0 ran, 0 complete already, 1 failed (MeasureRuntime), 3 not run "
                       "because of that :( there were failed tasks"], r.stdout
