"""One measurement at a time per machine, across every mlprof process and every user.

luigi's resource ``mlprof_measure`` keeps the branches of *one* ``law run`` from measuring at
once; two ``law run`` in two terminals, a nightly cron run beside an interactive one, or two
users' sweeps would still share the CPU and spoil each other's numbers. :func:`measurement_lock`
is held (in the parent, around the child process) for the whole of every measurement:

- **where**: ``$MLP_LOCK_DIR/mlprof-measure.lock``, by default ``/tmp/mlprof-measure.lock``.
  The lock is about the machine, not about a store or a checkout: two stores, two checkouts or
  two users on one host still compete for the same cores, so the default is a host-wide path
  that every process sees. ``/tmp`` (rather than ``$TMPDIR``, which is often per user or per job)
  is world-writable and sticky: the first process creates the file with mode ``0666`` whatever
  its umask, so every other user can open it (existing files are opened without ``O_CREAT``,
  which ``fs.protected_regular`` would refuse for another user's file in a sticky directory).
  Processes that do not share ``/tmp`` (containers, systemd ``PrivateTmp=``, batch systems with a
  private ``/tmp`` per job) do not share the lock: give them a common ``$MLP_LOCK_DIR``. It
  should be a local directory: on a network file system shared by several hosts it would make
  all of them take turns.
- **how**: ``fcntl.flock`` on the lock *directory* (``$MLP_LOCK_DIR`` itself), then on the lock
  file in it. The kernel releases both when the holder's process dies, however it dies (SIGKILL,
  OOM killer, power cut of a container): there is no stale lock to clean up. The directory is
  the lock because a /tmp cleaner may delete the lock file while it is held (a newcomer would
  create and lock a new file and measure beside the holder) but cannot delete ``/tmp``; the
  file lock keeps mlprof versions that lock only the file taking turns with this one. After
  each ``flock`` the path is checked to still name the locked inode, else it starts again. The
  measurement child does not inherit the descriptors (it is forked from the measurement
  server, and they are close-on-exec), so only the holder holds it.
- **what it will not use**: the lock file is opened with ``O_NOFOLLOW | O_NONBLOCK`` relative
  to the directory's descriptor, created only with ``O_CREAT | O_EXCL``, and judged on the open
  descriptor: a symbolic link (dangling or not: a link planted in /tmp would make every user,
  root included, write into and empty its target), a FIFO, a device, a socket, a directory, a
  file with several names (a hard link), another user's file that is not mode 0666 (mlprof
  makes them so, for every user to share), or a file holding anything but an mlprof record is
  one line naming the path and ``MLP_LOCK_DIR`` (exit 40), never a spin, a hang or a write.
  So is a lock directory that others may write into without the sticky bit, unless it belongs
  to this user or root. ``MLP_LOCK_DIR`` must be absolute (a relative one would give every
  working directory a lock of its own). ``law run`` checks all of this before it schedules
  anything (:func:`check_lock`). Not covered: a user who holds the lock forever (anyone who
  can read the directory can ``flock`` it, as with any shared lock), and a ``$MLP_LOCK_DIR``
  other than ``/tmp`` deleted whole while held (it must be emptied first, and mlprof's record
  is in it).
- **who holds it**: the holder writes one JSON line into the lock file (pid, user, host, start
  time, its command line, what it measures), emptied again on release. A process that has to
  wait says so once, ``<label>: waiting for the measurement lock held by pid N (law run ...),
  measuring <what> since HH:MM:SS (lock file ...)``, and again every :data:`REPEAT_S` seconds.
  It waits in a blocking ``flock`` (no polling loop; the kernel wakes it when the lock is free,
  so two sweeps take turns branch by branch); the messages come from a helper thread.
- **re-entrant**: a thread that holds the lock may take it again (nested use does not deadlock);
  other threads of the same process wait like other processes. A process forked while the lock
  is held does not hold it.
- ``MLP_NO_LOCK=1`` (or ``true``, ``yes``, ``on``) turns it off; ``0``, ``false``, ``no``, ``off``
  or empty keep it, and any other value is a one-line error. It is for when concurrent
  measurements are wanted on purpose (e.g. to study how much a second job disturbs the first)
  or the host has no usable shared directory. It is not needed for exclusive cluster nodes:
  there the lock is uncontended and costs a few microseconds. Measurements made without the
  lock record ``lock_wait_s: null`` in their provenance, so they can be told apart from
  protected ones.

Discovery and export do not take the lock: they do not measure and may run beside a measurement.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import logging
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mlprof.errors import MLProfError
from mlprof.ingest import file_kind, printable, read_bytes
from mlprof.measure.settings import env_switch
from mlprof.progress import own_voice

LOCK_NAME = "mlprof-measure.lock"
DEFAULT_LOCK_DIR = "/tmp"
#: seconds between two "still waiting" messages: a long wait speaks like any long step, at
#: least every 5 s (issue 38; it was 30 s, and a sweep queued behind another's looked hung)
REPEAT_S = 5.0
#: the first message waits up to this long for the new holder to write its record
RECORD_GRACE_S = 1.0
#: holders (pid) this process has announced waiting for: a sweep that waits for the same other
#: run at each of its 11 points says so once (the quick start printed 10 identical lines under
#: another helper's run); ``still waiting`` lines, every REPEAT_S, still come
_ANNOUNCED: set[int] = set()
#: longest command line kept in the record
MAX_COMMAND = 200

logger = logging.getLogger("mlprof")


@dataclass(frozen=True)
class LockHold:
    """What :func:`measurement_lock` yields: the lock file (None: disabled) and how long this
    process waited for it in seconds (None: disabled; 0.0 when nested or uncontended)."""

    path: str | None
    wait_s: float | None


#: the values of ``$MLP_NO_LOCK`` that turn the lock off, and those that keep it (any other
#: value is refused: ``MLP_NO_LOCK=false`` must not turn it off)
NO_LOCK_OFF = ("1", "true", "yes", "on")
NO_LOCK_KEEP = ("", "0", "false", "no", "off")

#: the largest holder record read back (a record is a few hundred bytes)
MAX_RECORD = 64 * 1024


def lock_disabled() -> bool:
    """Whether ``$MLP_NO_LOCK`` turns the lock off: ``1``, ``true``, ``yes`` or ``on`` (any case)
    turn it off; ``0``, ``false``, ``no``, ``off`` or empty keep it; anything else is a one-line
    error, because a guess either way would be wrong for someone (``false`` used to turn it
    off)."""
    return env_switch("MLP_NO_LOCK", NO_LOCK_OFF, NO_LOCK_KEEP,
                      "turn the measurement lock off", "keep it")


def lock_dir() -> str:
    """``$MLP_LOCK_DIR`` (default ``/tmp``), absolute: a relative directory would give each
    working directory a lock of its own, which is no lock at all; it is a one-line error."""
    raw = os.environ.get("MLP_LOCK_DIR", "")
    root = os.path.expanduser(os.path.expandvars(raw.strip() or DEFAULT_LOCK_DIR))
    if not os.path.isabs(root):
        raise MLProfError(f"{printable(raw)!r} is a relative path: every working directory would "
                          "have a lock of its own; give an absolute directory that every mlprof "
                          "process on this machine shares", field="MLP_LOCK_DIR")
    return os.path.normpath(root)


def lock_path() -> str:
    """``$MLP_LOCK_DIR/mlprof-measure.lock`` (default ``/tmp/mlprof-measure.lock``)."""
    return os.path.join(lock_dir(), LOCK_NAME)


def read_holder(path: str | None = None) -> dict[str, Any] | None:
    """The record of the process holding the lock at ``path`` (default :func:`lock_path`), or
    None when the file is empty, unreadable, half written or not a regular file (read through
    :func:`mlprof.ingest.read_bytes`: a link is not followed, a FIFO never hangs the reader). It
    may be stale if its holder was killed: the lock is then free although the record remains."""
    try:
        data = read_bytes(path or lock_path(), MAX_RECORD, follow_links=False)
        info = json.loads(data.decode("utf-8", "replace").strip() or "null")
    except (MLProfError, ValueError):
        return None
    return info if isinstance(info, dict) and isinstance(info.get("pid"), int) else None


def _alive(info: dict[str, Any]) -> bool:
    """Whether the record's process still runs (records of other hosts are trusted)."""
    if info.get("host") != socket.gethostname():
        return True
    try:
        os.kill(info["pid"], 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _live_holder(path: str) -> dict[str, Any] | None:
    """The record at ``path`` if its process still runs (else a stale one, or none)."""
    info = read_holder(path)
    return info if info is not None and _alive(info) else None


def _command() -> str:
    argv = list(sys.argv) or ["?"]
    argv[0] = "python -c" if argv[0] == "-c" else os.path.basename(argv[0])
    if len(argv) > 1 and argv[0].endswith(" " + argv[1]):  # law run sets argv[0] to "law run"
        del argv[1]
    text = " ".join(argv)
    return text if len(text) <= MAX_COMMAND else text[:MAX_COMMAND - 3] + "..."


def describe_holder(info: dict[str, Any] | None) -> str:
    """``pid N (command), measuring X since HH:MM:SS`` for a holder record."""
    if info is None:
        return "another process (its record is missing from the lock file)"
    text = f"pid {info['pid']}"
    if info.get("user") and info["user"] != _user():
        text += f" of user {info['user']}"
    if info.get("host") and info["host"] != socket.gethostname():
        text += f" on {info['host']}"
    text += f" ({info.get('command', '?')})"
    if info.get("label"):
        text += f", measuring {info['label']}"
    if isinstance(info.get("since_unix"), (int, float)):
        text += " since " + time.strftime("%H:%M:%S", time.localtime(info["since_unix"]))
    return text


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return str(os.getuid())


class _State:
    """This process's hold: the gate between its threads, the descriptor, the nesting depth."""

    def __init__(self) -> None:
        self.gate = threading.RLock()
        self.fd: int | None = None
        self.dir_fd: int | None = None
        self.writable = False
        self.depth = 0
        self.path: str | None = None


_state = _State()


def _after_fork_in_child() -> None:
    # the child shares the parent's open file description (and with it the lock): closing its
    # copy of the descriptor leaves the parent's lock alone; the child holds nothing
    global _state
    for fd in (_state.fd, _state.dir_fd):
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
    _state = _State()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


#: how the lock file is opened: never through a symbolic link, never blocking (a FIFO), never
#: inherited by a child
_FILE_FLAGS = (getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))
#: how often opening the lock file is tried while it appears and disappears under us
_OPEN_TRIES = 50
_REMEDY = ("remove it, or set MLP_LOCK_DIR to a directory that only mlprof uses (or "
           "MLP_NO_LOCK=1 to measure without the lock)")


def _refuse(path: str, what: str) -> MLProfError:
    """The one-line error for a lock path mlprof will not use, naming it and MLP_LOCK_DIR."""
    return MLProfError(f"the measurement lock {printable(path)} {what}; {_REMEDY}",
                       field="MLP_LOCK_DIR")


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name}"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _open_dir(directory: str) -> int:
    """Create (if missing) and open the lock directory; its descriptor is the lock itself.

    The directory is the lock because it cannot be taken away while held: a /tmp cleaner may
    delete the lock *file* of a running measurement (a newcomer would then create and lock a
    fresh file and measure beside it), but not ``/tmp``. A directory that other users may write
    into is accepted only when it is sticky (like ``/tmp``) or belongs to this user or root:
    otherwise anyone could swap the lock file between our checks and our writes.
    """
    try:
        os.makedirs(directory, exist_ok=True)
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                      | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise MLProfError(
            f"cannot open the measurement lock {printable(os.path.join(directory, LOCK_NAME))}: "
            f"{e.strerror or e}; set MLP_LOCK_DIR to a directory that every mlprof process on "
            "this machine can write (or MLP_NO_LOCK=1 to measure without it)",
            field="MLP_LOCK_DIR") from None
    st = os.fstat(dfd)
    if st.st_uid not in (0, os.geteuid()) and st.st_mode & 0o022 and \
            not st.st_mode & stat.S_ISVTX:
        os.close(dfd)
        raise MLProfError(
            f"{printable(directory)} belongs to {_owner(st.st_uid)}, and others may write in it "
            f"without the sticky bit (mode {stat.S_IMODE(st.st_mode):04o}): anyone could replace "
            "the measurement lock in it; use a directory like /tmp (mode 1777) or your own",
            field="MLP_LOCK_DIR")
    return dfd


def _vet(fd: int, path: str) -> None:
    """Refuse (close ``fd`` and raise) a lock file mlprof must not use or write: not a regular
    file (a FIFO, a device, a directory), a hard link to another file (the owner check would
    pass for root's own files linked into /tmp), or another user's file that mlprof did not
    make (mlprof makes them mode 0666 so that every user can share them)."""
    st = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = f"is {file_kind(st.st_mode)}, not a lock file"
    elif st.st_nlink != 1:
        problem = f"has {st.st_nlink} names (a hard link to another file), not a lock file"
    elif st.st_uid != os.geteuid() and stat.S_IMODE(st.st_mode) != 0o666:
        problem = (f"belongs to {_owner(st.st_uid)} and is not a lock file that mlprof made "
                   f"(mode {stat.S_IMODE(st.st_mode):04o}, mlprof makes them 0666)")
    if problem:
        os.close(fd)
        raise _refuse(path, problem)


def _open_error(e: OSError, dfd: int, path: str) -> MLProfError:
    """What a failed ``open`` of the lock file says: what is at the path, in words."""
    if e.errno == errno.ELOOP:
        target = ""
        with contextlib.suppress(OSError):
            link = os.readlink(LOCK_NAME, dir_fd=dfd)
            dangling = not os.path.exists(os.path.join(os.path.dirname(path), link))
            target = f" to {printable(link)}" + (" (dangling)" if dangling else "")
        return _refuse(path, f"is a symbolic link{target}; not followed")
    with contextlib.suppress(OSError):
        st = os.lstat(LOCK_NAME, dir_fd=dfd)
        if not stat.S_ISREG(st.st_mode):
            return _refuse(path, f"is {file_kind(st.st_mode)}, not a lock file")
    return _refuse(path, f"cannot be opened: {e.strerror or e}")


def _open(dfd: int, path: str) -> tuple[int, bool]:
    """Open (or create, mode 0666) the lock file in the directory ``dfd``:
    ``(descriptor, writable)``.

    Never follows a symbolic link (``O_NOFOLLOW``: a link planted in /tmp would make every user,
    root included, write into and empty its target), never blocks (``O_NONBLOCK``: a FIFO), and
    judges the file on the open descriptor (:func:`_vet`). A new file is created with
    ``O_CREAT|O_EXCL`` (never an existing one); an existing one is opened without ``O_CREAT``,
    which ``fs.protected_regular`` would refuse for another user's file in a sticky directory.
    """
    for _ in range(_OPEN_TRIES):
        writable = True
        try:
            fd = os.open(LOCK_NAME, os.O_RDWR | _FILE_FLAGS, dir_fd=dfd)
        except FileNotFoundError:
            try:
                fd = os.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_EXCL | _FILE_FLAGS, 0o666,
                             dir_fd=dfd)
            except FileExistsError:  # someone else created it just now
                continue
            except OSError as e:
                raise _refuse(path, f"cannot be created: {e.strerror or e}") from None
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o666)  # whatever the umask: every user can write the record
        except PermissionError:  # a file we may not write: locking works, the record not
            writable = False
            try:
                fd = os.open(LOCK_NAME, os.O_RDONLY | _FILE_FLAGS, dir_fd=dfd)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise _open_error(e, dfd, path) from None
        except OSError as e:
            raise _open_error(e, dfd, path) from None
        _vet(fd, path)
        return fd, writable
    raise _refuse(path, f"appeared and disappeared {_OPEN_TRIES} times while opened")


def _check_record(fd: int, path: str) -> None:
    """Refuse (raise) a lock file that holds something other than a holder record: mlprof
    writes into and empties only files that hold nothing or its own record. Called with the lock
    held, when nobody writes into it."""
    data = os.pread(fd, MAX_RECORD + 1, 0)
    if not data.strip():
        return
    try:
        info = json.loads(data.decode("utf-8"))
    except ValueError:
        info = None
    if len(data) > MAX_RECORD or not (isinstance(info, dict) and "pid" in info):
        raise _refuse(path, f"holds {len(data)}{'+' if len(data) > MAX_RECORD else ''} bytes "
                      "that are not a holder record of mlprof; not written")


def check_lock() -> str | None:
    """Check the lock's settings and file up front, without taking the lock: the path (None
    when ``$MLP_NO_LOCK`` turns it off) or a one-line :class:`MLProfError` (exit 40 under
    ``law run``, before anything is measured)."""
    if lock_disabled():
        return None
    path = lock_path()
    dfd = _open_dir(os.path.dirname(path))
    try:
        fd, _ = _open(dfd, path)
        os.close(fd)
    finally:
        os.close(dfd)
    return path


class _Announcer:
    """Says, from a helper thread, that (and for whom) this process waits, every REPEAT_S s."""

    def __init__(self, path: str, label: str, emit: Callable[[str], None]) -> None:
        self.path, self.label, self.emit = path, label, emit
        self.t0 = time.monotonic()
        self.stop = threading.Event()
        # it speaks for itself: the run's own watcher is quiet meanwhile (mlprof.progress)
        self.voice: contextlib.AbstractContextManager | None = own_voice()
        self.voice.__enter__()
        self.thread = threading.Thread(target=self._run, name="mlprof-lock-wait", daemon=True)
        self.thread.start()

    def _say(self, text: str) -> None:
        try:
            self.emit(text)
        except Exception:  # a broken callback must not break the measurement
            logger.debug("measurement lock message failed", exc_info=True)

    def _run(self) -> None:
        # the new holder writes its record right after locking: give it a moment
        deadline = self.t0 + RECORD_GRACE_S
        while True:
            info = _live_holder(self.path)
            if info is not None or time.monotonic() >= deadline:
                break
            if self.stop.wait(0.1):
                return
        prefix = f"{self.label}: " if self.label else ""
        pid = info.get("pid") if info is not None else None
        if not isinstance(pid, int) or pid not in _ANNOUNCED:
            if isinstance(pid, int):
                _ANNOUNCED.add(pid)
            self._say(f"{prefix}waiting for the measurement lock held by {describe_holder(info)} "
                      f"(lock file {self.path})")
        while not self.stop.wait(REPEAT_S):
            waited = time.monotonic() - self.t0
            self._say(f"{prefix}still waiting ({waited:.0f} s) for the measurement lock held by "
                      f"{describe_holder(_live_holder(self.path))}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        voice, self.voice = self.voice, None
        if voice is not None:
            voice.__exit__(None, None, None)


def _flock(fd: int, start_announcer: Callable[[], None]) -> None:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        start_announcer()
        fcntl.flock(fd, fcntl.LOCK_EX)  # Ctrl-C interrupts it


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _lock_file(path: str, start_announcer: Callable[[], None]) -> tuple[int, int, bool]:
    """Take the exclusive lock, blocking: ``(directory descriptor, file descriptor,
    writable)``.

    The lock is ``flock`` on the lock *directory* (it cannot be deleted while held, unlike the
    file), then on the lock file (the holder's record, and what mlprof versions before the
    directory lock take). After each ``flock`` the path is checked to still name the locked
    inode (``lstat`` against ``fstat``); if it was replaced while we waited, we start again.
    """
    directory = os.path.dirname(path)
    while True:
        dfd = _open_dir(directory)
        try:
            _flock(dfd, start_announcer)
            try:
                if not _same(os.stat(directory), os.fstat(dfd)):
                    os.close(dfd)
                    continue
            except FileNotFoundError:
                os.close(dfd)
                continue
            while True:
                fd, writable = _open(dfd, path)
                try:
                    _flock(fd, start_announcer)
                    try:
                        same = _same(os.lstat(LOCK_NAME, dir_fd=dfd), os.fstat(fd))
                    except FileNotFoundError:
                        same = False
                    if not same:  # removed or replaced while we waited: lock the one there now
                        os.close(fd)
                        continue
                    _check_record(fd, path)
                    return dfd, fd, writable
                except BaseException:
                    os.close(fd)
                    raise
        except BaseException:
            os.close(dfd)
            raise


def _write_record(fd: int, label: str) -> None:
    record = json.dumps({
        "pid": os.getpid(), "user": _user(), "host": socket.gethostname(),
        "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "since_unix": time.time(), "command": _command(), "label": label}) + "\n"
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode(), 0)


@contextlib.contextmanager
def measurement_lock(label: str = "", wait_message: Callable[[str], None] | None = None
                     ) -> Iterator[LockHold]:
    """Hold the machine-wide measurement lock for the ``with`` block.

    ``label`` says what is measured (in this process's waiting messages and in the record other
    processes see). ``wait_message`` receives the waiting messages (from a helper thread);
    default: the ``mlprof`` logger at WARNING level, which ``law run`` shows. Yields a
    :class:`LockHold` with the time waited. With ``MLP_NO_LOCK=1``, does nothing (``path`` and
    ``wait_s`` None).
    """
    if lock_disabled():  # raises for a value it does not take
        _settle()
        yield LockHold(None, None)
        return
    emit = wait_message or logger.warning
    path = lock_path()
    t0 = time.monotonic()
    announcer: list[_Announcer] = []

    def start_announcer() -> None:
        if not announcer:
            announcer.append(_Announcer(path, label, emit))

    state = _state
    try:
        if not state.gate.acquire(blocking=False):  # another thread of this process holds it
            start_announcer()
            state.gate.acquire()
        try:
            if state.depth == 0:
                state.dir_fd, state.fd, state.writable = _lock_file(path, start_announcer)
                state.path = path
                if state.writable:
                    _write_record(state.fd, label)
            state.depth += 1
        except BaseException:
            state.gate.release()
            raise
    finally:
        for a in announcer:
            a.close()
    hold = LockHold(state.path, round(time.monotonic() - t0, 3) if state.depth == 1 else 0.0)
    if state.depth == 1:
        try:
            _settle()
        except BaseException:
            _release(state)
            raise
    try:
        yield hold
    finally:
        _release(state)


def _release(state: _State) -> None:
    """Leave one level of the lock; the last one releases it."""
    state.depth -= 1
    if state.depth == 0 and state.fd is not None:
        fd, state.fd = state.fd, None
        dfd, state.dir_fd = state.dir_fd, None
        if state.writable:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
        os.close(fd)  # releases the lock
        if dfd is not None:
            os.close(dfd)
    state.gate.release()


#: what this process must have finished before it measures (:func:`before_measuring`)
_BEFORE: list[Callable[[], None]] = []


def before_measuring(wait: Callable[[], None]) -> None:
    """Register ``wait``, called by :func:`measurement_lock` once the lock is held and before
    the measurement starts (also without the lock): work this process started in the
    background that must not run beside a timed call waits there to be done (the drawing
    process's imports: :func:`mlprof.plotting.drawer.settle`). Registered once per function."""
    if wait not in _BEFORE:
        _BEFORE.append(wait)


def _settle() -> None:
    for wait in list(_BEFORE):
        wait()
