"""The measurement harness: timing, inputs, statistics, process isolation (no law imports).

The names below are loaded on first use (PEP 562): importing a submodule such as
:mod:`mlprof.measure.quiet` (``law run``'s summary does, at start-up) no longer imports the
harness, numpy and the record types with it (0.17 s of a no-op ``law run`` here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlprof.measure.harness import MeasureResult, measure, measure_isolated
    from mlprof.measure.settings import MeasureSettings

__all__ = ["MeasureResult", "MeasureSettings", "measure", "measure_isolated"]


def __getattr__(name: str) -> Any:
    if name in ("MeasureResult", "measure", "measure_isolated"):
        from mlprof.measure import harness

        return getattr(harness, name)
    if name == "MeasureSettings":
        from mlprof.measure.settings import MeasureSettings

        return MeasureSettings
    raise AttributeError(f"module 'mlprof.measure' has no attribute {name!r}")
