"""The measurement harness: timing, inputs, statistics, process isolation (no law imports)."""

from mlprof.measure.harness import MeasureResult, measure, measure_isolated
from mlprof.measure.settings import MeasureSettings

__all__ = ["MeasureResult", "MeasureSettings", "measure", "measure_isolated"]
