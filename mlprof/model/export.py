"""Export a script's model to ONNX with a symbolic batch dimension, and prove it right.

The model is taken from its script (:func:`mlprof.model.script.capture`) and exported with
PyTorch's TorchScript exporter (``dynamo=False``: no onnxscript needed, the graph TurnkeyML
exported). Batched inputs and outputs get the symbolic first dimension ``batch_size``, so one
file serves the whole batch sweep.

Validation runs the ONNX model in ONNX Runtime against the eager model on

1. the script's own inputs, and
2. for batched models, a different batch size with fresh random values,

and fails when any output differs by more than ``atol + rtol * |expected|`` (numpy's
``allclose`` rule), recording the largest absolute and relative errors either way. The second
check catches exports that bake the batch size or a data-dependent branch into the graph.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np

from mlprof.errors import MLProfError

#: default opset (``MLP_ONNX_OPSET`` overrides)
DEFAULT_OPSET = 18
#: default tolerances per precision: (atol, rtol)
TOLERANCES = {"fp32": (1e-4, 1e-3), "fp16": (1e-2, 1e-2)}
BATCH_DIM = "batch_size"
#: ONNX metadata key listing the inputs that carry the batch dimension (JSON list)
BATCHED_INPUTS_KEY = "mlprof.batched_inputs"


def topological_sort(graph: Any) -> None:
    """Reorder ``graph.node`` (in place) so that every node comes after its inputs' producers.

    Stable: nodes already in order keep it. Names produced by no node (graph inputs,
    initializers, outer-scope names of subgraphs) count as available from the start.
    """
    producers = {out: i for i, n in enumerate(graph.node) for out in n.output if out}
    state = [0] * len(graph.node)  # 0 new, 1 on the stack, 2 placed
    order: list[int] = []
    for root in range(len(graph.node)):
        if state[root] == 2:
            continue
        state[root] = 1
        stack = [(root, iter(graph.node[root].input))]  # iterative: graphs can be deep
        while stack:
            i, inputs = stack[-1]
            for name in inputs:
                j = producers.get(name)
                if j is None or state[j] == 2:
                    continue
                if state[j] == 1:
                    raise MLProfError("the exported graph has a cycle", field="--precision")
                state[j] = 1
                stack.append((j, iter(graph.node[j].input)))
                break
            else:
                stack.pop()
                state[i] = 2
                order.append(i)
    if order != list(range(len(graph.node))):
        nodes = [graph.node[i] for i in order]
        del graph.node[:]
        graph.node.extend(nodes)


def default_opset() -> int:
    """``$MLP_ONNX_OPSET`` or :data:`DEFAULT_OPSET`."""
    raw = os.environ.get("MLP_ONNX_OPSET", "").strip()
    if not raw:
        return DEFAULT_OPSET
    try:
        return int(raw)
    except ValueError:
        raise MLProfError(f"must be an integer, got {raw!r}", field="MLP_ONNX_OPSET") from None


def _flatten(out: Any) -> list:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict) or hasattr(out, "to_tuple"):
        out = out.to_tuple() if hasattr(out, "to_tuple") else list(out.values())
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flatten(o)]
    return []


def _to_numpy(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def export_onnx(script: str, model_hash: str, out_path: str, *,
                script_args: tuple[str, ...] = (), max_depth: int = 0,
                opset: int | None = None, precision: str = "fp32", optimize: bool = False,
                atol: float | None = None, rtol: float | None = None,
                progress: Any = None) -> dict:
    """Export the model ``model_hash`` of ``script`` to ``out_path``; return the export record.

    Raises :class:`MLProfError` when the model cannot be exported or its ONNX outputs differ
    from the eager ones beyond the tolerance. ``progress(fraction, message)`` hears the phases
    (``exporting to ONNX (opset 18)``, ``validating on the script's inputs``, ...) and, during a
    long one, how long it has run (see :mod:`mlprof.measure.progress`).
    """
    from mlprof.measure.progress import Progress

    with Progress(progress) as rep:
        return _export_onnx(script, model_hash, out_path, script_args=script_args,
                            max_depth=max_depth, opset=opset, precision=precision,
                            optimize=optimize, atol=atol, rtol=rtol, rep=rep)


def _export_onnx(script: str, model_hash: str, out_path: str, *, script_args: tuple[str, ...],
                 max_depth: int, opset: int | None, precision: str, optimize: bool,
                 atol: float | None, rtol: float | None, rep: Any) -> dict:
    """:func:`export_onnx`, reporting its phases to ``rep`` (a :class:`Progress`)."""
    import onnx
    import onnxruntime as ort
    import torch

    from mlprof.model.script import capture, keyword_wrapper, resize_batch

    if precision not in TOLERANCES:
        raise MLProfError(f"precision must be one of {', '.join(TOLERANCES)}, got "
                          f"{precision!r}", field="--precision")
    opset = opset or default_opset()
    d_atol, d_rtol = TOLERANCES[precision]
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    where = f"{script}::{model_hash}"

    torch.set_num_threads(1)  # as in discovery: robust on a busy machine
    rep.phase("running the script to capture the model")
    module, items, flags = capture(script, model_hash, script_args, max_depth)
    module.eval()
    if any(n.startswith("*") for n, _ in items):
        raise MLProfError("models called with *args cannot be exported", where)
    # call by keyword, with exactly the inputs the script passed (see keyword_wrapper)
    module = keyword_wrapper(module, items)
    module.eval()

    tensors = [(n, v) for n, v in items if isinstance(v, torch.Tensor)]
    batched = {n for (n, _), f in zip(items, flags, strict=True) if f}
    args = tuple(v for _, v in tensors)
    input_names = [n for n, _ in tensors]

    # the eager reference under no_grad, not inference_mode: a model that creates tensors in
    # its forward() and keeps them (caches) would keep inference tensors, which the exporter's
    # tracing (grad mode) cannot use
    rep.phase("running the eager model")
    with torch.no_grad():
        eager = _flatten(module(*args))
    if not eager:
        raise MLProfError("the model returns no tensors; nothing to export", where)
    b0 = next(v.shape[0] for n, v in tensors if n in batched) if batched else None
    output_names = [f"output_{i}" for i in range(len(eager))]
    dynamic_axes: dict[str, dict[int, str]] = {n: {0: BATCH_DIM} for n in batched}
    for name, t in zip(output_names, eager, strict=True):
        if batched and t.dim() >= 1 and t.shape[0] == b0:
            dynamic_axes[name] = {0: BATCH_DIM}

    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    tmp = f"{out_path}.{os.getpid()}.tmp"
    rep.phase(f"exporting to ONNX (opset {opset})", 0.1)
    t0 = time.perf_counter()
    try:
        import warnings

        # grad mode stays on: under no_grad, eval-mode transformer layers take PyTorch's fused
        # "fast path" (aten::_transformer_encoder_layer_fwd), which has no ONNX export
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, args, tmp, dynamo=False, opset_version=opset,
                              input_names=input_names, output_names=output_names,
                              dynamic_axes=dynamic_axes, do_constant_folding=True)
    except Exception as e:
        _unlink(tmp)
        msg = " ".join(str(e).split())[:400]
        raise MLProfError(f"cannot be exported to ONNX (opset {opset}): {type(e).__name__}: "
                          f"{msg}", where) from None
    export_s = time.perf_counter() - t0

    try:
        # which inputs carry the batch: read back by mlprof.model.onnx_graph.resolve
        proto = onnx.load(tmp)
        meta = proto.metadata_props.add()
        meta.key, meta.value = BATCHED_INPUTS_KEY, json.dumps(sorted(batched))
        onnx.save(proto, tmp)
        if precision == "fp16":
            from onnxruntime.transformers.float16 import convert_float_to_float16

            rep.phase("converting to fp16", 0.6)
            m16 = convert_float_to_float16(onnx.load(tmp), keep_io_types=True)
            # the converter appends the Cast nodes of the kept float32 inputs at the end of
            # the graph: ONNX Runtime accepts that, ONNX's checker (and other runtimes) not
            topological_sort(m16.graph)
            onnx.save(m16, tmp)
        if optimize:
            rep.phase("optimizing with ONNX Runtime", 0.7)
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            so.optimized_model_filepath = tmp + ".opt"
            ort.InferenceSession(tmp, so, providers=["CPUExecutionProvider"])
            os.replace(tmp + ".opt", tmp)
        sess = ort.InferenceSession(tmp, providers=["CPUExecutionProvider"])
        onnx_inputs = [i.name for i in sess.get_inputs()]

        def check(feed_items: list[tuple[str, Any]], label: str) -> dict:
            rep.phase(f"validating on {label}", 0.8)
            feed_args = tuple(v for _, v in feed_items if isinstance(v, torch.Tensor))
            with torch.no_grad():
                expected = [_to_numpy(t) for t in _flatten(module(*feed_args))]
            feed = {n: _to_numpy(v) for n, v in feed_items
                    if isinstance(v, torch.Tensor) and n in onnx_inputs}
            got = sess.run(None, feed)
            worst_abs, worst_rel, ok = 0.0, 0.0, True
            for name, e, g in zip(output_names, expected, got, strict=True):
                if e.shape != g.shape:
                    raise MLProfError(f"ONNX output {name} has shape {list(g.shape)} but the "
                                      f"eager model gives {list(e.shape)} ({label})", where)
                if e.dtype == np.bool_ or np.issubdtype(e.dtype, np.integer):
                    diff = np.abs(e.astype(np.int64) - g.astype(np.int64)).astype(np.float64)
                    scale = np.abs(e.astype(np.float64))
                else:
                    diff = np.abs(e.astype(np.float64) - g.astype(np.float64))
                    scale = np.abs(e.astype(np.float64))
                if diff.size:
                    worst_abs = max(worst_abs, float(np.nanmax(diff)))
                    worst_rel = max(worst_rel, float(np.nanmax(diff / np.maximum(scale, 1e-12))))
                    ok &= bool(np.all(diff <= atol + rtol * scale))
            return {"inputs": label, "max_abs_error": worst_abs, "max_rel_error": worst_rel,
                    "ok": ok}

        checks = [check(items, "the script's inputs")]
        if batched:
            b1 = b0 + 2
            gen = torch.Generator().manual_seed(1234)
            fresh = []
            for (n, v), f in zip(items, flags, strict=True):
                if isinstance(v, torch.Tensor) and f:
                    v2 = resize_batch(v, b1)
                    if v2.is_floating_point():
                        v2 = torch.randn(v2.shape, generator=gen, dtype=v2.dtype) * (
                            v.std() if v.numel() > 1 else 1.0) + v.mean()
                    fresh.append((n, v2))
                else:
                    fresh.append((n, v))
            checks.append(check(fresh, f"batch size {b1}, fresh random values"))
        bad = [c for c in checks if not c["ok"]]
        if bad:
            c = bad[0]
            raise MLProfError(f"the ONNX export is numerically wrong on {c['inputs']}: max abs "
                              f"error {c['max_abs_error']:.3g}, max rel error "
                              f"{c['max_rel_error']:.3g} (tolerance atol {atol:g}, rtol "
                              f"{rtol:g}; --atol/--rtol change it)", where)
        os.replace(tmp, out_path)
    finally:
        _unlink(tmp)
        _unlink(tmp + ".opt")

    return {
        "script": script, "model_hash": model_hash, "file": out_path, "opset": opset,
        "precision": precision, "optimized": optimize, "exporter": "torchscript",
        "torch_version": str(torch.__version__), "onnx_version": onnx.__version__,
        "export_s": export_s, "inputs": input_names, "outputs": output_names,
        "batched_inputs": sorted(batched), "dynamic_axes": {k: dict(v) for k, v in
                                                              dynamic_axes.items()},
        "tolerance": {"atol": atol, "rtol": rtol}, "validation": checks,
        "max_abs_error": max(c["max_abs_error"] for c in checks),
        "max_rel_error": max(c["max_rel_error"] for c in checks),
    }


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
