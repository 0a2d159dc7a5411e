"""Create the example CNN: 1x28x28 images, two conv blocks, two dense layers, 10 classes.

Writes ``model_onnx_cnn.onnx`` next to this file (seeded random weights, symbolic batch
dimension, deterministic bytes).

usage: python create.py
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET, IR_VERSION = 17, 8


def make_cnn(seed: int = 0) -> onnx.ModelProto:
    """Conv(8)-ReLU-MaxPool, Conv(16)-ReLU-MaxPool, Flatten, Dense(64)-ReLU, Dense(10), Softmax."""
    rng = np.random.default_rng(seed)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    inits = [
        numpy_helper.from_array(he((8, 1, 3, 3), 9), "conv_0/kernel"),
        numpy_helper.from_array(np.zeros(8, np.float32), "conv_0/bias"),
        numpy_helper.from_array(he((16, 8, 3, 3), 72), "conv_1/kernel"),
        numpy_helper.from_array(np.zeros(16, np.float32), "conv_1/bias"),
        numpy_helper.from_array(he((16 * 7 * 7, 64), 16 * 7 * 7), "dense_0/kernel"),
        numpy_helper.from_array(np.zeros(64, np.float32), "dense_0/bias"),
        numpy_helper.from_array(he((64, 10), 64), "dense_1/kernel"),
        numpy_helper.from_array(np.zeros(10, np.float32), "dense_1/bias"),
    ]
    n = helper.make_node
    nodes = [
        n("Conv", ["input_0", "conv_0/kernel", "conv_0/bias"], ["c0"], pads=[1, 1, 1, 1]),
        n("Relu", ["c0"], ["r0"]),
        n("MaxPool", ["r0"], ["p0"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p0", "conv_1/kernel", "conv_1/bias"], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Flatten", ["p1"], ["f"], axis=1),
        n("Gemm", ["f", "dense_0/kernel", "dense_0/bias"], ["d0"]),
        n("Relu", ["d0"], ["r2"]),
        n("Gemm", ["r2", "dense_1/kernel", "dense_1/bias"], ["d1"]),
        n("Softmax", ["d1"], ["output_0"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("input_0", TensorProto.FLOAT, ["batch_size", 1, 28, 28])],
        [helper.make_tensor_value_info("output_0", TensorProto.FLOAT, ["batch_size", 10])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="mlprof-examples", ir_version=IR_VERSION)
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    path = os.path.join(HERE, "model_onnx_cnn.onnx")
    onnx.save(make_cnn(), path + ".tmp")
    os.replace(path + ".tmp", path)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.2f} MB)")
