"""Create the example DNNs: 64 inputs, L dense layers of U units (ReLU), 8 outputs (softmax).

Writes ``model_onnx_l{L}u{U}.onnx`` for L in (10, 20) and U in (128, 256) next to this file,
built directly as ONNX graphs with seeded random weights (no training framework needed), with a
symbolic batch dimension. The output is deterministic: the same bytes on every run.

usage: python create.py [--missing] [--layers 10,20] [--units 128,256]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
N_INPUTS, N_OUTPUTS = 64, 8
OPSET, IR_VERSION = 17, 8


def make_dnn(layers: int, units: int, seed: int = 0) -> onnx.ModelProto:
    """A ``layers`` x ``units`` ReLU MLP from 64 inputs to 8 softmax outputs."""
    rng = np.random.default_rng(seed + 1000 * layers + units)
    nodes, inits = [], []
    prev, width = "input_0", N_INPUTS
    for i in range(layers + 1):
        out_units = units if i < layers else N_OUTPUTS
        w = (rng.standard_normal((width, out_units)) * np.sqrt(2.0 / width)).astype(np.float32)
        b = np.zeros(out_units, dtype=np.float32)
        inits += [numpy_helper.from_array(w, f"dense_{i}/kernel"),
                  numpy_helper.from_array(b, f"dense_{i}/bias")]
        gemm = f"dense_{i}/gemm"
        nodes.append(helper.make_node("Gemm", [prev, f"dense_{i}/kernel", f"dense_{i}/bias"],
                                      [gemm], name=gemm))
        if i < layers:
            act = f"dense_{i}/relu"
            nodes.append(helper.make_node("Relu", [gemm], [act], name=act))
            prev = act
        else:
            prev = gemm
        width = out_units
    nodes.append(helper.make_node("Softmax", [prev], ["output_0"], axis=-1, name="softmax"))
    graph = helper.make_graph(
        nodes, f"dnn_l{layers}u{units}",
        [helper.make_tensor_value_info("input_0", TensorProto.FLOAT, ["batch_size", N_INPUTS])],
        [helper.make_tensor_value_info("output_0", TensorProto.FLOAT, ["batch_size", N_OUTPUTS])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="mlprof-examples", ir_version=IR_VERSION)
    onnx.checker.check_model(model)
    return model


def main() -> None:
    """Write the example models (all, or with --missing only those not present)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--missing", action="store_true", help="only create files that are missing")
    ap.add_argument("--layers", default="10,20")
    ap.add_argument("--units", default="128,256")
    args = ap.parse_args()
    for layers in map(int, args.layers.split(",")):
        for units in map(int, args.units.split(",")):
            path = os.path.join(HERE, f"model_onnx_l{layers}u{units}.onnx")
            if args.missing and os.path.exists(path):
                continue
            tmp = path + ".tmp"
            onnx.save(make_dnn(layers, units), tmp)
            os.replace(tmp, path)
            print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
