"""The zygote (``tests/zygote.py``) runs ``law run`` and ``mlprof`` as they run from a shell:
the same exit code and the same console lines, its own process and environment. Every test that
uses ``law_run``/``mlprof_run`` relies on this."""

from __future__ import annotations

import os
import re

import pytest

from tests.helpers import DNN, FAST, law_run, mlprof_run


def _lines(text: str) -> list[str]:
    """Console lines without what differs between two runs (times, pids, numbers, and so the
    width of a column)."""
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return [re.sub(r"[ -]+", " ", line) for line in text.splitlines() if line.strip()]


@pytest.mark.slow  # 6-7 s: a real law run that measures; the fast tier checks a failing one
def test_a_law_run_is_the_same_from_the_zygote_and_from_a_shell(store, tmp_path):
    args = ("PlotRuntimes", "--version", "z", "--model-file", str(DNN), "--batch-sizes", "1",
            *FAST)
    forked = law_run(*args, store=store)
    real = law_run(*args, store=tmp_path / "real", env={"MLP_TEST_NO_ZYGOTE": "1"})
    assert forked.returncode == real.returncode == 0, forked.stderr[-2000:] + real.stderr[-2000:]
    assert _lines(forked.stdout) == _lines(real.stdout.replace(str(tmp_path / "real"),
                                                               str(store)))
    assert _lines(forked.stderr) == _lines(real.stderr.replace(str(tmp_path / "real"),
                                                               str(store)))
    assert forked.args == ["law", "run", *args]
    # each child has its own environment: MLP_VERBOSE brings luigi's lines back in one run
    # (complete already: luigi only schedules), and nothing of it leaks into the next
    verbose = law_run(*args, store=store, env={"MLP_VERBOSE": "1"})
    quiet = law_run(*args, store=store)
    assert verbose.returncode == quiet.returncode == 0
    assert "luigi-interface" in verbose.stderr and "luigi-interface" not in quiet.stderr


def test_a_failure_is_the_same_one_line_and_exit_code(store, tmp_path):
    missing = tmp_path / "missing.yaml"
    args = ("PlotRuntimes", "--version", "z", "--model-file", str(missing))
    forked = law_run(*args, store=store)
    real = law_run(*args, store=store, env={"MLP_TEST_NO_ZYGOTE": "1"})
    assert forked.returncode == real.returncode == 40
    assert forked.stderr == real.stderr and str(missing) in forked.stderr
    env = dict(os.environ, MLP_STORE=str(store))
    forked = mlprof_run("benchmark", str(missing), env=env, timeout=60)
    real = mlprof_run("benchmark", str(missing), env={**env, "MLP_TEST_NO_ZYGOTE": "1"},
                      timeout=60)
    assert forked.returncode == real.returncode == 40
    assert forked.stderr == real.stderr and forked.stdout == real.stdout
