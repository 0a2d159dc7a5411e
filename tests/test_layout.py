"""The store layout (mlprof.results.layout): settings -> path -> settings for every task family, the
old store's paths, and the guards on path segments."""

from __future__ import annotations

import math
import os
import re

import pytest

from mlprof.errors import MLProfError
from mlprof.results import layout
from tests.helpers import DNN, REPO
from tests.test_accounting import CASES, _construct, base_kwargs


@pytest.mark.parametrize("cls, kind", CASES, ids=[f"{c.__name__}-{k}" for c, k in CASES])
def test_round_trip_for_every_task_family(cls, kind, store):
    """A task's output directory parses back into the task's own settings."""
    task = _construct(cls, base_kwargs(cls, kind))
    if task is None:
        pytest.skip(f"{cls.__name__} does not take a {kind} model")
    path = task.local_path("some_file.csv")
    rp = layout.parse_result_path(path, str(store))
    # --version "v", except for a result that belongs to the machine (MeasurePeak's and
    # CalibrateNoise's revisions)
    assert (rp.task, rp.version, rp.file) == (cls.__name__, task.version_dir(), "some_file.csv")
    assert rp.version == {"MeasurePeak": layout.PEAK_REVISION,
                          "CalibrateNoise": layout.NOISE_REVISION}.get(cls.__name__, "v")
    assert rp.directory == task.local_path()
    assert set(rp.segments) == set(layout.LAYOUTS[cls.__name__])
    parsed = rp.parsed()
    if hasattr(task, "resolved_model_name") and "model" in rp.segments:
        assert parsed["model"] == task.resolved_model_name or cls.__name__ == "DiscoverModels"
        assert task.model_spec.content_hash.startswith(parsed["model_hash"]) or task.is_script
    if "runtime" in rp.segments:
        runtimes = (getattr(task, "resolved_runtimes", None) or getattr(task, "runtimes", None)
                    or (task.runtime,))
        assert parsed["device"] == task.device
        from mlprof.runtimes import runtime_version

        hashed = re.match(r"(\d+)x_", rp.segments["runtime"])
        if hashed:  # a list too long for one segment (PlotSpeedup's automatic four): counted
            assert int(hashed.group(1)) == len(runtimes) > 3
            assert rp.segments["runtime"].startswith(f"{len(runtimes)}x_{runtimes[0]}-")
        else:
            assert parsed["runtimes"] == list(runtimes)
            assert parsed["runtime_version"] == ",".join(runtime_version(r) for r in runtimes)
    settings = parsed.get("settings")
    if settings is not None and hasattr(task, "measure_key"):
        assert settings["measure"] == task.measure_key()
        exports = getattr(task, "measures_export", None)
        if exports is None:
            exports = task._exports()
        assert settings["export"] == (task.export_key() if exports else None)
    if cls.__name__ in ("DiscoverModels", "ExportOnnx"):
        assert settings["script"] in (None, task.script_key())
        if cls.__name__ == "ExportOnnx":
            assert settings["export"] == task.export_key()


@pytest.mark.parametrize("key", [
    layout.MeasureKey(100, 1, 10, 0.5, 1, "random"),
    layout.MeasureKey(1, 7, 0, 0.0, 0, "file-inputs-0123abcd"),
    layout.MeasureKey(3, 1, 2, 1e-5, 16, "zeros"),
    layout.MeasureKey(3, 1, 2, 12.25, 2, "file-my_file-0123abcd"),
])
def test_measure_segment_round_trip(key):
    back = layout.parse_measure_segment(layout.measure_segment(key))
    assert back == key and math.isclose(back.min_duration, key.min_duration)


@pytest.mark.parametrize("export, script", [
    (layout.ExportKey(18), layout.ScriptKey()),
    (layout.ExportKey(17, "fp16", True, "ab12"), layout.ScriptKey("0123ab", 2)),
    (layout.ExportKey(20, "fp32", False, ""), layout.ScriptKey("", 3)),
])
def test_export_and_script_segments_round_trip(export, script):
    measure = layout.MeasureKey(100, 1, 10, 0.5, 1, "random")
    parsed = layout.parse_settings_segment(layout.measure_settings_segment(measure, export))
    assert (parsed["measure"], parsed["export"]) == (measure, export)
    parsed = layout.parse_settings_segment(layout.export_settings_segment(export, script))
    assert parsed["export"] == export
    assert (parsed["script"] or layout.ScriptKey()) == script
    parsed = layout.parse_settings_segment(layout.discovery_settings_segment(script))
    assert (parsed["script"] or layout.ScriptKey()) == script


#: paths written by mlprof before this module existed (commit 951c6c7): read as they are
OLD_STORE = [
    ("MeasureRuntime/dnn_l10u128__bb7860fc/onnxruntime-1.31.1__cpu/"
     "calls100_events1_warmup10_mindur0p5_threads1_input-random/v1/runtime_bs_8.json",
     {"model": "dnn_l10u128", "model_hash": "bb7860fc", "runtime": "onnxruntime",
      "runtime_version": "1.31.1", "device": "cpu"}),
    ("MeasureRuntime/linear-ee07f9c5__0d847216/torch-compile-2.14.1__cpu/"
     "calls10_events1_warmup1_mindur0_threads1_input-random/n1/runtime_bs_1.csv",
     {"model": "linear-ee07f9c5", "runtime": "torch-compile", "runtime_version": "2.14.1"}),
    ("PlotMultiRuntimes/dnn_l10u128__bb7860fc-dnn_l20u128__1a2b3c4d/"
     "onnxruntime-1.31.1-torch-2.14.1__cpu/"
     "calls100_events1_warmup10_mindur0p5_threads1_input-random__onnx-op18-fp32/v1/x.pdf",
     {"models": ["dnn_l10u128", "dnn_l20u128"], "runtimes": ["onnxruntime", "torch"],
      "runtime_version": "1.31.1,2.14.1"}),
    ("ExportOnnx/linear-ee07f9c5__0d847216/onnx-op18-fp32_args-0123ab_depth2/v1/model.onnx",
     {"model": "linear-ee07f9c5"}),
    ("DiscoverModels/linear__5af07083/default/v1/manifest.json", {"model": "linear"}),
]


@pytest.mark.parametrize("rel, expected", OLD_STORE, ids=[r.split("/")[0] for r, _ in OLD_STORE])
def test_the_old_stores_paths_are_read_as_they_are(rel, expected, tmp_path):
    rp = layout.parse_result_path(str(tmp_path / rel), str(tmp_path))
    parsed = rp.parsed()
    for k, v in expected.items():
        assert parsed[k] == v, (k, parsed)
    settings = parsed["settings"]
    assert not settings["other"], settings
    if rp.task == "ExportOnnx":
        assert settings["export"] == layout.ExportKey(18)
        assert settings["script"] == layout.ScriptKey("0123ab", 2)


@pytest.mark.parametrize("bad", ["", " ", "/abs/dir", "a/b", "..", ".", ".hidden", "a\nb",
                                 "x" * 201, "a\\b"])
def test_a_version_is_one_safe_segment(bad, tmp_path):
    with pytest.raises(MLProfError, match="--version"):
        layout.result_dir("MeasureRuntime", bad, {"model": "m__01234567", "runtime": "r__cpu",
                                                  "settings": "s"}, store=str(tmp_path))


def test_a_version_path_fails_early_in_law_run(store):
    from tests.helpers import law_run

    r = law_run("PlotRuntimes", "--version", "/tmp/elsewhere", store=store)
    assert r.returncode != 0
    assert "--version: must be one name, not a path" in r.stdout + r.stderr
    assert not store.exists() or not any(store.rglob("*.csv"))
    assert not os.path.exists("/tmp/elsewhere/runtime_bs_1.csv")


def test_result_dir_refuses_segments_not_in_the_layout(tmp_path):
    with pytest.raises(ValueError, match="do not match the layout"):
        layout.result_dir("MergeRuntimes", "v", {"model": "m__01234567"}, store=str(tmp_path))


def test_the_layout_is_written_in_one_module():
    """No other module spells a result's file names or joins segments into a store path."""
    offenders = []
    for root, _, files in os.walk(REPO / "mlprof"):
        for name in files:
            path = os.path.join(root, name)
            # the results package declares the file names (layout.py, families.py)
            if not name.endswith(".py") or os.path.join("mlprof", "results") in path:
                continue
            text = open(path).read()
            for needle in ('f"runtime_bs_', '"_failure_bs_', 'f"stats_', 'f"provenance_',
                           '"STORE_ORDER"', "STORE_ORDER =", 'glob("*/*/*/'):
                if needle in text:
                    offenders.append(f"{os.path.relpath(path, REPO)}: {needle}")
    assert not offenders, offenders


def test_branch_and_merged_file_names_parse_back():
    for bs in (1, 64, 1024):
        for ext, name in layout.branch_files(bs).items():
            assert layout.parse_branch_file(name) == (bs, ext)
        assert layout.parse_branch_failure(layout.branch_failure_file(bs)) == bs
    assert layout.parse_branch_failure("_failure_bs_abc.json") is None
    tag = layout.batch_sizes_tag(tuple(2 ** i for i in range(11)))
    for kind, name in layout.merged_files(tag).items():
        assert layout.parse_merged_file(name) == (kind, tag)
    assert str(DNN).endswith(".yaml")  # the fixture the other tests use exists


@pytest.mark.parametrize("value, tag", [
    (1, "1"), (0.5, "0p5"), (99, "99"), (99.9, "99p9"), (1000, "1000"), (5, "5"), (200, "200"),
    (2.5, "2p5"), (1234.5, "1234p5"), (0.25, "0p25"), (1e-05, "1e-05"), (1e22, "1e22"),
])
def test_number_tags_of_the_old_stores_stay(value, tag):
    """Where six significant digits were exact, a number's tag is what it always was (the
    stores written before keep their paths)."""
    assert layout._num_tag(value) == tag


def test_distinct_numbers_have_distinct_tags_that_read_back():
    """``:g`` alone made 200.00001 and 200.00002 one tag (one point, measured once and shown
    twice) and 123456.8 reuse 123456.7's."""
    values = [200.0, 200.00001, 200.00002, 123456.7, 123456.8, 1 / 3, 0.1 + 0.2, 0.3,
              1e-12, 1e-9, 5e-324, 1e6 - 1e-6, 99.99, 99.999999, 99.9999999]
    tags = [layout._num_tag(v) for v in values]
    assert len(set(tags)) == len(values), tags
    for v, tag in zip(values, tags, strict=True):
        assert float(tag.replace("p", ".")) == v, (v, tag)
        assert re.fullmatch(r"[\w.-]+", tag), tag
    rates = [layout.load_point_tag("server", 1, 1, "each", rate=r) for r in (200.00001,
                                                                            200.00002)]
    assert rates[0] != rates[1]


def test_names_that_sanitize_alike_never_share_a_directory(store):
    from mlprof.tasks.runtime import MergeRuntimes

    dirs = {MergeRuntimes(version="v", model_name=n).local_path()
            for n in ("a/b", "a b", "a_b", "a:b")}
    assert len(dirs) == 4, dirs
    assert layout.safe_name("dnn_l10u128") == "dnn_l10u128"  # safe names stay as they were
    long = ["m" * 70 + "1", "m" * 70 + "2"]
    assert len({layout.model_page(n, "0123abcd") for n in long}) == 2
    assert len({layout.model_segment(n, "0123abcd") for n in long}) == 2
    # a model's dashboard page is named as its directories are
    for n in [*long, "m" * 60, "dnn_l10u128", "a b"]:
        segment = layout.model_segment(n, "0123abcd")
        assert layout.model_page(n, "0123abcd") == f"models/{segment}.html"


def test_external_data_is_part_of_the_content_hash(tmp_path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from mlprof.model import read_model_file

    w = numpy_helper.from_array(np.ones((64, 8), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 8])], [w])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph), str(path), save_as_external_data=True,
              all_tensors_to_one_file=True, location="m.onnx.data", size_threshold=0)
    before = read_model_file(str(path)).content_hash
    assert read_model_file(str(path)).content_hash == before
    data = (tmp_path / "m.onnx.data").read_bytes()
    (tmp_path / "m.onnx.data").write_bytes(data[:-4] + np.float32(2).tobytes())
    assert read_model_file(str(path)).content_hash != before
