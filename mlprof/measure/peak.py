"""The machine's sustained compute peak on a runtime: a calibrated GEMM microbenchmark.

What fraction of the possible a model reaches needs the possible measured the same way as the
model: on the same runtime, with the same thread count, in the same isolated child process under
the machine-wide measurement lock. For ONNX Runtime the benchmark is a one-node ``MatMul`` graph
``[n, n] x [n, n]`` (the second operand an initializer, as a dense layer's weights) built in
memory for each of :data:`SIZES`; the peak is the best size's median GFLOP/s.

Calibration: a repetition makes enough calls to last :data:`TARGET_S` seconds (from a timed
call after warm-up); repetitions continue until the relative spread (p16-p84 over the median)
of the last :data:`MIN_REPEATS` is below :data:`STABLE_SPREAD`, at most :data:`MAX_REPEATS`.
The record keeps every repetition's GFLOP/s, so the peak's own spread is known. On the 2-core
development machine (one thread, AVX-512) the sizes reached 238, 244 and 238 GFLOP/s (peak
n=512, spread 1.5 %, 6-13 repetitions per size, a few seconds in all): about the 64 FLOP per
cycle of two 16-wide FMA units at 3.8 GHz, i.e. the compute limit of one core.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.isolate import run_isolated
from mlprof.measure.lock import measurement_lock
from mlprof.measure.sysinfo import system_info
from mlprof.runtimes import peak_runtimes
from mlprof.version import __version__

#: matrix sizes: small enough to stay in cache (256), large enough to be compute-bound (1024)
SIZES = (256, 512, 1024)
#: seconds per repetition
TARGET_S = 0.12
MIN_REPEATS = 5
MAX_REPEATS = 15
#: (p84 - p16) / median below which the last MIN_REPEATS repetitions count as stable
STABLE_SPREAD = 0.05


def check_peak_runtime(runtime: str, field: str = "--runtime") -> None:
    """One line naming ``field`` when ``runtime`` has no peak microbenchmark."""

    if runtime not in peak_runtimes():
        raise MLProfError(f"the peak microbenchmark exists for {', '.join(peak_runtimes())} only, "
                          f"not {runtime}", field=field)


def matmul_model(n: int) -> bytes:
    """A serialized ONNX graph ``Y = X @ W`` with ``X`` [n, n] an input, ``W`` an initializer."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], f"matmul{n}",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, n])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _spread(values: Sequence[float]) -> float:
    p16, p50, p84 = np.percentile(values, [16, 50, 84])
    return float((p84 - p16) / p50) if p50 > 0 else float("nan")


def _bench_size(n: int, threads: int, target_s: float) -> dict[str, Any]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(matmul_model(n), so, providers=["CPUExecutionProvider"])
    feed = {"X": np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)}
    run = sess.run
    for _ in range(3):
        run(None, feed)
    t0 = time.perf_counter()
    run(None, feed)
    calls = max(1, math.ceil(target_s / max(time.perf_counter() - t0, 1e-9)))
    flop = 2.0 * n ** 3
    gflops: list[float] = []
    while len(gflops) < MAX_REPEATS:
        t0 = time.perf_counter()
        for _ in range(calls):
            run(None, feed)
        gflops.append(flop * calls / (time.perf_counter() - t0) / 1e9)
        if len(gflops) >= MIN_REPEATS and _spread(gflops[-MIN_REPEATS:]) < STABLE_SPREAD:
            break
    last = gflops[-MIN_REPEATS:]
    return {"n": n, "calls_per_repeat": calls, "gflops": [round(g, 3) for g in gflops],
            "median_gflops": float(np.median(last)), "spread": _spread(last),
            "stable": _spread(last) < STABLE_SPREAD}


def measure_peak(runtime: str, threads: int, sizes: Sequence[int] = SIZES,
                 target_s: float = TARGET_S,
                 progress: Callable[[float, str], None] | None = None) -> dict[str, Any]:
    """The GEMM peak of ``runtime`` at ``threads`` in this process (see the module docstring).

    Returns the record: ``peak_gflops`` (the best size's median over its stable repetitions),
    ``spread`` (its p16-p84 range over the median), ``n`` (that size) and ``sizes`` (every
    size's repetitions), with the host, CPU and runtime version.
    """
    check_peak_runtime(runtime)
    import onnxruntime as ort

    results = []
    for i, n in enumerate(sizes):
        if progress is not None:
            progress(i / len(sizes), f"GEMM {n}x{n}x{n}")
        results.append(_bench_size(int(n), threads, target_s))
    best = max(results, key=lambda r: r["median_gflops"])
    return {"peak_gflops": best["median_gflops"], "spread": best["spread"], "n": best["n"],
            "stable": best["stable"], "sizes": results, "runtime": runtime,
            "runtime_version": ort.__version__, "threads": int(threads),
            "benchmark": "onnx MatMul [n,n]x[n,n] fp32, W an initializer",
            "mlprof_version": __version__, "pid": os.getpid(),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **system_info()}


def measure_peak_isolated(runtime: str, threads: int, sizes: Sequence[int] = SIZES,
                          target_s: float = TARGET_S) -> dict[str, Any]:
    """:func:`measure_peak` in an isolated child process under the machine-wide measurement
    lock, as every measurement (``lock_wait_s`` recorded, None with ``MLP_NO_LOCK=1``)."""
    check_peak_runtime(runtime)

    label = f"GEMM peak of {runtime} with {threads} thread(s)"
    with measurement_lock(label) as lock:
        record = run_isolated(measure_peak, {"runtime": runtime, "threads": int(threads),
                                             "sizes": tuple(sizes), "target_s": target_s},
                              label=label)
    record["lock_wait_s"] = lock.wait_s
    return record


def read_peak(path: str) -> dict[str, Any]:
    """A peak record, checked: a JSON object with a finite positive ``peak_gflops``."""
    import json

    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError) as e:
        raise MLProfError(f"cannot read the peak record: {e}", path, "peak_gflops") from None
    peak = record.get("peak_gflops") if isinstance(record, dict) else None
    if isinstance(peak, bool) or not isinstance(peak, (int, float)) or not (
            math.isfinite(peak) and peak > 0):
        raise MLProfError(f"peak_gflops is {peak!r:.40}, expected a positive number", path,
                          "peak_gflops")
    return record
