"""One timed generation call and the protocol every generation runtime follows.

INTERFACE (committed first; the backends fill :func:`open_backend`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mlprof.errors import MLProfError
from mlprof.model.decoder import Decoder

#: the runtimes that generate (``--runtimes``); torch-compile where it works
GENERATION_RUNTIMES = ("torch", "torch-compile", "onnxruntime", "openvino")


@dataclass(frozen=True)
class TimedGeneration:
    """One timed generation call of a batch.

    ``tokens``: int64 ``[batch, new_tokens]``, the generated ids (greedy, exactly
    ``new_tokens`` each: ``min_new_tokens = max_new_tokens``); ``token_ns``: int64
    ``[new_tokens]``, ``perf_counter_ns`` when step i's tokens (the whole batch) had been sampled,
    relative to the call's start (``token_ns[0]`` is the TTFT); ``e2e_ns``: the call's start to
    its return."""

    tokens: np.ndarray
    token_ns: np.ndarray
    e2e_ns: int


class GenerationBackend(Protocol):
    """A loaded decoder on one runtime, ready to generate."""

    runtime: str
    version: str

    def generate(self, input_ids: np.ndarray, new_tokens: int) -> TimedGeneration:
        """Generate ``new_tokens`` tokens after ``input_ids`` (int64 ``[batch, prompt]``)."""
        ...

    def logits(self, input_ids: np.ndarray) -> np.ndarray:
        """float32 ``[batch, seq, vocab]``: one forward pass over ``input_ids`` (teacher
        forcing: the tokens are given, none generated)."""
        ...

    def info(self) -> dict[str, Any]:
        """What it runs with: library and versions, threads, cache, compile, export path."""
        ...

    def close(self) -> None:
        """Free the session."""
        ...


def open_backend(runtime: str, decoder: Decoder, *, threads: int, cache_dir: str,
                 precision: str = "fp32",
                 progress: Callable[[str], None] | None = None) -> GenerationBackend:
    """Load (exporting once into ``cache_dir`` where the runtime needs it) ``decoder`` on
    ``runtime`` with ``threads`` threads.

    Each runtime's library is imported only here, when it is asked for: torch and transformers
    (``torch``, ``torch-compile``), onnxruntime-genai (``onnxruntime``), OpenVINO
    (``openvino``); see :mod:`mlprof.measure.generation.backends` for why each."""
    if runtime in ("torch", "torch-compile"):
        from mlprof.measure.generation.backends.torch import TorchBackend

        return TorchBackend(decoder, threads=threads, compile=runtime == "torch-compile",
                            precision=precision, progress=progress)
    if runtime == "onnxruntime":
        from mlprof.measure.generation.backends.onnxruntime import OrtGenaiBackend

        return OrtGenaiBackend(decoder, threads=threads, cache_dir=cache_dir,
                               precision=precision, progress=progress)
    if runtime == "openvino":
        from mlprof.measure.generation.backends.openvino import OpenVinoBackend

        return OpenVinoBackend(decoder, threads=threads, cache_dir=cache_dir,
                               precision=precision, progress=progress)
    raise MLProfError(f"unknown generation runtime {runtime!r} "
                      f"(one of {', '.join(GENERATION_RUNTIMES)})", field="runtimes")
