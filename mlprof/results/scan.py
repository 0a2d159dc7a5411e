"""Scanning a store: one :class:`StoreEntry` per version directory of a task, with its status
judged by the task family's declaration (:mod:`mlprof.results.families`), plus the store's own
leftovers (no law import). Nothing is followed or crossed: see :mod:`mlprof.results.fsguard`.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from mlprof.results import families, layout
from mlprof.results.fsguard import _DELETING, _Bounds, _walk, resolve_store
from mlprof.results.layout import (
    LAYOUTS,
    SOURCE_DIRS,
    parse_model_segment,
    parse_runtime_segment,
)

_TASK_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")

#: seconds after its last change that a temporary file or directory counts as left over (a
#: younger one may belong to a task or a deletion that is still running)
LEFTOVER_AGE = 3600.0

#: the store's temporary names: directories renamed for deletion (``.<name>.mlprof-deleting-*``),
#: :func:`mlprof.util.atomic_path`'s files (``.<name>.<random>.tmp``) and ``.tmp*``,
#: :func:`mlprof.util.atomic_dir`'s directories (``.<name>.<8 random>``) and luigi's atomic
#: files (``<name>-luigi-tmp-<9 digits>``)
_TEMP_NAME = re.compile(r"\..*\.mlprof-deleting-.*|\.mlprof-deleting-.*|\..+\.tmp|\.tmp.*"
                        r"|.+-luigi-tmp-\d{9}")
_TEMP_DIR_NAME = re.compile(r"\..+\.[a-z0-9_]{8}")


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
    #: why the entry is ``corrupt``: the file and what is wrong with it
    problem: str | None = None

    @property
    def complete(self) -> bool:
        """Whether the outputs look complete (``status == "ok"``)."""
        return self.status == "ok"

    def to_dict(self) -> dict:
        """A JSON-serializable dict (with ``complete``)."""
        return {**asdict(self), "complete": self.complete}


@dataclass
class ScanResult:
    """The entries of a store plus what was seen but not followed."""

    store: str
    entries: list[StoreEntry]
    skipped_links: list[str] = field(default_factory=list)
    skipped_mounts: list[str] = field(default_factory=list)


# --- scanning ---------------------------------------------------------------------------------


def _entry_files(path: str, bounds: _Bounds | None = None, skip: Iterable[str] = ()
                 ) -> tuple[int, int, float, set[str], set[str]]:
    """Size, file count, newest mtime, top-level file names and directory names (no links
    followed, no other file system entered, ``skip`` left out)."""
    size = n_files = 0
    mtime = 0.0
    top_files: set[str] = set()
    top_dirs: set[str] = set()
    for dirpath, files, dirnames in _walk(path, bounds, skip):
        for name, st in files:
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


def is_leftover_name(name: str, is_dir: bool) -> bool:
    """Whether ``name`` is one of the store's temporary names (see :data:`LEFTOVER_AGE`)."""
    return bool(_TEMP_NAME.fullmatch(name) or (is_dir and _TEMP_DIR_NAME.fullmatch(name)))


def _newest_change(path: str, st: os.stat_result, bounds: _Bounds) -> float:
    """The newest mtime or ctime of ``path`` and everything below it (ctime: a rename)."""
    newest = max(st.st_mtime, st.st_ctime)
    if stat.S_ISDIR(st.st_mode):
        for _, files, _ in _walk(path, bounds):
            for _, fst in files:
                newest = max(newest, fst.st_mtime, fst.st_ctime)
    return newest


def _find_leftovers(task_dir: str, bounds: _Bounds, min_age: float
                    ) -> list[tuple[str, os.stat_result]]:
    """The store's temporary files and directories below ``task_dir`` unchanged for
    ``min_age`` seconds (not below another leftover)."""
    out = []
    now = time.time()
    stack = [task_dir]
    while stack:
        path = stack.pop()
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            if is_dir and bounds.crosses(e.path, st):
                continue
            if is_leftover_name(e.name, is_dir) and not stat.S_ISLNK(st.st_mode):
                if now - _newest_change(e.path, st, bounds) >= min_age:
                    out.append((e.path, st))
            elif is_dir and not e.name.startswith("."):
                stack.append(e.path)
    return sorted(out)


def _status(task: str, path: str, files: set[str], dirs: set[str]) -> tuple[str, int, str | None]:
    """``(status, failures, problem)`` of a version directory, judged by its family's
    declaration (:meth:`mlprof.results.families.Family.status`): ``ok``, ``partial``,
    ``corrupt`` (``problem`` names the file), ``failed``, ``cleaned`` (ExportOnnx without its
    ONNX) or ``empty``. A task without a declaration is ``ok`` once it holds anything."""
    out = {f for f in files if not _is_temp(f)}
    out_dirs = {d for d in dirs if not _is_temp(d)}
    fam = families.family(task)
    if fam is not None:
        return fam.status(path, out, out_dirs)
    failures = sum(1 for f in out if families.is_failure_record(f))
    if failures:
        return "failed", failures, None
    out = {f for f in out if not f.startswith("_failure")}
    return ("ok" if out or out_dirs else "empty"), 0, None


def _dirs(path: str, skipped: list[str], bounds: _Bounds | None = None) -> list[str]:
    """Sub-directories of ``path`` (sorted, no hidden ones); links are recorded in ``skipped``,
    directories on another file system in ``bounds.seen``: neither is followed."""
    out = []
    try:
        with os.scandir(path) as it:
            for e in it:
                if e.name.startswith("."):
                    continue
                if e.is_symlink():
                    skipped.append(e.path)
                elif e.is_dir(follow_symlinks=False):
                    if bounds is None or not bounds.crosses(e.path, e.stat(follow_symlinks=False)):
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


def _fill(entry: StoreEntry, names: Sequence[str], segs: Sequence[str]) -> StoreEntry:
    """Set ``entry``'s model, runtime and settings from the path segments ``segs``."""
    named = dict(zip(names, segs, strict=False))
    entry.settings = named.get("settings")
    if "model" in named:
        entry.model_segment = named["model"]
        for k, v in parse_model_segment(named["model"]).items():
            setattr(entry, k, v)
    if "runtime" in named:
        for k, v in parse_runtime_segment(named["runtime"]).items():
            setattr(entry, k, v)
    return entry


def _leftover_entry(task: str, names: Sequence[str], task_dir: str, path: str,
                    st: os.stat_result, bounds: _Bounds) -> StoreEntry:
    """A leftover as an entry: the task, model, runtime and version it sits in (at the
    version level, a directory renamed for deletion keeps its version's name)."""
    parts = os.path.relpath(path, task_dir).split(os.sep)
    segs, name = parts[:-1], parts[-1]
    version = None
    if task not in SOURCE_DIRS:
        if len(segs) > len(names):
            version = segs[len(names)]
        elif len(segs) == len(names) and _DELETING in name:
            version = name[1:].split(_DELETING, 1)[0] or None
    entry = _fill(StoreEntry(task=task, version=version, path=path, status="leftover"),
                  names, segs)
    if stat.S_ISDIR(st.st_mode):
        entry.size, entry.n_files, entry.mtime, _, _ = _entry_files(path, bounds)
    else:
        entry.size, entry.n_files, entry.mtime = st.st_size, 1, st.st_mtime
    return entry


def scan(store: str | os.PathLike | None = None, min_age: float | None = None) -> ScanResult:
    """Scan ``store`` (default: ``$MLP_STORE``) into entries, one per version directory, plus
    one per leftover (status ``leftover``) unchanged for ``min_age`` seconds (default
    :data:`LEFTOVER_AGE`).

    Top-level directories that do not look like a task (``CamelCase``) and hidden ones (law's
    ``.tmp``) are ignored, and so are the directories of unknown tasks not named like a model
    (``<name>__<hash>``); symbolic links (``skipped_links``) and other file systems mounted in
    the store (``skipped_mounts``) are never entered.
    """
    root = resolve_store(store)
    bounds = _Bounds.of(root)
    min_age = LEFTOVER_AGE if min_age is None else min_age
    skipped: list[str] = []
    entries: list[StoreEntry] = []
    for task_dir in _dirs(root, skipped, bounds):
        task = os.path.basename(task_dir)
        if not _TASK_NAME.match(task):
            continue
        names = _layout_for(task, task_dir)
        is_source = task in SOURCE_DIRS
        leftovers = _find_leftovers(task_dir, bounds, min_age) if known_task(task) else []
        # directories at the depth of the version (sources: of the model)
        levels: list[tuple[str, list[str]]] = [(task_dir, [])]
        for _ in range(len(names) + (0 if is_source else 1)):
            levels = [(d, segs + [os.path.basename(d)]) for p, segs in levels
                      for d in _dirs(p, skipped, bounds)]
            if not known_task(task) and levels and len(levels[0][1]) == 1:
                # an unknown task: only directories named like mlprof's model segments
                levels = [(d, segs) for d, segs in levels if layout.looks_like_model(segs[0])]
        for path, segs in levels:
            entry = _fill(StoreEntry(task=task, version=None if is_source else segs[-1],
                                     path=path), names, segs)
            size, n_files, mtime, files, dirs = _entry_files(
                path, bounds, skip=[p for p, _ in leftovers])
            entry.size, entry.n_files, entry.mtime = size, n_files, mtime
            if is_source:
                entry.status = "source"
            else:
                entry.status, entry.failures, entry.problem = _status(task, path, files,
                                                                       dirs)
            entries.append(entry)
        entries.extend(_leftover_entry(task, names, task_dir, p, st, bounds)
                       for p, st in leftovers)
    return ScanResult(store=root, entries=entries, skipped_links=sorted(skipped),
                      skipped_mounts=sorted(bounds.seen))


