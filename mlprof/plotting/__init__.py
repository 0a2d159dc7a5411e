"""Pure plotting functions: DataFrames in, figures and files out (no law imports)."""

from mlprof.plotting.runtimes import Curve, plot_runtimes, save_figure

__all__ = ["Curve", "plot_runtimes", "save_figure"]
