"""Experiment files: every field checked, errors name the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlprof.errors import MLProfError
from mlprof.experiments import load_experiment, load_experiments

REPO = Path(__file__).resolve().parent.parent
DNN = REPO / "examples" / "dnn" / "model_onnx_l10u128.yaml"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_full_experiment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLP_BASE", str(REPO))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "a.onnx").write_bytes(b"x")
    (tmp_path / "models" / "b.onnx").write_bytes(b"x")
    path = write(tmp_path, "exp.yaml", """
title: "  Two   DNNs "
description: |
  several lines
active: false
priority: 5
model_files: [$MLP_BASE/examples/dnn/model_onnx_l10u128.yaml, models/*.onnx]
runtimes: [ort]
reference_runtime: onnxruntime
batch_sizes: [64, 1, 8, 8]
settings: {n_calls: 20, min_duration: 1, threads: 2}
""")
    e = load_experiment(path)
    assert e.title == "Two DNNs"
    assert e.description == "several lines"
    assert (e.active, e.priority) == (False, 5)
    assert e.model_files == (str(DNN), str(tmp_path / "models" / "a.onnx"),
                             str(tmp_path / "models" / "b.onnx"))
    assert e.runtimes == ("onnxruntime",)
    assert e.reference_runtime == "onnxruntime"
    assert e.batch_sizes == (1, 8, 64)
    assert e.settings == {"n_calls": 20, "min_duration": 1.0, "threads": 2}
    assert isinstance(e.settings["min_duration"], float)


def test_defaults(tmp_path: Path) -> None:
    e = load_experiment(write(tmp_path, "minimal.yaml", f"model_files: {DNN}\n"))
    assert e.title == "minimal"
    assert e.active is True and e.priority == 0
    assert e.runtimes == ("onnxruntime",)
    assert e.batch_sizes[0] == 1 and e.batch_sizes[-1] == 1024


@pytest.mark.parametrize("text, field, message", [
    ("title: [\n", "line", "not valid YAML"),
    ("- a\n- b\n", "", "must be a mapping"),
    (f"model_files: {DNN}\ntitel: x\n", "titel", "unknown field"),
    ("title: x\n", "model_files", "missing"),
    ("model_files: /nonexistent/model.yaml\n", "model_files[0]", "no such file"),
    ("model_files: /nonexistent/*.onnx\n", "model_files[0]", "no file matches"),
    ("model_files: $MLP_UNDEFINED_VAR/m.yaml\n", "model_files[0]", "undefined variable"),
    ("model_files: []\n", "model_files", "non-empty list"),
    (f"model_files: {DNN}\nactive: yes please\n", "active", "true or false"),
    (f"model_files: {DNN}\npriority: high\n", "priority", "integer"),
    (f"model_files: {DNN}\nruntimes: [tensorflow2]\n", "runtimes", "tensorflow2"),
    (f"model_files: {DNN}\ndevice: gpu\n", "device", "gpu"),
    (f"model_files: {DNN}\nreference_runtime: torch\n", "reference_runtime",
     "not one of the runtimes"),
    (f"model_files: {DNN}\nbatch_sizes: [1, 0]\n", "batch_sizes",
     "batch sizes must be >= 1, got 0"),
    (f"model_files: {DNN}\nbatch_sizes: [1, two]\n", "batch_sizes", "must be an integer"),
    (f"model_files: {DNN}\nbatch_sizes: []\n", "batch_sizes", "at least one batch size"),
    (f"model_files: {DNN}\nbatch_sizes: 1-8\n", "batch_sizes", "list of integers >= 1"),
    (f"model_files: {DNN}\nsettings: [1]\n", "settings", "mapping"),
    (f"model_files: {DNN}\nsettings: {{n_cals: 3}}\n", "settings.n_cals", "unknown setting"),
    (f"model_files: {DNN}\nsettings: {{n_calls: 0}}\n", "settings.n_calls", ">= 1"),
    (f"model_files: {DNN}\nsettings: {{n_calls: 1.5}}\n", "settings.n_calls",
     "must be an integer"),
    (f"model_files: {DNN}\nsettings: {{min_duration: -1}}\n", "settings.min_duration",
     ">= 0"),
    (f"model_files: {DNN}\ntitle: [a]\n", "title", "string"),
])
def test_bad_fields(tmp_path: Path, text: str, field: str, message: str) -> None:
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(MLProfError) as info:
        load_experiment(path)
    err = info.value
    assert err.file == str(path)
    assert (err.field or "").startswith(field)
    assert message in str(err)
    assert "\n" not in str(err)


def test_load_experiments_order_and_broken(tmp_path: Path) -> None:
    write(tmp_path, "b_low.yaml", f"model_files: {DNN}\npriority: -1\n")
    write(tmp_path, "a_broken.yaml", "model_files: /nope.yaml\n")
    write(tmp_path, "c_high.yml", f"model_files: {DNN}\npriority: 3\n")
    write(tmp_path, "notes.txt", "ignored")
    found = load_experiments(tmp_path)
    assert [Path(p).name for p, _, _ in found] == ["c_high.yml", "a_broken.yaml", "b_low.yaml"]
    assert found[1][1] is None and "no such file" in str(found[1][2])
    assert found[0][1].priority == 3 and found[0][2] is None


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(MLProfError, match="--experiments: no such directory"):
        load_experiments(tmp_path / "nope")


def test_shipped_examples_are_valid() -> None:
    found = load_experiments(REPO / "experiments")
    assert found, "the repository ships example experiments"
    assert all(err is None for _, _, err in found), [str(e) for _, _, e in found if e]
