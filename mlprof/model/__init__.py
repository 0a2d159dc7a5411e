"""Models: specifications from MLProf-style YAML files or bare ONNX files.

:func:`read_model_file` is cheap (no onnx import); :mod:`mlprof.model.onnx_graph` checks a
spec against its graph inside the measurement process.
"""

from mlprof.model.spec import InputSpec, ModelSpec, canonical_dtype, read_model_file

__all__ = ["InputSpec", "ModelSpec", "canonical_dtype", "read_model_file"]
