"""Create the example CNN: 1x28x28 images, two conv blocks, two dense layers, 10 classes.

Writes ``model_onnx_cnn.onnx`` next to this file (seeded random weights, symbolic batch
dimension, deterministic bytes) and, with TensorFlow installed, the same network from the same
weights as MLProf's TensorFlow models, named as MLProf names them: the frozen graph
``frozen_graph_cnn.pb`` (input placeholder ``input`` [N, 1, 28, 28] as in the ONNX graph,
output ``Identity``) and the SavedModel ``saved_model_cnn/`` (signature ``serving_default``:
input ``input``, output ``output``).

usage: python create.py [--no-tf]
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


def write_tf(model: onnx.ModelProto, pb_path: str, saved_model_dir: str) -> None:
    """The ONNX CNN ``model`` as a TensorFlow frozen graph and SavedModel (same weights; NCHW
    input, computed in NHWC, TensorFlow's CPU layout)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import shutil

    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    w = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}

    class CNN(tf.Module):
        def __init__(self):
            super().__init__()
            # ONNX conv kernels are [out, in, h, w]; TensorFlow's [h, w, in, out]
            self.k0 = tf.Variable(w["conv_0/kernel"].transpose(2, 3, 1, 0))
            self.b0 = tf.Variable(w["conv_0/bias"])
            self.k1 = tf.Variable(w["conv_1/kernel"].transpose(2, 3, 1, 0))
            self.b1 = tf.Variable(w["conv_1/bias"])
            self.d0 = tf.Variable(w["dense_0/kernel"])
            self.c0 = tf.Variable(w["dense_0/bias"])
            self.d1 = tf.Variable(w["dense_1/kernel"])
            self.c1 = tf.Variable(w["dense_1/bias"])

        @tf.function(input_signature=[tf.TensorSpec([None, 1, 28, 28], tf.float32,
                                                    name="input")])
        def __call__(self, x):
            x = tf.transpose(x, [0, 2, 3, 1])
            x = tf.nn.relu(tf.nn.conv2d(x, self.k0, 1, "SAME") + self.b0)
            x = tf.nn.max_pool2d(x, 2, 2, "VALID")
            x = tf.nn.relu(tf.nn.conv2d(x, self.k1, 1, "SAME") + self.b1)
            x = tf.nn.max_pool2d(x, 2, 2, "VALID")
            x = tf.reshape(tf.transpose(x, [0, 3, 1, 2]), [-1, 16 * 7 * 7])  # ONNX's order
            x = tf.nn.relu(tf.matmul(x, self.d0) + self.c0)
            x = tf.matmul(x, self.d1) + self.c1
            return {"output": tf.nn.softmax(x)}

    cnn = CNN()
    tmp = saved_model_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tf.saved_model.save(cnn, tmp, signatures={"serving_default": cnn.__call__})
    shutil.rmtree(saved_model_dir, ignore_errors=True)
    os.replace(tmp, saved_model_dir)
    frozen = convert_variables_to_constants_v2(cnn.__call__.get_concrete_function())
    tf.io.write_graph(frozen.graph.as_graph_def(), os.path.dirname(pb_path),
                      os.path.basename(pb_path) + ".tmp", as_text=False)
    os.replace(pb_path + ".tmp", pb_path)
    print(f"wrote {pb_path} and {saved_model_dir}/")


if __name__ == "__main__":
    import importlib.util
    import sys

    path = os.path.join(HERE, "model_onnx_cnn.onnx")
    onnx.save(make_cnn(), path + ".tmp")
    os.replace(path + ".tmp", path)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.2f} MB)")
    if "--no-tf" not in sys.argv[1:] and importlib.util.find_spec("tensorflow") is not None:
        write_tf(make_cnn(), os.path.join(HERE, "frozen_graph_cnn.pb"),
                 os.path.join(HERE, "saved_model_cnn"))
