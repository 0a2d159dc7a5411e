"""The measurement harness: timing, inputs, statistics, process isolation (no law imports)."""

from mlprof.measure.harness import MeasureResult, MeasureSettings, measure, measure_isolated

__all__ = ["MeasureResult", "MeasureSettings", "measure", "measure_isolated"]
