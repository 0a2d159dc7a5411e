"""The store's file-system guards: which directory is a store, walking it and removing from it
without following a symbolic link or crossing into another file system (no law import).

A store may hold links to anywhere and mount points (a model directory mounted read-only, a
bind mount of another store): :class:`_Bounds` knows the store's device and the mount points
below it, :func:`_walk` never enters a link or another file system, and :func:`_remove` renames
a directory away before removing it by file descriptors, so that law never sees an output
directory half deleted and nothing outside the store is ever removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from mlprof.errors import MLProfError
from mlprof.results import layout

#: the infix of a directory renamed for deletion (``.<name>.mlprof-deleting-<8 hex>``)
_DELETING = ".mlprof-deleting-"


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


# --- removing without crossing links or file systems -----------------------------------------


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


