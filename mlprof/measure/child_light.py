"""The first part of the measurement server's preload: what imports no runtime.

numpy, onnx and PyYAML, mlprof's measurement modules that import no runtime, and the caches
of what does not change during a run (see :mod:`mlprof.measure.child`, which imports this
first). Split off so that a server started early (:func:`mlprof.measure.forkserver.start_early`)
can load it while ``law`` is still starting, before it knows that the command line is good:
nothing here is a runtime (the startup test's list: torch, tensorflow, openvino, onnxruntime,
matplotlib, pandas). Measured here (2 vCPUs, load ~0.6): 0.20-0.23 s of the server's ~0.25 s
without torch.
"""

import numpy  # noqa: F401
import numpy.ma  # noqa: F401  (np.median's NaN check imports it: 30 ms in every child)
import numpy.random  # noqa: F401  (imported lazily by numpy otherwise)
import onnx  # noqa: F401
import onnx.defs
import yaml  # noqa: F401

import mlprof.ingest
import mlprof.measure.causes  # noqa: F401
import mlprof.measure.contention  # noqa: F401
import mlprof.measure.forkserver  # noqa: F401
import mlprof.measure.harness  # noqa: F401
import mlprof.measure.inputs  # noqa: F401
import mlprof.measure.provenance
import mlprof.measure.quiet  # noqa: F401
import mlprof.model.onnx_graph  # noqa: F401
import mlprof.progress  # noqa: F401
import mlprof.sysinfo
import mlprof.util

# resolved once here, inherited by every child (saves two git calls per measurement)
mlprof.util.git_commit()
# the model YAML's strict loader (a class and two regular expressions) and PyYAML's own
# patterns: built once here, not by every child reading its model (15 -> ~10 ms a point)
mlprof.ingest.parse_yaml("a: [1, 2.5, x]\nb: {c: d}\n", "<measurement server warm-up>")
# the libraries' versions (package metadata), the machine and its fingerprint: once here
mlprof.measure.provenance.library_versions()
mlprof.sysinfo.fingerprint_id()
mlprof.sysinfo.system_info()
# onnx builds its operator-schema registry on first use (by the checker): do it once here
onnx.defs.get_schema("Relu")
