"""Bad command lines, run as a user would: one line naming the option, exit code 40, no
traceback, no usage, nothing in the store (``law run`` and the ``mlprof`` command)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import DNN, REPO, files_in, law_run, mlprof_run

#: `law run` and `mlprof` exit code for bad input before anything ran (law.cfg [luigi_retcode])
BAD_INPUT = 40


def _one_line(proc: subprocess.CompletedProcess, *expect: str) -> str:
    """The one line of a rejected command line, checked; returns it."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == BAD_INPUT, out
    assert "Traceback" not in out and "usage:" not in out, out
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 1 and "mlprof error:" in lines[0], out
    for text in expect:
        assert text in lines[0], f"{text!r} not in {lines[0]!r}"
    return lines[0]


def _nothing_written(store: Path) -> None:
    assert files_in(store) == [] and (not store.exists() or not any(store.iterdir()))


@pytest.mark.parametrize("task, args, expect", [
    # CSV list of integers
    ("PlotRuntimes", ["--version", "t1", "--batch-sizes", "1,two"],
     ["mlprof error: --batch-sizes: expected comma-separated integers, got '1,two'"]),
    # the list parameter's own check (a batch size < 1)
    ("PlotRuntimes", ["--version", "t1", "--batch-sizes", "0,1"],
     ["--batch-sizes: ", ">= 1, got 0"]),
    # a choice
    ("PlotRuntimes", ["--version", "t1", "--error-style", "band2"],
     ["mlprof error: --error-style: must be one of band, bars, got 'band2'"]),
    # a CSV list with choices
    ("PlotRuntimes", ["--version", "t1", "--file-types", "jpg"],
     ["mlprof error: --file-types: expected comma-separated values from pdf, png, svg, "
      "got 'jpg'"]),
    # a boolean
    ("PlotRuntimes", ["--version", "t1", "--y-log", "yes"],
     ["mlprof error: --y-log: expected True or False, got 'yes'"]),
    # an integer and a float
    ("PlotRuntimes", ["--version", "t1", "--n-calls", "many"],
     ["mlprof error: --n-calls: expected an integer, got 'many'"]),
    ("PlotRuntimes", ["--version", "t1", "--y-min", "low"],
     ["mlprof error: --y-min: expected a number, got 'low'"]),
    # a choice, with the closest one
    ("Dashboard", ["--version", "d1", "--statistic", "median"],
     ["mlprof error: --statistic: must be one of ", "got 'median'; did you mean median_ms?"]),
    # a required parameter without a value, and an option without its value
    ("PlotRuntimes", ["--batch-sizes", "1"], ["mlprof error: --version: missing (required)"]),
    ("PlotRuntimes", ["--batch-sizes", "1", "--version"],
     ["mlprof error: --version: expected one argument"]),
    # another task's option and luigi's own: named as typed
    ("PlotRuntimes", ["--version", "t1", "--MeasureRuntime-n-calls", "x"],
     ["mlprof error: --MeasureRuntime-n-calls: expected an integer, got 'x'"]),
    ("PlotRuntimes", ["--version", "t1", "--workers", "two"],
     ["mlprof error: --workers: expected an integer, got 'two'"]),
    # a runtime list: its own flag, not --runtime
    ("PlotMultiRuntimes", ["--version", "t1", "--model-files", str(DNN), "--runtimes",
                           "ort,tourch"],
     ["mlprof error: --runtimes: unknown runtime 'tourch'"]),
    # an error of the task's own checks, while it is built
    ("MergeRuntimes", ["--version", "v", "--script-args", "-x 1"],
     ["mlprof error: ", ": --script-args: applies to model scripts (.py) only"]),
    # abbreviations are off; unknown options give the closest names, not the usage
    ("PlotRuntimes", ["--version", "t1", "--bs", "1"],
     ["mlprof error: unknown option --bs; did you mean --bs-normalized? "
      "(law run PlotRuntimes --help lists them)"]),
    ("PlotRuntimes", ["--version", "t1", "--batch-size", "1"],
     ["unknown option --batch-size; did you mean --batch-sizes?"]),
    ("PlotRuntimes", ["--version", "t1", "--frobnicate", "1"],
     ["mlprof error: unknown option --frobnicate (law run PlotRuntimes --help lists them)"]),
    # a list with spaces
    ("PlotRuntimes", ["--version", "t1", "--batch-sizes", "1", "2"],
     ["mlprof error: unexpected argument '2'"]),
])
def test_law_run_bad_command_line(store, task, args, expect):
    _one_line(law_run(task, *args, store=store, timeout=120), *expect)
    _nothing_written(store)


def _mlprof(*args: str, store: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, MLP_STORE=str(store))
    env.setdefault("MLP_BASE", str(REPO))
    return mlprof_run(*args, env=env, timeout=120)


@pytest.mark.parametrize("args, expect", [
    (["benchmark", str(DNN), "--batch-size", "1"],
     ["mlprof error: unknown option --batch-size; did you mean --batch-sizes? "
      "(mlprof benchmark --help lists them)"]),
    (["benchmark", str(DNN), "--n-call", "5"],  # an abbreviation is not taken
     ["unknown option --n-call; did you mean --n-calls?"]),
    (["benchmark", str(DNN), "--batch-sizes", "1,two"], ["mlprof error: --batch-sizes: "]),
    (["benchmark", str(DNN), "--n-calls", "x"],
     ["mlprof error: --n-calls: must be an integer, got 'x'"]),
    (["benchmark", str(DNN), "--runtimes", "ort,tourch"],
     ["mlprof error: --runtimes: unknown runtime 'tourch'"]),
    (["benchmark", str(DNN), "--workers", "0"], ["mlprof error: --workers: must be >= 1"]),
    (["benchmark"], ["mlprof error: files: missing (required)"]),
    # --generate: MeasureGeneration's options, from GenerationSettings
    (["benchmark", "--generate", "--new-tokens", "0"],
     ["mlprof error: --new-tokens: must be a whole number from 2 to"]),
    (["benchmark", "--generate", "--new-tokens", str(10 ** 9)],
     ["mlprof error: --new-tokens: must be a whole number from 2 to"]),
    (["benchmark", "--generate", "--prompt-lengths", "0"],
     ["mlprof error: --prompt-lengths: must be a whole number from 1 to"]),
    (["benchmark", "--generate", "--runtimes", "torch,tensorflow"],
     ["mlprof error: --runtimes: 'tensorflow' is no generation runtime"]),
    (["benchmark", "--generate", "--n-calls", "x"], ["mlprof error: --n-calls: "]),
    (["benchmark", "--generate", "--n-events", "5"],  # MeasureRuntime's, not generation's
     ["unknown option --n-events", "(mlprof benchmark --generate --help lists them)"]),
    (["benchmark", "--generate", str(DNN)], ["--model-file: not a decoder"]),
    # --runtime is the old name of corpus' --runtimes: the error names the option
    (["corpus", "--runtime", "tourch"], ["mlprof error: --runtimes: unknown runtime 'tourch'"]),
    (["store", "lsit"],
     ["mlprof error: action: must be one of list, clean, delete, got 'lsit'; "
      "did you mean list?"]),
    (["bench", str(DNN)], ["mlprof error: unknown command 'bench'; did you mean benchmark?"]),
    ([], ["mlprof error: give a command: benchmark, corpus"]),
])
def test_mlprof_bad_command_line(store, args, expect):
    _one_line(_mlprof(*args, store=store), *expect)
    _nothing_written(store)


def test_mlprof_help_still_exits_0(store):
    proc = _mlprof("benchmark", "--help", store=store)
    assert proc.returncode == 0 and "--batch-sizes" in proc.stdout, proc.stderr


def test_bad_value_messages_per_parameter_type():
    """The message for each parameter type (in process; the law runs above cover the path)."""
    import law
    import luigi

    from mlprof.tasks.framework.cmdline import bad_value_message

    err = ValueError("x")
    assert bad_value_message(luigi.IntParameter(), "a", err) == "expected an integer, got 'a'"
    assert bad_value_message(luigi.FloatParameter(), "a", err) == "expected a number, got 'a'"
    assert bad_value_message(luigi.BoolParameter(), "ja", err) == \
        "expected True or False, got 'ja'"
    assert bad_value_message(luigi.ChoiceParameter(choices=("a", "b")), "c", err) == \
        "must be one of a, b, got 'c'"
    assert bad_value_message(law.CSVParameter(cls=luigi.FloatParameter), "1,x", err) == \
        "expected comma-separated numbers, got '1,x'"
    assert bad_value_message(luigi.Parameter(), "v", ValueError("no\ngood")) == \
        "invalid value 'v': no good"


def test_ctrl_c_stops_mlprof_in_one_line(tmp_path):
    """Ctrl-C during ``mlprof benchmark``'s measurement: one line, exit code 130, no
    traceback (law run's Ctrl-C: tests/test_pipeline.py)."""
    import signal
    import time

    from mlprof.errors import EXIT_INTERRUPTED, INTERRUPTED

    env = dict(os.environ, MLP_STORE=str(tmp_path / "store"))
    proc = subprocess.Popen(["mlprof", "benchmark", str(DNN), "--batch-sizes", "1",
                             "--min-duration", "30"], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    from mlprof.measure.lock import read_holder

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until it measures (holds the lock)
        if (read_holder() or {}).get("pid") == proc.pid:
            break
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err[-3000:]
    assert err.strip().splitlines()[-1] == INTERRUPTED and "Traceback" not in err, err[-3000:]
