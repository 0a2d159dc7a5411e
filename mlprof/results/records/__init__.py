"""Typed, versioned records: one frozen dataclass per kind of record mlprof writes, checked on
read, and what every record starts with (:mod:`mlprof.results.records.core`: the format, the
:class:`Header`, the model a result is about).

A package since issue 39 (one module was 1,108 lines): ``core``, ``load``, ``measurements``
(branch, profile, peak, interleaved, noise) and ``generation``; every name is read from here as
before (``from mlprof.results.records import BranchRecord``, ``records.stamp``).
"""

from mlprof.results.records.core import (
    ENVIRONMENT_CAUSES,
    FORMAT_VERSION,
    KINDS,
    MAX_COUNT,
    MAX_RECORD_BATCH_SIZE,
    MLPROF_VERSION,
    Header,
    ModelIdentity,
    format_version,
    model_identity,
    stamp,
)
from mlprof.results.records.core import (
    _Fields as _Fields,
)
from mlprof.results.records.generation import (
    GENERATION_MAX_BATCH,
    GENERATION_MAX_NEW_TOKENS,
    GENERATION_MAX_PROMPT,
    GENERATION_MAX_RUNTIMES,
    GenerationRecord,
    GenerationRuntime,
)
from mlprof.results.records.load import (
    LOAD_MAX_BATCH,
    LOAD_MAX_BOUND_MS,
    LOAD_MAX_RATE,
    LOAD_MAX_STREAMS,
    LOAD_MAX_WAIT_MS,
    LOAD_PERCENTILE_RANGE,
    LOAD_SCENARIOS,
    LOAD_SESSIONS,
    LOAD_VERDICTS,
    LoadPoint,
    LoadRecord,
    LoadSpec,
)
from mlprof.results.records.measurements import (
    NOISE_MAX_CLASSES,
    NOISE_MAX_PAIRS,
    BranchRecord,
    InterleavedRecord,
    InterleavedRun,
    NoiseClass,
    NoiseRecord,
    PeakRecord,
    ProfileRecord,
)

__all__ = [
    "BranchRecord",
    "ENVIRONMENT_CAUSES",
    "FORMAT_VERSION",
    "GENERATION_MAX_BATCH",
    "GENERATION_MAX_NEW_TOKENS",
    "GENERATION_MAX_PROMPT",
    "GENERATION_MAX_RUNTIMES",
    "GenerationRecord",
    "GenerationRuntime",
    "Header",
    "InterleavedRecord",
    "InterleavedRun",
    "KINDS",
    "LOAD_MAX_BATCH",
    "LOAD_MAX_BOUND_MS",
    "LOAD_MAX_RATE",
    "LOAD_MAX_STREAMS",
    "LOAD_MAX_WAIT_MS",
    "LOAD_PERCENTILE_RANGE",
    "LOAD_SCENARIOS",
    "LOAD_SESSIONS",
    "LOAD_VERDICTS",
    "LoadPoint",
    "LoadRecord",
    "LoadSpec",
    "MAX_COUNT",
    "MAX_RECORD_BATCH_SIZE",
    "MLPROF_VERSION",
    "ModelIdentity",
    "NOISE_MAX_CLASSES",
    "NOISE_MAX_PAIRS",
    "NoiseClass",
    "NoiseRecord",
    "PeakRecord",
    "ProfileRecord",
    "format_version",
    "model_identity",
    "stamp",
]
