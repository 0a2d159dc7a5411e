"""ONNX Runtime (CPU execution provider)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnxruntime as ort

from mlprof.errors import MLProfError
from mlprof.model.onnx_graph import ResolvedModel, with_symbolic_batch
from mlprof.runtimes.base import Runtime

_PROVIDERS = {"cpu": "CPUExecutionProvider"}


class OnnxRuntime(Runtime):
    """``onnxruntime.InferenceSession`` with all graph optimizations, sequential execution.

    ``threads`` sets ``intra_op_num_threads`` (0 = ONNX Runtime's default, one per physical
    core); inter-op threads are 1 since execution is sequential.
    """

    # name, aliases, package and devices: from its registration in mlprof.runtimes

    model: ResolvedModel

    @classmethod
    def resolve(cls, model_file: str, script_args: tuple[str, ...] = ()) -> ResolvedModel:
        """Read the model file and check it against its ONNX graph."""
        from mlprof.model import read_model_file
        from mlprof.model.onnx_graph import resolve

        spec = read_model_file(model_file)
        if spec.is_script:
            raise MLProfError(f"{cls.name} measures ONNX models; export the script's model "
                              "first (the tasks do, via ExportOnnx)", spec.spec_file,
                              "--runtime")
        return resolve(spec)

    def __init__(self, model: ResolvedModel, *, device: str = "cpu", threads: int = 1) -> None:
        super().__init__(model, device=device, threads=threads)
        self.session: ort.InferenceSession | None = None
        self.relaxed_batch = False
        self._output_names: list[str] | None = None

    def load(self, batch_size: int) -> None:
        """Create the session; a fixed batch dimension is made symbolic when needed."""
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.intra_op_num_threads = int(self.threads)
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        fixed = self.model.fixed_batch
        source: Any = self.model.spec.file
        if fixed is not None and batch_size != fixed:
            source = with_symbolic_batch(self.model.proto).SerializeToString()
            self.relaxed_batch = True
        try:
            self.session = ort.InferenceSession(source, so, providers=[_PROVIDERS[self.device]])
        except Exception as e:
            raise MLProfError(f"onnxruntime cannot load the model: {_first_line(e)}",
                              self.model.spec.file) from None
        self._output_names = list(self.model.outputs) if self.model.outputs else None

    def bind(self, feed: dict[str, np.ndarray]) -> tuple[Callable[..., Any], tuple]:
        """``session.run(output_names, feed)``, exactly as a bare loop calls it."""
        assert self.session is not None, "load() first"
        return self.session.run, (self._output_names, feed)

    def explain_failure(self, exc: BaseException, batch_size: int) -> str:
        """A message for a failed first inference."""
        msg = f"inference at batch size {batch_size} failed: {_first_line(exc)}"
        if self.relaxed_batch:
            msg = (f"the graph has a fixed batch dimension of {self.model.fixed_batch} and does "
                   f"not allow batch size {batch_size} ({msg}); measure batch size "
                   f"{self.model.fixed_batch} only, or export the model with a symbolic batch "
                   "dimension")
        return msg

    def info(self) -> dict[str, Any]:
        """Providers, optimization level and thread settings applied to the session."""
        return {
            "providers": self.session.get_providers() if self.session else [],
            "graph_optimization_level": "ORT_ENABLE_ALL",
            "execution_mode": "ORT_SEQUENTIAL",
            "intra_op_num_threads": int(self.threads),
            "inter_op_num_threads": 1,
            "batch_dim_made_symbolic": self.relaxed_batch,
        }


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())[:500]
