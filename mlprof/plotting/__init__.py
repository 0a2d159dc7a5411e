"""Pure plotting functions: DataFrames in, figures and files out (no law imports).

Importing this package changes nothing process-wide: matplotlib's backend is chosen by
:func:`use_backend`, which every plotting function calls right before it needs pyplot. Nor does
it import matplotlib (0.36 s): :func:`plot_runtimes`, :class:`Curve` and :func:`save_figure`
are loaded when first asked for, so that ``report`` (above ``plotting``) can read the pure
helpers (:mod:`mlprof.plotting.scales`, :mod:`mlprof.plotting.labels`) without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlprof.plotting.backend import use_backend

if TYPE_CHECKING:
    from mlprof.plotting.runtimes import Curve, plot_runtimes, save_figure

__all__ = ["Curve", "plot_runtimes", "save_figure", "use_backend"]


def __getattr__(name: str) -> Any:
    """``Curve``, ``plot_runtimes``, ``save_figure``: from :mod:`mlprof.plotting.runtimes`, on
    first use (PEP 562)."""
    if name in ("Curve", "plot_runtimes", "save_figure"):
        from mlprof.plotting import runtimes

        return getattr(runtimes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
