"""OpenVINO generation: the decoder converted from PyTorch by ``openvino.convert_model`` with its
KV cache as explicit inputs and outputs, run by the OpenVINO runtime in a greedy per-step loop
(one infer request; each step's logits argmax'd in numpy, EOS masked until the last step).

Chosen by measuring (issue 37): optimum-intel 2.2.0 (``OVModelForCausalLM``) would downgrade
transformers 5.23.0 to 5.5.4 (``pip install --dry-run``), so it is out. openvino-genai
2026.4.1's ``LLMPipeline`` installs alone and takes token ids (``TokenizedInputs``), but it needs
a stateful IR, which only optimum-intel's exporter writes; the same stateful transformation
applied here (``apply_make_stateful_transformation`` plus a ``beam_idx`` gather, as optimum-intel
does) compiled to "ReadValue contains less parent edges than 0" in the CPU plugin. So the loop
is ours, on the OpenVINO runtime; ``logits`` runs the same IR with an empty cache.

``INFERENCE_PRECISION_HINT=f32`` is set for fp32: this CPU (BF16 among its capabilities) runs
f32 models in bf16 by default, which moved the tiny Llama's logits by 4.0e-3 against torch
(2.4e-7 with the hint). The IR is saved without fp16 weight compression for the same reason.
Conversion of the tiny Llama: 3.4 s.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.generation.backends import (
    ExportingBackend,
    eos_ids,
    export_seconds,
)
from mlprof.measure.generation.timed import TimedGeneration
from mlprof.model.decoder import Decoder


def _convert(decoder: Decoder, out: str) -> None:
    """Trace ``decoder`` with an explicit KV cache and save the IR (fp32 weights) to ``out``."""
    import torch

    from mlprof.runtimes.base import import_openvino

    ov = import_openvino()
    import transformers
    from transformers import DynamicCache

    model = transformers.AutoModelForCausalLM.from_pretrained(
        decoder.hf_dir, dtype=torch.float32).eval()
    cfg = model.config
    with torch.no_grad():
        probe = model(input_ids=torch.zeros((1, 2), dtype=torch.int64), use_cache=True)
    layers = [(lay.keys.shape[1], lay.keys.shape[3], lay.values.shape[3])
              for lay in probe.past_key_values.layers]

    class WithCache(torch.nn.Module):
        """forward(input_ids, attention_mask, position_ids, *past) -> (logits, *present)."""

        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, input_ids: Any, attention_mask: Any, position_ids: Any,
                    *past: Any) -> tuple[Any, ...]:
            cache = DynamicCache(config=cfg)
            lay: Any
            for i, lay in enumerate(cache.layers):  # set directly: update() would cat to []
                lay.dtype, lay.device = past[0].dtype, past[0].device
                lay.keys, lay.values = past[2 * i], past[2 * i + 1]
                lay.is_initialized = True
            o = self.m(input_ids=input_ids, attention_mask=attention_mask,
                       position_ids=position_ids, past_key_values=cache, use_cache=True)
            res = [o.logits]
            for lay in o.past_key_values.layers:
                res += [lay.keys, lay.values]
            return tuple(res)

    batch, past_len, seq = 2, 3, 5
    example: list[Any] = [torch.randint(0, decoder.vocab_size, (batch, seq)),
                          torch.ones((batch, past_len + seq), dtype=torch.int64),
                          torch.arange(past_len, past_len + seq).expand(batch, seq)]
    names = ["input_ids", "attention_mask", "position_ids"]
    shapes = [ov.PartialShape([-1, -1])] * 3
    outs = ["logits"]
    for i, (heads, kdim, vdim) in enumerate(layers):
        for kind, dim in (("key", kdim), ("value", vdim)):
            example.append(torch.randn(batch, heads, past_len, dim))
            names.append(f"past_key_values.{i}.{kind}")
            shapes.append(ov.PartialShape([-1, heads, -1, dim]))
            outs.append(f"present.{i}.{kind}")
    ov_model = ov.convert_model(WithCache(), example_input=tuple(example), input=shapes)
    for port, name in zip(ov_model.inputs, names, strict=True):
        port.get_tensor().set_names({name})
    for port, name in zip(ov_model.outputs, outs, strict=True):
        port.get_tensor().set_names({name})
    ov.save_model(ov_model, os.path.join(out, "openvino_model.xml"), compress_to_fp16=False)
    with open(os.path.join(out, "io.json"), "w") as fh:
        json.dump({"inputs": names, "outputs": outs,
                   "past": [[h, k, v] for h, k, v in layers]}, fh)


class OpenVinoBackend(ExportingBackend):
    """A decoder converted to OpenVINO IR, generating in a greedy per-step loop."""

    exporting = "converting {name} to OpenVINO IR"

    def _library(self) -> str:
        from mlprof.runtimes.base import import_openvino

        ov = import_openvino()
        self._ov = ov
        self.version = ov.get_version().split("-")[0]
        return f"openvino-{self.version}"

    def _build(self, decoder: Decoder, out: str) -> None:
        _convert(decoder, out)

    def _open(self) -> None:
        ov, threads, decoder = self._ov, self.threads, self.decoder
        with open(os.path.join(self.path, "io.json")) as fh:
            self.io = json.load(fh)
        self.eos = eos_ids(decoder.hf_dir)
        t0 = time.perf_counter()
        self.compiled = ov.Core().compile_model(
            os.path.join(self.path, "openvino_model.xml"), "CPU",
            {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32",
             "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1})
        self.compile_s = time.perf_counter() - t0
        self.request = self.compiled.create_infer_request()

    def _empty_past(self, batch: int) -> dict[str, np.ndarray]:
        feeds = {}
        names = self.io["inputs"][3:]
        for i, (heads, kdim, vdim) in enumerate(self.io["past"]):
            feeds[names[2 * i]] = np.zeros((batch, heads, 0, kdim), dtype=np.float32)
            feeds[names[2 * i + 1]] = np.zeros((batch, heads, 0, vdim), dtype=np.float32)
        return feeds

    def generate(self, input_ids: np.ndarray, new_tokens: int) -> TimedGeneration:
        """``new_tokens`` greedy tokens after ``input_ids``, each timestamped when sampled."""
        ids = np.ascontiguousarray(input_ids, dtype=np.int64)
        batch, prompt = ids.shape
        if prompt + new_tokens > self.decoder.max_context:
            raise MLProfError(f"prompt {prompt} + {new_tokens} new tokens exceed the model's "
                              f"context of {self.decoder.max_context}", self.decoder.source)
        req, past_in, past_out = self.request, self.io["inputs"][3:], self.io["outputs"][1:]
        eos = [e for e in self.eos if 0 <= e < self.decoder.vocab_size]
        times: list[int] = []
        tokens = np.empty((batch, new_tokens), dtype=np.int64)
        t0 = time.perf_counter_ns()
        feeds: dict[str, np.ndarray] = {
            "input_ids": ids, "attention_mask": np.ones((batch, prompt), dtype=np.int64),
            "position_ids": np.broadcast_to(np.arange(prompt, dtype=np.int64), (batch, prompt)),
            **self._empty_past(batch)}
        for step in range(new_tokens):
            res = req.infer(feeds)
            last = res["logits"][:, -1, :]
            if eos and step < new_tokens - 1:
                last = last.copy()
                last[:, eos] = -np.inf
            nxt = last.argmax(axis=-1).astype(np.int64)
            tokens[:, step] = nxt
            times.append(time.perf_counter_ns() - t0)
            if step == new_tokens - 1:
                break
            length = prompt + step + 1
            feeds = {"input_ids": nxt[:, None],
                     "attention_mask": np.ones((batch, length), dtype=np.int64),
                     "position_ids": np.full((batch, 1), length - 1, dtype=np.int64)}
            for i_name, o_name in zip(past_in, past_out, strict=True):
                feeds[i_name] = res[o_name]
        e2e = time.perf_counter_ns() - t0
        return TimedGeneration(tokens=tokens, token_ns=np.asarray(times, dtype=np.int64),
                               e2e_ns=int(e2e))

    def logits(self, input_ids: np.ndarray) -> np.ndarray:
        """The same IR, one infer over ``input_ids`` with an empty cache."""
        ids = np.ascontiguousarray(input_ids, dtype=np.int64)
        batch, seq = ids.shape
        feeds = {"input_ids": ids, "attention_mask": np.ones((batch, seq), dtype=np.int64),
                 "position_ids": np.broadcast_to(np.arange(seq, dtype=np.int64), (batch, seq)),
                 **self._empty_past(batch)}
        res = self.compiled.create_infer_request().infer(feeds)
        return np.array(res["logits"], dtype=np.float32)

    def info(self) -> dict[str, Any]:
        """Library, version, threads, export path, export and compile time."""
        return {"runtime": self.runtime, "library": "openvino (convert_model + own greedy loop)",
                "library_version": self.version, "threads": self.threads,
                "kv_cache": "explicit inputs/outputs", "inference_precision": "f32",
                "export_path": self.path, "export_s": export_seconds(self.path),
                "exported_now": self.exported_s is not None,
                "compile_s": round(self.compile_s, 3),
                "logits": "the same IR, one infer with an empty KV cache"}

    def close(self) -> None:
        """Drop the compiled model."""
        del self.request
        del self.compiled
