"""The failures section of the dashboard: failures grouped by status, cause and message.

The same failure at several batch sizes or versions is one group (``batch size 128`` reads
``batch size N``, a path its file name); a damaged record is a group of its own, each naming the
file to repair; experiment files that failed are listed above them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from mlprof.report.site.escape import esc, safe_href
from mlprof.report.site.table import html_table, number

_BS_TEXT = re.compile(r"(?<![A-Za-z])(batch[ _]size|bs)([ _=:]*)\d+", re.IGNORECASE)
_ABS_PATH = re.compile(r"(?<![\w.])/(?:[^\s/:'\"]+/)+([^\s/:'\"]+)")


def failure_message_key(message: str) -> str:
    """A failure's message with what differs between batch sizes and places taken out
    (``batch size 128`` -> ``batch size N``, ``/a/b/runtime_bs_8.csv`` -> ``runtime_bs_N.csv``):
    the same failure at several batch sizes or versions is one group."""
    text = _ABS_PATH.sub(lambda m: m.group(1), str(message or ""))
    return _BS_TEXT.sub(lambda m: f"{m.group(1)}{m.group(2)}N", text).strip()


def group_failures(failures: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Failures grouped by status, cause and message (:func:`failure_message_key`), largest
    group first. A damaged record (``corrupt``) is one group of its own: each names the file to
    repair. Each group has ``count``, ``status``, ``cause``, ``message`` (the first one's,
    unchanged), ``batch_sizes``, ``versions`` and ``rows``."""
    groups: dict[tuple, dict] = {}
    for i, r in enumerate(failures):
        status = r.get("status")
        status = status if isinstance(status, str) else str(status)
        message = str(r.get("error") if isinstance(r.get("error"), str) else "")
        cause = r.get("cause") if isinstance(r.get("cause"), str) else ""
        detail = r.get("cause_detail") if isinstance(r.get("cause_detail"), str) else ""
        if status == "corrupt":
            key: tuple = ("corrupt", i)
            cause = ""  # the status says it
        else:
            key = (status, cause, detail, failure_message_key(message))
        g = groups.setdefault(key, {"status": status, "cause": ": ".join(
            p for p in (cause, detail) if p), "message": message, "rows": []})
        g["rows"].append(r)
    out = []
    for g in groups.values():
        sizes = sorted({int(b) for b in (number(r.get("batch_size")) for r in g["rows"])
                        if b is not None})
        g["count"] = len(g["rows"])
        g["batch_sizes"] = ", ".join(map(str, sizes))
        g["versions"] = sorted({str(r.get("version")) for r in g["rows"]
                                if r.get("version") is not None})
        out.append(g)
    out.sort(key=lambda g: (-g["count"], g["status"], g["message"]))
    return out


def failures_html(exp_failures: Sequence[dict], groups: Sequence[dict], model_link) -> str:
    def where(g: dict) -> str:
        items = []
        for r in g["rows"][:40]:
            link = safe_href(model_link(r) or "")
            name = esc(r.get("model"))
            name = f'<a href="{link}">{name}</a>' if link else name
            bs = number(r.get("batch_size"))
            items.append(f"<li>{name} {esc(r.get('runtime'))} {esc(r.get('runtime_version'))}"
                         + (f" bs <b>{int(bs)}</b>" if bs is not None else "")
                         + f" ({esc(r.get('version'))})</li>")
        more = len(g["rows"]) - len(items)
        if more > 0:
            items.append(f"<li>and {more} more (results.csv has them all)</li>")
        lst = "<ul>" + "".join(items) + "</ul>"
        return lst if len(g["rows"]) <= 3 else (
            f"<details><summary>{len(g['rows'])} results</summary>{lst}</details>")

    return ('<section id="failures"><h2>Failures</h2>'
            + html_table(exp_failures, ["title", "file", "status", "message"],
                     table_id="experiment-failures-table", empty="no experiment failed")
            + "<p>Measurement failures, grouped by status, cause and message (batch sizes and "
            "paths taken out); damaged records one by one.</p>"
            + html_table(groups, ["count", "status", "cause", "batch_sizes", "message", "where"],
                     table_id="failures-table", raw={"where": where},
                     empty="no measurement failed")
            + "</section>")

