"""Reports over stores: pure functions, no law (the Report task wraps them)."""

from mlprof.report.collect import REPORT_COLUMNS, collect, to_frame

__all__ = ["REPORT_COLUMNS", "collect", "to_frame"]
