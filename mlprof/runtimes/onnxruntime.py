"""ONNX Runtime (CPU execution provider)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from typing import Any

import numpy as np
import onnxruntime as ort

from mlprof.errors import MLProfError
from mlprof.model import read_model_file
from mlprof.model.onnx_graph import ResolvedModel, resolve, with_symbolic_batch
from mlprof.runtimes.base import RUNTIME_OVERHEAD, OpEvent, OpProfiler, Runtime

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
        self._profile_prefix: str | None = None

    def op_profiler(self) -> OpProfiler:
        """Session profiling (``SessionOptions.enable_profiling``): a JSON trace with one event
        per node run, read and deleted at :meth:`_OrtProfiler.stop`."""
        import tempfile

        self._profile_prefix = os.path.join(tempfile.mkdtemp(prefix="mlprof-ort-profile-"), "p")
        return _OrtProfiler(self)

    def load(self, batch_size: int) -> None:
        """Create the session; a fixed batch dimension is made symbolic when needed."""
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.intra_op_num_threads = int(self.threads)
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        if self._profile_prefix:
            so.enable_profiling = True
            so.profile_file_prefix = self._profile_prefix
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


class _OrtProfiler(OpProfiler):
    """ONNX Runtime records from session creation on: :meth:`stop` keeps the node events inside
    the last ``n_calls`` ``model_run`` spans (the profiled calls; first call and warm-up are
    left out), one ``(op_name, dur)`` each (``dur`` is in whole microseconds), and per span a
    :data:`~mlprof.runtimes.base.RUNTIME_OVERHEAD` event: the span minus its nodes' kernel
    times (the executor between and around the kernels, including the profiler's ~3 µs per
    node). Measured (``examples/cnn``, 1 thread, 50 calls): at batch size 1 the calls took
    67.9 µs, ``model_run`` 62.8, the kernels 30.3; at 64, 548.7, 541.9 and 511.8. What the
    profile leaves out is the Python binding around ``model_run`` (~4 µs over thousands of
    calls, 5-6 µs over tens)."""

    def __init__(self, rt: OnnxRuntime) -> None:
        self.rt = rt

    def stop(self, n_calls: int) -> list[OpEvent]:
        import bisect

        assert self.rt.session is not None and self.rt._profile_prefix, "load() first"
        path = self.rt.session.end_profiling()
        try:
            with open(path) as f:
                trace = json.load(f)
        finally:
            shutil.rmtree(os.path.dirname(self.rt._profile_prefix), ignore_errors=True)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                      if e.get("cat") == "Session" and e.get("name") == "model_run")
        if len(runs) < n_calls:  # its buffer holds 1e6 events; the rest is dropped
            raise MLProfError(f"the ONNX Runtime profile holds {len(runs)} of the {n_calls} "
                              "profiled calls (its event buffer is full): profile fewer calls "
                              "(--n-calls, --min-duration)", self.rt.model.spec.file)
        runs = runs[len(runs) - n_calls:] if n_calls else []
        starts = [r[0] for r in runs]
        inside = [0.0] * len(runs)
        out: list[OpEvent] = []
        for e in events:
            if e.get("cat") != "Node" or not str(e.get("name", "")).endswith("_kernel_time"):
                continue
            i = bisect.bisect_right(starts, e["ts"]) - 1
            if i < 0 or e["ts"] > runs[i][1]:
                continue  # the first call's and the warm-up's, or outside any call
            inside[i] += e["dur"]
            out.append((str(e["args"]["op_name"]), e["dur"] / 1e3, i))
        out.extend((RUNTIME_OVERHEAD, max(end - start - k, 0) / 1e3, i)
                   for i, ((start, end), k) in enumerate(zip(runs, inside, strict=True)))
        return out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())[:500]
