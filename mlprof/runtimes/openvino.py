"""OpenVINO (CPU plugin) on ONNX models."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.model import read_model_file
from mlprof.model.onnx_graph import ResolvedModel, resolve
from mlprof.runtimes.base import (
    Compiled,
    OpEvent,
    OpProfiler,
    Runtime,
    compile_cache_enabled,
    import_openvino,
)

try:
    ov = import_openvino()
except ImportError:  # the optional extra is not installed: one clear line
    raise MLProfError("the openvino runtime needs OpenVINO: pip install -e '.[openvino]' (or "
                      "source setup.sh with the default MLP_EXTRAS)", field="--runtime") from None

_DEVICES = {"cpu": "CPU"}
#: the properties read back from the compiled model for the provenance
_REPORTED = ("INFERENCE_NUM_THREADS", "PERFORMANCE_HINT", "NUM_STREAMS",
             "INFERENCE_PRECISION_HINT", "ENABLE_CPU_PINNING", "ENABLE_HYPER_THREADING",
             "SCHEDULING_CORE_TYPE", "EXECUTION_MODE_HINT")


class OpenVinoRuntime(Runtime):
    """An OpenVINO compiled model on the CPU plugin, reshaped to each batch size (static shapes).

    ``threads`` sets ``INFERENCE_NUM_THREADS`` (0: OpenVINO's default); the performance hint is
    ``LATENCY`` with one stream, and the inference precision is fp32 (the CPU plugin would
    otherwise pick bf16 on CPUs that have it, computing another function than ONNX Runtime).
    Each event gets its own infer request with its input tensors set beforehand (sharing the
    numpy memory), so the timed call is ``request.infer()``, which returns the outputs copied
    into numpy arrays, as ``session.run`` does.
    """

    model: ResolvedModel

    @classmethod
    def resolve(cls, model_file: str, script_args: tuple[str, ...] = ()) -> ResolvedModel:
        """Read the model file and check it against its ONNX graph."""

        spec = read_model_file(model_file)
        if spec.model_kind != "onnx":
            raise MLProfError(f"{cls.name} measures ONNX models (model scripts through their "
                              "export)", spec.spec_file, "--runtime")
        return resolve(spec)

    def __init__(self, model: ResolvedModel, *, device: str = "cpu", threads: int = 1) -> None:
        super().__init__(model, device=device, threads=threads)
        self.compiled: Any = None
        self.config: dict[str, Any] = {}
        self._keep: list[tuple[Any, dict]] = []
        self.precision_hint = "f32"
        self._profiling = False
        self.cache_dir: str | None = None
        self.cache_refused: str | None = None

    def op_profiler(self) -> OpProfiler:
        """The CPU plugin's performance counters (``PERF_COUNT``): per node of the compiled
        graph its type, kernel and time, of each infer request's last call
        (:class:`_OvProfiler`)."""
        self._profiling = True
        return _OvProfiler(self)

    def configure(self, settings: Any) -> None:
        """bf16 is OpenVINO's inference precision hint (the CPU plugin computes in bf16 where
        the CPU has the instructions; mlprof refuses it up front where not); every other
        precision computes as its graph says, with the hint at f32 (a converted fp16 graph's
        weights are decompressed to f32, its int8 QDQ/integer operators run as int8)."""
        self.precision_hint = "bf16" if settings.precision == "bf16" else "f32"

    def load(self, batch_size: int) -> None:
        """Read the ONNX file, fix the batch dimension to ``batch_size`` and compile."""
        core = ov.Core()
        try:
            model = core.read_model(self.model.spec.file)
            shapes = {i.name: list(i.full_shape(batch_size)) for i in self.model.inputs}
            model.reshape({p.get_any_name(): shapes[p.get_any_name()] for p in model.inputs
                           if p.get_any_name() in shapes})
        except Exception as e:
            raise MLProfError(f"openvino cannot read the model at batch size {batch_size}: "
                              f"{_first_line(e)}", self.model.spec.file) from None
        config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
                                  "INFERENCE_PRECISION_HINT": self.precision_hint}
        if int(self.threads) > 0:
            config["INFERENCE_NUM_THREADS"] = int(self.threads)
        if self._profiling:
            config["PERF_COUNT"] = True
        self.config = config
        cache_dir = None
        if compile_cache_enabled():
            from mlprof.results import layout

            spec = self.model.spec
            directory = layout.compile_cache_dir(
                spec.name, spec.content_hash, self.name, self.version(),
                f"{self.precision_hint}_threads{int(self.threads)}")
            # a link on the way or an unwritable directory: compiled without the store's cache
            self.cache_refused = layout.compile_cache_problem(directory)
            if self.cache_refused is None:
                cache_dir = directory
                core.set_property({"CACHE_DIR": cache_dir})
        blobs = _blobs(cache_dir)
        t0 = time.perf_counter()
        try:
            self.compiled = core.compile_model(model, _DEVICES[self.device], config)
        except Exception as e:
            raise MLProfError(f"openvino cannot compile the model: {_first_line(e)}",
                              self.model.spec.file) from None
        seconds = time.perf_counter() - t0
        new = len(_blobs(cache_dir) - blobs)
        self.cache_dir = cache_dir
        self.compile_record = Compiled(
            seconds, "none" if cache_dir is None else ("miss" if new else "hit"),
            {"blobs_written": new})
        wanted = self.model.outputs
        names = [o.get_any_name() for o in self.compiled.outputs]
        self._outputs = names if not wanted else [n for n in names if n in wanted]

    def bind(self, feed: dict[str, np.ndarray]) -> tuple[Callable[..., Any], tuple]:
        """``request.infer()`` on a request whose inputs are set (shared, not copied)."""
        assert self.compiled is not None, "load() first"
        request = self.compiled.create_infer_request()
        for name, array in feed.items():
            request.set_tensor(name, ov.Tensor(np.ascontiguousarray(array), shared_memory=True))
        self._keep.append((request, feed))  # the arrays outlive the request sharing them
        return request.infer, ()

    def explain_failure(self, exc: BaseException, batch_size: int) -> str:
        """A message for a failed first inference."""
        return f"inference at batch size {batch_size} failed: {_first_line(exc)}"

    def info(self) -> dict[str, Any]:
        """The properties requested and those the compiled model reports."""
        applied = {}
        for prop in _REPORTED:
            try:
                value = self.compiled.get_property(prop)
            except Exception:  # not supported by this plugin/version
                continue
            # ov.Type -> "f32", enums -> their name
            value = value.to_string() if hasattr(value, "to_string") else getattr(
                value, "name", value)
            applied[prop] = str(value)
        return {"device": _DEVICES[self.device], "requested": {k: str(v) for k, v in
                                                                self.config.items()},
                "applied": applied, "static_batch": True, "call": "InferRequest.infer()",
                "compile": {"cache_dir": self.cache_dir, "cache_refused": self.cache_refused,
                            "compile_time_is": "compile_s",
                            **({"cache": self.compile_record.cache,
                                "counters": self.compile_record.counters}
                               if self.compile_record is not None else {})}}


#: the kernel precisions named beside an operator type (``Convolution (i8)``): the same
#: operator computing in int8 or bf16 is another kernel, with another time
_KERNEL_PRECISIONS = ("i8", "u8", "bf16", "f16", "i32")


def _op_type(node_type: str, exec_type: str) -> str:
    """``Convolution`` for an fp32 kernel (``brgconv_avx2_f32``), ``Convolution (i8)`` for an
    int8 one (``brgconv_avx2_I8``)."""
    precision = exec_type.rsplit("_", 1)[-1].lower() if "_" in exec_type else ""
    return f"{node_type} ({precision})" if precision in _KERNEL_PRECISIONS else node_type


class _OvProfiler(OpProfiler):
    """OpenVINO's performance counters keep each infer request's *last* call only (node type,
    kernel, ``real_time`` in whole microseconds): :meth:`stop` reads them from every request
    and repeats each request's operators for its share of the ``n_calls`` profiled calls (the
    calls after the warm-up run the same kernels; their spread is in the wall times, not
    here). Nodes the plugin fused away or did not run (``NOT_RUN``) have no time, and neither
    has a node whose kernel took under a microsecond: the CPU plugin reports a node whose
    average is 0 whole microseconds as ``NOT_RUN`` (``avg_time > 0 ? EXECUTED : NOT_RUN`` in
    its graph's performance map), so such an operator is missing from the profile. The example
    CNN's second FullyConnected at batch size 64 (10 outputs) took 1 us on an AVX2 host and
    under 1 us on an AVX-512 one (2026-12-01), where the profile has one FullyConnected per
    call. There is no
    span of the call itself, so no :data:`~mlprof.runtimes.base.RUNTIME_OVERHEAD` row: the
    profile's coverage is the operators'. Measured on the example CNN (1 thread, 100 calls):
    at batch size 1 a profiled call took 0.24 ms of which 0.056 ms in kernels (coverage 0.23;
    an unprofiled call 0.11 ms: the counters cost more than the kernels), at 64 1.89 ms with
    1.73 ms in kernels (0.91). Compare operator times between profiles, not with the timed
    calls."""

    def __init__(self, rt: OpenVinoRuntime) -> None:
        self.rt = rt

    def stop(self, n_calls: int) -> list[OpEvent]:
        requests = [request for request, _ in self.rt._keep]
        if not requests or n_calls <= 0:
            return []
        per_request = []
        for request in requests:
            ops = []
            for info in request.get_profiling_info():
                ms = info.real_time.total_seconds() * 1e3
                if ms > 0 and info.status.name == "EXECUTED":
                    ops.append((_op_type(str(info.node_type), str(info.exec_type)), ms))
            per_request.append(ops)
        out: list[OpEvent] = []
        for i in range(n_calls):  # the harness calls each request n_calls times in turn
            out.extend((op, ms, i) for op, ms in per_request[(i * len(per_request)) // n_calls])
        return out


def _blobs(directory: str | None) -> set[str]:
    """The compiled blobs in OpenVINO's ``CACHE_DIR`` (``<hash>.blob``): a compile that wrote a
    new one compiled, one that wrote none read it from there."""
    if directory is None or not os.path.isdir(directory):
        return set()
    return {n for n in os.listdir(directory) if n.endswith(".blob")}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())[:500]
