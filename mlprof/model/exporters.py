"""The two ONNX exporters behind :func:`mlprof.model.export.export_onnx`: PyTorch's TorchScript
exporter, else its dynamo exporter, and what their graphs need afterwards (mlprof's names, the
symbolic batch dimension's axes).

Apart from export.py (which drives the export and proves its graph right) so that each stays
under 700 lines; nothing here imports torch or onnx at module level (the functions do), so the
measurement server's preload of export.py costs no more than before.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from mlprof.errors import MLProfError

#: the name of the symbolic first dimension of batched inputs and outputs
BATCH_DIM = "batch_size"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

#: default opset (``MLP_ONNX_OPSET`` overrides); here, where nothing imports numpy, torch or
#: onnx, because the tasks resolve it for every output path (also of a rerun with nothing to
#: do), where mlprof.model.export's import cost 0.06-0.1 s
DEFAULT_OPSET = 18


def default_opset() -> int:
    """``$MLP_ONNX_OPSET`` or :data:`DEFAULT_OPSET`."""
    raw = os.environ.get("MLP_ONNX_OPSET", "").strip()
    if not raw:
        return DEFAULT_OPSET
    try:
        return int(raw)
    except ValueError:
        raise MLProfError(f"must be an integer, got {raw!r}", field="MLP_ONNX_OPSET") from None


def first_line(exc: BaseException, limit: int = 240) -> str:
    """``Type: first line`` of the innermost cause of ``exc``, without terminal colours,
    shortened to ``limit`` characters (the dynamo exporter wraps the real reason, e.g.
    ``DispatchError: No ONNX function found for aten.cummax``, in a page of advice)."""
    inner = exc
    while inner.__cause__ is not None and inner.__cause__ is not inner:
        inner = inner.__cause__
    text = _ANSI.sub("", str(inner))
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = line.split(" Please feel free to request support")[0]  # the TorchScript exporter's
    msg = f"{type(inner).__name__}: {line}" if line else type(inner).__name__
    return msg if len(msg) <= limit else msg[:limit - 3] + "..."



def symbolic_axes(proto: Any) -> dict[str, dict[int, str]]:
    """``{name: {0: "batch_size"}}`` of the graph inputs and outputs whose first dimension is
    the symbolic batch dimension (what the record calls ``dynamic_axes``; other symbolic
    dimensions, such as a detector's number of boxes, are left out)."""
    inits = {i.name for i in proto.graph.initializer}
    out: dict[str, dict[int, str]] = {}
    for vi in [*proto.graph.input, *proto.graph.output]:
        if vi.name in inits or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if len(dims) and dims[0].dim_param == BATCH_DIM:
            out[vi.name] = {0: BATCH_DIM}
    return out


def export_graph(module: Any, args: tuple, path: str, *, opset: int, input_names: list[str],
                 output_names: list[str], dynamic_axes: dict[str, dict[int, str]],
                 batched: set[str], where: str, rep: Any = None,
                 dynamo_args: tuple | None = None,
                 torchscript_error: str | None = None) -> dict[str, Any]:
    """Write ``module``'s ONNX graph to ``path``: the TorchScript exporter, else the dynamo
    exporter. Returns ``exporter``, ``export_s`` and, after a fallback, ``torchscript_error``;
    raises :class:`MLProfError` naming both exporters' errors when neither can export it.

    ``dynamic_axes`` are the TorchScript exporter's; the dynamo exporter gets the same batch
    dimension as ``torch.export.Dim("batch_size")`` on the ``batched`` inputs, and traces
    ``dynamo_args`` (default ``args``). ``torchscript_error``: the TorchScript exporter's
    graph was already found unusable (onnxruntime cannot load or run it), for this reason; the
    dynamo exporter only.
    """
    import warnings

    import torch

    t0 = time.perf_counter()
    ts_error = torchscript_error
    try:
        if ts_error is not None:
            raise _SkipTorchScript

        # grad mode stays on: under no_grad, eval-mode transformer layers take PyTorch's fused
        # "fast path" (aten::_transformer_encoder_layer_fwd), which has no ONNX export
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _register_symbolics()
            torch.onnx.export(module, args, path, dynamo=False, opset_version=opset,
                              input_names=input_names, output_names=output_names,
                              dynamic_axes=dynamic_axes, do_constant_folding=True)
        return {"exporter": "torchscript", "export_s": time.perf_counter() - t0}
    except _SkipTorchScript:
        pass
    except Exception as e:
        ts_error = first_line(e)
        unlink_if_exists(path)
    assert ts_error is not None
    if rep is not None:
        short = ts_error if len(ts_error) <= 80 else ts_error[:77] + "..."
        rep.phase(f"the TorchScript exporter failed ({short}); trying the dynamo exporter", 0.2)
    t0 = time.perf_counter()
    try:
        _dynamo_export(module, args if dynamo_args is None else dynamo_args, path,
                       opset=opset, input_names=input_names,
                       output_names=output_names, batched=batched)
    except Exception as e:
        unlink_if_exists(path)
        dyn_error = "onnxscript is not installed (pip install onnxscript)" \
            if isinstance(e, ImportError) and "onnxscript" in str(e) else first_line(e)
        raise MLProfError(f"cannot be exported to ONNX (opset {opset}): torchscript: "
                          f"{ts_error}; dynamo: {dyn_error}", where) from None
    return {"exporter": "dynamo", "export_s": time.perf_counter() - t0,
            "torchscript_error": ts_error}


def _rms_norm(g: Any, x: Any, normalized_shape: Any, weight: Any, eps: Any) -> Any:
    """``aten::rms_norm`` for the TorchScript exporter, which has none before ONNX's
    RMSNormalization (opset 23): ``x / sqrt(mean(x², last dims) + eps) * weight``, as
    ``torch.nn.functional.rms_norm`` computes it (eps: the dtype's machine epsilon when not
    given). timm's gemma4_vit_167m and transformers' RMSNorm layers call it."""
    import torch
    from torch.onnx import symbolic_helper as sh

    shape = sh._get_const(normalized_shape, "is", "normalized_shape")
    dims = list(range(-len(shape), 0))
    value = None if sh._is_none(eps) else sh._maybe_get_const(eps, "f")
    if value is None:
        value = float(torch.finfo(torch.float32).eps)
    elif not isinstance(value, float):
        return sh._unimplemented("rms_norm", "eps is not a constant", x)
    square = g.op("Mul", x, x)
    if sh.GLOBALS.export_onnx_opset_version >= 18:
        mean = g.op("ReduceMean", square, g.op("Constant", value_t=torch.tensor(dims)),
                    keepdims_i=1)
    else:
        mean = g.op("ReduceMean", square, axes_i=dims, keepdims_i=1)
    eps_t = g.op("CastLike", g.op("Constant", value_t=torch.tensor(value)), x)
    out = g.op("Div", x, g.op("Sqrt", g.op("Add", mean, eps_t)))
    return out if sh._is_none(weight) else g.op("Mul", out, weight)


def _register_symbolics() -> None:
    """Operators mlprof exports that PyTorch's TorchScript exporter lacks (idempotent)."""
    import torch

    torch.onnx.register_custom_op_symbolic("aten::rms_norm", _rms_norm, 15)


class _SkipTorchScript(Exception):
    """The TorchScript exporter's graph is known to be unusable: go to the dynamo exporter."""


def _dynamo_export(module: Any, args: tuple, path: str, *, opset: int, input_names: list[str],
                   output_names: list[str], batched: set[str]) -> None:
    """``torch.onnx.export(..., dynamo=True)`` with mlprof's names and batch dimension, into
    one file (no external data: the file is renamed into place afterwards)."""
    import contextlib
    import io
    import warnings

    import onnx
    import onnxscript  # noqa: F401  (the dynamo exporter's dependency: a clear error if absent)
    import torch

    shapes = None
    if batched:
        dim = torch.export.Dim(BATCH_DIM)
        # mlprof exports a forward(*tensors) wrapper: one positional argument, a tuple
        shapes = (tuple({0: dim} if n in batched else None for n in input_names),)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, path, dynamo=True, opset_version=opset,
                          input_names=input_names, output_names=output_names,
                          dynamic_shapes=shapes, external_data=False, verbose=False)
    proto = onnx.load(path)
    if _keep_names(proto, input_names, output_names):
        onnx.save(proto, path)


def _keep_names(proto: Any, input_names: list[str], output_names: list[str]) -> bool:
    """Give the graph mlprof's output names (positionally) where the exporter chose others;
    check that its inputs are among mlprof's. Returns whether anything was renamed."""
    graph = proto.graph
    inits = {i.name for i in graph.initializer}
    extra = [i.name for i in graph.input if i.name not in inits and i.name not in input_names]
    if extra:
        raise ValueError(f"the graph has inputs {extra} that the model does not take")
    got = [o.name for o in graph.output]
    if len(got) != len(output_names):
        raise ValueError(f"the graph has {len(got)} outputs, the eager model {len(output_names)}")
    mapping = {old: new for old, new in zip(got, output_names, strict=True) if old != new}
    if not mapping:
        return False
    for node in graph.node:
        node.input[:] = [mapping.get(n, n) for n in node.input]
        node.output[:] = [mapping.get(n, n) for n in node.output]
    for vi in [*graph.output, *graph.value_info]:
        vi.name = mapping.get(vi.name, vi.name)
    return True


def unlink_if_exists(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
