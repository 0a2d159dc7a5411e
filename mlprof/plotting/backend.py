"""matplotlib's backend for mlprof's plots: chosen once, on first use (no law imports)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

_backend_chosen = False


def use_backend() -> Any:
    """Return ``matplotlib.pyplot``, with the non-interactive Agg backend selected first.

    The plots are only written to files, so no display is needed or used. Agg is selected the
    first time this is called, unless the process chose a backend itself: ``MPLBACKEND`` is set
    or ``matplotlib.pyplot`` was imported already (e.g. in a notebook), in which case that backend
    is left alone. This is the only place where mlprof selects a matplotlib backend.
    """
    global _backend_chosen
    if not _backend_chosen:
        _backend_chosen = True
        if "matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND"):
            import matplotlib

            matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


#: the matplotlib module that writes each of mlprof's plot file types (imported by the first save)
_WRITERS = {"pdf": "matplotlib.backends.backend_pdf", "png": "matplotlib.backends.backend_agg",
            "svg": "matplotlib.backends.backend_svg"}


def preload(file_types: Iterable[str] = ("pdf",)) -> None:
    """Import what drawing and saving a plot needs: pyplot (:func:`use_backend`), mlprof's plot
    modules and the writers of ``file_types`` (the PDF writer brings fontTools' subsetter).

    Why: these imports are most of a plot's cost, 0.42 s of PlotRuntimes' 0.52 s here (pyplot
    and mlprof's modules 0.35 s, the first PDF save's 0.07 s). A sweep calls this while its
    measurement server starts (about 0.3 s in which ``law run`` only waits), so that the plot at
    its end does not pay them. Importing twice costs nothing.
    """
    import importlib

    use_backend()
    importlib.import_module("mlprof.plotting.curves")
    for file_type in file_types:
        if file_type in _WRITERS:
            importlib.import_module(_WRITERS[file_type])
