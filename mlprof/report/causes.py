"""Why a model was not measured: failures grouped by cause, for corpus summaries and the Report.

A corpus of a thousand scripts fails for a handful of reasons, and what a user does next depends
on the reason, not on the script: install a package, allow the network, fix an exporter, give
more memory. :func:`failure_cause` turns a failure record (status, message, the stage that
failed) into one of :data:`CAUSES` and a short detail (the package, the host or hub repository,
the operator the exporter refused, the signal); :func:`cause_summary` counts them per corpus,
as TurnkeyML's status report does per build stage, but across the causes a user acts on.

No law here: the corpus command, ``law run`` summaries and the Report all call these functions.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mlprof.measure.trust import CONTENDED, UNSTABLE, with_legend

#: the causes of a failure, in the order summaries list them
CAUSES = ("needs-network", "needs-package", "export-failed", "oom", "timeout", "crashed",
          "error", "unreadable", "corrupt", "not-run")

#: the statuses that are not failures of mlprof or of the model, but of what the script needs
#: from outside (a download, a package): a corpus run does not fail for them
NEEDS = ("needs-network", "needs-package")

_OPERATOR = (
    re.compile(r"ONNX export of operator ['\"]?([\w:.]+)"),          # Unsupported: ... Unfold
    re.compile(r"Exporting the operator ['\"]?([\w:.]+)"),           # ... 'aten::foo' to ONNX
    re.compile(r"[Uu]nsupported (?:operator|op)[: ]+['\"]?([\w:.]+)"),
    re.compile(r"\b(aten::\w+(?:\.\w+)?)"),
)
_HOST = re.compile(r"tried to reach (.+?) \(mlprof")
_REPO = re.compile(r"loads the hub repository (\S+)")
_PACKAGE = re.compile(r"needs-package: ([\w.\-]+)")
_SIGNAL = re.compile(r"crashed with (\w+)")
_EXIT = re.compile(r"exited with code (-?\d+)")
_ERROR_TYPE = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Exit))\b")


@dataclass(frozen=True)
class Cause:
    """A failure's cause (one of :data:`CAUSES`) and its detail (may be empty)."""

    cause: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.cause}: {self.detail}" if self.detail else self.cause


def failure_cause(status: str, message: str = "", stage: str = "") -> Cause:
    """The cause of a failure with ``status`` (``failed``, ``timeout``, ``oom``,
    ``needs-network``, ``needs-package``, ``corrupt``), its one-line ``message`` and the
    ``stage`` that failed (``discovery``, ``export``, ``measure``; empty if unknown)."""
    message = message or ""
    if status == "not-run":  # no failure of its own: something else stopped the run
        return Cause("not-run")
    if status == "needs-network":
        m = _REPO.search(message) or _HOST.search(message)
        return Cause("needs-network", m.group(1).rstrip(".,;") if m else "")
    if status == "needs-package":
        m = _PACKAGE.search(message)
        return Cause("needs-package", m.group(1) if m else "")
    if status in ("oom", "timeout", "corrupt"):
        return Cause(status)
    m = _SIGNAL.search(message)
    if m:
        return Cause("crashed", m.group(1))
    m = _EXIT.search(message)
    if m and "without a result" in message:
        return Cause("crashed", f"exit code {m.group(1)}")
    if stage == "export" or "exported to ONNX" in message or "ONNX export" in message:
        for text, detail in (("numerically wrong", "numerically wrong"),
                             ("onnxruntime cannot load", "onnxruntime cannot load the graph"),
                             ("called with *args", "*args inputs"),
                             ("returns no tensors", "no tensor outputs")):
            if text in message:
                return Cause("export-failed", detail)
        for rx in _OPERATOR:
            m = rx.search(message)
            if m:
                return Cause("export-failed", m.group(1))
        m = _ERROR_TYPE.search(message)
        return Cause("export-failed", m.group(1) if m else "")
    m = _ERROR_TYPE.search(message)
    return Cause("error", m.group(1) if m else "")


def corpus_of(model_file: str) -> str:
    """The corpus of a model file: the name of the directory it is in (TurnkeyML's corpora are
    the subdirectories of ``models/``)."""
    path = str(model_file).split("::", 1)[0]
    return os.path.basename(os.path.dirname(os.path.abspath(path))) if path else ""


def cause_summary(rows: Iterable[Mapping[str, str]]) -> tuple[list[dict], list[dict]]:
    """Counts per corpus and the failures grouped by cause.

    ``rows`` have ``corpus``, ``status`` (``ok``, ``skipped`` or a failure status), optionally
    ``runtime`` and, for failures, ``cause`` and ``detail``. Returns ``(per_corpus, by_cause)``:
    per corpus (and runtime, when there are several; and a ``total`` row) the number of
    scripts, measured, skipped and failed by each cause that
    occurs; per cause the count and its details with their counts, most frequent first
    (``torch_geometric (12), dgl (3)``).
    """
    rows = list(rows)
    causes = [c for c in CAUSES if any(r.get("cause") == c for r in rows
                                        if r["status"] not in ("ok", "skipped"))]
    # one line per corpus, or per corpus and runtime when several runtimes were run
    runtimes = sorted({str(r.get("runtime", "")) for r in rows})
    by_runtime = len(runtimes) > 1

    def key(r: Mapping[str, str]) -> tuple[str, ...]:
        return (r["corpus"], str(r.get("runtime", ""))) if by_runtime else (r["corpus"],)

    per_corpus: list[dict] = []
    for k in [*sorted({key(r) for r in rows}), None]:
        sel = [r for r in rows if k is None or key(r) == k]
        row = {"corpus": k[0] if k is not None else "total"}
        if by_runtime:
            row["runtime"] = k[1] if k is not None else ""
        row.update({"scripts": len(sel), "measured": sum(r["status"] == "ok" for r in sel),
                    "skipped": sum(r["status"] == "skipped" for r in sel)})
        row.update({c: sum(r.get("cause") == c and r["status"] not in ("ok", "skipped")
                           for r in sel) for c in causes})
        per_corpus.append(row)
    by_cause = []
    for c in causes:
        details = Counter(r.get("detail") or "" for r in rows
                          if r.get("cause") == c and r["status"] not in ("ok", "skipped"))
        text = "" if set(details) == {""} else ", ".join(
            f"{d or 'other'} ({n})" for d, n in sorted(details.items(),
                                                       key=lambda kv: (-kv[1], kv[0])))
        by_cause.append({"cause": c, "count": sum(details.values()), "details": text})
    return per_corpus, by_cause


def format_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """A plain-text table, numbers right-aligned."""
    if not rows:
        return ""
    columns = columns or list(rows[0])
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    numeric = [all(re.fullmatch(r"-?[\d.]+%?", row[i]) or not row[i] for row in cells)
               for i in range(len(columns))]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]),
                      *(line(row) for row in cells)])


def marked_line(rows: Iterable[Mapping[str, str]]) -> str | None:
    """How many measured scripts have an unstable or a contended point (their ``flags``,
    :mod:`mlprof.measure.trust`), and the legend; None when none has. Under the per-corpus
    table, so that a corpus measured on a busy machine says so where its results are counted
    (a line, not columns: the table keeps its shape whatever the machine did)."""
    ok = [str(r.get("flags") or "") for r in rows if r["status"] == "ok"]
    parts = [f"{sum(m in f for f in ok)} of {len(ok)} measured with {name} points ({m})"
             for m, name in ((UNSTABLE, "unstable"), (CONTENDED, "contended"))
             if any(m in f for f in ok)]
    return with_legend("; ".join(parts), ok) if parts else None


def format_summary(rows: Iterable[Mapping[str, str]]) -> str:
    """The per-corpus table and the failures grouped by cause, as text."""
    rows = list(rows)
    per_corpus, by_cause = cause_summary(rows)
    text = format_table(per_corpus)
    marked = marked_line(rows)
    if marked:
        text += "\n" + marked
    if by_cause:
        text += "\n\nfailures by cause\n" + format_table(by_cause, ["cause", "count", "details"])
    return text
