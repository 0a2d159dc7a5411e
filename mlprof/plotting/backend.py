"""matplotlib's backend for mlprof's plots: chosen once, on first use (no law imports)."""

from __future__ import annotations

import os
import sys
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
