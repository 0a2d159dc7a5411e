"""The frame of every dashboard page: its header, its style and script (files in ``assets/``).

The CSS and JavaScript are package data (``mlprof/report/site/assets/``), read once with
:mod:`importlib.resources`, so that a wheel install has them as an editable one does, and put
inline in each page: the site opens from ``file://`` with no server and no second request.
"""

from __future__ import annotations

import functools
from importlib import resources

from mlprof.report.site.escape import esc, safe_href


@functools.cache
def asset(name: str) -> str:
    """The text of ``assets/<name>`` (a file of the package, not of the working directory)."""
    return (resources.files("mlprof.report.site") / "assets" / name).read_text(
        encoding="utf-8")


def html_page(title: str, meta: str, body: str, nav: str = "") -> str:
    """A whole page: ``meta`` (trusted HTML made here) under the title, ``body`` in ``<main>``
    and ``nav`` (the archive's links to the neighbouring nights) in the header."""
    # here, not at the top: the archive reads its CSS through this module without the charts
    from mlprof.report.site.svg import SPARK_CSS

    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{asset('dashboard.css')}{SPARK_CSS}</style>"
            f"</head><body><header><h1>{esc(title)}</h1><div class=\"meta\">{meta}</div>"
            f'<nav class="nights" id="nights">{nav}</nav></header>'
            f"<main>{body}</main><script>{asset('dashboard.js')}</script></body></html>\n")


def figure_html(src: str, caption: str, fid: str = "") -> str:
    """An ``<figure>`` of the image file ``src`` (a file of the site, else nothing)."""
    href = safe_href(src)
    if not href:
        return ""
    ident = f' id="{fid}"' if fid else ""
    return (f'<figure{ident}><img src="{href}" alt="{esc(caption)}" decoding="async">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")
