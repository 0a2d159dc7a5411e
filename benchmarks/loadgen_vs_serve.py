"""MLCommons LoadGen against mlprof's own server loop, on the same model and arrivals rate.

Issue 25 asks to issue queries with LoadGen (``mlcommons-loadgen``) where it fits, and to say
why with a measurement where it does not. This runs both on the example DNN (ONNX Runtime, 1
thread, batch 1), one worker, at each ``--rates`` rate for ``--requests`` requests:

- **mlprof**: :func:`mlprof.measure.loadgen.server.serve` with the arrivals MeasureLoad draws
  (:func:`mlprof.measure.loadgen.server.arrivals`, exact at the count);
- **LoadGen inline**: LoadGen's Server scenario, whose issuing thread calls the model in its
  ``issue_queries`` callback and completes the query there: the cheapest Python SUT there is;
- **LoadGen hand-over**: the callback puts the query on a queue that a worker thread serves,
  as a SUT with a worker pool (or dynamic batching) must.

It prints each one's p50 and p99 latency (LoadGen's from its summary, counted like mlprof's
from the scheduled arrival) and LoadGen's scheduled and completed rates. LoadGen is not a
dependency of mlprof; install it to run this (``pip install mlcommons-loadgen``).

    python benchmarks/loadgen_vs_serve.py [--rates 2000,10000,20000] [--requests 20000]
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import sys
import tempfile
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mlprof.measure.loadgen import arrivals, serve  # noqa: E402

ONNX = os.path.join(os.path.dirname(__file__), "..", "examples", "dnn",
                    "model_onnx_l10u128.onnx")


def session_call(path: str):
    """A bound call of the model at batch 1 with one intra-op thread."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    shape = [1 if not isinstance(d, int) else d for d in inp.shape]
    feed = {inp.name: np.random.default_rng(0).random(shape, dtype=np.float32)}
    for _ in range(100):
        sess.run(None, feed)
    return lambda: sess.run(None, feed)


def run_mlprof(call, rate: float, n: int) -> dict:
    """p50/p99 (ms) of mlprof's loop serving ``n`` requests at ``rate``."""
    arr = arrivals(rate, n, seed=0, exact=(n,))
    served = serve([{1: (call, ())}], arr, 1, 0.0)
    lat = (served.end - arr) / 1e6
    late = np.asarray(served.lateness) / 1e3
    return {"p50": float(np.percentile(lat, 50)), "p99": float(np.percentile(lat, 99)),
            "late_p99_us": float(np.percentile(late, 99))}


def run_loadgen(call, rate: float, n: int, handover: bool) -> dict:
    """p50/p99 (ms) and rates of LoadGen's Server scenario at ``rate`` for ``n`` queries."""
    import mlperf_loadgen as lg

    work: queue.Queue = queue.Queue()

    def worker() -> None:
        while True:
            q = work.get()
            if q is None:
                return
            call()
            lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, 0, 0)])

    def issue(samples) -> None:
        for q in samples:
            if handover:
                work.put(q)
            else:
                call()
                lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, 0, 0)])

    th = threading.Thread(target=worker, daemon=True)
    if handover:
        th.start()
    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(1024, 1024, lambda s: None, lambda s: None)
    settings = lg.TestSettings()
    settings.scenario = lg.TestScenario.Server
    settings.mode = lg.TestMode.PerformanceOnly
    settings.server_target_qps = rate
    settings.server_target_latency_ns = 10**9  # never the limit: we read the percentiles
    settings.min_query_count = n
    settings.max_query_count = n
    settings.min_duration_ms = 0
    with tempfile.TemporaryDirectory() as out:
        log = lg.LogSettings()
        log.log_output.outdir = out
        log.log_output.copy_summary_to_stdout = False
        lg.StartTestWithLogSettings(sut, qsl, settings, log)
        with open(os.path.join(out, "mlperf_log_summary.txt")) as f:
            text = f.read()
    if handover:
        work.put(None)
        th.join()
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)

    def field(name: str) -> float:
        m = re.search(rf"^{re.escape(name)}\s*:\s*([0-9.e+]+)", text, re.M)
        return float(m.group(1)) if m else float("nan")

    return {"p50": field("50.00 percentile latency (ns)") / 1e6,
            "p99": field("99.00 percentile latency (ns)") / 1e6,
            "scheduled": field("Scheduled samples per second"),
            "completed": field("Completed samples per second")}


def main() -> None:
    """Run the three servers at each rate and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="2000,10000,20000")
    ap.add_argument("--requests", type=int, default=20000)
    args = ap.parse_args()
    try:
        import mlperf_loadgen as lg
    except ImportError:
        sys.exit("needs MLCommons LoadGen: pip install mlcommons-loadgen")
    from importlib.metadata import PackageNotFoundError, version

    try:
        lg_version = version("mlcommons-loadgen")
    except PackageNotFoundError:
        lg_version = "?"
    print(f"LoadGen {lg_version} ({lg.__name__}); example DNN, 1 thread, batch 1, "
          f"{args.requests:,} requests per run")
    call = session_call(ONNX)
    print(f"{'rate/s':>8}  {'server':<18} {'p50 ms':>8} {'p99 ms':>8}  notes")
    for rate in (float(r) for r in args.rates.split(",")):
        m = run_mlprof(call, rate, args.requests)
        print(f"{rate:8,.0f}  {'mlprof':<18} {m['p50']:8.4f} {m['p99']:8.4f}  "
              f"generator late p99 {m['late_p99_us']:.1f} us", flush=True)
        for handover in (False, True):
            r = run_loadgen(call, rate, args.requests, handover)
            name = "LoadGen hand-over" if handover else "LoadGen inline"
            print(f"{rate:8,.0f}  {name:<18} {r['p50']:8.4f} {r['p99']:8.4f}  scheduled "
                  f"{r['scheduled']:,.0f}/s, completed {r['completed']:,.0f}/s", flush=True)


if __name__ == "__main__":
    main()
