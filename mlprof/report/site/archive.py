"""The dashboard's fixed entry point: every night's site under one directory, with an index.

The Dashboard task writes each site under a path that depends on its parameters (a new hash
every night). :func:`publish` copies it (hard links: no extra space) to
``<root>/<version>/`` (``root`` is ``$MLP_STORE/dashboard``) and rewrites:

- ``<root>/index.html``: the entry point. The newest night's counts with a link to it, and a
  table of every published night (newest first) with its counts;
- ``<root>/latest.html``: a redirect to the newest night's front page (a bookmark that always
  shows the latest);
- ``<root>/<version>/index.html`` of the night and of its neighbours: "previous night" and
  "next night" links in the header.

Each published night holds ``dashboard.json`` (version, generation time, counts), which the
index is rebuilt from at every publication, so a night whose directory was deleted simply
disappears from the index. Nights are ordered by the date in their version
(``nightly-2026-11-22``), else by when they were first published. Pure functions of files: no
law here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.report.site.escape import esc
from mlprof.report.site.page import asset
from mlprof.util import write_text_atomic

#: the record of a published night, in its directory
RECORD = "dashboard.json"
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
_NAV = re.compile(r'<nav class="nights" id="nights">.*?</nav>', re.DOTALL)


def _href(version: str, page: str = "index.html") -> str:
    """A link from the root to a night's page: the version percent-encoded (any name the
    store allows is a safe path segment then), then escaped for the attribute."""
    return esc(f"{quote(version, safe='')}/{page}")


def publishable(version: str) -> bool:
    """Whether ``version`` can name a directory of the archive (not hidden, no path)."""
    return bool(version) and "/" not in version and "\0" not in version and \
        not version.startswith(".") and version not in ("latest.html", "index.html")


def _link_tree(src: str, dst: str) -> None:
    """``dst`` as a copy of the tree ``src``: files hard-linked where the file system allows
    (a night's site costs no space twice), copied otherwise."""
    for dirpath, _, files in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        target = os.path.join(dst, rel) if rel != "." else dst
        os.makedirs(target, exist_ok=True)
        for name in files:
            s, d = os.path.join(dirpath, name), os.path.join(target, name)
            try:
                os.link(s, d)
            except OSError:
                shutil.copy2(s, d)


def nights(root: str) -> list[dict]:
    """The published nights under ``root``, oldest first: their ``dashboard.json`` records
    (with ``version``; unreadable ones are left out)."""
    out = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    for e in entries:
        if not e.is_dir(follow_symlinks=False) or not publishable(e.name):
            continue
        try:
            rec = ingest.load_json(os.path.join(e.path, RECORD))
        except MLProfError:
            continue
        if isinstance(rec, dict):
            rec["version"] = e.name
            out.append(rec)

    def order(rec: dict) -> tuple:
        m = _DATE.search(rec["version"])
        first = str(rec.get("first_published") or rec.get("generated") or "")
        return (m.group(1) if m else first[:10], first, rec["version"])

    return sorted(out, key=order)


def nav_html(prev: str | None, nxt: str | None, *, prefix: str = "../") -> str:
    """The links of a night's header: all nights, the previous and the next night."""
    parts = [f'<a href="{esc(prefix)}index.html">all nights</a>',
             f'<a href="{esc(prefix)}latest.html">latest</a>']
    if prev is not None:
        parts.append(f'<a rel="prev" href="{esc(prefix)}{_href(prev)}">&larr; previous night: '
                     f"{esc(prev)}</a>")
    if nxt is not None:
        parts.append(f'<a rel="next" href="{esc(prefix)}{_href(nxt)}">next night: {esc(nxt)} '
                     "&rarr;</a>")
    return "".join(parts)


def _set_nav(root: str, version: str, prev: str | None, nxt: str | None) -> None:
    """Rewrite the night's front page with its links (a new file: the hard link to the
    Dashboard task's copy is broken, which keeps that copy as it was written)."""
    path = os.path.join(root, version, "index.html")
    try:
        text = ingest.read_text(path, ingest.MAX_RECORD_BYTES, what="a page")
    except MLProfError:
        return
    nav = f'<nav class="nights" id="nights">{nav_html(prev, nxt)}</nav>'
    new, n = _NAV.subn(lambda _m: nav, text, count=1)
    if n and new != text:
        write_text_atomic(path, new)


def _counts_cells(rec: Mapping[str, Any]) -> str:
    counts = rec.get("counts") if isinstance(rec.get("counts"), dict) else {}

    def num(v: Any) -> str:
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else ""

    return "".join(f'<td class="num">{num(v)}</td>' for v in (
        rec.get("results"), counts.get("unstable"), counts.get("contended"),
        rec.get("new_regressions"), rec.get("new_improvements"), rec.get("failures")))


def index_html(records: Sequence[Mapping[str, Any]], title: str = "mlprof dashboards") -> str:
    """The entry point: the newest night first, then every night with its counts."""
    latest = records[-1] if records else None
    head = ("<th>night</th><th>generated</th><th>results</th><th>unstable</th>"
            "<th>contended</th><th>new regressions</th><th>new improvements</th>"
            "<th>failures</th>")
    rows = "".join(f'<tr><td><a href="{_href(r["version"])}">{esc(r["version"])}</a></td>'
                   f'<td>{esc(r.get("generated"))}</td>{_counts_cells(r)}</tr>'
                   for r in reversed(records))
    if latest is not None:
        reg = latest.get("new_regressions")
        top = (f'<section id="latest"><h2>Latest: <a href="{_href(latest["version"])}">'
               f'{esc(latest["version"])}</a></h2><p>{esc(latest.get("title"))} &middot; '
               f'{esc(latest.get("results"))} result(s), {esc(reg)} new regression(s), '
               f'{esc(latest.get("failures"))} failure(s) &middot; generated '
               f'{esc(latest.get("generated"))}</p></section>')
    else:
        top = '<section><p class="none">no dashboard published yet</p></section>'
    css = asset("archive.css")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{css}</style></head><body><header>"
            f"<h1>{esc(title)}</h1></header><main>{top}"
            f'<section id="nights"><h2>All nights ({len(records)})</h2>'
            f'<table id="nights-table"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
            "</table></section></main></body></html>\n")


def latest_html(version: str | None) -> str:
    """A page that forwards to the newest night (a link too, for a browser that does not)."""
    if version is None:
        return "<!DOCTYPE html>\n<title>no dashboard yet</title><p>no dashboard yet</p>\n"
    href = _href(version)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="refresh" content="0; url={href}">'
            f"<title>latest dashboard: {esc(version)}</title></head><body>"
            f'<p><a href="{href}">latest dashboard: {esc(version)}</a></p></body></html>\n')


def check_free(root: str | os.PathLike, version: str, site: str) -> str | None:
    """Refuse (:class:`MLProfError`) to publish ``site`` as ``version`` under ``root`` when that
    version is already published from another site (other options); returns the version's
    first publication time when it was published from this one (None if never).

    The Dashboard task calls this before it builds, so that a refused site is not left
    behind as a finished task."""
    target = os.path.join(os.fspath(root), version)
    old_rec: Any = None
    with contextlib.suppress(MLProfError):
        old_rec = ingest.load_json(os.path.join(target, RECORD))
    if not isinstance(old_rec, dict):
        return None
    other = old_rec.get("site")
    if other and site and os.path.normpath(str(other)) != os.path.normpath(site):
        raise MLProfError(
            f"{target} is already published from another dashboard ({other}: other options "
            "under the same version); publish under another --version, or delete that "
            "directory to replace it", field="--version")
    first = old_rec.get("first_published")
    return str(first) if first else None


def publish(site: str | os.PathLike, root: str | os.PathLike, version: str,
            record: Mapping[str, Any]) -> str:
    """Publish the site directory ``site`` as night ``version`` under ``root``; returns the
    published front page. ``record`` (counts, title, generation time) goes into its
    ``dashboard.json``. A night published again from the same site (``record["site"]``: the
    same options) replaces its old copy, keeping its place; one published from another site
    (other options under the same version) is refused with :class:`MLProfError`: replacing
    it silently would lose a night's page without a word."""
    site, root = os.fspath(site), os.fspath(root)
    if not publishable(version):
        raise ValueError(f"cannot publish a dashboard as {version!r}")
    os.makedirs(root, exist_ok=True)
    target = os.path.join(root, version)
    first = check_free(root, version, str(record.get("site") or ""))
    rec = {k: v for k, v in dict(record).items() if isinstance(v, (str, int, float, list, dict))
           or v is None}
    rec.update(version=version, first_published=first or rec.get("generated"))
    tmp = tempfile.mkdtemp(prefix=f".{version}.", dir=root)
    try:
        _link_tree(site, tmp)
        with open(os.path.join(tmp, RECORD), "w") as f:
            json.dump(rec, f, indent=2, default=str)
        os.chmod(tmp, 0o755)
        old = None
        if os.path.exists(target):
            old = tempfile.mkdtemp(prefix=f".{version}.old.", dir=root)
            os.replace(target, os.path.join(old, "site"))
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    refresh(root)
    return os.path.join(target, "index.html")


def refresh(root: str | os.PathLike) -> list[dict]:
    """Rewrite the index, ``latest.html`` and every night's previous/next links from the
    nights found under ``root``; returns them (oldest first)."""
    root = os.fspath(root)
    records = nights(root)
    versions = [r["version"] for r in records]
    for i, v in enumerate(versions):
        _set_nav(root, v, versions[i - 1] if i else None,
                 versions[i + 1] if i + 1 < len(versions) else None)
    write_text_atomic(os.path.join(root, "index.html"), index_html(records))
    write_text_atomic(os.path.join(root, "latest.html"),
                      latest_html(versions[-1] if versions else None))
    return records
