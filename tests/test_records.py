"""Records with a format version (issue 20): a newer or damaged ``format_version`` is refused
in one line naming the file, never guessed at; a hostile ``model_identity`` never becomes a
name (the record's task names the model instead)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlprof.errors import CorruptResult
from mlprof.measure.results import read_provenance
from mlprof.results import records
from mlprof.results.layout import branch_files


def _branch_json(tmp_path: Path, **extra) -> Path:
    path = tmp_path / branch_files(4)["json"]
    path.write_text(json.dumps({"settings": {"batch_size": 4}, "n_samples": 10, **extra}))
    return path


def test_every_writer_stamps_the_format_and_kind():
    rec = records.stamp({"format_version": 0, "record": "x", "a": 1}, "branch")
    assert list(rec)[:2] == ["format_version", "record"]
    assert rec == {"format_version": records.FORMAT_VERSION, "record": "branch", "a": 1}
    with pytest.raises(ValueError):
        records.stamp({}, "nonsense")


@pytest.mark.parametrize("value, why", [
    (records.FORMAT_VERSION + 1, "is newer than this mlprof reads"),
    ("1", "not a whole number"), (True, "not a whole number"), (-1, "not a whole number"),
    (1.5, "not a whole number"), (None, "not a whole number"), ([1], "not a whole number"),
])
def test_a_newer_or_damaged_format_is_refused_naming_the_file(tmp_path, value, why):
    path = _branch_json(tmp_path, format_version=value)
    with pytest.raises(CorruptResult) as e:
        read_provenance(path)
    assert why in str(e.value) and path.name in str(e.value)


def test_format_0_and_1_read(tmp_path):
    assert read_provenance(_branch_json(tmp_path))["n_samples"] == 10
    assert read_provenance(_branch_json(tmp_path, format_version=1))["n_samples"] == 10


@pytest.mark.parametrize("ident", [
    "linear", 7, [], {"name": 5}, {"name": ""}, {"name": "   "}, {"label": "x"}, None,
])
def test_a_hostile_model_identity_falls_back_to_the_task(ident):
    prov = {"model_identity": ident, "model": {"name": "model", "spec_file": "/s/model.onnx"},
            "task": {"model_name": "linear", "model_file": "/m/linear.py"}}
    got = records.model_identity(prov, "linear", "5af07083")
    assert (got.name, got.label, got.file) == ("linear", "linear", "/m/linear.py")


def test_identity_fields_of_other_types_are_dropped():
    prov = {"model_identity": {"name": "m", "label": ["<b>"], "file": 3, "hash": {"a": 1}}}
    got = records.model_identity(prov, model_hash="01234567")
    assert got == records.ModelIdentity("m", "m", None, "01234567")
