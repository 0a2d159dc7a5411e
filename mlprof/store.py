"""Store management: list, clean and delete results in ``$MLP_STORE`` (no law import).

Results live in ``<store>/<Task>/<segments...>/<version>/`` where the segments depend on the task
(see :mod:`mlprof.layout`, which this module reads the store with). :func:`scan` turns a store into
:class:`StoreEntry` objects, one per version directory; :func:`select` filters them by version,
model, task and runtime (globs); :func:`clean` removes large artifacts (exported ONNX files,
``*.pt``, ``*.npz``, ...) and keeps CSV, JSON and logs; :func:`delete` removes whole version
directories and then empty parents. Both take ``dry_run`` and return what was (or would be) removed.

Safety: nothing outside the (resolved) store is ever removed, symbolic links are never followed (a
link is removed as a link), directories are renamed away before they are removed (so law never sees
a half-deleted output directory), and a large file inside an output *directory* takes the whole
directory with it, so the task that made it counts as incomplete and reruns when needed.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from mlprof import layout
from mlprof.errors import MLProfError
from mlprof.layout import (
    LAYOUTS,
    SOURCE_DIRS,
    parse_model_segment,
    parse_runtime_segment,
)

#: files :func:`clean` removes: large artifacts that can be rebuilt (exported ONNX models,
#: saved tensors and arrays); raw sample CSVs, statistics, JSON and logs are always kept
LARGE_PATTERNS: tuple[str, ...] = ("*.onnx", "*.onnx.data", "*.onnx_data", "*.pt", "*.pth",
                                   "*.npz", "*.npy")

#: plots, removed by :func:`clean` only with ``plots=True`` (they are redrawn from merged CSVs)
PLOT_PATTERNS: tuple[str, ...] = ("*.pdf", "*.png", "*.svg")

#: directory names of a store's top level that look like a task (anything else is ignored)
_TASK_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_DELETING = ".mlprof-deleting-"


@dataclass
class StoreEntry:
    """One version directory of one task (or one model source directory)."""

    task: str
    version: str | None
    path: str
    model: str | None = None
    model_segment: str | None = None
    model_hash: str | None = None
    models: list[str] = field(default_factory=list)
    runtime: str | None = None
    runtimes: list[str] = field(default_factory=list)
    runtime_version: str | None = None
    device: str | None = None
    settings: str | None = None
    size: int = 0
    n_files: int = 0
    mtime: float = 0.0
    status: str = "empty"
    failures: int = 0

    @property
    def complete(self) -> bool:
        """Whether the outputs look complete (``status == "ok"``)."""
        return self.status == "ok"

    def to_dict(self) -> dict:
        """A JSON-serializable dict (with ``complete``)."""
        return {**asdict(self), "complete": self.complete}


@dataclass
class Removal:
    """One file or directory that was (or, in a dry run, would be) removed."""

    path: str
    size: int
    n_files: int
    kind: str  # "file", "dir" (an output directory inside a version) or "version"
    entry: str  # the entry's directory

    def to_dict(self) -> dict:
        """A JSON-serializable dict."""
        return asdict(self)


@dataclass
class ScanResult:
    """The entries of a store plus what was seen but not followed."""

    store: str
    entries: list[StoreEntry]
    skipped_links: list[str] = field(default_factory=list)


def default_store() -> str:
    """``$MLP_STORE``, else ``$MLP_BASE/data/store`` (as the tasks use it)."""
    return layout.store_base()


def resolve_store(store: str | os.PathLike | None) -> str:
    """The store directory as a real path; errors name the store and ``--store``."""
    raw = os.fspath(store) if store is not None else default_store()
    path = os.path.realpath(os.path.expandvars(os.path.expanduser(raw)))
    if not os.path.isdir(path):
        raise MLProfError("store directory does not exist", raw, "--store")
    if path == os.path.sep or path == os.path.realpath(os.path.expanduser("~")):
        raise MLProfError("refusing to treat this directory as a store", raw, "--store")
    return path


# --- scanning ---------------------------------------------------------------------------------


def _entry_files(path: str) -> tuple[int, int, float, set[str], set[str]]:
    """Size, file count, newest mtime, top-level file names and directory names (no links)."""
    size = n_files = 0
    mtime = 0.0
    top_files: set[str] = set()
    top_dirs: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in filenames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            size += st.st_size
            n_files += 1
            mtime = max(mtime, st.st_mtime)
            if dirpath == path:
                top_files.add(name)
        if dirpath == path:
            top_dirs.update(dirnames)
    return size, n_files, mtime, top_files, top_dirs


def _is_temp(name: str) -> bool:
    return name.startswith(".")


def _status(task: str, files: set[str], dirs: set[str]) -> tuple[str, int]:
    """``ok``, ``partial``, ``failed``, ``cleaned`` (ExportOnnx without its ONNX) or ``empty``."""
    failures = sum(1 for f in files if f == layout.FAILURE_FILE or
                   layout.parse_branch_failure(f) is not None)
    out = {f for f in files if not _is_temp(f) and not f.startswith("_failure")}
    out_dirs = {d for d in dirs if not _is_temp(d)}
    if task == "ExportOnnx":
        complete = {"model.onnx", "export.json"} <= out
        if not complete and "export.json" in out and failures == 0:
            return "cleaned", 0
    elif task == "MeasureRuntime":
        branches = [b for b in map(layout.parse_branch_file, out) if b]
        csvs = {bs for bs, ext in branches if ext == "csv"}
        complete = bool(csvs) and csvs == {bs for bs, ext in branches if ext == "json"}
    elif task == "MergeRuntimes":
        tags = {tag for kind, tag in filter(None, map(layout.parse_merged_file, out))
                if kind == "stats"}
        complete = bool(tags) and all(set(layout.merged_files(t).values()) <= out
                                      for t in tags)
    elif task == "DiscoverModels":
        complete = "manifest.json" in out
    elif task == "Report":
        complete = {"report.csv", "report.parquet"} <= out
    elif task == "Dashboard":
        complete = "dashboard" in out_dirs
    elif task == "RunExperiment":
        complete = "status.json" in out
    elif task == "ConfirmResults":
        complete = "confirm.json" in out
    elif task == "Nightly":
        complete = bool({"nightly.json", "nightly_noconfirm.json"} & out)
    elif task == "PlotHistory":
        complete = any(f.startswith("alerts_") for f in out) and any(
            d.startswith("history_") for d in out_dirs)
    elif task in ("PlotRuntimes", "PlotMultiRuntimes"):
        complete = any(fnmatch.fnmatch(f, p) for f in out for p in PLOT_PATTERNS)
    else:
        complete = bool(out or out_dirs)
    if failures:
        return "failed", failures
    if complete:
        return "ok", 0
    return ("partial" if out or out_dirs else "empty"), 0


def _dirs(path: str, skipped: list[str]) -> list[str]:
    """Sub-directories of ``path`` (sorted, no hidden ones); links are recorded, not followed."""
    out = []
    try:
        with os.scandir(path) as it:
            for e in it:
                if e.name.startswith("."):
                    continue
                if e.is_symlink():
                    skipped.append(e.path)
                elif e.is_dir(follow_symlinks=False):
                    out.append(e.path)
    except OSError:
        return []
    return sorted(out)


def _has_files(path: str) -> bool:
    try:
        with os.scandir(path) as it:
            return any(e.is_file(follow_symlinks=False) for e in it)
    except OSError:
        return False


def _guess_layout(task_dir: str, max_depth: int = 4) -> int:
    """Depth of the version directories of an unknown task: the first level holding files."""
    level = [task_dir]
    for depth in range(max_depth + 1):
        nxt = []
        for d in level:
            if depth > 0 and _has_files(d):
                return depth - 1
            nxt.extend(_dirs(d, []))
        level = nxt
        if not level:
            break
    return 1


def _layout_for(task: str, task_dir: str) -> tuple[str, ...]:
    if task in LAYOUTS:
        return LAYOUTS[task]
    if task in SOURCE_DIRS:
        return SOURCE_DIRS[task]
    depth = _guess_layout(task_dir)
    return {0: (), 1: ("model",), 2: ("model", "settings"),
            3: ("model", "runtime", "settings")}.get(depth, ("model",) + ("segment",) *
                                                      max(depth - 1, 0))


def known_task(task: str) -> bool:
    """Whether ``task``'s layout is known (a task of mlprof or a model source directory)."""
    return task in LAYOUTS or task in SOURCE_DIRS


def scan(store: str | os.PathLike | None = None) -> ScanResult:
    """Scan ``store`` (default: ``$MLP_STORE``) into entries, one per version directory.

    Top-level directories that do not look like a task (``CamelCase``) and hidden ones (law's
    ``.tmp``) are ignored, and so are the directories of unknown tasks not named like a model
    (``<name>__<hash>``); symbolic links are never followed (see ``skipped_links``).
    """
    root = resolve_store(store)
    skipped: list[str] = []
    entries: list[StoreEntry] = []
    for task_dir in _dirs(root, skipped):
        task = os.path.basename(task_dir)
        if not _TASK_NAME.match(task):
            continue
        names = _layout_for(task, task_dir)
        is_source = task in SOURCE_DIRS
        # directories at the depth of the version (sources: of the model)
        levels: list[tuple[str, list[str]]] = [(task_dir, [])]
        for _ in range(len(names) + (0 if is_source else 1)):
            levels = [(d, segs + [os.path.basename(d)]) for p, segs in levels
                      for d in _dirs(p, skipped)]
            if not known_task(task) and levels and len(levels[0][1]) == 1:
                # an unknown task: only directories named like mlprof's model segments
                levels = [(d, segs) for d, segs in levels if layout.looks_like_model(segs[0])]
        for path, segs in levels:
            named = dict(zip(names, segs, strict=False))
            entry = StoreEntry(task=task, version=None if is_source else segs[-1], path=path,
                               settings=named.get("settings"))
            if "model" in named:
                entry.model_segment = named["model"]
                for k, v in parse_model_segment(named["model"]).items():
                    setattr(entry, k, v)
            if "runtime" in named:
                for k, v in parse_runtime_segment(named["runtime"]).items():
                    setattr(entry, k, v)
            size, n_files, mtime, files, dirs = _entry_files(path)
            entry.size, entry.n_files, entry.mtime = size, n_files, mtime
            if is_source:
                entry.status = "source"
            else:
                entry.status, entry.failures = _status(task, files, dirs)
            entries.append(entry)
    return ScanResult(store=root, entries=entries, skipped_links=sorted(skipped))


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
            names = list(e.runtimes) + [f"{r}-{v}" for r, v in zip(e.runtimes, vers,
                                                                   strict=False) if v]
            if not any(_match(n, rts) for n in names):
                continue
        out.append(e)
    return out


# --- removing ---------------------------------------------------------------------------------


def _inside(path: str, root: str) -> bool:
    """Whether ``path``'s parent resolves inside ``root`` and ``path`` is not ``root`` itself."""
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return (parent == root or parent.startswith(root + os.sep)) and \
        os.path.abspath(path) != root


def _remove(path: str, root: str) -> None:
    """Remove a file, link or directory below ``root``; a directory is renamed away first."""
    if not _inside(path, root):
        raise MLProfError("refusing to remove a path outside the store", path, "--store")
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)  # files and links (a link's target is never touched)
        return
    # rename first: the output directory disappears in one step (no half-deleted state)
    tmp = os.path.join(os.path.dirname(path),
                       f".{os.path.basename(path)}{_DELETING}{uuid.uuid4().hex[:8]}")
    os.rename(path, tmp)
    if os.path.islink(tmp):
        os.unlink(tmp)
    else:
        shutil.rmtree(tmp)


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


def _tree_size(path: str) -> tuple[int, int]:
    size = n = 0
    if os.path.islink(path) or not os.path.isdir(path):
        return os.lstat(path).st_size, 1
    for dirpath, _, filenames in os.walk(path, followlinks=False):
        for name in filenames:
            with contextlib.suppress(OSError):
                size += os.lstat(os.path.join(dirpath, name)).st_size
                n += 1
    return size, n


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(name.lower(), p) for p in patterns)


def clean_candidates(entry: StoreEntry, plots: bool = False) -> list[Removal]:
    """What :func:`clean` removes from ``entry``: large files in the version directory, and
    whole output directories inside it that hold any (links and temporary files are skipped)."""
    if entry.task in SOURCE_DIRS or entry.version is None:
        return []
    patterns = LARGE_PATTERNS + (PLOT_PATTERNS if plots else ())
    out: list[Removal] = []
    try:
        children = sorted(os.scandir(entry.path), key=lambda e: e.name)
    except OSError:
        return []
    for child in children:
        if _is_temp(child.name) or child.is_symlink():
            continue
        if child.is_file(follow_symlinks=False):
            if _matches(child.name, patterns):
                out.append(Removal(child.path, child.stat(follow_symlinks=False).st_size, 1,
                                   "file", entry.path))
        elif child.is_dir(follow_symlinks=False):
            # an output directory: it exists as a whole or not at all
            hit = any(_matches(f, patterns) for _, _, fs in os.walk(child.path) for f in fs)
            if hit:
                size, n = _tree_size(child.path)
                out.append(Removal(child.path, size, n, "dir", entry.path))
    return out


def clean(entries: Iterable[StoreEntry], store: str | os.PathLike | None = None,
          dry_run: bool = False, plots: bool = False) -> list[Removal]:
    """Remove the large artifacts of ``entries`` (see :data:`LARGE_PATTERNS`; plots too with
    ``plots``); keep CSV, JSON and logs. Returns what was (``dry_run``: would be) removed.

    A task whose output file is removed counts as incomplete and is rerun only when something
    needs it again (e.g. ExportOnnx re-exports for a new batch size); results computed from it
    (MeasureRuntime's samples, MergeRuntimes' statistics) stay complete and valid.
    """
    root = resolve_store(store)
    removals = [r for e in entries for r in clean_candidates(e, plots=plots)]
    for r in removals:
        if not _inside(r.path, root):
            raise MLProfError("refusing to remove a path outside the store", r.path, "--store")
    if not dry_run:
        for r in removals:
            _remove(r.path, root)
    return removals


def delete(entries: Iterable[StoreEntry], store: str | os.PathLike | None = None,
           dry_run: bool = False) -> list[Removal]:
    """Remove the version directories of ``entries`` whole, then their empty parents.

    Returns what was (``dry_run``: would be) removed. Every path is checked to resolve inside
    the store first; nothing is removed if one does not.
    """
    root = resolve_store(store)
    entries = list(entries)
    for e in entries:
        if not _inside(e.path, root):
            raise MLProfError("refusing to remove a path outside the store", e.path, "--store")
    removals = []
    for e in entries:
        try:
            size, n = _tree_size(e.path)
        except OSError:
            continue
        removals.append(Removal(e.path, size, n, "version", e.path))
        if not dry_run:
            _remove(e.path, root)
            _prune_empty_parents(e.path, root)
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
            "versions": len({e.version for e in entries if e.version is not None}),
            "models": len({m for e in entries for m in e.models}),
            "files": sum(e.n_files for e in entries),
            "size": sum(e.size for e in entries)}


def format_entries(entries: Sequence[StoreEntry], store: str) -> str:
    """A compact table of ``entries`` with a totals line."""
    rows = [{"task": e.task, "model": e.model or "", "runtime": e.runtime or "",
             "version": e.version or "-", "status": e.status + (f"({e.failures})" if
                                                                e.failures else ""),
             "files": str(e.n_files), "size": human_size(e.size),
             "modified": time.strftime("%Y-%m-%d %H:%M", time.localtime(e.mtime))
             if e.mtime else ""} for e in entries]
    cols = ["task", "model", "runtime", "version", "status", "files", "size", "modified"]
    widths = {c: max([len(c)] + [len(r[c]) for r in rows]) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols).rstrip(),
             "  ".join("-" * widths[c] for c in cols)]
    lines += ["  ".join(r[c].ljust(widths[c]) for c in cols).rstrip() for r in rows]
    t = totals(entries)
    lines.append(f"{t['entries']} entries, {t['versions']} versions, {t['models']} models, "
                 f"{t['files']} files, {human_size(t['size'])} in {store}")
    return "\n".join(lines)


def format_removals(removals: Sequence[Removal], store: str, dry_run: bool) -> str:
    """One line per removal and the bytes freed (``would`` in a dry run)."""
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb} {os.path.relpath(r.path, store)}"
             f"{os.sep if r.kind != 'file' else ''} ({r.n_files} files, {human_size(r.size)})"
             for r in removals]
    freed = sum(r.size for r in removals)
    lines.append(f"{verb} {len(removals)} item(s), {sum(r.n_files for r in removals)} files: "
                 f"{freed} bytes ({human_size(freed)}) {'would be ' if dry_run else ''}freed"
                 if removals else "nothing to remove")
    return "\n".join(lines)
