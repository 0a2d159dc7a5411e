"""Model specs: MLProf YAMLs and bare ONNX files, checked against the graph."""

from __future__ import annotations

import shutil

import pytest

from mlprof.errors import MLProfError
from mlprof.model import read_model_file
from mlprof.model.onnx_graph import resolve
from tests.helpers import DNN, REPO
from tests.onnx_factory import hardcoded_reshape_model, identity_model, matmul_model, write_yaml


def test_mlprof_yaml_is_read_as_mlprof_writes_it():
    spec = read_model_file(DNN)
    assert spec.name == "dnn_l10u128"
    assert spec.label == "DNN 10x128"
    assert spec.version == "1.0.0"
    assert spec.file == str(REPO / "examples" / "dnn" / "model_onnx_l10u128.onnx")
    assert [(i.name, i.shape, i.dtype) for i in spec.inputs] == [("input_0", (64,), "float32")]
    assert spec.outputs == ["output_0"]
    resolved = resolve(spec)
    assert resolved.fixed_batch is None
    assert resolved.inputs[0].full_shape(32) == (32, 64)


def test_yaml_without_dtype_takes_the_graphs(tmp_path):
    onnx_file = identity_model(tmp_path / "m.onnx", [("ids", "int64", ["N", 5])])
    y = write_yaml(tmp_path / "m.yaml", "m.onnx", [{"name": "ids", "shape": [5]}])
    resolved = resolve(read_model_file(y))
    assert resolved.inputs[0].dtype == "int64"
    assert resolved.spec.file == onnx_file


def test_name_and_label_default_to_the_file_name(tmp_path):
    identity_model(tmp_path / "my_net.onnx", [("x", "float32", ["N", 3])])
    spec = read_model_file(tmp_path / "my_net.onnx")
    assert (spec.name, spec.label) == ("my_net", "my_net")


def test_bare_onnx_reads_inputs_dtypes_and_shapes(tmp_path):
    path = identity_model(tmp_path / "m.onnx", [
        ("a", "float32", ["batch", 3, 4]), ("b", "float16", [None, 2]),
        ("c", "int32", ["batch", 1]), ("d", "int64", ["batch", 6]), ("e", "bool", ["batch", 2]),
    ])
    r = resolve(read_model_file(path))
    assert [(i.name, i.shape, i.dtype, i.batched) for i in r.inputs] == [
        ("a", (3, 4), "float32", True), ("b", (2,), "float16", True),
        ("c", (1,), "int32", True), ("d", (6,), "int64", True), ("e", (2,), "bool", True)]
    assert r.fixed_batch is None


def test_fixed_first_dimension_is_recorded(tmp_path):
    r = resolve(read_model_file(matmul_model(tmp_path / "m.onnx", batch=4)))
    assert r.fixed_batch == 4
    assert r.inputs[0].shape == (8,)


def test_scalar_input_has_no_batch_dimension(tmp_path):
    r = resolve(read_model_file(identity_model(tmp_path / "m.onnx", [("s", "float32", [])])))
    assert r.inputs[0].batched is False
    assert r.inputs[0].full_shape(16) == ()
    assert any("no input has a batch dimension" in n for n in r.notes)


def test_content_hash_changes_when_the_onnx_file_changes(tmp_path):
    shutil.copy(DNN, tmp_path / "m.yaml")
    shutil.copy(DNN.with_suffix(".onnx"), tmp_path / "model_onnx_l10u128.onnx")
    before = read_model_file(tmp_path / "m.yaml").content_hash
    matmul_model(tmp_path / "model_onnx_l10u128.onnx")  # "edit" the model
    after = read_model_file(tmp_path / "m.yaml").content_hash
    assert before != after
    # and the YAML alone counts too
    (tmp_path / "m.yaml").write_text((tmp_path / "m.yaml").read_text() + "\n# edited\n")
    assert read_model_file(tmp_path / "m.yaml").content_hash != after


def test_symbolic_non_batch_dimension_of_a_bare_onnx_needs_a_yaml(tmp_path):
    path = identity_model(tmp_path / "m.onnx", [("x", "float32", ["N", "seq"])])
    with pytest.raises(MLProfError, match="symbolic dimension 'seq' at axis 1"):
        resolve(read_model_file(path))
    y = write_yaml(tmp_path / "m.yaml", "m.onnx", [{"name": "x", "shape": [7]}])
    assert resolve(read_model_file(y)).inputs[0].shape == (7,)


def test_hardcoded_reshape_is_still_readable(tmp_path):
    r = resolve(read_model_file(hardcoded_reshape_model(tmp_path / "m.onnx")))
    assert r.fixed_batch == 4


def test_topological_sort_orders_a_graph_the_fp16_converter_left_unsorted():
    """ONNX Runtime's float16 converter appends the input casts last; the checker refuses that."""
    import onnx
    from onnx import TensorProto, helper

    from mlprof.model.export import topological_sort

    chain = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i in range(3000)]
    nodes = chain[1:] + chain[:1]  # the first node last, as the converter leaves its casts
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t0", TensorProto.FLOAT,
                                                                         [1])],
                              [helper.make_tensor_value_info("t3000", TensorProto.FLOAT, [1])])
    with pytest.raises(onnx.checker.ValidationError, match="topologically sorted"):
        onnx.checker.check_model(helper.make_model(graph))
    topological_sort(graph)  # 3000 deep: no recursion limit
    assert [n.name for n in graph.node] == [f"n{i}" for i in range(3000)]
    onnx.checker.check_model(helper.make_model(graph))
