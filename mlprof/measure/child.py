"""Imported once by the measurement forkserver so that every child starts with these loaded.

Importing creates no session and no thread pool; that happens in each child.
"""

import atexit
import os

import numpy  # noqa: F401
import numpy.random  # noqa: F401  (imported lazily by numpy otherwise)
import onnx  # noqa: F401
import onnx.defs
import onnxruntime  # noqa: F401
import yaml  # noqa: F401

import mlprof.measure.harness  # noqa: F401
import mlprof.measure.inputs  # noqa: F401
import mlprof.measure.quiet
import mlprof.model.onnx_graph  # noqa: F401
import mlprof.runtimes.onnxruntime  # noqa: F401
import mlprof.util

# resolved once here, inherited by every child (saves two git calls per measurement)
mlprof.util.git_commit()
# torch's known harmless lines are dropped in every child (the C++ loggers' levels are in the
# server's environment, see mlprof.measure.isolate._context)
mlprof.measure.quiet.quiet_torch_logs()
# onnx builds its operator-schema registry on first use (by the checker): do it once here
onnx.defs.get_schema("Relu")


# the server itself (not its children, which leave through os._exit) skips interpreter teardown:
# with torch loaded it took ~1 s, holding law's stdout open after law had exited
_server_pid = os.getpid()
atexit.register(lambda: os.getpid() == _server_pid and os._exit(0))
