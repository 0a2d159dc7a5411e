"""Export a script's model to ONNX with a symbolic batch dimension, and prove it right.

The model is taken from its script (:func:`mlprof.model.script.capture`) and exported with
PyTorch's TorchScript exporter (``dynamo=False``: the graph TurnkeyML exported). Batched inputs
and outputs get the symbolic first dimension ``batch_size``, so one file serves the whole batch
sweep.

**Two exporters.** When the TorchScript exporter refuses the model (timm's
``halo2botnet50ts_256``: "Unsupported: ONNX export of operator Unfold, input size not
accessible"; ``torch.fft.rfft``, ``torch.logcumsumexp``: "Exporting the operator ... is not
supported"), the dynamo-based exporter (``torch.onnx.export(..., dynamo=True)``, which needs
``onnxscript``) is tried before giving up. Its batch dimension is the ``torch.export.Dim``
``batch_size`` on every batched input (torch 2.14 cannot convert ``dynamic_axes`` for the
``forward(*tensors)`` wrapper mlprof exports), so its graph has the same symbolic first
dimension; a script's batch of 1 is traced at batch size 2, since ``torch.export`` specializes
a dimension of size 1 (halo2botnet50ts_256 came out with a fixed batch of 1, then at batch size
2 with a symbolic one, exact at batch sizes 1 and 3). mlprof's input and output names and the
batched-inputs metadata are kept. The record says which exporter made the graph
(``exporter``) and, after a fallback, why the TorchScript exporter failed
(``torchscript_error``). Both graphs are validated the same way. When both exporters fail,
the one-line error names both reasons.

**Validation** runs the ONNX model in ONNX Runtime against the eager model on

1. the script's own inputs, and
2. for batched models, a different batch size with fresh random values.

Each float output gets one of three verdicts:

- ``exact``: ``|onnx - eager| <= atol + rtol * |eager|`` everywhere (numpy's ``allclose``;
  ``--atol``/``--rtol``, default 1e-4/1e-3 for fp32, 1e-2/1e-2 for fp16);
- ``close``: not exact, but the largest error is at most ``rtol`` times the output's scale
  (its RMS), and, for classifier-like outputs (2-d, at least 10 columns), every row's top-1
  class agrees (up to near-ties within twice that bound). The export is kept and measured; the
  verdict, the errors and the rule are in the record and a warning is logged;
- refused: anything beyond (and shapes that differ, ONNX Runtime errors, integer outputs that
  are not exact). The export fails with the errors found.

The element-wise rule alone refuses float32 reordering noise of deep networks: an element near
zero has a large relative error although the error is tiny against the output. The bound is
the RMS of the whole output because that is the output's typical magnitude. Measured with
``torch.onnx.export`` (TorchScript, opset 18) and ONNX Runtime 1.32 on this machine, random
weights, max abs error / RMS of the output (script inputs and batch size + 2):

============================  ===============  =================
model                         fp32             fp16 (converted)
============================  ===============  =================
timm tf_efficientnet_em        2e-6 .. 3e-6     2.0e-3 .. 2.3e-3
timm vit_tiny_patch16_224      3e-6 .. 4e-6     2.0e-3 .. 2.2e-3
timm convnext_atto             3e-6             2.6e-3 .. 2.7e-3
timm efficientnet_b0           3e-6             3.6e-3 .. 3.7e-3
timm mobilenetv3_small_100     3e-6             3.6e-3 .. 4.0e-3
50-layer GELU MLP (256 units)  1e-6             5.6e-4
30-layer conv net + BatchNorm  1e-6             6.6e-4
============================  ===============  =================

So the default bounds (rtol: 1e-3 fp32, 1e-2 fp16) sit 250x above fp32 noise and 2.5x above
fp16 noise, while wrong graphs stay far outside: on the same models, outputs scaled by 1.01
give 1.8e-2 .. 3.2e-2, by 1.1 give 0.18 .. 0.32, and an offset of 1 gives 9 .. 27 (except for
tf_efficientnet_em, whose random-weight logits have an RMS of 1600: there an offset of 1 is
6e-4 of the output, within noise of a close export). tf_efficientnet_em in fp16 (max abs error
3.3 against logits of RMS 1600; max rel error 0.36) was refused by the element-wise rule and is
now ``close``. The top-1 condition is implied by the scale bound except at near-ties; it is
checked so that a classifier's verdict says what its users care about.

**The model's own noise.** Some models amplify float32 rounding far beyond ``rtol``: detection
models decode boxes and crop features (RoIAlign) at positions that rounding moves, so the eager
model itself, run in float64 on the same inputs, differs from its float32 run by as much as its
ONNX graph does (torchvision's keypointrcnn_resnet50_fpn: keypoints of RMS 135 differ by 0.28,
2.1e-3 of the RMS, both float32 vs float64 and ONNX vs eager; maskrcnn_resnet50_fpn's masks by
4.9e-4 vs 5.5e-4). Such an output is judged against that noise: a graph refused by the rules
above is ``close`` when every output's error is within 3x the eager model's own float32 noise
(a float64 copy of the module on the same inputs, computed only for a graph about to be
refused), as long as that noise is at most 0.1 of the output's RMS. Beyond that the model's
outputs are decided by near-ties (a mixture-of-experts token routed elsewhere, a box kept by
NMS instead of another): no comparison can tell a right graph from a wrong one, and the
refusal stands. Wrong graphs stay far outside on the models measured: baked routing gives
errors of 0.5 to 5 of the RMS.

**The batch dimension.** Check 2 catches graphs that bake the batch size in (torchvision's
``fasterrcnn_resnet50_fpn_v2``: "Cannot split using values in 'split' attribute"). When the
symbolic graph is right on the script's inputs but wrong at the other batch size, and right
again on fresh values at the script's batch size (so the batch size, not the data, is to blame),
the model is exported as one static graph per batch size, as TurnkeyML does: ``model.onnx``
becomes a static graph at the script's batch size, the record says ``"batch": "static"``, its
``batch_size`` and ``static_reason``, and :func:`export_onnx` with ``batch_size=N`` exports the
static graph for batch size N (MeasureRuntime asks for one per batch size it measures). Every
static graph is validated on fresh random values at its batch size (and the one at the script's
batch size also on the script's inputs).
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.model.exporters import (
    BATCH_DIM,
    default_opset,
    export_graph,
    first_line,
    symbolic_axes,
    unlink_if_exists,
)
from mlprof.model.script import capture, keyword_wrapper, resize_batch
from mlprof.progress import Progress

#: default tolerances per precision: (atol, rtol); rtol also bounds a close export's error
#: against the output's RMS (see the module docstring for the measurements behind them)
TOLERANCES = {"fp32": (1e-4, 1e-3), "fp16": (1e-2, 1e-2)}
#: ONNX metadata key listing the inputs that carry the batch dimension (JSON list)
BATCHED_INPUTS_KEY = "mlprof.batched_inputs"
#: the exporters, in the order they are tried
EXPORTERS = ("torchscript", "dynamo")
#: a refused output is ``close`` when its error is within this factor of the eager model's
#: own float32 noise (float32 vs float64 on the same inputs): the graph and the eager model
#: each round off by about that noise, so they differ by up to twice it (1.94x measured on
#: tests/test_export_fallback.py's AMPLIFIER), plus a margin ...
FLOOR_FACTOR = 3.0
#: ... and that noise is at most this share of the output's RMS (beyond it, the model's
#: outputs are decided by near-ties, and no comparison can tell a right graph from a wrong one)
FLOOR_CAP = 0.1
#: a float output of shape [rows, classes] with at least this many classes is a classifier's
CLASSIFIER_MIN_CLASSES = 10
#: the validation rule, as recorded with every export
RULE = {
    "exact": "|onnx - eager| <= atol + rtol * |eager| for every element",
    "close": "max |onnx - eager| <= rtol * rms(eager) for every float output, and every row "
             "of a classifier-like output (2-d, >= 10 columns) has the same top-1 class (up to "
             "near-ties within 2 * rtol * rms); or, for an output beyond that, max |onnx - "
             "eager| <= 3 * the eager model's own float32 noise on the same inputs (max "
             "|float32 - float64|; integers: <= it), if that noise is <= 0.1 * rms(eager)",
    "refused": "anything else, a shape that differs, an onnxruntime error, an integer output "
               "that is not exact",
}
_VERDICTS = ("exact", "close", "refused")


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


# --- comparing outputs ----------------------------------------------------------------------


def compare_output(expected: np.ndarray, got: np.ndarray, atol: float,
                   rtol: float, floor: float | None = None) -> dict[str, Any]:
    """One output's errors and verdict (``exact``, ``close`` or ``refused``, see the module
    docstring), with ``reason`` saying why when it is not exact. ``floor``: the eager model's
    own float32 noise on these inputs (max ``|float32 - float64|`` of this output), which can
    turn a refusal into ``close`` (see "The model's own noise" in the module docstring)."""
    if expected.shape != got.shape:
        return {"verdict": "refused", "max_abs_error": float("inf"),
                "max_rel_error": float("inf"), "max_scaled_error": float("inf"),
                "reason": f"shape {list(got.shape)}, but the eager model gives "
                          f"{list(expected.shape)}"}
    integer = expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer)
    e = expected.astype(np.int64 if integer else np.float64)
    g = got.astype(np.int64 if integer else np.float64)
    if integer:
        diff = np.abs(e - g).astype(np.float64)
    else:
        same = (e == g) | (np.isnan(e) & np.isnan(g))  # equal infinities and NaNs agree
        with np.errstate(invalid="ignore"):
            diff = np.where(same, 0.0, np.abs(e - g))
        diff = np.where(np.isnan(diff), np.inf, diff)  # a NaN on one side only
    scale = np.abs(e.astype(np.float64))
    finite = scale[np.isfinite(scale)]
    rms = float(np.sqrt(np.mean(finite ** 2))) if finite.size else 0.0
    max_abs = float(diff.max()) if diff.size else 0.0
    out: dict[str, Any] = {
        "max_abs_error": max_abs,
        "max_rel_error": float((diff / np.maximum(scale, 1e-12)).max()) if diff.size else 0.0,
        "rms": rms,
        "max_scaled_error": max_abs / rms if rms > 0 else (0.0 if max_abs == 0 else
                                                          float("inf")),
    }
    with np.errstate(invalid="ignore"):
        exact = bool(np.all((diff == 0) | (diff <= atol + rtol * scale)))
    if exact:
        out["verdict"] = "exact"
        return out
    if integer:
        out.update(verdict="refused", reason=f"integer output differs by up to {max_abs:g}")
        return _within_floor(out, floor, integer=True)
    classifier = e.ndim == 2 and e.shape[1] >= CLASSIFIER_MIN_CLASSES and e.shape[0] > 0
    flips = 0
    if classifier:
        rows = np.arange(e.shape[0])
        top_e = np.argmax(np.where(np.isnan(e), -np.inf, e), axis=1)
        top_g = np.argmax(np.where(np.isnan(g), -np.inf, g), axis=1)
        gap = e[rows, top_e] - e[rows, top_g]  # >= 0; a near-tie may flip within the bound
        flips = int(np.sum((top_e != top_g) & ~(gap <= 2 * rtol * rms)))
        out["top1_agreement"] = float(np.mean(top_e == top_g))
    if out["max_scaled_error"] <= rtol and not flips:
        out["verdict"] = "close"
        out["reason"] = (f"max abs error {max_abs:.3g} is {out['max_scaled_error']:.2g} of the "
                         f"output's RMS {rms:.3g}")
    else:
        out["verdict"] = "refused"
        out["reason"] = (f"max abs error {max_abs:.3g}, {out['max_scaled_error']:.3g} of the "
                         f"output's RMS {rms:.3g}, max rel error {out['max_rel_error']:.3g}")
        if flips:
            out["reason"] += f", top-1 class differs in {flips} of {e.shape[0]} rows"
        return _within_floor(out, floor, integer=False)
    return out


def _within_floor(out: dict[str, Any], floor: float | None, *, integer: bool) -> dict[str, Any]:
    """A refused output's verdict given the eager model's own noise ``floor``: ``close`` when
    the error is within :data:`FLOOR_FACTOR` times the floor (integers: within the floor) and
    the floor itself is at most :data:`FLOOR_CAP` of the output's RMS."""
    if floor is None or not np.isfinite(out["max_abs_error"]):
        return out
    out["noise_floor"] = floor
    rms = out["rms"]
    limit = floor if integer else FLOOR_FACTOR * floor
    if integer:
        capped = False
    else:
        capped = not (rms > 0 and floor <= FLOOR_CAP * rms)
    if out["max_abs_error"] <= limit and not capped:
        out["verdict"] = "close"
        out["reason"] = (f"max abs error {out['max_abs_error']:.3g} ({out['max_scaled_error']:.2g}"
                         f" of the output's RMS {rms:.3g}) is within the eager model's own "
                         f"float32 noise on these inputs (float32 vs float64: {floor:.3g})")
    else:
        why = (f"{floor / rms:.2g} of the RMS, above {FLOOR_CAP:g}" if capped and rms > 0
               else f"{floor:.3g}")
        out["reason"] += f"; the eager model's own float32 noise here is {why}"
    return out


def compare_outputs(names: list[str], expected: list[np.ndarray], got: list[np.ndarray],
                    atol: float, rtol: float,
                    floors: list[float | None] | None = None) -> dict[str, Any]:
    """Every output compared (:func:`compare_output`, with each output's noise floor if
    given); the worst verdict and errors, and the worst output with its reason."""
    if len(expected) != len(got):
        return {"verdict": "refused", "max_abs_error": float("inf"),
                "max_rel_error": float("inf"), "max_scaled_error": float("inf"),
                "worst_output": None, "reason": f"the graph has {len(got)} outputs, the eager "
                                                f"model returns {len(expected)}"}
    floors = floors if floors is not None else [None] * len(names)
    results = {n: compare_output(e, g, atol, rtol, f)
               for n, e, g, f in zip(names, expected, got, floors, strict=True)}
    worst = max(results, key=lambda n: (_VERDICTS.index(results[n]["verdict"]),
                                        results[n]["max_scaled_error"]))
    out: dict[str, Any] = {
        "verdict": results[worst]["verdict"],
        "max_abs_error": max(r["max_abs_error"] for r in results.values()),
        "max_rel_error": max(r["max_rel_error"] for r in results.values()),
        "max_scaled_error": max(r["max_scaled_error"] for r in results.values()),
        "worst_output": worst,
        "reason": (f"{worst}: {results[worst]['reason']}" if "reason" in results[worst]
                   else None),
    }
    noise = {n: r["noise_floor"] for n, r in results.items() if "noise_floor" in r}
    if noise:
        out["noise_floor"] = noise
    agreement = [r["top1_agreement"] for r in results.values() if "top1_agreement" in r]
    if agreement:
        out["top1_agreement"] = min(agreement)
    return out


# --- the export -------------------------------------------------------------------------------


#: the export's first phase: the script runs again, to the model's first call
CAPTURE_PHASE = "running the script to capture the model"


def export_onnx(script: str, model_hash: str, out_path: str, *,
                script_args: tuple[str, ...] = (), max_depth: int = 0,
                opset: int | None = None, precision: str = "fp32", optimize: bool = False,
                atol: float | None = None, rtol: float | None = None, batch_size: int = 0,
                progress: Any = None) -> dict:
    """Export the model ``model_hash`` of ``script`` to ``out_path``; return the export record.

    ``batch_size`` 0 exports one graph with a symbolic batch dimension (or, when that graph is
    wrong at other batch sizes, a static graph at the script's batch size, recorded as
    ``"batch": "static"``); N > 0 exports a static graph for batch size N.

    Raises :class:`MLProfError` when the model cannot be exported or its ONNX outputs are
    refused (see the module docstring). ``progress(fraction, message)`` hears the phases
    (``exporting to ONNX (opset 18)``, ``validating on the script's inputs``, ...) and, during a
    long one, how long it has run (see :mod:`mlprof.progress`).
    """

    with Progress(progress) as rep:
        return _export_onnx(script, model_hash, out_path, script_args=script_args,
                            max_depth=max_depth, opset=opset, precision=precision,
                            optimize=optimize, atol=atol, rtol=rtol, batch_size=batch_size,
                            rep=rep)


class _Export:
    """One model's export: the captured module and inputs, the settings, and the steps
    (build a graph, check it on some inputs) that :func:`_export_onnx` composes."""

    def __init__(self, module: Any, items: list[tuple[str, Any]], flags: list[bool], *,
                 where: str, out_path: str, opset: int, precision: str, optimize: bool,
                 atol: float, rtol: float, rep: Any) -> None:
        import torch

        self.module, self.items, self.flags = module, items, flags
        self.where, self.opset, self.precision, self.optimize = where, opset, precision, optimize
        self.atol, self.rtol, self.rep = atol, rtol, rep
        self.tmp = f"{out_path}.{os.getpid()}.tmp"
        self.input_names = [n for n, v in items if isinstance(v, torch.Tensor)]
        self.batched = {n for (n, _), f in zip(items, flags, strict=True) if f}
        self.b0: int | None = next(v.shape[0] for n, v in items if n in self.batched) \
            if self.batched else None
        # the eager reference under no_grad, not inference_mode: a model that creates tensors
        # in its forward() and keeps them (caches) would keep inference tensors, which the
        # exporter's tracing (grad mode) cannot use
        rep.phase("running the eager model")
        eager = self.eager(items)
        if not eager:
            raise MLProfError("the model returns no tensors; nothing to export", where)
        self.output_names = [f"output_{i}" for i in range(len(eager))]
        self.eager_batched = [self.b0 is not None and t.ndim >= 1 and t.shape[0] == self.b0
                              for t in eager]

    def batch_of(self, items: list[tuple[str, Any]]) -> int | None:
        """The batch size of ``items`` (None for a model without batched inputs)."""
        return next((int(v.shape[0]) for n, v in items if n in self.batched), None)

    def eager(self, items: list[tuple[str, Any]]) -> list[np.ndarray]:
        """The eager model's outputs on ``items``, flattened."""
        import torch

        args = tuple(v for _, v in items if isinstance(v, torch.Tensor))
        with torch.no_grad():
            return [_to_numpy(t) for t in _flatten(self.module(*args))]

    def noise_floors(self, items: list[tuple[str, Any]],
                     expected: list[np.ndarray]) -> list[float | None] | None:
        """Per output, the eager model's own float32 noise on ``items``: the max abs difference
        between its float32 outputs and those of a float64 copy (None where the shapes differ;
        None for all when the model cannot run in float64 or does not repeat its float32
        outputs exactly). Computed only for a graph about to be refused: detection models
        amplify float32 rounding through box decoding and RoIAlign (torchvision's
        keypointrcnn_resnet50_fpn: 0.28 on keypoints of RMS 135, its ONNX graph 0.28 too)."""
        import copy

        import torch

        self.rep.phase("measuring the eager model's own float32 noise (a float64 copy)", 0.85)
        try:
            m64 = copy.deepcopy(self.module).double()
            args = tuple(v.double() if v.is_floating_point() else v
                         for _, v in items if isinstance(v, torch.Tensor))
            with torch.no_grad():
                ref = [_to_numpy(t) for t in _flatten(m64(*args))]
        except Exception:  # not every model runs in float64; the refusal stands
            return None
        finally:
            m64 = None
        # a model that does not repeat itself (state kept between calls, randomness) would
        # pass its own drift off as noise: no floor then
        again = self.eager(items)
        if len(ref) != len(expected) or len(again) != len(expected) or not all(
                a.shape == e.shape and np.array_equal(a, e, equal_nan=a.dtype.kind in "fc")
                for a, e in zip(again, expected, strict=True)):
            return None
        floors: list[float | None] = []
        for e, r in zip(expected, ref, strict=True):
            if e.shape != r.shape:
                floors.append(None)
                continue
            d = np.abs(e.astype(np.float64) - r.astype(np.float64))
            floors.append(float(np.nanmax(d)) if d.size else 0.0)
        return floors

    def resized(self, batch: int, fresh: bool) -> list[tuple[str, Any]]:
        """The script's inputs with the batched ones tiled to ``batch``; with ``fresh``, their
        float values replaced by seeded random ones of the same mean and spread, and their
        integer values (token ids) by seeded random ones in the same range (a constant one,
        such as an all-ones attention mask, stays). Integers matter: a mixture-of-experts
        model traced on one set of token ids bakes that routing into the graph (transformers'
        Mixtral, OLMoE, SwitchTransformers with eager experts), right on those ids only."""
        import torch

        gen = torch.Generator().manual_seed(1234)
        out = []
        for (n, v), f in zip(self.items, self.flags, strict=True):
            if isinstance(v, torch.Tensor) and f:
                v2 = resize_batch(v, batch)
                if fresh and v2.is_floating_point():
                    v2 = torch.randn(v2.shape, generator=gen, dtype=v2.dtype) * (
                        v.std() if v.numel() > 1 else 1.0) + v.mean()
                elif fresh and v2.dtype != torch.bool and v.numel() > 1 and v.max() > v.min():
                    v2 = torch.randint(int(v.min()), int(v.max()) + 1, v2.shape, generator=gen,
                                       dtype=v2.dtype)
                out.append((n, v2))
            else:
                out.append((n, v))
        return out

    def build(self, items: list[tuple[str, Any]], symbolic: bool,
              torchscript_error: str | None = None) -> dict[str, Any]:
        """Export the graph for ``items`` to the temporary file (symbolic batch dimension or
        static shapes), add the metadata, convert and optimize; return how it was made.
        ``torchscript_error``: use the dynamo exporter, the TorchScript one's graph failed so."""
        import onnx
        import onnxruntime as ort
        import torch

        args = tuple(v for _, v in items if isinstance(v, torch.Tensor))
        axes: dict[str, dict[int, str]] = {}
        if symbolic:
            axes = {n: {0: BATCH_DIM} for n in self.batched}
            axes.update({n: {0: BATCH_DIM} for n, b in zip(self.output_names,
                                                            self.eager_batched, strict=True)
                         if b})
        unlink_if_exists(self.tmp)
        shape = "symbolic batch" if symbolic else f"static batch size {self.batch_of(items)}"
        self.rep.phase(f"exporting to ONNX (opset {self.opset}, {shape})", 0.1)
        dynamo_args = args
        if symbolic and self.b0 == 1:
            # torch.export specializes a dimension of size 1 (timm's halo2botnet50ts_256 came
            # out with a fixed batch of 1): the dynamo exporter traces at batch size 2
            dynamo_args = tuple(v for _, v in self.resized(2, fresh=False)
                                if isinstance(v, torch.Tensor))
        info = export_graph(self.module, args, self.tmp, opset=self.opset,
                            input_names=self.input_names, output_names=self.output_names,
                            dynamic_axes=axes, batched=self.batched if symbolic else set(),
                            where=self.where, rep=self.rep, dynamo_args=dynamo_args,
                            torchscript_error=torchscript_error)
        # which inputs carry the batch: read back by mlprof.model.onnx_graph.resolve
        proto = onnx.load(self.tmp)
        meta = proto.metadata_props.add()
        meta.key, meta.value = BATCHED_INPUTS_KEY, json.dumps(sorted(self.batched))
        onnx.save(proto, self.tmp)
        if self.precision == "fp16":
            from onnxruntime.transformers.float16 import convert_float_to_float16

            self.rep.phase("converting to fp16", 0.6)
            m16 = convert_float_to_float16(onnx.load(self.tmp), keep_io_types=True)
            # the converter appends the Cast nodes of the kept float32 inputs at the end of
            # the graph: ONNX Runtime accepts that, ONNX's checker (and other runtimes) not
            topological_sort(m16.graph)
            onnx.save(m16, self.tmp)
        if self.optimize:
            self.rep.phase("optimizing with ONNX Runtime", 0.7)
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            so.optimized_model_filepath = self.tmp + ".opt"
            ort.InferenceSession(self.tmp, so, providers=["CPUExecutionProvider"])
            os.replace(self.tmp + ".opt", self.tmp)
        info["dynamic_axes"] = symbolic_axes(onnx.load(self.tmp, load_external_data=False))
        so = ort.SessionOptions()
        so.log_severity_level = 3  # a failing check is recorded, not logged by onnxruntime
        try:
            self.session = ort.InferenceSession(self.tmp, so,
                                                providers=["CPUExecutionProvider"])
        except Exception as e:
            raise MLProfError(f"onnxruntime cannot load the graph the {info['exporter']} "
                              f"exporter made: {first_line(e)}", self.where) from None
        return info

    def check(self, items: list[tuple[str, Any]], label: str) -> dict[str, Any]:
        """The graph in the session against the eager model on ``items``."""
        import onnxruntime as ort
        import torch

        self.rep.phase(f"validating on {label}", 0.8)
        expected = self.eager(items)
        onnx_inputs = [i.name for i in self.session.get_inputs()]
        feed = {n: _to_numpy(v) for n, v in items
                if isinstance(v, torch.Tensor) and n in onnx_inputs}
        head: dict[str, Any] = {"inputs": label, "batch_size": self.batch_of(items)}
        # a failing check is recorded, not logged by onnxruntime (this is the export's own
        # process: the setting ends with it)
        ort.set_default_logger_severity(3)
        try:
            got = self.session.run(None, feed)
        except Exception as e:
            return {**head, "verdict": "refused", "ok": False, "max_abs_error": None,
                    "max_rel_error": None, "max_scaled_error": None, "worst_output": None,
                    "reason": f"onnxruntime fails: {first_line(e)}"}
        result = compare_outputs(self.output_names, expected, got, self.atol, self.rtol)
        if result["verdict"] == "refused" and np.isfinite(result["max_abs_error"]):
            floors = self.noise_floors(items, expected)
            if floors is not None:
                result = compare_outputs(self.output_names, expected, got, self.atol,
                                         self.rtol, floors)
        for key in ("max_abs_error", "max_rel_error", "max_scaled_error"):
            if not np.isfinite(result[key]):  # a shape or NaN mismatch: no number (JSON)
                result[key] = None
        return {**head, **result, "ok": result["verdict"] == "exact"}

    def refuse(self, check: dict[str, Any]) -> None:
        """Raise the one-line error of a refused check (nothing for exact or close)."""
        if check["verdict"] != "refused":
            return
        raise MLProfError(f"the ONNX export is numerically wrong on {check['inputs']}: "
                          f"{check['reason']} (exact: atol {self.atol:g} + rtol {self.rtol:g} "
                          f"* |expected|; close: max error <= rtol * RMS of the output, or <= "
                          f"3x the eager model's own float32 noise; "
                          f"--atol/--rtol change them)", self.where)

    def static(self, batch: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Build and check the static graph for batch size ``batch``: on fresh random values
        at that batch size, and at the script's own batch size also on its inputs (tiled
        copies of them would add nothing to fresh values but the eager model's time, which
        at batch size 1024 is long)."""
        info = self.build(self.resized(batch, fresh=False), symbolic=False)
        checks = []
        if batch == self.b0:
            checks.append(self.check(self.items, "the script's inputs"))
            self.refuse(checks[-1])
        checks.append(self.check(self.resized(batch, fresh=True),
                                 f"batch size {batch}, fresh random values"))
        self.refuse(checks[-1])
        return info, checks


def _export_onnx(script: str, model_hash: str, out_path: str, *, script_args: tuple[str, ...],
                 max_depth: int, opset: int | None, precision: str, optimize: bool,
                 atol: float | None, rtol: float | None, batch_size: int, rep: Any) -> dict:
    """:func:`export_onnx`, reporting its phases to ``rep`` (a :class:`Progress`)."""
    import onnx
    import torch

    if precision not in TOLERANCES:
        raise MLProfError(f"precision must be one of {', '.join(TOLERANCES)}, got "
                          f"{precision!r}", field="--precision")
    if batch_size < 0:
        raise MLProfError(f"must be >= 0 (0: a symbolic batch dimension), got {batch_size}",
                          field="--export-batch-size")
    opset = opset or default_opset()
    d_atol, d_rtol = TOLERANCES[precision]
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    where = f"{script}::{model_hash}"

    torch.set_num_threads(1)  # as in discovery: robust on a busy machine
    rep.phase(CAPTURE_PHASE)
    module, items, flags = capture(script, model_hash, script_args, max_depth)
    module.eval()
    if any(n.startswith("*") for n, _ in items):
        raise MLProfError("models called with *args cannot be exported", where)
    # call by keyword, with exactly the inputs the script passed (see keyword_wrapper)
    module = keyword_wrapper(module, items)
    module.eval()
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    job = _Export(module, items, flags, where=where, out_path=out_path, opset=opset,
                  precision=precision, optimize=optimize, atol=atol, rtol=rtol, rep=rep)
    if batch_size and not job.batched:
        raise MLProfError("the model has no batched input: there is no batch size to export "
                          "a static graph for", where, "--export-batch-size")

    record: dict[str, Any] = {}
    try:
        if batch_size:
            info, checks = job.static(batch_size)
            record.update(batch="static", batch_size=batch_size)
        else:
            info, checks = _build_and_check(job, items)
            b0 = job.b0  # None exactly when no input is batched
            if b0 is not None:
                b1 = b0 + 2
                checks.append(job.check(job.resized(b1, fresh=True),
                                        f"batch size {b1}, fresh random values"))
            if b0 is not None and checks[-1]["verdict"] == "refused":
                # the batch size or the data? the same graph on fresh values at its own
                # batch size tells: right there, the graph bakes in the batch size
                wrong = checks[-1]
                checks.append(job.check(job.resized(b0, fresh=True),
                                        f"batch size {b0}, fresh random values"))
                job.refuse(checks[-1])
                reason = (f"the graph with a symbolic batch dimension ({info['exporter']} "
                          f"exporter) is wrong at batch size {wrong['batch_size']}: "
                          f"{wrong['reason']}")
                rep.phase(f"{reason}; exporting a static graph per batch size", 0.5)
                symbolic = {"exporter": info["exporter"], "export_s": info["export_s"],
                            "validation": checks}
                info, checks = job.static(b0)
                record.update(batch="static", batch_size=b0, static_reason=reason,
                              symbolic_graph=symbolic)
            else:
                record["batch"] = "symbolic" if job.batched else "none"
        os.replace(job.tmp, out_path)
    finally:
        unlink_if_exists(job.tmp)
        unlink_if_exists(job.tmp + ".opt")

    verdict = max((c["verdict"] for c in checks), key=_VERDICTS.index)
    warnings = [f"close but not exact on {c['inputs']}: {c['reason']}" for c in checks
                if c["verdict"] == "close"]
    exporter = {"exporter": info["exporter"]}
    if "torchscript_error" in info:
        exporter["torchscript_error"] = info["torchscript_error"]
        import onnxscript

        exporter["onnxscript_version"] = onnxscript.__version__
    return {
        "script": script, "model_hash": model_hash, "file": out_path, "opset": opset,
        "precision": precision, "optimized": optimize, **exporter, **record,
        "torch_version": str(torch.__version__), "onnx_version": onnx.__version__,
        "export_s": info["export_s"], "inputs": job.input_names, "outputs": job.output_names,
        "batched_inputs": sorted(job.batched), "dynamic_axes": info["dynamic_axes"],
        "tolerance": {"atol": atol, "rtol": rtol}, "rule": RULE, "verdict": verdict,
        "warnings": warnings, "validation": checks,
        "max_abs_error": max(c["max_abs_error"] for c in checks),
        "max_rel_error": max(c["max_rel_error"] for c in checks),
        "max_scaled_error": max(c["max_scaled_error"] for c in checks),
    }


def _build_and_check(job: Any, items: list[tuple[str, Any]]) -> tuple[dict, list[dict]]:
    """The graph with a symbolic batch dimension (when the model has a batch), checked on the
    script's inputs. When onnxruntime cannot load or run the TorchScript exporter's graph
    (transformers' Cohere: a Reshape node fails at run time; Bamba: a Transpose fails type
    inference), the dynamo exporter's graph is tried before the export fails: the graph, not
    the model, is at fault there. Numerically wrong graphs are not retried (transformers' LED
    and Longformer, wrong by 0.06 and 0.13 of the output's RMS on the inputs they were traced
    with, are refused by the dynamo exporter's graph too)."""
    symbolic = bool(job.batched)
    try:
        info = job.build(items, symbolic=symbolic)
        checks = [job.check(items, "the script's inputs")]
        unusable = checks[0]["reason"] if checks[0]["verdict"] == "refused" and str(
            checks[0].get("reason", "")).startswith("onnxruntime fails") else None
    except MLProfError as e:
        if "onnxruntime cannot load the graph the torchscript" not in e.message:
            raise
        unusable, checks = e.message, []
    if unusable is not None:
        # its error names both: "torchscript: <why its graph is unusable>; dynamo: ..."
        info = job.build(items, symbolic=symbolic, torchscript_error=unusable)
        checks = [job.check(items, "the script's inputs")]
    job.refuse(checks[0])
    return info, checks
