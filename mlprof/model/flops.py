"""A model's cost per call from its ONNX graph: FLOPs, parameter and activation bytes.

The graph's shapes are inferred (``onnx.shape_inference``) with the batch dimension set to the
batch size measured, then every node is counted by its type:

- MatMul (batched too), Gemm, Conv, ConvTranspose, Einsum and com.microsoft
  Attention/MultiHeadAttention: their multiply-adds, 2 FLOPs each (``2*M*N*K`` for a
  ``[M, K] x [K, N]`` product); a bias adds 1 FLOP per output element.
- element-wise, activation, normalization and softmax nodes: **1 FLOP per output element**
  (a convention: an exp costs more than an add, a LayerNormalization several passes; these nodes
  are a small part of a dense network's cost: 0.4 % of the example DNN's 315,920 FLOPs per event
  and 2.7 % of the example CNN's 694,484).
- pooling: one FLOP per window element and output element; reductions: one per input element.
- data movement (Reshape, Transpose, Gather, Concat, ...): 0 FLOPs, counted.

A node whose shapes stay unknown or whose type is not in these lists is *not counted* and is
recorded by name in :attr:`GraphCost.uncounted`: then the FLOPs are a lower bound, and
:attr:`GraphCost.gflop_per_call` is None (never a silently wrong number); ``counted_nodes`` and
``gflop_counted`` say how much of the graph was counted.

``param_bytes`` are the initializers' (and Constant nodes') bytes, ``activation_bytes`` the
bytes of the graph inputs and of every node output: the traffic of a call if every tensor were
written and read once, whose ratio to the FLOPs is the arithmetic intensity of a roofline view.
The example DNN (10 x 128) moves 631,840 parameter bytes and 10,560 activation bytes per event:
at batch size 1 its intensity is 0.49 FLOP/byte (memory-bound), at 1024 about 28.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from mlprof.errors import MLProfError
from mlprof.model import read_model_file
from mlprof.model.onnx_graph import load_onnx, resolve

#: 1 FLOP per output element (see the module docstring for why that is a convention)
ELEMENTWISE_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal", "Neg", "Abs", "Exp", "Log", "Erf",
    "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish",
    "Tanh", "Softplus", "Softsign", "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "Mish", "Clip",
    "Max", "Min", "Mean", "Sum", "Floor", "Ceil", "Round", "Sign", "Where", "Equal", "Greater",
    "Less", "GreaterOrEqual", "LessOrEqual", "Not", "And", "Or", "Xor", "Mod", "Sin", "Cos",
    "Softmax", "LogSoftmax", "BatchNormalization", "LayerNormalization",
    "InstanceNormalization", "GroupNormalization", "SimplifiedLayerNormalization",
    "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "LpNormalization",
    "BiasAdd", "Dropout", "ThresholdedRelu", "IsNaN", "IsInf", "CumSum",
})
#: no arithmetic: 0 FLOPs
MOVEMENT_OPS = frozenset({
    "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
    "Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements", "Identity", "Cast",
    "CastLike", "Shape", "Size", "Constant", "ConstantOfShape", "Expand", "Tile", "Pad",
    "Range", "DepthToSpace", "SpaceToDepth", "NonZero", "OneHot", "Trilu", "ArgMax", "ArgMin",
    "TopK", "Resize", "Upsample",
})
POOL_OPS = frozenset({"MaxPool", "AveragePool", "LpPool"})
REDUCE_OPS = frozenset({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                        "ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare",
                        "GlobalAveragePool", "GlobalMaxPool"})


@dataclass
class GraphCost:
    """The cost of one call of a graph at one batch size."""

    batch_size: int
    #: FLOPs of the counted nodes
    flop: float
    param_bytes: int
    activation_bytes: int
    n_nodes: int
    counted_nodes: int
    #: ``"<op type> <node name>: <why>"`` per node not counted
    uncounted: list[str] = field(default_factory=list)
    #: FLOPs per op type
    by_op: dict[str, float] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether every node was counted (the FLOPs are exact under the conventions above)."""
        return not self.uncounted

    @property
    def gflop_per_call(self) -> float | None:
        """GFLOP per call, None when some node was not counted (the count is a lower bound)."""
        return self.flop / 1e9 if self.complete else None

    @property
    def intensity(self) -> float:
        """FLOPs per byte of parameters and activations (a roofline's x-axis)."""
        moved = self.param_bytes + self.activation_bytes
        return self.flop / moved if moved else float("nan")

    def record(self) -> dict[str, Any]:
        """For provenance records (JSON)."""
        return {"batch_size": self.batch_size, "gflop_per_call": self.gflop_per_call,
                "gflop_counted": self.flop / 1e9, "complete": self.complete,
                "param_bytes": self.param_bytes, "activation_bytes": self.activation_bytes,
                "flop_per_byte": self.intensity, "n_nodes": self.n_nodes,
                "counted_nodes": self.counted_nodes, "uncounted": self.uncounted[:20],
                "by_op": self.by_op,
                "conventions": "multiply-add = 2 FLOPs, bias/element-wise/normalization/"
                               "softmax = 1 FLOP per output element"}


def _with_batch(model: onnx.ModelProto, batch_size: int,
                input_shapes: Mapping[str, Sequence[int]] | None) -> onnx.ModelProto:
    """A copy of ``model`` whose inputs have the batch size (or the given full shapes) and no
    stale intermediate shapes."""
    import json

    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {i.name for i in m.graph.initializer}
    batched = None
    for prop in m.metadata_props:
        if prop.key == "mlprof.batched_inputs":
            batched = set(json.loads(prop.value))
    for vi in m.graph.input:
        if vi.name in inits or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if input_shapes and vi.name in input_shapes:
            shape = list(input_shapes[vi.name])
            if len(shape) == len(dims):
                for d, v in zip(dims, shape, strict=True):
                    d.Clear()
                    d.dim_value = int(v)
            continue
        if len(dims) and (batched is None or vi.name in batched):
            dims[0].Clear()
            dims[0].dim_value = int(batch_size)
    del m.graph.value_info[:]
    for vi in m.graph.output:  # a fixed output batch would contradict the new one
        if vi.type.tensor_type.HasField("shape") and len(vi.type.tensor_type.shape.dim):
            vi.type.tensor_type.shape.dim[0].Clear()
    return m


def _known(vi: onnx.ValueInfoProto) -> tuple[tuple[int, ...] | None, int]:
    """(shape or None when any dim is unknown, bytes per element)."""
    t = vi.type.tensor_type
    try:
        size = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)).itemsize
    except (KeyError, TypeError, ValueError):
        size = 4
    if not t.HasField("shape"):
        return None, size
    dims = []
    for d in t.shape.dim:
        if not d.HasField("dim_value"):
            return None, size
        dims.append(int(d.dim_value))
    return tuple(dims), size


def _attr(node: onnx.NodeProto, name: str, default: Any = None) -> Any:
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _einsum_flop(eq: str, shapes: list[tuple[int, ...]]) -> float:
    """2 x the product of every index's size (a contraction of two operands)."""
    lhs = eq.replace(" ", "").split("->")[0].split(",")
    if len(lhs) != len(shapes) or any("." in t for t in lhs):
        raise ValueError("ellipsis or operand count")
    sizes: dict[str, int] = {}
    for term, shape in zip(lhs, shapes, strict=True):
        if len(term) != len(shape):
            raise ValueError("rank")
        sizes.update(zip(term, shape, strict=True))
    return 2.0 * math.prod(sizes.values()) if len(shapes) > 1 else float(math.prod(
        sizes.values()))


def _node_flop(node: onnx.NodeProto, shape: dict[str, tuple[int, ...] | None]) -> float:
    """FLOPs of one node; ``KeyError``/``ValueError`` when its shapes are unknown or its type
    is not counted."""
    op = node.op_type
    ins = [shape.get(n) if n else None for n in node.input]
    out = shape.get(node.output[0]) if node.output else None

    def need(*xs: tuple[int, ...] | None) -> list[tuple[int, ...]]:
        """The shapes ``xs``, all known; ``ValueError`` when one is not."""
        known = [x for x in xs if x is not None]
        if len(known) != len(xs):
            raise ValueError("shape unknown")
        return known

    if op in MOVEMENT_OPS:
        return 0.0
    if op in ELEMENTWISE_OPS:
        (o,) = need(out)
        return float(math.prod(o))
    if op == "MatMul" or op == "MatMulInteger":
        o, a = need(out, ins[0])
        return 2.0 * math.prod(o) * a[-1]
    if op == "Gemm":
        o, a = need(out, ins[0])
        k = a[0] if _attr(node, "transA", 0) else a[1]
        bias = len(node.input) > 2 and bool(node.input[2])
        return 2.0 * math.prod(o) * k + (math.prod(o) if bias else 0)
    if op == "Conv":
        o, w = need(out, ins[1])
        bias = len(node.input) > 2 and bool(node.input[2])
        # W is [Cout, Cin/groups, kh, kw]: each output element is Cin/groups*kh*kw MACs
        return 2.0 * math.prod(o) * math.prod(w[1:]) + (math.prod(o) if bias else 0)
    if op == "ConvTranspose":
        o, x, w = need(out, ins[0], ins[1])
        bias = len(node.input) > 2 and bool(node.input[2])
        # every input element is scattered through Cout/groups*kh*kw weights
        return 2.0 * math.prod(x) * math.prod(w[1:]) + (math.prod(o) if bias else 0)
    if op == "Einsum":
        equation = _attr(node, "equation")
        return _einsum_flop(str(_attr(node, "equation", b"").decode()
                                if isinstance(equation, bytes) else equation), need(*ins))
    if op in POOL_OPS:
        (o,) = need(out)
        return float(math.prod(o) * math.prod(_attr(node, "kernel_shape", [1])))
    if op in REDUCE_OPS:
        (x,) = need(ins[0])
        return float(math.prod(x))
    if op == "Attention" and node.domain == "com.microsoft":
        x, w = need(ins[0], ins[1])
        b, s, hidden = x
        heads = int(_attr(node, "num_heads"))
        sizes = list(_attr(node, "qkv_hidden_sizes", []) or []) or [w[1] // 3] * 3
        dq, dk, dv = sizes
        proj = 2.0 * b * s * hidden * (dq + dk + dv) + b * s * (dq + dk + dv)
        scores = 2.0 * b * s * s * dq          # Q K^T over all heads
        context = 2.0 * b * s * s * dv         # softmax(.) V
        return proj + scores + context + b * heads * s * s  # + softmax
    if op == "MultiHeadAttention" and node.domain == "com.microsoft":
        q, k_, v = need(ins[0], ins[1], ins[2])
        if len(k_) != 3 or len(v) != 3:
            raise ValueError("packed or 4-D key/value")
        b, s, dq = q
        _, kv_len, _ = k_
        dv = v[2]
        heads = int(_attr(node, "num_heads"))
        return 2.0 * b * s * kv_len * dq + 2.0 * b * s * kv_len * dv + b * heads * s * kv_len
    raise KeyError(f"op type {node.domain + '.' if node.domain else ''}{op} is not counted")


def graph_cost(model: onnx.ModelProto, batch_size: int,
               input_shapes: Mapping[str, Sequence[int]] | None = None) -> GraphCost:
    """The cost of one call of ``model`` at ``batch_size`` (see the module docstring).

    ``input_shapes`` gives full input shapes where the graph leaves dimensions other than the
    batch symbolic (a model YAML's shapes); otherwise the first dimension of every input is set
    to ``batch_size`` (those an mlprof export records as batched, when it says).
    """
    m = _with_batch(model, batch_size, input_shapes)
    try:
        m = shape_inference.infer_shapes(m, data_prop=True)
    except Exception as e:  # inference failing outright: every node with unknown shapes below
        inferred_error = f"shape inference failed: {str(e).splitlines()[0][:120]}"
    else:
        inferred_error = ""
    g = m.graph
    shape: dict[str, tuple[int, ...] | None] = {}
    elem: dict[str, int] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        shape[vi.name], elem[vi.name] = _known(vi)
    param_bytes = 0
    for init in g.initializer:
        shape[init.name] = tuple(int(d) for d in init.dims)
        size = np.dtype(helper.tensor_dtype_to_np_dtype(init.data_type)).itemsize
        param_bytes += size * math.prod(init.dims)
    inits = {i.name for i in g.initializer}
    activation_bytes = sum(elem[vi.name] * math.prod(known)
                           for vi in g.input
                           if vi.name not in inits and (known := shape[vi.name]))
    flop, counted = 0.0, 0
    uncounted: list[str] = []
    by_op: dict[str, float] = {}
    for node in g.node:
        if node.op_type == "Constant":
            value = _attr(node, "value")
            if isinstance(value, onnx.TensorProto):
                param_bytes += numpy_helper.to_array(value).nbytes
                shape[node.output[0]] = tuple(int(d) for d in value.dims)
        for o in node.output:
            out_shape = shape.get(o) if o else None
            if out_shape is not None and node.op_type != "Constant":
                activation_bytes += elem.get(o, 4) * math.prod(out_shape)
        try:
            f = _node_flop(node, shape)
        except (KeyError, ValueError, TypeError, IndexError) as e:
            why = e.args[0] if e.args else type(e).__name__
            if inferred_error and "shape" in str(why):
                why = inferred_error
            uncounted.append(f"{node.op_type} {node.name or node.output[0]}: {why}")
            continue
        counted += 1
        flop += f
        by_op[node.op_type] = by_op.get(node.op_type, 0.0) + f
    return GraphCost(int(batch_size), flop, int(param_bytes), int(activation_bytes),
                     len(g.node), counted, uncounted, by_op)


def file_cost(model_file: str, batch_size: int) -> GraphCost:
    """The cost of a YAML/ONNX model file at ``batch_size``: its graph with the inputs' full
    shapes as mlprof feeds them (a YAML's shapes, the batch first)."""

    proto, resolved = _loaded(model_file)
    shapes = {i.name: tuple(i.full_shape(batch_size)) for i in resolved.inputs}
    return graph_cost(proto, batch_size, shapes)


#: the last model files :func:`file_cost` loaded, by the identity of the spec file and of its
#: graph file (a sweep asks for one file at each of its batch sizes: loading it again each time
#: was 0.25 s of a 0.62 s MergeRuntimes of 11 points under load); graph_cost works on a copy,
#: so sharing the graph is safe
_LOADED: dict[tuple[Any, ...], tuple[Any, Any, tuple[Any, ...]]] = {}


def _identity(path: str) -> tuple[Any, ...]:
    import os

    st = os.stat(path)
    return os.path.abspath(path), st.st_ino, st.st_size, st.st_mtime_ns


def _loaded(model_file: str) -> tuple[onnx.ModelProto, Any]:
    """``model_file``'s ONNX graph and its resolved inputs, read again only when the spec file
    or the graph file it names changed."""
    key = _identity(model_file)
    hit = _LOADED.get(key)
    if hit is not None and _identity(hit[2][0]) == hit[2]:
        return hit[0], hit[1]
    spec = read_model_file(model_file)
    if spec.model_kind != "onnx":
        raise MLProfError(f"no ONNX graph to count FLOPs in ({spec.model_kind} model)",
                          spec.spec_file)
    proto = load_onnx(spec)
    if len(_LOADED) >= 4:
        _LOADED.clear()
    _LOADED[key] = (proto, resolve(spec, proto), _identity(spec.file))
    return proto, _LOADED[key][1]


_ONNX = re.compile(r"\.(onnx|ya?ml)$", re.IGNORECASE)


def measured_cost(provenance: Mapping[str, Any]) -> dict[str, Any]:
    """The cost record of one MeasureRuntime branch, from the graph it measured (its
    provenance's ``model.spec_file``: a YAML/ONNX file or an ONNX export).

    Runtimes that measure no ONNX graph (TensorFlow, PyTorch on a script) get ``gflop_per_call``
    None and a ``note`` saying why, as does a graph that is gone or cannot be counted.
    """
    import os

    bs = int(provenance["settings"]["batch_size"])
    model = provenance.get("model") or {}
    spec_file = str(model.get("spec_file") or "")
    graph = str(model.get("file") or "")
    none: dict[str, Any] = {"batch_size": bs, "gflop_per_call": None, "source": spec_file}
    if not (_ONNX.search(spec_file) and graph.lower().endswith(".onnx")):
        return {**none, "note": f"{provenance.get('runtime')} measured no ONNX graph "
                                f"({os.path.basename(graph or spec_file)}): FLOPs not counted"}
    if not os.path.exists(spec_file):
        return {**none, "note": f"{spec_file} is gone: FLOPs not counted"}
    try:
        cost = file_cost(spec_file, bs)
    except MLProfError as e:
        return {**none, "note": f"FLOPs not counted: {e}"}
    record = cost.record()
    record["source"] = spec_file
    if not cost.complete:
        record["note"] = (f"{len(cost.uncounted)} of {cost.n_nodes} nodes not counted: "
                          "gflop_per_call left empty (gflop_counted is a lower bound)")
    return record
