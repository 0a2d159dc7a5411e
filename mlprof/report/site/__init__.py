"""A static HTML dashboard over a report: plain files that open from ``file://``.

No server, no CDN, no ``fetch``: every table is in the HTML, the small charts are inline SVG,
the history plots of configurations with an alert PNG files next to the pages, and the little
JavaScript there is (sorting, filtering, in ``assets/``) is inline. One concern per module, as
asv's ``www/``: :mod:`~mlprof.report.site.build` wires :mod:`~mlprof.report.site.index` (the
front page), :mod:`~mlprof.report.site.model` (a page per model) and their sections
(:mod:`~mlprof.report.site.panels`, :mod:`~mlprof.report.site.plots`,
:mod:`~mlprof.report.site.failures`, :mod:`~mlprof.report.site.precision`,
:mod:`~mlprof.report.site.load`, :mod:`~mlprof.report.site.generation`) over the data of
:mod:`~mlprof.report.site.context`; :mod:`~mlprof.report.site.archive` publishes each site
under ``$MLP_STORE/dashboard/`` with an index of all nights. Every text from a store goes
through the one escaper (:mod:`~mlprof.report.site.escape`).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["CSV_COLUMNS", "TABLE_COLUMNS", "build_dashboard", "current_results"]

#: the package's entry points and where they live: imported when first asked for, so that
#: the Dashboard task's check of ``--publish`` (:mod:`~mlprof.report.site.archive`, at
#: scheduling) does not import the whole site (0.18 s of imports, numpy included)
_WHERE = {"build_dashboard": "build", "current_results": "series", "CSV_COLUMNS": "table",
          "TABLE_COLUMNS": "table"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
