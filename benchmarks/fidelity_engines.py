"""Fidelity for the TensorFlow and OpenVINO runtimes: mlprof's harness against a bare loop.

The method is :mod:`fidelity`'s (interleaved rounds, the bare child started before either side
is timed, the median of the per-round ratios), with the bare loop of the engine instead of ONNX
Runtime's:

- **tensorflow**: the frozen graph imported into a ``tf.compat.v1.Session`` (1 intra-op and 1
  inter-op thread) and ``session.make_callable([output], feed_list=[input])`` called with the
  input array and ``RunOptions(inter_op_thread_pool=-1)`` (in the calling thread, through
  ``functools.partial``): the call mlprof's ``tensorflow`` runtime times;
- **openvino**: OpenVINO imported as mlprof imports it, without its telemetry (whose thread
  would send an event while the loop starts: :func:`mlprof.runtimes.base.import_openvino`);
  the ONNX model read by ``ov.Core``, reshaped to the batch size, compiled for the
  CPU with the latency hint, one stream, fp32 and 1 inference thread, and ``request.infer()`` on
  an infer request whose input tensor shares the numpy input: the call mlprof's ``openvino``
  runtime times.

Usage (after ``source setup.sh``)::

    python benchmarks/fidelity_engines.py [--engines tensorflow,openvino] [--rounds 15] \
        [--calls 2000] [--warmup 100] [--batch-sizes 1,64]

Prints one ``ratio <engine> bs=N: X`` line per engine and batch size (target: <= 1.02). This
is a benchmark, not a test: it exits 0 whatever the ratios are.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402
from fidelity import BASE, Fidelity, Side  # noqa: E402

MODELS = {
    "tensorflow": os.path.join(BASE, "examples", "dnn", "model_tf_l10u128.yaml"),
    "openvino": os.path.join(BASE, "examples", "dnn", "model_onnx_l10u128.yaml"),
}

#: argv: model_file batch_size warmup calls seed input_name output_name shape (comma-separated)
_COMMON_HEAD = r"""
import json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
model, bs, warmup, calls, seed = sys.argv[1], *map(int, sys.argv[2:6])
inp, out, shape = sys.argv[6], sys.argv[7], [int(d) for d in sys.argv[8].split(",")]
x = np.random.default_rng(seed).standard_normal([bs, *shape]).astype(np.float32)
"""
_COMMON_TAIL = r"""
print("ready", flush=True)
sys.stdin.readline()
for _ in range(warmup):
    fn(*args)
ns = [0] * calls
pc = time.perf_counter_ns
for k in range(calls):
    a = pc()
    fn(*args)
    ns[k] = pc() - a
print(json.dumps({"median_ns": float(np.median(ns)), "min_ns": min(ns), "n": len(ns)}),
      flush=True)
"""
BARE = {
    "tensorflow": _COMMON_HEAD + r"""
import tensorflow as tf
gd = tf.compat.v1.GraphDef()
with open(model, "rb") as f:
    gd.ParseFromString(f.read())
graph = tf.Graph()
with graph.as_default():
    tf.compat.v1.import_graph_def(gd, name="")
config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                  inter_op_parallelism_threads=1, device_count={"GPU": 0})
sess = tf.compat.v1.Session(graph=graph, config=config)
run = sess.make_callable([graph.get_tensor_by_name(out + ":0")],
                         feed_list=[graph.get_tensor_by_name(inp + ":0")], accept_options=True)
import functools
options = tf.compat.v1.RunOptions(inter_op_thread_pool=-1)  # in the calling thread
fn, args = functools.partial(run, options=options), (x,)
""" + _COMMON_TAIL,
    "openvino": _COMMON_HEAD + r"""
sys.modules.setdefault("openvino_telemetry", None)  # as mlprof imports it: no telemetry thread
import openvino as ov
core = ov.Core()
m = core.read_model(model)
m.reshape({inp: [bs, *shape]})
compiled = core.compile_model(m, "CPU", {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
                                        "INFERENCE_PRECISION_HINT": "f32",
                                        "INFERENCE_NUM_THREADS": 1})
request = compiled.create_infer_request()
request.set_tensor(inp, ov.Tensor(x, shared_memory=True))
fn, args = request.infer, ()
""" + _COMMON_TAIL,
}


class BareChild(fidelity.BareChild):
    """The engine's bare loop in a fresh interpreter: :class:`fidelity.BareChild`'s protocol
    (ready, go, one JSON line) with the engine's loop."""

    def __init__(self, engine: str, model_file: str, batch_size: int, calls: int, warmup: int,
                 seed: int) -> None:
        from mlprof.model import read_model_file

        spec = read_model_file(model_file)
        (i,) = spec.inputs
        (o,) = spec.outputs
        self.cmd = [sys.executable, "-c", BARE[engine], spec.file, str(batch_size), str(warmup),
                    str(calls), str(seed), i.name.split(":")[0], o.split(":")[0],
                    ",".join(map(str, i.shape))]
        self.proc: subprocess.Popen[str] | None = None


def run_mlprof(engine: str, model_file: str, batch_size: int, calls: int, warmup: int,
               seed: int) -> Side:
    """mlprof's harness in a forkserver child, as ``MeasureRuntime`` runs it: the rounds share
    one measurement process where the runtime allows it (``reuse``, :attr:`RuntimeInfo
    .reuses_process <mlprof.runtimes.RuntimeInfo.reuses_process>`; ``MLP_FRESH_PROCESS=1``: a
    new one for each)."""
    import numpy as np

    from mlprof.measure import MeasureSettings, measure_isolated

    settings = MeasureSettings(batch_size=batch_size, runtime=engine, n_calls=calls,
                               warmup=warmup, min_duration=0, seed=seed)
    samples = measure_isolated(model_file, settings, reuse=True).samples_ns
    return Side(float(np.median(samples)) / 1e6, float(samples.min()) / 1e6)


def measure(engine: str, batch_size: int, rounds: int, calls: int, warmup: int,
            seed: int) -> Fidelity:
    """Interleaved bare/mlprof rounds for one engine and batch size."""
    model = MODELS[engine]
    res = Fidelity(batch_size)
    for r in range(rounds):
        bare_first = r % 2 == 0
        child = BareChild(engine, model, batch_size, calls, warmup, seed).start()
        try:
            if bare_first:
                res.bare.append(child.go())
                res.mlprof.append(run_mlprof(engine, model, batch_size, calls, warmup, seed))
            else:
                res.mlprof.append(run_mlprof(engine, model, batch_size, calls, warmup, seed))
                res.bare.append(child.go())
        finally:
            child.close()
        b, m = res.bare[-1].median_ms, res.mlprof[-1].median_ms
        print(f"{engine} bs={batch_size} round {r + 1}/{rounds}: bare {b:.4f} ms, mlprof "
              f"{m:.4f} ms, round ratio {m / b:.3f}", flush=True)
    print(f"{engine} bs={batch_size} summary: median bare "
          f"{statistics.median(b.median_ms for b in res.bare):.4f} ms, median mlprof "
          f"{statistics.median(m.median_ms for m in res.mlprof):.4f} ms; medians "
          f"{res.ratio('medians'):.3f}, paired {res.ratio('paired'):.3f}, fastest call "
          f"{res.fastest_call_ratio():.3f}", flush=True)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="tensorflow,openvino")
    ap.add_argument("--batch-sizes", default="1,64")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = sorted(set(engines) - set(MODELS))
    if unknown:
        ap.error(f"--engines: unknown {unknown}; known: {', '.join(MODELS)}")
    sizes = [int(b) for b in args.batch_sizes.split(",") if b.strip()]
    start = time.monotonic()
    results = {(e, bs): measure(e, bs, args.rounds, args.calls, args.warmup, args.seed)
               for e in engines for bs in sizes}
    for (e, bs), res in results.items():
        print(f"ratio {e} bs={bs}: {res.ratio('paired'):.3f}")
    print(f"({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
