"""The dashboard's one escaper: every text from a store reaches a page through :func:`esc`.

Whatever comes from the stores (names, versions, hosts, messages, statuses) is escaped text;
a status or alert kind only picks one of :data:`STATE_CLASSES` (never a class name made of
store text); a link points only at the site's own files (:data:`SAFE_HREF`). The hostile-store
test (``tests/test_dashboard_html.py``) opens a site built from a store whose every string
breaks out of an HTML context, in Chromium: nothing runs.
"""

from __future__ import annotations

import html
import re
from typing import Any

#: statuses and alert kinds that have a style; the CSS class of any other value (a store file
#: may hold anything) is ``st-other``: no text from a store ever becomes a class name
STATE_CLASSES = {s: f"st-{s}" for s in (
    "ok", "unstable", "contended", "failed", "timeout", "oom", "corrupt", "error",
    "needs-network", "needs-package", "partial", "inactive", "regression", "improvement")}
#: what a link may point at: a file of the site, as :mod:`mlprof.results.layout` names them, with an
#: anchor of the dashboard's own
SAFE_HREF = re.compile(r"(?:\.\./)?(?:models/|img/)?[A-Za-z0-9_+-][A-Za-z0-9._+-]*"
                       r"(?:#[A-Za-z0-9_-]+)?")


def esc(value: Any) -> str:
    """``value`` as HTML text or attribute value (``&<>"'`` escaped; None and NaN: "")."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return html.escape(str(value), quote=True)


def safe_href(link: str) -> str | None:
    """``link`` escaped for ``href``/``src``, or None unless it is a file name of the site."""
    return esc(link) if SAFE_HREF.fullmatch(link) else None


def state_class(value: Any) -> str:
    """The CSS class of a status or alert kind: one of :data:`STATE_CLASSES`, else
    ``st-other``."""
    return STATE_CLASSES.get(value, "st-other") if isinstance(value, str) else "st-other"
