"""Faulty ONNX models built in code: ``python tests/faulty_models/faulty_onnx.py OUTDIR``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def expand_bomb(path: str | Path, mb_per_row: int = 200, features: int = 64) -> str:
    """A memory bomb for ONNX Runtime: ``x[N, features]`` is expanded to ``[N, K]`` float32
    values with ``K * 4 bytes = mb_per_row`` MB, then summed to ``y[N, 1]``.

    The expanded tensor is an intermediate, so it lives in ONNX Runtime's arena: at batch size
    ``N`` one call needs ``N * mb_per_row`` MB, every page of it written. Small batch sizes
    work; large ones exhaust any memory limit (as an attention matrix or an unlucky broadcast
    would).
    """
    k = mb_per_row * 2**20 // 4
    inits = [numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([1], np.int64), "one"),
             numpy_helper.from_array(np.array([k], np.int64), "k")]
    nodes = [
        helper.make_node("Slice", ["x", "zero", "one", "one"], ["col"]),       # [N, 1]
        helper.make_node("Shape", ["x"], ["shape_x"]),
        helper.make_node("Slice", ["shape_x", "zero", "one"], ["n"]),          # [N]
        helper.make_node("Concat", ["n", "k"], ["big_shape"], axis=0),          # [N, K]
        helper.make_node("Expand", ["col", "big_shape"], ["big"]),             # [N, K]
        helper.make_node("ReduceSum", ["big", "one"], ["y"], keepdims=1),       # [N, 1]
    ]
    graph = helper.make_graph(
        nodes, "expand_bomb",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch_size", features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch_size", 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    print(expand_bomb(out / "expand_bomb.onnx"))
