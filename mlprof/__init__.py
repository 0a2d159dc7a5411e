"""mlprof: measure how fast machine-learning models run.

The law tasks live in :mod:`mlprof.tasks`; everything else is plain library code that never
imports law and can be used on its own:

- :mod:`mlprof.model`: model specifications from MLProf-style YAML files or bare ONNX files,
- :mod:`mlprof.runtimes`: one module per inference runtime behind one small interface,
- :mod:`mlprof.measure`: the timing harness, input generation, statistics and process isolation,
- :mod:`mlprof.plotting`: pure plotting functions (DataFrame in, figure files out).
"""

from mlprof.errors import MLProfError
from mlprof.version import __version__

__all__ = ["MLProfError", "__version__", "benchmark_files", "benchmark_generation",
           "benchmark_model", "compare_interleaved", "export_onnx"]


def __getattr__(name: str):
    # the Python API (mlprof.api) imports law and friends: only when asked for
    if name in ("benchmark_files", "benchmark_generation", "benchmark_model",
                "compare_interleaved", "export_onnx", "BenchmarkResult", "GenerationBenchmark"):
        from mlprof import api

        return getattr(api, name)
    raise AttributeError(f"module 'mlprof' has no attribute {name!r}")
