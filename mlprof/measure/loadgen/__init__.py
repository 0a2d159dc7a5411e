"""How much one node delivers: concurrent streams, and a server with random arrivals (no law).

Two scenarios, MLPerf's names in brackets:

* **streams** (MultiStream, as a CMSSW job with N streams): ``streams`` callers at once, each
  calling the model back to back at one batch size and timing each call; threads of one
  process, each with its own session (``sessions="each"``) or all sharing one
  (``"shared"``, CMSSW's way: one ONNX Runtime session per job), or processes, each with its
  own session (``"process"``). Every runtime mlprof measures releases the GIL inside its
  call (ONNX Runtime, OpenVINO, PyTorch, TensorFlow), so threads' calls overlap; what they
  cannot overlap is the Python around each call, and each hand-over of the GIL wakes a
  sleeping thread. For the example DNN (17 us calls on this 2-core VM) 2 threads delivered
  41,000 events/s against one thread's 53,000; processes have no GIL between them, as
  CMSSW's streams (C++ threads) have none.
  Throughput is the sum of each stream's calls over its own timed span (no tail is counted
  twice), the CPU time is the process's (every thread's) over the timed window.

* **server** (Server): requests of one batch-size-``b`` input arrive at Poisson times at a
  target rate (open loop: an arrival never waits for an answer). ``workers`` instances take
  them from one queue; with ``max_batch`` > 1 a worker waits up to ``max_wait_ms`` after the
  oldest queued request for more and runs them as one call (TF Serving's and Triton's dynamic
  batching), padded to the next allowed size (powers of two up to ``max_batch``, and
  ``max_batch``: each is its own session, loaded before the clock starts).
  A request's latency runs from its *scheduled* arrival, never from when it was picked up (no
  coordinated omission). The arrival times are drawn before the run, so there is no generator
  thread: the worker forming a batch sleeps until the next due time, and how late it wakes is
  recorded as the generator's lateness (``lateness_us``).

  A point's verdict follows MLPerf LoadGen's early-stopping idea: with ``n`` requests of which
  ``k`` took longer than the bound, the percentile is *met* when ``P(Bin(n, q) <= k) <= 1 -
  confidence`` (``q = 1 - percentile/100``), *missed* when ``P(Bin(n, q) >= k) <= 1 -
  confidence``, else *undecided* (counted as not met). At p99 and 99 % confidence a point
  needs at least 459 requests to be met at all (:func:`min_requests`). :func:`search` looks for
  the highest rate that is met, doubling up and halving down to bracket it, then bisecting on
  a log scale to ``tolerance``; the points inside the bracket plan :data:`DECISIVE_FACTOR`
  times as many requests, since a server's overs come in clumps.

Why not MLCommons LoadGen itself: LoadGen issues each query from its own C++ thread into a
Python callback, so a Python server pays the GIL hand-over per query on top of LoadGen's own
cost; with arrival times drawn in advance the worker that would pick the query up is the one
that waits for it, which removes a thread and a hand-over per request. The lateness of that
wake-up is measured and written with every point.

:func:`~mlprof.measure.loadgen.run.measure_load_isolated` runs a point (or a search) in a
child process under the machine-wide measurement lock, as the harness does; the lock covers
the whole point.

The modules, as MLPerf LoadGen splits it: :mod:`~mlprof.measure.loadgen.settings` (names,
limits, checks), :mod:`~mlprof.measure.loadgen.verdict`, :mod:`~mlprof.measure.loadgen.session`
(the model side), :mod:`~mlprof.measure.loadgen.streams`, :mod:`~mlprof.measure.loadgen.server`,
:mod:`~mlprof.measure.loadgen.search`, :mod:`~mlprof.measure.loadgen.record` (the result and its
files) and :mod:`~mlprof.measure.loadgen.run` (a branch in a child process). The names below are
re-exported here.
"""

from mlprof.measure.loadgen.record import LoadResult, read_load, write_load
from mlprof.measure.loadgen.run import measure_load_isolated
from mlprof.measure.loadgen.search import search
from mlprof.measure.loadgen.server import arrivals, measure_server, serve
from mlprof.measure.loadgen.session import latency_summary
from mlprof.measure.loadgen.settings import (
    DECISIVE_FACTOR,
    MAX_POINTS,
    SERVER_COLUMNS,
    STREAM_COLUMNS,
    TOLERANCE,
    LoadSettings,
    allowed_batches,
    check_batching,
    check_bound,
    check_percentile,
    check_rates,
    check_streams,
)
from mlprof.measure.loadgen.streams import measure_streams, run_stream_processes, run_streams
from mlprof.measure.loadgen.verdict import binom_cdf, min_requests, verdict

__all__ = [
    "DECISIVE_FACTOR", "MAX_POINTS", "SERVER_COLUMNS", "STREAM_COLUMNS", "TOLERANCE", "LoadResult",
    "LoadSettings", "allowed_batches", "arrivals", "binom_cdf", "check_batching", "check_bound",
    "check_percentile", "check_rates", "check_streams", "latency_summary", "measure_load_isolated",
    "measure_server", "measure_streams", "min_requests", "read_load", "run_stream_processes",
    "run_streams", "search", "serve", "verdict", "write_load",
]
