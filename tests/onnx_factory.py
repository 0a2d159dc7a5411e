"""Small ONNX models built in code for the tests (no files committed, nothing downloaded)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DTYPES = {
    "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "float64": TensorProto.DOUBLE,
    "int32": TensorProto.INT32, "int64": TensorProto.INT64, "bool": TensorProto.BOOL,
}


def _save(model: onnx.ModelProto, path) -> str:
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def identity_model(path, inputs: list[tuple[str, str, list]]) -> str:
    """One Identity per input (any dtype); dims may hold ints, symbols or None."""
    nodes, gin, gout = [], [], []
    for i, (name, dtype, dims) in enumerate(inputs):
        gin.append(helper.make_tensor_value_info(name, DTYPES[dtype], dims))
        gout.append(helper.make_tensor_value_info(f"out_{i}", DTYPES[dtype], dims))
        nodes.append(helper.make_node("Identity", [name], [f"out_{i}"]))
    graph = helper.make_graph(nodes, "identity", gin, gout)
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def matmul_model(path, batch: int | str = "N", features: int = 8, units: int = 4) -> str:
    """x[batch, features] @ W -> y[batch, units]; ``batch`` fixed (int) or symbolic (str)."""
    w = numpy_helper.from_array(np.ones((features, units), np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, units])], [w])
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def hardcoded_reshape_model(path, batch: int = 4, features: int = 8) -> str:
    """A fixed-batch model whose Reshape target hard-codes the batch size."""
    shape = numpy_helper.from_array(np.array([batch, 2, features // 2], np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 2, features // 2])],
        [shape])
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def write_yaml(path, onnx_file: str, inputs: list[dict], name: str = "test_model",
               engine: str = "onnx", outputs: list[str] | None = None) -> str:
    """An MLProf-style model YAML."""
    import yaml

    model = {"name": name, "label": name.replace("_", " "), "version": "1.0",
             "inference_engine": engine, "file": onnx_file, "inputs": inputs}
    if outputs is not None:
        model["outputs"] = [{"name": o} for o in outputs]
    with open(path, "w") as f:
        yaml.safe_dump({"model": model}, f, sort_keys=False)
    return str(path)


def slow_model(path, iterations: int, size: int = 256) -> str:
    """x[N, size] multiplied ``iterations`` times by a ``size`` x ``size`` identity matrix in an
    ONNX ``Loop``: as slow as wanted (each iteration costs ``2 * N * size**2`` flops), values
    unchanged (no overflow, no denormals)."""
    w = numpy_helper.from_array(np.eye(size, dtype=np.float32), "W")
    trips = numpy_helper.from_array(np.array(iterations, np.int64), "trips")
    cond = numpy_helper.from_array(np.array(True), "cond")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("MatMul", ["y_in", "W"], ["y_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", TensorProto.FLOAT, ["N", size])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", TensorProto.FLOAT, ["N", size])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "cond", "x"], ["y"], body=body)], "slow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", size])], [w, trips, cond])
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)



def inf_output_model(path, features: int = 16, units: int = 4) -> str:
    """x[N, features] @ W -> y[N, units] whose first output is inf at fp32 for an input of ones
    (two weights of 3e38 sum beyond float32), the others ``features``. Its fp16 conversion clamps
    the weights to 65504 (a number where fp32 has inf: an infinite error); int8-dynamic keeps
    the inf at the same position (no error there)."""
    w = np.ones((features, units), np.float32)
    w[0:2, 0] = 3e38
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], "inf_output",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", units])],
        [numpy_helper.from_array(w, "W")])
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
