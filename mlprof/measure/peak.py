"""The machine's sustained compute peak on a runtime: a calibrated GEMM microbenchmark.

What fraction of the possible a model reaches needs the possible measured the same way as the
model: on the same runtime, with the same thread count, in the same isolated child process under
the machine-wide measurement lock. For ONNX Runtime the benchmark is a one-node ``MatMul`` graph
``[n, n] x [n, n]`` (the second operand an initializer, as a dense layer's weights) built in
memory for each of :data:`SIZES`; the peak is the best size's median GFLOP/s.

Calibration: a repetition makes enough calls to last :data:`TARGET_S` seconds (from the
fastest of :data:`SIZING_CALLS` timed calls after a warm-up call); repetitions continue until
the relative spread (p16-p84 over the median) of the last :data:`MIN_REPEATS` is below
:data:`STABLE_SPREAD`, at most :data:`MAX_REPEATS`.
The record keeps every repetition's GFLOP/s, so the peak's own spread is known. On the 2-core
development machine (AMD EPYC, one thread) the sizes reached 68, 73 and 69 GFLOP/s (peak n=512,
spread 3.7 %, 3.5 s in all, load 0.3); an AVX-512 machine reached 238-244.

Contention: like a model's measurement (:mod:`mlprof.measure.contention`), the record has an
``environment`` record of the whole benchmark's window; a peak measured while other processes
used more than half a core (``contended``) is measured again, at most :data:`ATTEMPTS` times in
all; when every attempt was contended, the highest is kept and the record says ``contended``
(every attempt's peak and neighbours' load is in ``attempts``).

The GEMM peak is not a bound on what a model can reach: here the 10x128 DNN's Gemm nodes ran at
~100 GFLOP/s at batch size 512, above this MatMul's 73 (another kernel, a cache-sized weight
matrix). So the peak an efficiency plot divides by is never below the best rate a measurement
achieved (:func:`peak_in_use`): a fraction above 1 cannot be drawn, and the plot names what set
the peak.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.measure.isolate import run_isolated
from mlprof.measure.lock import measurement_lock
from mlprof.runtimes import peak_runtimes

#: matrix sizes: small enough to stay in cache (256), large enough to be compute-bound (1024)
SIZES = (256, 512, 1024)
#: seconds per repetition
TARGET_S = 0.12
#: timed calls after the first, the fastest of which sizes a repetition
SIZING_CALLS = 3
MIN_REPEATS = 5
MAX_REPEATS = 15
#: (p84 - p16) / median below which the last MIN_REPEATS repetitions count as stable
STABLE_SPREAD = 0.05
#: measurements of the peak at most, while each one is contended (then the highest is kept)
ATTEMPTS = 3
#: seconds to wait before measuring a contended peak again (a neighbour's burst may pass)
RETRY_WAIT_S = 2.0


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
    run(None, feed)
    timed = []
    for _ in range(SIZING_CALLS):
        t0 = time.perf_counter()
        run(None, feed)
        timed.append(time.perf_counter() - t0)
    # the fastest: one call stalled (hundreds of ms on a shared machine) sized repetitions of a
    # few calls, a window too short to be judged (0.088 s in one CI run with 2 CPU burners)
    calls = max(1, math.ceil(target_s / max(min(timed), 1e-9)))
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

    from mlprof.measure.contention import environment, snapshot
    from mlprof.measure.provenance import measurement_header
    from mlprof.progress import Progress

    results = []
    start = snapshot()
    with Progress(progress) as rep:  # a size that repeats long on a busy machine still speaks
        for i, n in enumerate(sizes):
            rep.phase(f"GEMM {n}x{n}x{n} (size {i + 1} of {len(sizes)})", i / len(sizes))
            results.append(_bench_size(int(n), threads, target_s))
    env = environment(start, snapshot())
    best = max(results, key=lambda r: r["median_gflops"])
    header = measurement_header(
        runtime=runtime, runtime_version=ort.__version__, threads=int(threads),
        environment=env, timestamp=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    return {"peak_gflops": best["median_gflops"], "spread": best["spread"], "n": best["n"],
            "stable": best["stable"], "sizes": results,
            "contended": env.get("contended") is True,
            "benchmark": "onnx MatMul [n,n]x[n,n] fp32, W an initializer",
            **header.to_json()}


def measure_peak_isolated(runtime: str, threads: int, sizes: Sequence[int] = SIZES,
                          target_s: float = TARGET_S, attempts: int = ATTEMPTS,
                          retry_wait_s: float = RETRY_WAIT_S) -> dict[str, Any]:
    """:func:`measure_peak` in an isolated child process under the machine-wide measurement
    lock, as every measurement (``lock_wait_s`` recorded, None with ``MLP_NO_LOCK=1``), measured
    again while contended, at most ``attempts`` times (see :func:`choose_attempt`).

    Why again: a neighbour takes a share of the core the GEMM runs on, so a contended peak is
    too low and every efficiency divided by it too high."""
    check_peak_runtime(runtime)

    label = f"GEMM peak of {runtime} with {threads} thread(s)"
    records: list[dict[str, Any]] = []
    for i in range(max(1, int(attempts))):
        if i:
            time.sleep(retry_wait_s)
        with measurement_lock(label) as lock:
            record = run_isolated(measure_peak, {"runtime": runtime, "threads": int(threads),
                                                 "sizes": tuple(sizes), "target_s": target_s},
                                  label=label)
        record["lock_wait_s"] = lock.wait_s
        records.append(record)
        if not record.get("contended"):
            break
    return choose_attempt(records)


def choose_attempt(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The peak record to keep of several attempts: the first uncontended one, else (every one
    contended) the highest, flagged ``contended``; ``attempts`` lists each attempt's peak and
    the CPU cores other processes used meanwhile."""
    if not records:
        raise ValueError("no attempt to choose from")
    quiet = [r for r in records if not r.get("contended")]
    chosen = dict(quiet[0] if quiet else max(records, key=lambda r: r["peak_gflops"]))
    chosen["contended"] = not quiet
    chosen["attempts"] = [{"peak_gflops": r["peak_gflops"], "contended": bool(r.get("contended")),
                           "other_cpu_cores": (r.get("environment") or {}).get(
                               "other_cpu_cores")} for r in records]
    return chosen


def read_peak(path: str) -> dict[str, Any]:
    """A peak record, checked: a JSON object with a finite positive ``peak_gflops``."""
    try:  # through mlprof.ingest: a FIFO or a device there is one line, never a hang
        record = ingest.load_json(path)
    except MLProfError as e:
        raise MLProfError(f"cannot read the peak record: {e.message}", path,
                          "peak_gflops") from None
    peak = record.get("peak_gflops") if isinstance(record, dict) else None
    if isinstance(peak, bool) or not isinstance(peak, (int, float)) or not (
            math.isfinite(peak) and peak > 0):
        raise MLProfError(f"peak_gflops is {peak!r:.40}, expected a positive number", path,
                          "peak_gflops")
    from mlprof.results.records import PeakRecord

    PeakRecord.from_json(record, path)  # every other field: type and range
    return record


# --- the peak an efficiency is a fraction of -----------------------------------------------------


@dataclass(frozen=True)
class PeakInUse:
    """The peak an efficiency plot divides by: the measured GEMM peak, raised to the best rate
    a measurement achieved when that is higher (``source`` says which set it)."""

    #: GFLOP/s divided by
    gflops: float
    #: the GEMM microbenchmark's peak (MeasurePeak)
    measured: float
    #: "measured GEMM peak", or the measurement that set it ("DNN bs 512 (fastest 16 % ...)")
    source: str
    #: the measured peak was measured under contention (after every retry)
    contended: bool = False

    @property
    def from_measurement(self) -> bool:
        """Whether a model's measurement, not the GEMM benchmark, set the peak."""
        return self.gflops > self.measured

    def note(self) -> str:
        """One line for the plot's caption: the peak, what set it, the measured peak."""
        measured = f"measured GEMM peak {self.measured:.3g} GFLOP/s" + (
            " (contended)" if self.contended else "")
        if not self.from_measurement:
            return f"peak {self.gflops:.3g} GFLOP/s: the {measured}"
        return f"peak {self.gflops:.3g} GFLOP/s: {self.source}, above the {measured}"


#: which latency of a measurement its best rate is taken at: the 16th percentile, the fast end
#: of the efficiency plot's band (every value drawn is then at most 1)
ACHIEVED_AT = "p16_ms"


def achieved_rates(stats: Any, label: str) -> list[tuple[float, str]]:
    """``(GFLOP/s, "<label> bs <N>")`` per batch size of a statistics table: the FLOPs per call
    over the 16th-percentile latency (the fast end of the plotted band; the median where the
    table has no p16). Rows without a FLOP count are left out."""
    col = ACHIEVED_AT if ACHIEVED_AT in stats else "median_ms"
    out = []
    for bs, gflop, ms in zip(stats["batch_size"], stats["gflop_per_call"], stats[col],
                             strict=True):
        gflop, ms = float(gflop), float(ms)
        if math.isfinite(gflop) and gflop > 0 and math.isfinite(ms) and ms > 0:
            out.append((gflop / (ms / 1e3), f"{label} bs {int(bs)}"))
    return out


def peak_in_use(measured: float, achieved: Sequence[tuple[float, str]],
                contended: bool = False) -> PeakInUse:
    """``max(measured, every achieved rate)`` and what set it: a machine that ran a model at
    R GFLOP/s can do R, whatever a GEMM benchmark measured (a contended one, or a kernel slower
    than the model's), so no efficiency divided by this is above 1."""
    best = max(achieved, default=(0.0, ""), key=lambda a: a[0])
    if best[0] > measured:
        return PeakInUse(best[0], measured, f"{best[1]} ({_AT_TEXT})", contended)
    return PeakInUse(measured, measured, "measured GEMM peak", contended)


_AT_TEXT = "its fastest 16 % of calls"


def store_rates(store: str, runtime: str, version: str, threads: int, host: str,
                device: str = "cpu", exclude: Sequence[str] = ()) -> list[tuple[float, str]]:
    """The achieved rates (:func:`achieved_rates`) of every merged measurement in ``store`` on
    ``host`` with ``runtime`` ``version`` and ``threads`` threads, each named by its model and
    ``--version``; statistics files in ``exclude`` (those on the plot) are left out.

    Cheap: one directory listing per model and a small JSON per statistics file of that runtime
    version; what cannot be read is skipped (a store being written, an old record)."""
    import glob

    from mlprof.measure.stats import read_stats_csv
    from mlprof.results import layout

    seg = layout.runtime_segment([(runtime, version)], device)
    pattern = os.path.join(glob.escape(store), "MergeRuntimes", "*", glob.escape(seg), "*", "*",
                           "stats_*.csv")
    skip = {os.path.abspath(p) for p in exclude}
    out: list[tuple[float, str]] = []
    for path in sorted(glob.glob(pattern)):
        if os.path.abspath(path) in skip:
            continue
        try:
            parts = layout.parse_result_path(path, store)
            key = layout.parse_settings_segment(parts.segments["settings"])["measure"]
            if key is None or key.threads != int(threads):
                continue
            prov = path.replace(os.sep + "stats_", os.sep + "provenance_")[:-4] + ".json"
            # through mlprof.ingest: a FIFO or a device in a store is skipped, never a hang
            hosts = {m.get("host") for m in ingest.load_json(prov).get("measurements", [])}
            if hosts != {host}:
                continue
            stats = read_stats_csv(path)
            if "gflop_per_call" not in stats:
                continue
            model = layout.parse_model_segment(parts.segments["model"])["model"]
            out += achieved_rates(stats, f"{model} (--version {parts.version})")
        except (OSError, ValueError, KeyError, TypeError, AttributeError, MLProfError):
            continue
    return out
