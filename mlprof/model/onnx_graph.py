"""Reading ONNX graphs: inputs, dtypes and shapes, the batch dimension, consistency with a YAML.

Used inside the measurement process, and once up front by the tasks (:func:`check_up_front`),
so that a spec that contradicts its graph fails before anything is scheduled.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

import onnx

from mlprof.errors import MLProfError
from mlprof.model.spec import HasInputs, InputSpec, ModelSpec, checked_marker
from mlprof.util import write_text_atomic

#: ONNX TensorProto element types mlprof can feed
ONNX_DTYPES = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.BOOL: "bool",
}

BATCH_DIM_PARAM = "batch_size"


@dataclass
class GraphInput:
    """A graph input as the ONNX file declares it: dims are ints, symbol names or None."""

    name: str
    dims: list[int | str | None]
    dtype: str


@dataclass
class ResolvedModel(HasInputs):
    """A model spec checked against its graph: final inputs, outputs and batch information."""

    spec: ModelSpec
    proto: onnx.ModelProto
    inputs: list[InputSpec]
    outputs: list[str] | None
    #: the fixed first dimension of the batched inputs, None when it is symbolic
    fixed_batch: int | None = None
    opset: int | None = None
    notes: list[str] = field(default_factory=list)


def load_onnx(spec: ModelSpec) -> onnx.ModelProto:
    """Load and sanity-check the ONNX file of ``spec``; corrupt files give a clear error."""
    try:
        model = onnx.load(spec.file)
    except Exception as e:  # onnx raises DecodeError, ValueError, ... for corrupt files
        raise MLProfError(f"not a valid ONNX model ({type(e).__name__}: {e})", spec.file) from None
    if not model.graph.node and not model.graph.output:
        raise MLProfError("not a valid ONNX model (empty graph)", spec.file)
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise MLProfError(f"invalid ONNX model: {str(e).splitlines()[0]}", spec.file) from None
    return model


def graph_inputs(model: onnx.ModelProto, file: str | None = None) -> list[GraphInput]:
    """The real inputs of a graph (initializers listed as inputs are left out)."""
    inits = {i.name for i in model.graph.initializer}
    result = []
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        ttype = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise MLProfError(f"graph input '{inp.name}' is not a tensor; only tensor inputs are "
                              "supported", file)
        elem = ttype.elem_type
        if elem not in ONNX_DTYPES:
            name = onnx.TensorProto.DataType.Name(elem)
            raise MLProfError(f"graph input '{inp.name}' has unsupported type {name}", file)
        dims: list[int | str | None] = []
        if ttype.HasField("shape"):
            for d in ttype.shape.dim:
                if d.HasField("dim_value") and d.dim_value > 0:
                    dims.append(int(d.dim_value))
                elif d.HasField("dim_param"):
                    dims.append(d.dim_param)
                else:
                    dims.append(None)
        result.append(GraphInput(inp.name, dims, ONNX_DTYPES[elem]))
    return result


def resolve(spec: ModelSpec, model: onnx.ModelProto | None = None) -> ResolvedModel:
    """Check ``spec`` against its ONNX graph and return the inputs to feed.

    The first dimension of every input of rank >= 1 is the batch dimension. Shapes given in a
    YAML must agree with the graph; symbolic dimensions other than the batch need a YAML shape.
    """
    model = model if model is not None else load_onnx(spec)
    ginputs = graph_inputs(model, spec.file)
    yaml_inputs = spec.inputs
    order = _yaml_order(spec, [g.name for g in ginputs])
    # exports by mlprof record which inputs carry the batch; the others keep their shape
    batched_names = None
    for prop in model.metadata_props:
        if prop.key == "mlprof.batched_inputs":
            import json

            batched_names = set(json.loads(prop.value))

    inputs: list[InputSpec] = []
    fixed: set[int] = set()
    for g in ginputs:
        ys = yaml_inputs[order[g.name]] if yaml_inputs is not None else None
        fld = f"model.inputs[{order[g.name]}]" if yaml_inputs is not None else ""
        inputs.append(_input_spec(g, ys, fld, spec.spec_file, batched_names))
        if inputs[-1].batched and isinstance(g.dims[0], int):
            fixed.add(g.dims[0])
    if len(fixed) > 1:
        raise MLProfError(f"inputs have different fixed first dimensions {sorted(fixed)}; cannot "
                          "tell the batch dimension", spec.file)

    outputs = spec.outputs
    if outputs is not None:
        gouts = [o.name for o in model.graph.output]
        for i, name in enumerate(outputs):
            if name not in gouts:
                raise MLProfError(f"output '{name}' is not in the ONNX graph; graph outputs: "
                                  f"{', '.join(gouts)}", spec.spec_file, f"model.outputs[{i}].name")
    if yaml_inputs is not None:
        # keep the YAML's input order
        inputs.sort(key=lambda s: order[s.name])

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    resolved = ResolvedModel(spec=spec, proto=model, inputs=inputs, outputs=outputs,
                             fixed_batch=fixed.pop() if fixed else None, opset=opset)
    if not resolved.batched:
        resolved.notes.append("no input has a batch dimension: every batch size measures the "
                              "model's own shapes")
    return resolved


def _yaml_order(spec: ModelSpec, gnames: list[str]) -> dict[str, int]:
    """``{input name: its index in the YAML}`` once the YAML's inputs are exactly the graph's
    (one line naming the first that is not in the graph, or the graph's that are missing);
    ``{}`` without YAML inputs."""
    if spec.inputs is None:
        return {}
    yaml_inputs = spec.inputs
    unknown = [i for i, s in enumerate(yaml_inputs) if s.name not in gnames]
    if unknown:
        i = unknown[0]
        raise MLProfError(f"input '{yaml_inputs[i].name}' is not in the ONNX graph; graph "
                          f"inputs: {', '.join(gnames)}", spec.spec_file,
                          f"model.inputs[{i}].name")
    given = {s.name for s in yaml_inputs}
    missing = [n for n in gnames if n not in given]
    if missing:
        raise MLProfError(f"graph input(s) {', '.join(missing)} not listed", spec.spec_file,
                          "model.inputs")
    return {s.name: i for i, s in enumerate(yaml_inputs)}


def _input_spec(g: GraphInput, ys: InputSpec | None, fld: str, where: str | None,
                batched_names: set[str] | None) -> InputSpec:
    """The input to feed for graph input ``g`` (``ys``: its YAML entry, ``fld`` its field):
    unbatched when an mlprof export says so or it is a scalar, else batched with the shape
    after the batch dimension (the YAML's, checked against the graph, or the graph's own)."""
    if batched_names is not None and g.name not in batched_names:
        dims = [d for d in g.dims if isinstance(d, int)]
        if len(dims) != len(g.dims):
            raise MLProfError(f"input '{g.name}' has no batch dimension but symbolic dims "
                              f"{_fmt_dims(g.dims)}", where)
        return InputSpec(g.name, tuple(dims), g.dtype, batched=False)
    if not g.dims:
        # scalar input: no batch dimension
        if ys is not None and ys.shape:
            raise MLProfError(f"graph input '{g.name}' is a scalar, but a shape is given",
                              where, f"{fld}.shape")
        return InputSpec(g.name, (), g.dtype, batched=False)
    shape = _yaml_shape(g, ys, fld, where) if ys is not None else _graph_shape(g, where)
    return InputSpec(g.name, shape, g.dtype, batched=True)


def _yaml_shape(g: GraphInput, ys: InputSpec, fld: str, where: str | None) -> tuple[int, ...]:
    """The YAML's shape of ``g`` (without the batch), where it agrees with the graph."""
    rest = g.dims[1:]
    if len(ys.shape) != len(rest):
        raise MLProfError(
            f"shape {list(ys.shape)} has {len(ys.shape)} dimension(s), but graph input "
            f"'{g.name}' has dims {_fmt_dims(g.dims)}, i.e. {len(rest)} without the batch "
            "dimension", where, f"{fld}.shape")
    for axis, (yd, gd) in enumerate(zip(ys.shape, rest, strict=False)):
        if isinstance(gd, int) and gd != yd:
            raise MLProfError(
                f"shape {list(ys.shape)} contradicts the ONNX graph: input '{g.name}' "
                f"has {gd} at axis {axis + 1} (dims {_fmt_dims(g.dims)})", where,
                f"{fld}.shape")
    if ys.dtype and ys.dtype != g.dtype:
        raise MLProfError(f"dtype {ys.dtype} contradicts the ONNX graph: input "
                          f"'{g.name}' is {g.dtype}", where, f"{fld}.dtype")
    return tuple(ys.shape)


def _graph_shape(g: GraphInput, where: str | None) -> tuple[int, ...]:
    """The graph's shape of ``g`` (without the batch); a symbolic dimension needs a YAML."""
    rest = g.dims[1:]
    symbolic = [(a + 1, d) for a, d in enumerate(rest) if not isinstance(d, int)]
    if symbolic:
        axis, d = symbolic[0]
        raise MLProfError(
            f"input '{g.name}' has a symbolic dimension {d or '?'!r} at axis {axis} "
            f"(dims {_fmt_dims(g.dims)}); write a model YAML that gives its shape", where)
    return tuple(int(d) for d in rest)  # type: ignore[arg-type]


def with_symbolic_batch(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose fixed first input/output dimensions are made symbolic.

    Intermediate shape annotations are dropped so that the runtime re-infers them. Whether the
    graph really allows other batch sizes (no hard-coded Reshape targets, ...) only shows when
    it runs.
    """
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {i.name for i in m.graph.initializer}
    fixed_values = set()
    for vi in m.graph.input:
        if vi.name in inits or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if len(dims) and dims[0].HasField("dim_value"):
            fixed_values.add(dims[0].dim_value)
            dims[0].dim_param = BATCH_DIM_PARAM
    for vi in m.graph.output:
        if not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if len(dims) and dims[0].HasField("dim_value") and dims[0].dim_value in fixed_values:
            dims[0].dim_param = BATCH_DIM_PARAM
    del m.graph.value_info[:]
    return m


def _fmt_dims(dims: list[int | str | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


#: specs already checked in this process: (spec file, content hash)
_CHECKED: set[tuple[str, str]] = set()

#: above this size the graph is checked by the measurement itself, not up front (loading a
#: large model's weights only to read its input shapes would slow every `law run` start)
CHECK_UP_FRONT_MAX_BYTES = 200 * 1024 * 1024


def check_up_front(spec: ModelSpec) -> None:
    """Check a YAML/ONNX spec against its graph before anything is scheduled (once per file
    version and process): a contradiction is one error up front instead of one per batch size.

    Model scripts are checked by their discovery; TensorFlow models (which would need
    TensorFlow imported by every task) and graphs above :data:`CHECK_UP_FRONT_MAX_BYTES` by the
    measurement.
    """
    if spec.model_kind != "onnx":
        return
    key = (spec.spec_file, spec.content_hash)
    if key in _CHECKED:
        return
    try:
        size = os.path.getsize(spec.file)
    except OSError:
        size = 0
    if size <= CHECK_UP_FRONT_MAX_BYTES:
        resolve(spec)
    _CHECKED.add(key)
    _PASSED.append(spec)


#: specs that passed :func:`check_up_front` in this process, not yet marked in the store
_PASSED: list[ModelSpec] = []


def remember_checks() -> None:
    """Mark the specs that passed :func:`check_up_front` in the store
    (:func:`mlprof.model.spec.checked_marker`), so that the next ``law run`` of the same file
    skips the check and the onnx import. Called after a ``law run`` that succeeded: a command
    refused for another parameter, or one whose run failed, writes nothing."""
    while _PASSED:
        spec = _PASSED.pop()
        with contextlib.suppress(OSError):  # a store that cannot be written checks every time
            write_text_atomic(checked_marker(spec), "")
