"""Create the example DNNs: 64 inputs, L dense layers of U units (ReLU), 8 outputs (softmax).

Writes ``model_onnx_l{L}u{U}.onnx`` for L in (10, 20) and U in (128, 256) next to this file,
built directly as ONNX graphs with seeded random weights (no training framework needed), with a
symbolic batch dimension. The output is deterministic: the same bytes on every run.

With TensorFlow installed (``--tf``, the default when it is importable), also the same
networks, from the same weights, as MLProf's TensorFlow models, named as MLProf's
``examples/dnn/create.py`` names them so that MLProf's YAMLs work unchanged: a frozen graph
``frozen_graph_l{L}u{U}.pb`` (input placeholder ``input``, output ``Identity``; MLProf's
``model_tf_*.yaml``) and a SavedModel directory ``saved_model_l{L}u{U}/`` (signature
``serving_default``: input ``input``, output ``output``; MLProf's ``model_tfaot_*.yaml``).

usage: python create.py [--missing] [--layers 10,20] [--units 128,256] [--tf | --no-tf]
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

if TYPE_CHECKING:
    from mlprof.measure.quiet import StderrFilter

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


def write_tf(model: onnx.ModelProto, pb_path: str, saved_model_dir: str) -> None:
    """The ONNX DNN ``model`` as a TensorFlow frozen graph and SavedModel (same weights)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import shutil

    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    w = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    n_dense = sum(1 for k in w if k.endswith("/kernel"))

    class DNN(tf.Module):
        def __init__(self):
            super().__init__()
            self.kernels = [tf.Variable(w[f"dense_{i}/kernel"]) for i in range(n_dense)]
            self.biases = [tf.Variable(w[f"dense_{i}/bias"]) for i in range(n_dense)]

        @tf.function(input_signature=[tf.TensorSpec([None, N_INPUTS], tf.float32,
                                                    name="input")])
        def __call__(self, x):
            for i in range(n_dense):
                x = tf.matmul(x, self.kernels[i]) + self.biases[i]
                if i < n_dense - 1:
                    x = tf.nn.relu(x)
            return {"output": tf.nn.softmax(x)}

    dnn = DNN()
    tmp = saved_model_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tf.saved_model.save(dnn, tmp, signatures={"serving_default": dnn.__call__})
    shutil.rmtree(saved_model_dir, ignore_errors=True)
    os.replace(tmp, saved_model_dir)
    frozen = convert_variables_to_constants_v2(dnn.__call__.get_concrete_function())
    tf.io.write_graph(frozen.graph.as_graph_def(), os.path.dirname(pb_path),
                      os.path.basename(pb_path) + ".tmp", as_text=False)
    os.replace(pb_path + ".tmp", pb_path)


def _have_tf() -> bool:
    import importlib.util

    return importlib.util.find_spec("tensorflow") is not None


def main() -> None:
    """Write the example models (all, or with --missing only those not present)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--missing", action="store_true", help="only create files that are missing")
    ap.add_argument("--layers", default="10,20")
    ap.add_argument("--units", default="128,256")
    ap.add_argument("--tf", action=argparse.BooleanOptionalAction, default=None,
                    help="also write the TensorFlow models (default: when TensorFlow is "
                    "installed)")
    args = ap.parse_args()
    with_tf = _have_tf() if args.tf is None else args.tf
    quiet = _quiet_stderr() if with_tf else None
    try:
        written = _write(args, with_tf)
    finally:
        if quiet is not None:
            quiet.close()
    if written:  # one line (source setup.sh prints it on first use)
        print(f"wrote {len(written)} example model files to {HERE}: {', '.join(written)}")


def _quiet_stderr() -> StderrFilter | None:
    """mlprof's filter of TensorFlow's C++ start-up notices (absl's "All log messages before
    absl::InitializeLog()" and "oneDNN custom operations are on", which TF_CPP_MIN_LOG_LEVEL
    does not reach: 4 lines in ``source setup.sh``'s output), when mlprof is importable."""
    try:
        from mlprof.measure.quiet import StderrFilter
    except ImportError:
        return None
    return StderrFilter()


def _write(args: argparse.Namespace, with_tf: bool) -> list[str]:
    written: list[str] = []
    for layers in map(int, args.layers.split(",")):
        for units in map(int, args.units.split(",")):
            path = os.path.join(HERE, f"model_onnx_l{layers}u{units}.onnx")
            if not (args.missing and os.path.exists(path)):
                tmp = path + ".tmp"
                onnx.save(make_dnn(layers, units), tmp)
                os.replace(tmp, path)
                written.append(os.path.basename(path))
            pb = os.path.join(HERE, f"frozen_graph_l{layers}u{units}.pb")
            sm = os.path.join(HERE, f"saved_model_l{layers}u{units}")
            if with_tf and not (args.missing and os.path.exists(pb) and os.path.isdir(sm)):
                write_tf(make_dnn(layers, units), pb, sm)
                written += [os.path.basename(pb), os.path.basename(sm) + "/"]
    return written


if __name__ == "__main__":
    main()
