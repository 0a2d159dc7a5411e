"""Store management: list, clean and delete results in ``$MLP_STORE`` (no law import).

The concerns are split: :mod:`mlprof.results.scan` turns a store into entries (statuses from
the task families' declarations), :mod:`mlprof.results.fsguard` walks and removes without
following links or crossing file systems, and this module selects, cleans, deletes and formats
(and re-exports what ``mlprof store`` and the API use).

Results live in ``<store>/<Task>/<segments...>/<version>/`` where the segments depend on the task
(see :mod:`mlprof.results.layout`, which this module reads the store with). :func:`scan` turns a
store into :class:`StoreEntry` objects, one per version directory; :func:`select` filters them
by version, model, task and runtime (globs); :func:`clean` removes large artifacts (exported
ONNX files, ``*.pt``, ``*.npz``, ...) and keeps CSV, JSON and logs; :func:`delete` removes whole
version directories and then empty parents. Both take ``dry_run`` and return what was (or would
be) removed.

Safety: nothing outside the (resolved) store is ever removed, symbolic links are never followed (a
link is removed as a link), no file-system boundary is crossed (a directory on another device than
the store's, or any mount point, stops a removal before anything is removed), directories are
renamed away before they are removed (so law never sees a half-deleted output directory), and a
large file inside an output *directory* takes the whole directory with it, so the task that made
it counts as incomplete and reruns when needed. The store's own leftovers (directories renamed
for deletion, temporary files of interrupted atomic writes) older than :data:`LEFTOVER_AGE` are
entries with status ``leftover`` that :func:`clean` and :func:`delete` remove. A read-only store
is a one-line :class:`~mlprof.errors.MLProfError`, never a traceback.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from mlprof.errors import MLProfError
from mlprof.ingest import printable
from mlprof.results.fsguard import (
    _Bounds,
    _check_tree,
    _check_writable,
    _inside,
    _one_line_errors,
    _remove,
    _walk,
    default_store,
    resolve_store,
)
from mlprof.results.layout import SOURCE_DIRS
from mlprof.results.scan import (
    LEFTOVER_AGE,
    ScanResult,
    StoreEntry,
    _is_temp,
    is_leftover_name,
    known_task,
    scan,
)

__all__ = ["LARGE_PATTERNS", "LEFTOVER_AGE", "PLOT_PATTERNS", "Removal", "ScanResult",
           "StoreEntry", "clean", "clean_candidates", "default_store", "delete",
           "format_entries", "format_removals", "human_size", "is_leftover_name", "known_task",
           "resolve_store", "scan", "select", "totals"]

#: files :func:`clean` removes: large artifacts that can be rebuilt (exported ONNX models,
#: saved tensors and arrays); raw sample CSVs, statistics, JSON and logs are always kept
LARGE_PATTERNS: tuple[str, ...] = ("*.onnx", "*.onnx.data", "*.onnx_data", "*.pt", "*.pth",
                                   "*.npz", "*.npy")

#: plots, removed by :func:`clean` only with ``plots=True`` (they are redrawn from merged CSVs)
PLOT_PATTERNS: tuple[str, ...] = ("*.pdf", "*.png", "*.svg")

#: directory names of a store's top level that look like a task (anything else is ignored)
@dataclass
class Removal:
    """One file or directory that was (or, in a dry run, would be) removed."""

    path: str
    size: int
    n_files: int
    kind: str  # "file", "dir" (an output directory inside a version), "version" or "leftover"
    entry: str  # the entry's directory
    is_dir: bool = False

    def to_dict(self) -> dict:
        """A JSON-serializable dict."""
        return asdict(self)


# --- selection --------------------------------------------------------------------------------


def _match(value: str | None, patterns: Sequence[str]) -> bool:
    return value is not None and any(fnmatch.fnmatchcase(value, p) for p in patterns)


def _canonical_runtimes(patterns: Sequence[str]) -> list[str]:
    from mlprof.runtimes import canonical_runtime

    out = []
    for p in patterns:
        out.append(p if any(c in p for c in "*?[") else canonical_runtime(p))
    return out


def select(entries: Iterable[StoreEntry], versions: Sequence[str] = (),
           models: Sequence[str] = (), tasks: Sequence[str] = (),
           runtimes: Sequence[str] = ()) -> list[StoreEntry]:
    """Entries matching every given selector; each selector is a list of globs (any matches).

    - ``versions``: the version directory's name (model sources have none and never match);
    - ``models``: a model's name (``dnn_l10u128``), its ``name__hash`` segment or, for
      multi-model plots, any one of the models shown;
    - ``tasks``: the task name (case-insensitive);
    - ``runtimes``: a runtime name (aliases such as ``ort`` resolve), or ``name-version``.
    """
    rts = _canonical_runtimes(runtimes)
    tasks_l = [t.lower() for t in tasks]
    out = []
    for e in entries:
        if versions and not _match(e.version, versions):
            continue
        if tasks_l and not _match(e.task.lower(), tasks_l):
            continue
        if models:
            names = [e.model, *e.models]
            if e.model and e.model_hash:
                names.append(f"{e.model}__{e.model_hash}")
            if not any(_match(n, models) for n in [*names, e.model_segment]):
                continue
        if rts:
            vers = (e.runtime_version or "").split(",")
            rt_names = list(e.runtimes) + [f"{r}-{v}" for r, v in zip(e.runtimes, vers,
                                                                      strict=False) if v]
            if not any(_match(n, rts) for n in rt_names):
                continue
        out.append(e)
    return out


# --- removing ---------------------------------------------------------------------------------


def _prune_empty_parents(path: str, root: str) -> list[str]:
    """Remove empty directories from ``path``'s parent up to (not including) ``root``."""
    removed = []
    parent = os.path.dirname(path)
    while parent != root and _inside(parent, root):
        try:
            os.rmdir(parent)
        except OSError:
            break
        removed.append(parent)
        parent = os.path.dirname(parent)
    return removed


def _outermost(paths: Iterable[str]) -> set[str]:
    """The paths not below another one of ``paths``."""
    out: list[str] = []
    for p in sorted({os.path.abspath(p) for p in paths}):
        if not out or not p.startswith(out[-1].rstrip(os.sep) + os.sep):
            out.append(p)
    return set(out)


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(name.lower(), p) for p in patterns)


def clean_candidates(entry: StoreEntry, plots: bool = False) -> list[Removal]:
    """What :func:`clean` removes from ``entry``: large files in the version directory, and
    whole output directories inside it that hold any (links and temporary files are skipped);
    a leftover entry goes whole."""
    if entry.status == "leftover":
        return [Removal(entry.path, entry.size, entry.n_files, "leftover", entry.path)]
    if entry.task in SOURCE_DIRS or entry.version is None:
        return []
    patterns = LARGE_PATTERNS + (PLOT_PATTERNS if plots else ())
    out: list[Removal] = []
    try:
        dev = os.lstat(entry.path).st_dev
        children = sorted(os.scandir(entry.path), key=lambda e: e.name)
    except OSError:
        return []
    for child in children:
        if _is_temp(child.name) or child.is_symlink():
            continue
        if child.stat(follow_symlinks=False).st_dev != dev:
            continue  # another file system mounted here: never entered
        if child.is_file(follow_symlinks=False):
            if _matches(child.name, patterns):
                out.append(Removal(child.path, child.stat(follow_symlinks=False).st_size, 1,
                                   "file", entry.path))
        elif child.is_dir(follow_symlinks=False):
            # an output directory: it exists as a whole or not at all
            found = [(fst.st_size, _matches(f, patterns)) for _, fs, _ in _walk(
                child.path, _Bounds(entry.path, dev, set())) for f, fst in fs]
            if any(hit for _, hit in found):
                out.append(Removal(child.path, sum(sz for sz, _ in found), len(found), "dir",
                                   entry.path))
    return out


def _checked(removals: list[Removal], root: str, bounds: _Bounds) -> list[Removal]:
    """``removals`` that still exist, none below another; each checked to be inside the store
    and on its file system, with its size as it is now. Raises before anything is removed."""
    for r in removals:
        if not _inside(r.path, root):
            raise MLProfError("refusing to remove a path outside the store", r.path, "--store")
    keep = _outermost(r.path for r in removals)
    out = []
    for r in removals:
        if os.path.abspath(r.path) not in keep:
            continue
        try:
            r.size, r.n_files, r.is_dir = _check_tree(r.path, bounds)
        except FileNotFoundError:
            continue
        out.append(r)
        keep.discard(os.path.abspath(r.path))
    return out


def clean(entries: Iterable[StoreEntry], store: str | os.PathLike | None = None,
          dry_run: bool = False, plots: bool = False) -> list[Removal]:
    """Remove the large artifacts of ``entries`` (see :data:`LARGE_PATTERNS`; plots too with
    ``plots``) and the leftovers among them; keep CSV, JSON and logs. Returns what was
    (``dry_run``: would be) removed.

    A task whose output file is removed counts as incomplete and is rerun only when something
    needs it again (e.g. ExportOnnx re-exports for a new batch size); results computed from it
    (MeasureRuntime's samples, MergeRuntimes' statistics) stay complete and valid. Nothing is
    removed when one path is outside the store or on another file system.
    """
    root = resolve_store(store)
    bounds = _Bounds.of(root)
    with _one_line_errors(root):
        removals = _checked([r for e in entries for r in clean_candidates(e, plots=plots)],
                            root, bounds)
    if not dry_run and removals:
        _check_writable(root)
        with _one_line_errors(root):
            for r in removals:
                _remove(r.path, root, bounds)
    return removals


def delete(entries: Iterable[StoreEntry], store: str | os.PathLike | None = None,
           dry_run: bool = False) -> list[Removal]:
    """Remove the version directories (and leftovers) of ``entries`` whole, then their empty
    parents.

    Returns what was (``dry_run``: would be) removed. Every path is checked to resolve inside
    the store and to hold no other file system first; nothing is removed if one does not.
    """
    root = resolve_store(store)
    bounds = _Bounds.of(root)
    with _one_line_errors(root):
        removals = _checked([Removal(e.path, 0, 0, "leftover" if e.status == "leftover" else
                                     "version", e.path) for e in entries], root, bounds)
    if not dry_run and removals:
        _check_writable(root)
        with _one_line_errors(root):
            for r in removals:
                _remove(r.path, root, bounds)
                _prune_empty_parents(r.path, root)
    return removals


# --- text output ------------------------------------------------------------------------------


def human_size(n: int) -> str:
    """``1.2 MB``-style size (powers of 1024)."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def totals(entries: Sequence[StoreEntry]) -> dict:
    """Counts and size of ``entries``: entries, versions, models, files and bytes."""
    return {"entries": len(entries),
            "versions": len({e.version for e in entries if e.version is not None
                             and e.status != "leftover"}),
            "models": len({m for e in entries for m in e.models}),
            "files": sum(e.n_files for e in entries),
            "size": sum(e.size for e in entries)}


def format_entries(entries: Sequence[StoreEntry], store: str) -> str:
    """A compact table of ``entries`` with a totals line; control and bidi characters of
    directory names are escaped (:func:`mlprof.ingest.printable`): a name holding an escape
    sequence must not rewrite the terminal it is listed on."""
    rows = [{"task": printable(e.task), "model": printable(e.model or ""),
             "runtime": printable(e.runtime or ""),
             "version": printable(e.version or "-"),
             "status": e.status + (f"({e.failures})" if e.failures else ""),
             "files": str(e.n_files), "size": human_size(e.size),
             "modified": time.strftime("%Y-%m-%d %H:%M", time.localtime(e.mtime))
             if e.mtime else ""} for e in entries]
    cols = ["task", "model", "runtime", "version", "status", "files", "size", "modified"]
    widths = {c: max([len(c)] + [len(r[c]) for r in rows]) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols).rstrip(),
             "  ".join("-" * widths[c] for c in cols)]
    lines += ["  ".join(r[c].ljust(widths[c]) for c in cols).rstrip() for r in rows]
    lines += [printable(f"corrupt: {os.path.relpath(e.path, store)}/{e.problem}")
              for e in entries if e.status == "corrupt" and e.problem]
    t = totals(entries)
    lines.append(f"{t['entries']} entries, {t['versions']} versions, {t['models']} models, "
                 f"{t['files']} files, {human_size(t['size'])} in {printable(store)}")
    return "\n".join(lines)


def format_removals(removals: Sequence[Removal], store: str, dry_run: bool) -> str:
    """One line per removal and the bytes freed (``would`` in a dry run)."""
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb} {printable(os.path.relpath(r.path, store))}"
             f"{os.sep if r.is_dir else ''} ({r.n_files} files, {human_size(r.size)})"
             for r in removals]
    freed = sum(r.size for r in removals)
    lines.append(f"{verb} {len(removals)} item(s), {sum(r.n_files for r in removals)} files: "
                 f"{freed} bytes ({human_size(freed)}) {'would be ' if dry_run else ''}freed"
                 if removals else "nothing to remove")
    return "\n".join(lines)
