"""Whether the store can take results at all, checked once before anything is measured.

A read-only store (a read-only mount, a directory of another user, a snapshot) or a full one
used to be found out only when the first branch saved its result: after minutes of measuring,
with exit 30 and a 50-line traceback per branch. :func:`check_store_writable` finds it up front
in one line naming the store and ``MLP_STORE`` (``law run`` exits 40 before it schedules
anything, :mod:`mlprof.tasks.framework.preflight`):

- the file system's flags and free space (``statvfs``): read-only, fewer than
  :data:`MIN_FREE_BYTES` available to this user, or no free inode;
- then a real write: a small file created, written and removed in the store (or, when the
  store does not exist yet, in the directory it will be created in). Permissions, ACLs, quotas,
  ``chattr +i`` and a read-only bind mount all answer to a write, whatever ``os.access`` says
  (root passes every ``os.access`` check).

No law import (layer ``results``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Callable

from mlprof.errors import MLProfError
from mlprof.results import layout

#: the least free space a store must have to start: the results of a sweep are a few MB (a
#: statistics file with its samples is < 2 MB), plus logs and failure records; with less, a run
#: would measure for minutes and then fail to save
MIN_FREE_BYTES = 16 << 20

#: the probe written into the store (one file system block)
PROBE_BYTES = 4096
PROBE_PREFIX = ".mlprof-write-check-"

_FIELD = "MLP_STORE"


def _existing(path: str) -> str:
    """``path`` or its nearest existing ancestor (where the store will be created)."""
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


def _write_error(e: OSError, store: str) -> MLProfError:
    if e.errno == errno.EROFS:
        return MLProfError("is on a read-only file system; results cannot be saved", store,
                           _FIELD)
    if e.errno in (errno.EACCES, errno.EPERM):
        return MLProfError(f"is not writable by {_user()} ({e.strerror}); results cannot be "
                           "saved", store, _FIELD)
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return MLProfError(f"is full ({e.strerror}); results cannot be saved", store, _FIELD)
    return MLProfError(f"cannot be written: {e.strerror or e}", store, _FIELD)


def check_store_writable(store: str | None = None, *,
                         statvfs: Callable[[str], os.statvfs_result] = os.statvfs,
                         min_free: int = MIN_FREE_BYTES) -> str:
    """The store directory (default ``$MLP_STORE``) if results can be written into it, else a
    one-line :class:`MLProfError` naming it and ``MLP_STORE``.

    ``statvfs`` is a parameter so that a test can show a full file system without filling
    one. Creates nothing that stays: the probe file is removed at once.
    """
    store = store or layout.store_base()
    where = _existing(store)
    if where == store and not os.path.isdir(store):
        raise MLProfError("is not a directory", store, _FIELD)
    try:
        st = statvfs(where)
    except OSError as e:
        raise MLProfError(f"cannot be examined: {e.strerror or e}", store, _FIELD) from None
    if st.f_flag & getattr(os, "ST_RDONLY", 1):
        raise MLProfError("is on a read-only file system; results cannot be saved", store,
                          _FIELD)
    free = st.f_bavail * st.f_frsize
    if free < min_free:
        raise MLProfError(f"is full: {free / 2**20:.1f} MiB free, mlprof needs at least "
                          f"{min_free / 2**20:.0f} MiB to save results", store, _FIELD)
    if st.f_files and st.f_favail == 0:
        raise MLProfError("is full: no free inodes (files) left; results cannot be saved",
                          store, _FIELD)
    if not os.path.isdir(where):
        raise MLProfError(f"cannot be created: {where} is not a directory", store, _FIELD)
    probe = os.path.join(where, f"{PROBE_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as e:
        raise _write_error(e, store) from None
    try:
        os.write(fd, b"\0" * PROBE_BYTES)
        os.fsync(fd)  # delayed allocation: a full disk answers ENOSPC here, not at write
    except OSError as e:
        raise _write_error(e, store) from None
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(probe)
    return store
