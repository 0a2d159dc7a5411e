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
- **how**: ``fcntl.flock`` on that file. The kernel releases the lock when the holder's process
  dies, however it dies (SIGKILL, OOM killer, power cut of a container): there is no stale lock
  to clean up. The measurement child does not inherit the descriptor (it is forked from the
  measurement server, and the descriptor is close-on-exec), so only the holder can hold it.
- **who holds it**: the holder writes one JSON line into the lock file (pid, user, host, start
  time, its command line, what it measures), emptied again on release. A process that has to
  wait says so once, ``<label>: waiting for the measurement lock held by pid N (law run ...),
  measuring <what> since HH:MM:SS (lock file ...)``, and again every :data:`REPEAT_S` seconds.
  It waits in a blocking ``flock`` (no polling loop; the kernel wakes it when the lock is free,
  so two sweeps take turns branch by branch); the messages come from a helper thread.
- **re-entrant**: a thread that holds the lock may take it again (nested use does not deadlock);
  other threads of the same process wait like other processes. A process forked while the lock
  is held does not hold it.
- ``MLP_NO_LOCK=1`` turns it off, for when concurrent measurements are wanted on purpose (e.g.
  to study how much a second job disturbs the first) or the host has no usable shared
  directory. It is not needed for exclusive cluster nodes: there the lock is uncontended and
  costs a few microseconds. Measurements made without the lock record ``lock_wait_s: null`` in
  their provenance, so they can be told apart from protected ones.

Discovery and export do not take the lock: they do not measure and may run beside a measurement.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mlprof.errors import MLProfError

LOCK_NAME = "mlprof-measure.lock"
DEFAULT_LOCK_DIR = "/tmp"
#: seconds between two "still waiting" messages
REPEAT_S = 30.0
#: the first message waits up to this long for the new holder to write its record
RECORD_GRACE_S = 1.0
#: longest command line kept in the record
MAX_COMMAND = 200

logger = logging.getLogger("mlprof")


@dataclass(frozen=True)
class LockHold:
    """What :func:`measurement_lock` yields: the lock file (None: disabled) and how long this
    process waited for it in seconds (None: disabled; 0.0 when nested or uncontended)."""

    path: str | None
    wait_s: float | None


def lock_disabled() -> bool:
    """Whether ``$MLP_NO_LOCK`` turns the lock off (any value but empty or ``0``)."""
    return os.environ.get("MLP_NO_LOCK", "").strip() not in ("", "0")


def lock_path() -> str:
    """``$MLP_LOCK_DIR/mlprof-measure.lock`` (default ``/tmp/mlprof-measure.lock``)."""
    root = os.environ.get("MLP_LOCK_DIR", "").strip() or DEFAULT_LOCK_DIR
    return os.path.join(os.path.abspath(os.path.expanduser(os.path.expandvars(root))), LOCK_NAME)


def read_holder(path: str | None = None) -> dict[str, Any] | None:
    """The record of the process holding the lock at ``path`` (default :func:`lock_path`), or
    None when the file is empty, unreadable or half written. It may be stale if its holder was
    killed: the lock is then free although the record remains."""
    try:
        with open(path or lock_path(), "rb") as f:
            data = f.read(64 * 1024)
        info = json.loads(data.decode("utf-8", "replace").strip() or "null")
    except (OSError, ValueError):
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
        self.writable = False
        self.depth = 0
        self.path: str | None = None


_state = _State()


def _after_fork_in_child() -> None:
    # the child shares the parent's open file description (and with it the lock): closing its
    # copy of the descriptor leaves the parent's lock alone; the child holds nothing
    global _state
    if _state.fd is not None:
        with contextlib.suppress(OSError):
            os.close(_state.fd)
    _state = _State()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _open(path: str) -> tuple[int, bool]:
    """Open (or create, mode 0666) the lock file: ``(descriptor, writable)``."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        while True:
            try:
                return os.open(path, os.O_RDWR), True
            except FileNotFoundError:
                pass
            except PermissionError:  # a file we may not write: locking works, the record not
                return os.open(path, os.O_RDONLY), False
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:  # someone else created it just now
                continue
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o666)  # whatever the umask: every user can write the record
            return fd, True
    except OSError as e:
        raise MLProfError(
            f"cannot open the measurement lock {path}: {e.strerror or e}; set MLP_LOCK_DIR to a "
            "directory that every mlprof process on this machine can write (or MLP_NO_LOCK=1 "
            "to measure without it)", field="MLP_LOCK_DIR") from None


class _Announcer:
    """Says, from a helper thread, that (and for whom) this process waits, every REPEAT_S s."""

    def __init__(self, path: str, label: str, emit: Callable[[str], None]) -> None:
        self.path, self.label, self.emit = path, label, emit
        self.t0 = time.monotonic()
        self.stop = threading.Event()
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
        self._say(f"{prefix}waiting for the measurement lock held by {describe_holder(info)} "
                  f"(lock file {self.path})")
        while not self.stop.wait(REPEAT_S):
            waited = time.monotonic() - self.t0
            self._say(f"{prefix}still waiting ({waited:.0f} s) for the measurement lock held by "
                      f"{describe_holder(_live_holder(self.path))}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def _lock_file(path: str, start_announcer: Callable[[], None]) -> tuple[int, bool]:
    """Open ``path`` and take the exclusive lock on it, blocking; ``(descriptor, writable)``."""
    import fcntl

    while True:
        fd, writable = _open(path)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                start_announcer()
                fcntl.flock(fd, fcntl.LOCK_EX)  # Ctrl-C interrupts it
            # removed or replaced while we waited (a /tmp cleaner): nobody else would lock the
            # file we hold, so start again with the one at ``path``
            try:
                st, fst = os.stat(path), os.fstat(fd)
            except FileNotFoundError:
                os.close(fd)
                continue
            if (st.st_dev, st.st_ino) != (fst.st_dev, fst.st_ino):
                os.close(fd)
                continue
            return fd, writable
        except BaseException:
            os.close(fd)
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
    if lock_disabled():
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
                state.fd, state.writable = _lock_file(path, start_announcer)
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
    try:
        yield hold
    finally:
        state.depth -= 1
        if state.depth == 0 and state.fd is not None:
            fd, state.fd = state.fd, None
            if state.writable:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
            os.close(fd)  # releases the lock
        state.gate.release()
