"""Store management: list, clean and delete results in ``$MLP_STORE`` (no law import).

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

import contextlib
import errno
import fnmatch
import os
import re
import stat
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field

from mlprof.errors import MLProfError
from mlprof.results import families, layout
from mlprof.results.layout import (
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


@dataclass
class ScanResult:
    """The entries of a store plus what was seen but not followed."""

    store: str
    entries: list[StoreEntry]
    skipped_links: list[str] = field(default_factory=list)
    skipped_mounts: list[str] = field(default_factory=list)


def default_store() -> str:
    """``$MLP_STORE``, else ``$MLP_BASE/data/store`` (as the tasks use it)."""
    return layout.store_base()


def resolve_store(store: str | os.PathLike | None) -> str:
    """The store directory as a real path; errors name the store and ``--store``.

    None and "" mean the default store (as an empty ``$MLP_STORE`` does).
    """
    raw = os.fspath(store) if store is not None else ""
    raw = raw or default_store()
    path = os.path.realpath(os.path.expandvars(os.path.expanduser(raw)))
    if not os.path.isdir(path):
        raise MLProfError("store directory does not exist", raw, "--store")
    if path == os.path.sep or path == os.path.realpath(os.path.expanduser("~")):
        raise MLProfError("refusing to treat this directory as a store", raw, "--store")
    return path


# --- walking without crossing links or file systems ------------------------------------------


def _unescape_mount(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _mount_points(root: str) -> set[str]:
    """Mount points strictly below ``root`` (from ``/proc/self/mountinfo``; none elsewhere).

    A bind mount of the store's own file system has the store's ``st_dev``: only this list
    tells it apart.
    """
    out: set[str] = set()
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 4:
                    point = _unescape_mount(parts[4])
                    if point.startswith(root.rstrip(os.sep) + os.sep):
                        out.add(point)
    except OSError:
        pass
    return out


@dataclass
class _Bounds:
    """The file system of a store: its device and the mount points below it."""

    root: str
    dev: int
    mounts: set[str]
    seen: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, root: str) -> _Bounds:
        return cls(root, os.stat(root).st_dev, _mount_points(root))

    def crosses(self, path: str, st: os.stat_result) -> bool:
        """Whether the directory ``path`` (``st``: its lstat) is on another file system or a
        mount point; recorded in ``seen``."""
        if st.st_dev != self.dev or path in self.mounts:
            if path not in self.seen:
                self.seen.append(path)
            return True
        return False

    def below_mount(self, path: str) -> str | None:
        """The mount point that ``path`` (a real path) is at or below, if any."""
        return next((m for m in self.mounts if path == m or path.startswith(m + os.sep)),
                    None)


def _walk(top: str, bounds: _Bounds | None = None, skip: Iterable[str] = ()
          ) -> Iterator[tuple[str, list[tuple[str, os.stat_result]], list[str]]]:
    """``(dirpath, [(file name, lstat)], [directory names])`` below ``top``, top-down.

    Links are files here (never followed); a directory on another file system than
    ``bounds``' (default: ``top``'s) or a mount point is not entered (``bounds.seen``);
    paths in ``skip`` are left out.
    """
    bounds = bounds or _Bounds(top, os.lstat(top).st_dev, set())
    skip = set(skip)
    stack = [top]
    while stack:
        path = stack.pop()
        files: list[tuple[str, os.stat_result]] = []
        dirs: list[str] = []
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            continue
        for e in sorted(entries, key=lambda e: e.name):
            if e.path in skip:
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if not bounds.crosses(e.path, st):
                    dirs.append(e.name)
            else:
                files.append((e.name, st))
        yield path, files, dirs
        stack.extend(os.path.join(path, d) for d in reversed(dirs))


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


def _inside(path: str, root: str) -> bool:
    """Whether ``path``'s parent resolves inside ``root`` and ``path`` is not ``root`` itself."""
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return (parent == root or parent.startswith(root + os.sep)) and \
        os.path.abspath(path) != root


def _other_fs(path: str) -> MLProfError:
    return MLProfError("another file system is mounted here: refusing to remove anything "
                       "(nothing was removed)", path, "--store")


def _check_tree(path: str, bounds: _Bounds) -> tuple[int, int, bool]:
    """Size, file count and directory-ness of what removing ``path`` removes; an error
    (naming the mount point) when its directory, itself or anything below it is on another
    file system than the store or a mount point. Links count as files (never followed)."""
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    mount = bounds.below_mount(parent)
    if mount or os.stat(parent).st_dev != bounds.dev:
        raise _other_fs(mount or parent)
    real = os.path.join(parent, os.path.basename(path))  # as the mount table spells it
    st = os.lstat(real)
    if not stat.S_ISDIR(st.st_mode):
        return st.st_size, 1, False
    if bounds.crosses(real, st):
        raise _other_fs(real)
    seen = len(bounds.seen)
    size = n = 0
    for _, files, _ in _walk(real, bounds):
        size += sum(fst.st_size for _, fst in files)
        n += len(files)
    if len(bounds.seen) > seen:
        raise _other_fs(bounds.seen[seen])
    return size, n, True


def _rm_in(dir_fd: int, name: str, shown: str, bounds: _Bounds) -> None:
    """Remove ``name`` in the directory ``dir_fd`` (``shown``: its path, for errors) and all
    below it, by file descriptors: links are removed as links, and a directory on another
    file system stops the removal (the check before removing makes that a race only)."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        if bounds.crosses(shown, os.fstat(fd)):
            raise _other_fs(shown)
        with os.scandir(fd) as it:
            children = [e.name for e in it]
        for child in children:
            _rm_in(fd, child, os.path.join(shown, child), bounds)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)


def _rmtree(path: str, bounds: _Bounds) -> None:
    fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        _rm_in(fd, os.path.basename(path), path, bounds)
    finally:
        os.close(fd)


def _remove(path: str, root: str, bounds: _Bounds | None = None) -> None:
    """Remove a file, link or directory below ``root``; a directory is renamed away first."""
    if not _inside(path, root):
        raise MLProfError("refusing to remove a path outside the store", path, "--store")
    bounds = bounds or _Bounds.of(root)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)  # files and links (a link's target is never touched)
        return
    # rename first: the output directory disappears in one step (no half-deleted state)
    name = os.path.basename(path)
    tmp = os.path.join(os.path.dirname(path),
                       name if _DELETING in name else
                       f".{name}{_DELETING}{uuid.uuid4().hex[:8]}")
    if tmp != path:
        os.rename(path, tmp)
    try:
        _rmtree(tmp, bounds)
    except (OSError, MLProfError) as e:
        err = _os_error(e, root) if isinstance(e, OSError) else e
        raise MLProfError(f"{err.message} (the rest is left as {os.path.basename(tmp)}: "
                          "mlprof store list shows it, mlprof store clean removes it)",
                          err.file, err.field) from None


def _os_error(e: OSError, root: str) -> MLProfError:
    """An OS error while removing, as one line: a read-only store, no permission, other."""
    if e.errno == errno.EROFS:
        return MLProfError("the store is read-only", root, "--store")
    if e.errno in (errno.EACCES, errno.EPERM):
        return MLProfError("the store is read-only (permission denied)",
                           e.filename or root, "--store")
    return MLProfError(f"cannot remove: {e.strerror or e}", e.filename or root, "--store")


@contextlib.contextmanager
def _one_line_errors(root: str) -> Iterator[None]:
    try:
        yield
    except OSError as e:
        raise _os_error(e, root) from None


def _check_writable(root: str) -> None:
    """A one-line error for a store on a read-only file system (before removing anything)."""
    try:
        read_only = bool(os.statvfs(root).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return
    if read_only:
        raise MLProfError("the store is read-only", root, "--store")


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
    lines += [f"corrupt: {os.path.relpath(e.path, store)}/{e.problem}" for e in entries
              if e.status == "corrupt" and e.problem]
    t = totals(entries)
    lines.append(f"{t['entries']} entries, {t['versions']} versions, {t['models']} models, "
                 f"{t['files']} files, {human_size(t['size'])} in {store}")
    return "\n".join(lines)


def format_removals(removals: Sequence[Removal], store: str, dry_run: bool) -> str:
    """One line per removal and the bytes freed (``would`` in a dry run)."""
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb} {os.path.relpath(r.path, store)}"
             f"{os.sep if r.is_dir else ''} ({r.n_files} files, {human_size(r.size)})"
             for r in removals]
    freed = sum(r.size for r in removals)
    lines.append(f"{verb} {len(removals)} item(s), {sum(r.n_files for r in removals)} files: "
                 f"{freed} bytes ({human_size(freed)}) {'would be ' if dry_run else ''}freed"
                 if removals else "nothing to remove")
    return "\n".join(lines)
