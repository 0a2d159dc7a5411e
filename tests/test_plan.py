"""What is measured (:mod:`mlprof.model.plan`): which file a runtime loads for a model at a
precision and what is made first, decided once; the tasks ask it, and a plot's curves."""

from __future__ import annotations

import pytest

from mlprof.model.plan import (
    CONVERTED,
    EXPORT,
    MODEL_FILE,
    REFERENCE_EXPORT,
    SCRIPT,
    chosen_file,
    curve_plan,
    measurement_plan,
)
from tests.helpers import DNN, REPO


@pytest.mark.parametrize("is_script, runtime, precision, source, export, reference, discover", [
    (False, "onnxruntime", "fp32", MODEL_FILE, None, None, False),
    (False, "onnxruntime", "fp16", CONVERTED, None, MODEL_FILE, False),
    (False, "openvino", "int8-static", CONVERTED, None, MODEL_FILE, False),
    (False, "openvino", "bf16", MODEL_FILE, None, MODEL_FILE, False),  # the runtime's hint
    (False, "tensorflow", "fp32", MODEL_FILE, None, None, False),
    (True, "onnxruntime", "fp32", EXPORT, "fp32", None, False),
    (True, "onnxruntime", "fp16", EXPORT, "fp16", REFERENCE_EXPORT, False),  # the fp16 export
    (True, "openvino", "int8-dynamic", CONVERTED, "fp32", REFERENCE_EXPORT, False),
    (True, "torch", "fp32", SCRIPT, None, None, True),
    (True, "torch", "int8-dynamic", SCRIPT, None, SCRIPT, True),  # quantize_dynamic itself
    (True, "torch-compile", "fp32", SCRIPT, None, None, True),
])
def test_the_file_measured_and_what_is_made_first(is_script, runtime, precision, source,
                                                  export, reference, discover):
    plan = measurement_plan(is_script, runtime, precision)
    assert (plan.source, plan.export_precision, plan.reference, plan.discover) == (
        source, export, reference, discover)
    assert plan.converted == (source == CONVERTED)
    assert plan.measures_export == (export is not None)


def test_a_file_is_made_only_when_chosen():
    asked = []
    files = {MODEL_FILE: "m.yaml", EXPORT: lambda: asked.append("export") or "e.onnx"}
    assert chosen_file(MODEL_FILE, files) == "m.yaml" and not asked
    assert chosen_file(EXPORT, files) == "e.onnx" and asked == ["export"]
    with pytest.raises(ValueError, match="no converted file"):
        chosen_file(CONVERTED, files)


@pytest.mark.parametrize("precision, keys", [
    ("fp32", set()), ("int8-dynamic", {"quantize"})])
def test_measure_runtime_requires_and_measures_what_the_plan_says(store, precision, keys):
    from mlprof.tasks.runtime import MeasureRuntime

    task = MeasureRuntime(version="v", model_file=str(DNN), runtime="onnxruntime",
                          precision=precision, batch_sizes=(1,))
    assert set(task.model_requirements()) == keys
    assert task.plan == measurement_plan(False, "onnxruntime", precision)
    if precision == "fp32":
        assert task.measured_file() == str(DNN) and task.reference_file() is None
    else:
        assert task.reference_file() == str(DNN)
        assert task.measured_file().startswith(str(store / "QuantizeModel"))


@pytest.mark.parametrize("runtime, precision, keys", [
    ("onnxruntime", "fp32", {"export"}), ("onnxruntime", "fp16", {"export", "reference"}),
    ("onnxruntime", "int8-dynamic", {"export", "reference", "quantize"}),
    ("torch", "fp32", {"discover"}), ("torch", "bf16", {"discover"})])
def test_a_script_s_requirements_follow_the_plan(store, runtime, precision, keys):
    from mlprof.tasks.runtime import MeasureRuntime

    task = MeasureRuntime(version="v", model_file=str(REPO / "tests" / "scripts" / "linear.py"),
                          runtime=runtime, precision=precision, batch_sizes=(1,))
    reqs = task.model_requirements()
    assert set(reqs) == keys
    if "export" in reqs:
        assert reqs["export"].precision == ("fp16" if precision == "fp16" else "fp32")
    if "reference" in reqs:
        assert reqs["reference"].precision == "fp32"


def test_the_curves_of_a_plot():
    """A runtime draws the models of its kind; with the default runtimes a model no runtime
    measures goes to its engine's runtime; otherwise runtimes that measure nothing are
    skipped and a model nothing measures is reported."""
    engine = {"tf": "tensorflow", "onnx": "onnxruntime"}.get
    plan = curve_plan(["onnx", "tf"], [("onnxruntime", ""), ("onnxruntime", "1.20.0")],
                      ["onnxruntime"], True, engine)
    assert plan.per_model == ((("onnxruntime", ""), ("onnxruntime", "1.20.0")),
                              (("tensorflow", ""),))
    assert plan.skipped == () and plan.unmeasured == ()
    plan = curve_plan(["onnx"], [("onnxruntime", ""), ("torch", "")], ["onnxruntime", "torch"],
                      False, engine)
    assert plan.per_model == ((("onnxruntime", ""),),) and plan.skipped == ("torch",)
    assert plan.pairs == (("onnxruntime", ""),)
    plan = curve_plan(["tf"], [("onnxruntime", "")], ["onnxruntime"], False, engine)
    assert plan.unmeasured == (0,) and plan.skipped == ("onnxruntime",)
