"""One timed generation call and the protocol every generation runtime follows.

INTERFACE (committed first; the backends fill :func:`open_backend`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.generation.timed import TimedGeneration
from mlprof.model.decoder import Decoder
from mlprof.runtimes import generation_runtimes

#: the runtimes that generate (``--runtimes``): those with a generation backend in the registry
GENERATION_RUNTIMES = generation_runtimes()

__all__ = ["GENERATION_RUNTIMES", "GenerationBackend", "TimedGeneration", "open_backend"]


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
    import importlib

    from mlprof.runtimes import runtime_info

    info = runtime_info(runtime)  # an unknown name: one line naming the close ones
    if not info.generation:
        raise MLProfError(f"{info.name} does not generate (generation runtimes: "
                          f"{', '.join(generation_runtimes())})", field="runtimes")
    module, _, cls = info.generation.partition(":")
    backend = getattr(importlib.import_module(module), cls)
    opened: GenerationBackend = backend(decoder, threads=threads, runtime=info.name,
                                        cache_dir=cache_dir, precision=precision,
                                        progress=progress)
    return opened
