"""PyTorch generation: transformers' ``generate`` (eager, dynamic KV cache), or with a static
cache and ``torch.compile`` (``torch-compile``), timed per token by a streamer.

transformers' ``generate`` calls its streamer's ``put`` with the prompt first and then with each
step's tokens (the whole batch) right after they are sampled, so ``put``'s clock is the time to
each token, the first one being the TTFT. Against a bare ``generate`` loop timed by the same kind
of streamer (``benchmarks/generation_fidelity.py``, a 6.5 M-parameter Llama, batch 1, prompt 16,
32 new tokens) the paired ratio is TTFT 0.997 and TPOT 1.002 (it runs under ``no_grad`` as
``generate`` does: under ``inference_mode`` it was 4-6 % faster than the bare loop).
``torch-compile`` compiles the forward once per (batch, prompt length): 18.8 s for the first
``generate`` of the tiny Llama here (2 vCPUs), then 25 ms per 32-token generate; the compilation
happens in :meth:`TorchBackend.warm` and is reported as progress.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from mlprof.measure.generation.backends import check_precision, export_dir, ticking
from mlprof.measure.generation.timed import TimedGeneration
from mlprof.model.decoder import Decoder


class _Clock:
    """A transformers streamer that notes when each step's tokens were sampled."""

    def __init__(self, t0: int) -> None:
        self.t0 = t0
        self.prompt_seen = False
        self.times: list[int] = []
        self.tokens: list[Any] = []

    def put(self, value: Any) -> None:
        now = time.perf_counter_ns()
        if not self.prompt_seen:  # the first put is the prompt
            self.prompt_seen = True
            return
        self.times.append(now - self.t0)
        self.tokens.append(value)

    def end(self) -> None:
        pass


class TorchBackend:
    """A decoder in transformers on PyTorch (see the module docstring)."""

    #: whether it compiles the forward (:class:`TorchCompileBackend`)
    compiles = False

    def __init__(self, decoder: Decoder, *, threads: int, runtime: str,
                 cache_dir: str | None = None, precision: str = "fp32",
                 progress: Callable[[str], None] | None = None) -> None:
        import torch
        import transformers

        check_precision(precision)
        compile = self.compiles
        self.runtime = runtime  # its registry name (cache_dir: nothing exported)
        self.version: str = str(torch.__version__)
        self.decoder, self.threads, self.compile = decoder, threads, compile
        self._progress = progress
        self._torch = torch
        torch.set_num_threads(threads)
        t0 = time.perf_counter()
        with ticking(progress, f"loading {decoder.name} in transformers"):
            self.model: Any = transformers.AutoModelForCausalLM.from_pretrained(
                decoder.hf_dir, dtype=torch.float32).eval()
        self.load_s = time.perf_counter() - t0
        self.compile_s: float | None = None
        self._compiled_shapes: set[tuple[int, int, int]] = set()
        self._transformers_version = transformers.__version__
        if compile:
            if cache_dir:  # inductor's caches in the store, one per decoder and torch version:
                # the next process loads the compiled graphs instead of compiling again
                from mlprof.runtimes.torch import use_inductor_cache

                use_inductor_cache(export_dir(cache_dir, runtime, f"torch-{torch.__version__}",
                                              precision, decoder.content_hash))
            self.model.forward = torch.compile(self.model.forward, fullgraph=True)

    def _kwargs(self, new_tokens: int) -> dict[str, Any]:
        kw: dict[str, Any] = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                  do_sample=False, num_beams=1, use_cache=True)
        pad = self.model.generation_config.pad_token_id
        if pad is None:
            eos = self.model.generation_config.eos_token_id
            kw["pad_token_id"] = (eos[0] if isinstance(eos, list) else eos) or 0
        if self.compile:
            kw["cache_implementation"] = "static"
        return kw

    def warm(self, input_ids: np.ndarray, new_tokens: int) -> None:
        """Compile (``torch-compile``) for this shape with progress; eager: nothing to do."""
        shape = (*input_ids.shape, new_tokens)
        if not self.compile or shape in self._compiled_shapes:
            return
        t0 = time.perf_counter()
        with ticking(self._progress, f"compiling {self.decoder.name} with torch.compile "
                                     f"for batch {shape[0]}, prompt {shape[1]}"):
            self.generate(input_ids, new_tokens, _warm=True)
        self.compile_s = (self.compile_s or 0.0) + time.perf_counter() - t0
        self._compiled_shapes.add(shape)

    def generate(self, input_ids: np.ndarray, new_tokens: int,
                 _warm: bool = False) -> TimedGeneration:
        """``new_tokens`` greedy tokens after ``input_ids``, timed per step by the streamer."""
        torch = self._torch
        if self.compile and not _warm:
            self.warm(input_ids, new_tokens)
        ids = torch.from_numpy(np.ascontiguousarray(input_ids, dtype=np.int64))
        mask = torch.ones_like(ids)
        kw = self._kwargs(new_tokens)
        # no_grad, what generate itself uses: under inference_mode the same calls ran 4-6 %
        # faster than a bare generate loop (benchmarks/generation_fidelity.py, TTFT 0.959,
        # TPOT 0.940), which is not what a user's generate costs
        with torch.no_grad():
            t0 = time.perf_counter_ns()
            clock = _Clock(t0)
            out = self.model.generate(ids, attention_mask=mask, streamer=clock, **kw)
            e2e = time.perf_counter_ns() - t0
        tokens = out[:, ids.shape[1]:].numpy().astype(np.int64)
        return TimedGeneration(tokens=tokens, token_ns=np.asarray(clock.times, dtype=np.int64),
                               e2e_ns=int(e2e))

    def logits(self, input_ids: np.ndarray) -> np.ndarray:
        """One forward pass without cache over ``input_ids``: float32 [batch, seq, vocab]."""
        torch = self._torch
        ids = torch.from_numpy(np.ascontiguousarray(input_ids, dtype=np.int64))
        with torch.inference_mode():
            fwd = type(self.model).forward  # the eager forward, also under torch-compile
            out = fwd(self.model, input_ids=ids, attention_mask=torch.ones_like(ids),
                      use_cache=False)
        return out.logits.float().numpy()

    def info(self) -> dict[str, Any]:
        """Library, versions, threads, cache and compile."""
        return {"runtime": self.runtime, "library": "transformers",
                "library_version": self._transformers_version, "torch_version": self.version,
                "threads": self.threads, "kv_cache": "static" if self.compile else "dynamic",
                "compile": "torch.compile(fullgraph=True)" if self.compile else None,
                "export_path": None, "load_s": round(self.load_s, 3),
                "compile_s": None if self.compile_s is None else round(self.compile_s, 3),
                "logits": "the model's eager forward, no cache"}

    def close(self) -> None:
        """Drop the model."""
        self.model = None


class TorchCompileBackend(TorchBackend):
    """The same with a static KV cache and ``torch.compile`` (``torch-compile``)."""

    compiles = True
