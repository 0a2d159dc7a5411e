"""Pure plotting functions: DataFrames in, figures and files out (no law imports).

Importing this package changes nothing process-wide: matplotlib's backend is chosen by
:func:`use_backend`, which every plotting function calls right before it needs pyplot.
"""

from mlprof.plotting.backend import use_backend
from mlprof.plotting.runtimes import Curve, plot_runtimes, save_figure

__all__ = ["Curve", "plot_runtimes", "save_figure", "use_backend"]
