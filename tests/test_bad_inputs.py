"""Every bad input: a one-line error naming the file and field, non-zero exit, no output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import DNN, FAST, files_in, law_run
from tests.onnx_factory import matmul_model, write_yaml


def _error_line(proc) -> str:
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "mlprof error:" in ln]
    assert lines, f"no 'mlprof error:' line in:\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stdout + proc.stderr
    return lines[0].split("mlprof error:", 1)[1].strip()


def outputs_in(store: Path) -> list[Path]:
    """Output files in the store: everything but the failure records."""
    return [p for p in files_in(store) if not p.name.startswith("_failure")]


def _check(store: Path, *args: str, expect: list[str]) -> str:
    proc = law_run("PlotRuntimes", "--version", "bad", "--batch-sizes", "1,2", *FAST, *args,
                   store=store)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    line = _error_line(proc)
    for text in expect:
        assert text in line, f"{text!r} not in {line!r}"
    assert outputs_in(store) == [], files_in(store)
    # a failure in a task's run is recorded next to its outputs, with the same message
    for record in (p for p in files_in(store) if p.name.startswith("_failure")):
        data = json.loads(record.read_text())
        assert data["message"] == line and data["status"] == "failed"
    return line


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    """A copy of the 10x128 DNN example (YAML and ONNX) to break."""
    d = tmp_path / "model"
    d.mkdir()
    shutil.copy(DNN, d / "model.yaml")
    shutil.copy(DNN.with_suffix(".onnx"), d / DNN.with_suffix(".onnx").name)
    return d


def _edit(path: Path, old: str, new: str) -> str:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return str(path)


def test_missing_model_file(store, tmp_path):
    missing = str(tmp_path / "nope.yaml")
    _check(store, "--model-file", missing, expect=[missing, "file not found"])


def test_malformed_yaml(store, model_dir):
    y = _edit(model_dir / "model.yaml", "shape: [64]", "shape: [64")
    _check(store, "--model-file", y, expect=[y, "malformed YAML", "line"])


@pytest.mark.parametrize("old, new, field", [
    ("  inputs:\n    - name: input_0\n      shape: [64]\n      dtype: float32\n", "",
     "model.inputs"),
    ("  file: model_onnx_l10u128.onnx\n", "", "model.file"),
    ("  inference_engine: onnx\n", "", "model.inference_engine"),
    ("      shape: [64]\n", "", "model.inputs[0].shape"),
    ("    - name: input_0\n", "    - nam: input_0\n", "model.inputs[0].name"),
])
def test_missing_fields(store, model_dir, old, new, field):
    y = _edit(model_dir / "model.yaml", old, new)
    _check(store, "--model-file", y, expect=[y, field])


@pytest.mark.parametrize("old, new, field, text", [
    ("shape: [64]", "shape: 64", "model.inputs[0].shape", "list of positive integers"),
    ("shape: [64]", "shape: [0]", "model.inputs[0].shape", "list of positive integers"),
    ("dtype: float32", "dtype: complex64", "model.inputs[0].dtype", "unsupported dtype"),
    ("file: model_onnx_l10u128.onnx", "file: other.onnx", "model.file", "not found"),
    ("inference_engine: onnx", "inference_engine: torchscript", "model.inference_engine",
     "unknown inference_engine"),
])
def test_wrong_fields(store, model_dir, old, new, field, text):
    y = _edit(model_dir / "model.yaml", old, new)
    _check(store, "--model-file", y, expect=[y, field, text])


@pytest.mark.parametrize("engine, field, text", [
    ("tf", "model.file", "expected a .pb file"),
    ("tfaot", "model.saved_model", "missing or empty; give the SavedModel directory"),
])
def test_tensorflow_engines_say_what_they_need(store, model_dir, engine, field, text):
    y = _edit(model_dir / "model.yaml", "inference_engine: onnx", f"inference_engine: {engine}")
    _check(store, "--model-file", y, expect=[y, field, text])


@pytest.mark.parametrize("old, new, field, text", [
    ("shape: [64]", "shape: [32]", "model.inputs[0].shape", "contradicts the ONNX graph"),
    ("shape: [64]", "shape: [8, 8]", "model.inputs[0].shape", "dimension"),
    ("dtype: float32", "dtype: float16", "model.inputs[0].dtype", "contradicts the ONNX graph"),
    ("name: input_0", "name: features", "model.inputs[0].name", "not in the ONNX graph"),
    ("- name: output_0", "- name: logits", "model.outputs[0].name", "not in the ONNX graph"),
])
def test_yaml_that_contradicts_the_graph(store, model_dir, old, new, field, text):
    y = _edit(model_dir / "model.yaml", old, new)
    _check(store, "--model-file", y, expect=[y, field, text])


def test_corrupt_onnx_file(store, tmp_path):
    bad = tmp_path / "corrupt.onnx"
    bad.write_bytes(b"this is not a protobuf \x00\x01\x02" * 10)
    _check(store, "--model-file", str(bad), expect=[str(bad), "not a valid ONNX model"])


def test_truncated_onnx_file(store, tmp_path):
    bad = tmp_path / "truncated.onnx"
    bad.write_bytes(DNN.with_suffix(".onnx").read_bytes()[:5000])
    _check(store, "--model-file", str(bad), expect=[str(bad), "ONNX model"])


def test_unknown_runtime(store):
    _check(store, "--runtime", "tensorrt", expect=["--runtime", "unknown runtime 'tensorrt'",
                                                   "onnxruntime"])


def test_unknown_device(store):
    _check(store, "--device", "cuda", expect=["--device", "not supported", "cpu"])


def test_batch_size_below_one(store):
    proc = law_run("PlotRuntimes", "--version", "bad", "--batch-sizes", "0,4", *FAST, store=store)
    assert proc.returncode != 0
    assert "--batch-sizes" in _error_line(proc) and ">= 1" in _error_line(proc)
    assert outputs_in(store) == []


@pytest.mark.parametrize("arrays, text", [
    ({"input_0": np.zeros((5, 32), np.float32)}, "array shape [5, 32] does not match"),
    ({"other": np.zeros((5, 64), np.float32)}, "no array for input(s) input_0"),
    ({"input_0": np.zeros((5, 64), np.complex64)}, "cannot be used for input"),
])
def test_input_file_whose_arrays_do_not_match(store, tmp_path, arrays, text):
    f = tmp_path / "inputs.npz"
    np.savez(f, **arrays)
    _check(store, "--input-data", str(f), expect=[str(f), "--input-data", text])


def test_input_data_that_is_neither_kind_nor_file(store):
    _check(store, "--input-data", "gaussian", expect=["--input-data", "random, incremental"])


def test_fixed_batch_graph_that_cannot_take_other_sizes(store, tmp_path):
    from tests.onnx_factory import hardcoded_reshape_model

    path = hardcoded_reshape_model(tmp_path / "fixed.onnx", batch=1)
    proc = law_run("MeasureRuntime", "--version", "bad", "--batch-sizes", "1,2", *FAST,
                   "--model-file", path, store=store)
    assert proc.returncode != 0
    line = _error_line(proc)
    assert path in line and "fixed batch dimension of 1" in line
    # batch size 1 works and is kept; batch size 2 left nothing behind but its failure record
    names = sorted(p.name for p in files_in(store))
    assert names == ["_failure_bs_2.json", "runtime_bs_1.csv", "runtime_bs_1.json"]
    record = json.loads(next(p for p in files_in(store) if p.name == "_failure_bs_2.json")
                        .read_text())
    assert record["message"] == line and record["task"] == "MeasureRuntime"


def test_negative_settings(store):
    _check(store, "--n-calls", "0", expect=["--n-calls", ">= 1"])


def test_yaml_listing_a_model_with_an_unlisted_graph_input(store, tmp_path):
    from tests.onnx_factory import identity_model

    identity_model(tmp_path / "two.onnx", [("a", "float32", ["N", 2]), ("b", "float32", ["N", 3])])
    y = write_yaml(tmp_path / "two.yaml", "two.onnx", [{"name": "a", "shape": [2]}])
    _check(store, "--model-file", y, expect=[y, "model.inputs", "graph input(s) b not listed"])


def test_fixed_batch_matmul_is_fine(store, tmp_path):
    """Counter-check: a fixed batch dimension the graph does not depend on is relaxed."""
    path = matmul_model(tmp_path / "fixed.onnx", batch=1)
    proc = law_run("MeasureRuntime", "--version", "ok", "--batch-sizes", "1,4", *FAST,
                   "--model-file", path, store=store)
    assert proc.returncode == 0, proc.stderr
    assert len(files_in(store)) == 4  # the results: two batch sizes, csv and json each
