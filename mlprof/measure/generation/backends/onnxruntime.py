"""ONNX Runtime generation through onnxruntime-genai: its model builder exports the decoder
(``python -m onnxruntime_genai.models.builder``, fp32, CPU), its per-step loop
(``generator.generate_next_token()``) times each token.

Chosen by measuring (issue 37): optimum-onnx 0.1.0 would downgrade transformers 5.23.0 to
4.57.6 (``pip install --dry-run``), onnxruntime-genai 0.18.0 installs alone and its builder reads
a transformers 5.23 ``save_pretrained`` directory (the tiny Llama: export 5.3 s, tokens identical
to transformers' ``generate``, logits within 2.7e-7). The builder refuses a model without a
tokenizer; a tiny word-level one is written beside the weights (never used: prompts are ids).

``logits`` (teacher forcing) runs the same ``model.onnx`` through ``onnxruntime.InferenceSession``
with an empty KV cache: onnxruntime-genai gives the last position's logits only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.generation.backends import (
    ExportingBackend,
    eos_ids,
    export_seconds,
    write_tokenizer,
)
from mlprof.measure.generation.timed import TimedGeneration
from mlprof.model.decoder import Decoder


def _genai_version() -> str:
    import onnxruntime_genai as og

    return str(og.__version__)


def _build(decoder: Decoder, out: str) -> None:
    """Run onnxruntime-genai's model builder on a copy of ``decoder.hf_dir`` with a tokenizer."""
    src = os.path.join(out, "hf")
    os.makedirs(src)
    for name in os.listdir(decoder.hf_dir):
        if not name.startswith("tokenizer"):
            os.symlink(os.path.join(decoder.hf_dir, name), os.path.join(src, name))
    eos = eos_ids(decoder.hf_dir)
    write_tokenizer(src, decoder.vocab_size, eos[0] if eos else None)
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", src, "-o", out,
           "-p", "fp32", "-e", "cpu", "-c", os.path.join(out, "hf-cache")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not os.path.isfile(os.path.join(out, "model.onnx")):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        if "is not currently supported" in tail[0]:  # its builder knows a list of architectures
            raise MLProfError(f"onnxruntime-genai {_genai_version()} cannot export "
                              f"{decoder.architecture} (its model builder does not support "
                              "that architecture)", decoder.source)
        raise MLProfError(f"onnxruntime-genai's builder failed (exit {proc.returncode}): "
                          f"{tail[0]}", decoder.source)


class OrtGenaiBackend(ExportingBackend):
    """A decoder exported by onnxruntime-genai's builder, generating through its Generator."""

    exporting = "exporting {name} with onnxruntime-genai's builder"

    def _library(self) -> str:
        import onnxruntime
        import onnxruntime_genai as og

        self._og = og
        self.version = onnxruntime.__version__
        self.genai_version = og.__version__
        return f"onnxruntime-genai-{og.__version__}"

    def _build(self, decoder: Decoder, out: str) -> None:
        _build(decoder, out)

    def _open(self) -> None:
        og, threads = self._og, self.threads
        cfg = og.Config(self.path)
        cfg.clear_providers()
        cfg.overlay(json.dumps({"model": {"decoder": {"session_options": {
            "intra_op_num_threads": threads, "inter_op_num_threads": 1}}}}))
        t0 = time.perf_counter()
        self.model = og.Model(cfg)
        self.load_s = time.perf_counter() - t0
        with open(os.path.join(self.path, "genai_config.json")) as fh:
            genai = json.load(fh)["model"]
        self.context = int(genai["context_length"])
        self.head_size = int(genai["decoder"]["head_size"])
        self._session: Any = None

    def generate(self, input_ids: np.ndarray, new_tokens: int) -> TimedGeneration:
        """``new_tokens`` greedy tokens (``min_length = max_length``: EOS masked) after
        ``input_ids``, each timestamped when ``generate_next_token`` returned."""
        og = self._og
        ids = np.ascontiguousarray(input_ids, dtype=np.int64)
        total = ids.shape[1] + new_tokens
        if total > self.context:
            raise MLProfError(f"prompt {ids.shape[1]} + {new_tokens} new tokens exceed the "
                              f"model's context of {self.context}", self.decoder.source)
        params = og.GeneratorParams(self.model)
        params.set_search_options(max_length=total, min_length=total, do_sample=False,
                                  batch_size=ids.shape[0])
        times: list[int] = []
        tokens: list[np.ndarray] = []
        t0 = time.perf_counter_ns()
        gen = og.Generator(self.model, params)
        gen.append_tokens(ids)
        while not gen.is_done():
            gen.generate_next_token()
            times.append(time.perf_counter_ns() - t0)
            tokens.append(gen.get_next_tokens())
        e2e = time.perf_counter_ns() - t0
        del gen
        return TimedGeneration(tokens=np.stack(tokens, axis=1).astype(np.int64),
                               token_ns=np.asarray(times, dtype=np.int64), e2e_ns=int(e2e))

    def logits(self, input_ids: np.ndarray) -> np.ndarray:
        """The same ``model.onnx`` through ``onnxruntime.InferenceSession``, empty KV cache."""
        import onnxruntime as ort

        if self._session is None:
            so = ort.SessionOptions()
            so.intra_op_num_threads, so.inter_op_num_threads = self.threads, 1
            self._session = ort.InferenceSession(os.path.join(self.path, "model.onnx"), so,
                                                 providers=["CPUExecutionProvider"])
        ids = np.ascontiguousarray(input_ids, dtype=np.int64)
        feeds: dict[str, np.ndarray] = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        for i in self._session.get_inputs():
            if i.name.startswith("past_key_values"):
                feeds[i.name] = np.zeros((ids.shape[0], i.shape[1], 0, self.head_size),
                                         dtype=np.float32)
        return np.asarray(self._session.run(["logits"], feeds)[0], dtype=np.float32)

    def info(self) -> dict[str, Any]:
        """Library, versions, threads, export path and time."""
        return {"runtime": self.runtime, "library": "onnxruntime-genai",
                "library_version": self.genai_version, "onnxruntime_version": self.version,
                "threads": self.threads,
                "kv_cache": "onnxruntime-genai (past_present_share_buffer)",
                "export_path": self.path, "export_s": export_seconds(self.path),
                "exported_now": self.exported_s is not None, "load_s": round(self.load_s, 3),
                "compile_s": None,
                "logits": "onnxruntime.InferenceSession on the same model.onnx, empty KV cache "
                          "(onnxruntime-genai gives the last position's logits only)"}

    def close(self) -> None:
        """Drop the model and the logits session."""
        self.model = None
        self._session = None
