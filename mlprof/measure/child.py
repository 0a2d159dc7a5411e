"""Imported once by the measurement forkserver so that every child starts with these loaded.

Importing creates no session and no thread pool; that happens in each child.

Besides the libraries, it loads every module a measurement imports on the way (the cause record,
progress, provenance, ``numpy.ma`` that ``np.median`` pulls in) and fills the caches of what
does not change during a run (the libraries' versions, the machine's description and
fingerprint, the git commit): each child is a fresh fork of this server and lost them when it
exited, so each point paid for them again. Measured on the default 11-point sweep (2 vCPUs,
load ~2): a forked child spent ~140 ms of non-timed work per point (numpy.ma 30 ms, package
metadata 27 ms, the host fingerprint 14 ms, imports), ~15 ms with them done here. The part
that imports no runtime is :mod:`mlprof.measure.child_light` (a server started early loads it
before its gate, :mod:`mlprof.measure.gate`).
"""

import atexit
import gc
import os

import onnxruntime  # noqa: F401

import mlprof.measure.child_light  # noqa: F401  (numpy, onnx, the caches: no runtime)
import mlprof.measure.forkserver
import mlprof.measure.quiet
import mlprof.progress
import mlprof.runtimes.onnxruntime  # noqa: F401

# torch's known harmless lines are dropped in every child (the C++ loggers' levels are in the
# server's environment, see mlprof.measure.forkserver._context)
mlprof.measure.quiet.quiet_torch_logs()
# the main script (``law``, a user's script calling mlprof): once here, not in every child
mlprof.measure.forkserver.import_main()
# the tests' slow server start (a loaded machine's imports), deterministically
mlprof.progress.slow_phase(mlprof.measure.forkserver.SLOW_START)


# the server itself (not its children, which leave through os._exit) skips interpreter teardown:
# with torch loaded it took ~1 s, holding law's stdout open after law had exited
_server_pid = os.getpid()
atexit.register(lambda: os.getpid() == _server_pid and os._exit(0))

# last: everything loaded so far moves to the collector's permanent generation. A child's first
# full collection otherwise walked (and, writing the objects' GC headers, copied page by page
# from the server) every object of numpy, onnx and onnxruntime: 50-100 ms per child here, with
# it frozen 0.5 ms (Python's documented advice for a pre-forking server, gc.freeze)
gc.freeze()
