"""A mistyped name gets the closest names, one way for all (issue 38, item 4): a task
(``law run PlotRuntime``), a runtime, a device, a precision, a scenario; one line, exit 40,
nothing written. Run as a user runs them: ``law run`` in a subprocess (``bin/law`` first on
PATH, as ``setup.sh`` puts it)."""

from __future__ import annotations

import pytest

from mlprof.util import did_you_mean
from tests.helpers import FAST, law_run
from tests.test_early_errors import assert_one_line_error


@pytest.mark.parametrize("given, names, hint", [
    ("PlotRuntime", ["PlotRuntimes", "PlotMultiRuntimes", "MeasureRuntime"], "PlotRuntimes"),
    ("plotspeedup", ["PlotSpeedup", "PlotRuntimes"], "PlotSpeedup"),  # case ignored
    ("tourch", ["onnxruntime", "torch", "torch-compile"], "torch"),
    ("int8", ["fp32", "int8-dynamic", "int8-static"], "int8-dynamic or int8-static"),
    ("strams", ["streams", "server"], "streams"),
])
def test_did_you_mean(given, names, hint):
    assert did_you_mean(given, names) == f"; did you mean {hint}?"


def test_nothing_close_suggests_nothing():
    assert did_you_mean("tensorrt", ["onnxruntime", "torch", "tensorflow"]) == ""
    assert did_you_mean("", ["a"]) == ""


@pytest.mark.parametrize("task, fragments", [
    ("PlotRuntime", ["mlprof error: PlotRuntime is not a task; did you mean PlotRuntimes?"]),
    ("plotspeedup", ["plotspeedup is not a task; did you mean PlotSpeedup?"]),
    ("Xyzzy", ["Xyzzy is not a task (law index --verbose lists the tasks)"]),
])
def test_an_unknown_task_names_the_closest(store, task, fragments):
    r = law_run(task, "--version", "t1", store=store)
    assert_one_line_error(r, store, *fragments)
    assert "not found in index" not in r.stdout + r.stderr


@pytest.mark.parametrize("task, args, fragments", [
    ("PlotRuntimes", ["--runtime", "tourch"],
     ["--runtime: unknown runtime 'tourch'; did you mean torch? available: onnxruntime"]),
    ("PlotRuntimes", ["--device", "cpuu"],
     ["--device: device 'cpuu' is not supported by onnxruntime; did you mean cpu? supported: cpu"]),
    ("PlotRuntimes", ["--precision", "fp61"],
     ["--precision: unknown precision 'fp61'; did you mean fp16? one of fp32, fp16"]),
    ("PlotLoad", ["--scenario", "strams"], ["--scenario", "did you mean streams?"]),
])
def test_an_unknown_choice_names_the_closest(store, task, args, fragments):
    r = law_run(task, "--version", "t1", *FAST, *args, store=store)
    assert_one_line_error(r, store, *fragments)
