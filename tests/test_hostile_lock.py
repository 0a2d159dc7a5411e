"""Issue 22, cases 1 and 7: the measurement lock treats whatever it finds at its path as hostile,
and a read-only or full store fails once, up front, exit 40.

Each hostile case runs in a subprocess with a time bound (a regression spins or hangs no CI),
as the user running the tests and, when that is root, as a second user (``nobody`` through
``setpriv``): the lock is shared by every user of a machine, so it must hold for both sides.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mlprof.errors import MLProfError
from mlprof.measure.lock import LOCK_NAME, lock_disabled, lock_path, measurement_lock
from mlprof.results.writable import check_store_writable
from tests.helpers import FAST, REPO, files_in, law_run

IS_ROOT = os.geteuid() == 0
NOBODY = 65534
SETPRIV = shutil.which("setpriv")
USERS = ["self", "nobody"]

#: takes the lock once; prints the one-line error and exits 40 as law run would
TAKE = """
import sys
from mlprof.errors import MLProfError
from mlprof.measure.lock import measurement_lock
try:
    with measurement_lock("probe"):
        print("LOCKED", flush=True)
except MLProfError as e:
    print("ERROR", e, flush=True)
    sys.exit(40)
"""

#: holds the lock until a line on stdin; prints the time just before it lets go
HOLD = """
import sys, time
from mlprof.measure.lock import measurement_lock
with measurement_lock("holder"):
    print("LOCKED", flush=True)
    sys.stdin.readline()
    print("RELEASING", repr(time.time()), flush=True)
"""

#: waits for the lock, saying so; prints when it got it
WAIT = """
import sys, time
import mlprof.measure.lock as lk
with lk.measurement_lock("waiter", wait_message=lambda m: print("MSG", m, flush=True)):
    print("GOT", repr(time.time()), flush=True)
"""


def _cmd(code: str, user: str) -> list[str]:
    cmd = [sys.executable, "-c", code]
    if user == "nobody":
        if not IS_ROOT or SETPRIV is None:
            pytest.skip("a second user needs root and setpriv (runs as root in CI)")
        cmd = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *cmd]
    return cmd


def _env(lock_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), MLP_LOCK_DIR=str(lock_dir), **extra)
    env.pop("MLP_NO_LOCK", None)
    env.update(extra)
    return env


def _run(code: str, user: str, lock_dir: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(_cmd(code, user), env=_env(lock_dir, **extra), capture_output=True,
                          text=True, timeout=60)


def _popen(code: str, user: str, lock_dir: Path) -> subprocess.Popen:
    return subprocess.Popen(_cmd(code, user), env=_env(lock_dir), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A lock directory like /tmp: root's (or ours), mode 1777, so a second user can use it
    (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="mlprof-hostile-lock-", dir="/tmp"))
    path.chmod(0o1777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file only its owner may read or write (root's, when the tests run as root)."""
    path = tmp_path / "secret"
    path.write_text("precious\n")
    path.chmod(0o600)
    return path


def _plant(kind: str, lock: Path, secret: Path) -> None:
    """Put a hostile ``kind`` of thing at the lock path."""
    if kind == "link to a 0600 file":
        lock.symlink_to(secret)
    elif kind == "dangling link":
        lock.symlink_to(lock.parent / "nowhere")
    elif kind == "FIFO":
        os.mkfifo(lock)
    elif kind == "directory":
        lock.mkdir()
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(lock))
        s.close()
    elif kind == "hard link to a 0600 file":
        os.link(secret, lock)
    elif kind == "foreign file":  # another user's file, not one mlprof made (mode 0644)
        lock.write_text("theirs\n")
        lock.chmod(0o644)
        if IS_ROOT:
            os.chown(lock, NOBODY, NOBODY)
    elif kind == "file with other content":
        lock.write_text("not a lock record\n")
        lock.chmod(0o666)
    else:
        raise AssertionError(kind)


#: what each hostile thing at the lock path gets (the end of the line is the same for all)
HOSTILE = {
    "link to a 0600 file": "is a symbolic link to ",
    "dangling link": "(dangling); not followed",
    "FIFO": "is a FIFO, not a lock file",
    "directory": "is a directory, not a lock file",
    "socket": "is a socket, not a lock file",
    "hard link to a 0600 file": "has 2 names (a hard link to another file), not a lock file",
    "foreign file": "and is not a lock file that mlprof made (mode 0644, mlprof makes them 0666)",
    "file with other content": "holds 18 bytes that are not a holder record of mlprof; not "
                               "written",
}


@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_thing_at_the_lock_path_is_one_line_never_a_write_spin_or_hang(
        kind, user, shared_dir, secret):
    lock = shared_dir / LOCK_NAME
    if kind == "foreign file" and user == "self" and not IS_ROOT:
        pytest.skip("another user's file needs root to make (root in CI)")
    if kind == "foreign file" and user == "nobody":
        # for the second user, root's own 0644 file is the foreign one
        lock.write_text("theirs\n")
        lock.chmod(0o644)
    else:
        _plant(kind, lock, secret)
    if kind == "file with other content" and user == "nobody" and IS_ROOT:
        os.chown(lock, NOBODY, NOBODY)  # theirs, so the record check (not the owner) refuses
    before = secret.read_bytes()
    r = _run(TAKE, user, shared_dir)  # a spin or a hang ends in TimeoutExpired
    assert r.returncode == 40, (r.stdout, r.stderr)
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"ERROR MLP_LOCK_DIR: the measurement lock {lock} "), lines
    if kind == "hard link to a 0600 file" and user == "nobody":
        # nobody may not even open root's 0600 file
        assert "cannot be opened: Permission denied" in lines[0]
    else:
        assert HOSTILE[kind] in lines[0]
    assert lines[0].endswith("; remove it, or set MLP_LOCK_DIR to a directory that only mlprof "
                             "uses (or MLP_NO_LOCK=1 to measure without the lock)")
    assert secret.read_bytes() == before  # never written, never emptied
    if kind == "foreign file":
        assert lock.read_text() == "theirs\n"
    if kind == "file with other content":
        assert lock.read_text() == "not a lock record\n"


@pytest.fixture
def unprotected_symlinks() -> Iterator[None]:
    """``fs.protected_symlinks = 0`` for the test (restored after): the kernel then follows a
    link that another user planted in a sticky directory, as on machines that do not set it."""
    knob = Path("/proc/sys/fs/protected_symlinks")
    try:
        old = knob.read_text().strip()
    except OSError:
        pytest.skip("no /proc/sys/fs/protected_symlinks on this machine")
    if old != "0":
        try:
            knob.write_text("0")
        except OSError:
            pytest.skip(f"cannot set fs.protected_symlinks to 0 here (it is {old}; needs root "
                        "outside a read-only /proc/sys)")
    try:
        yield
    finally:
        if old != "0":
            knob.write_text(old)


def test_a_link_planted_by_another_user_leaves_roots_file_intact(shared_dir, secret,
                                                                  unprotected_symlinks):
    """The issue's demonstration: ``nobody`` plants a link in a sticky directory to a 0600
    root-owned file; root's measurement used to write its record into that file and empty it
    on release."""
    if not IS_ROOT:
        pytest.skip("the planted link must be another user's: needs root (runs as root in CI)")
    lock = shared_dir / LOCK_NAME
    plant = subprocess.run(_cmd(f"import os; os.symlink({str(secret)!r}, {str(lock)!r})",
                                "nobody"), capture_output=True, text=True, timeout=60)
    assert plant.returncode == 0, plant.stderr
    assert lock.is_symlink() and lock.lstat().st_uid == NOBODY
    assert secret.stat().st_uid == 0 and secret.stat().st_mode & 0o777 == 0o600
    r = _run(TAKE, "self", shared_dir)
    assert r.returncode == 40, (r.stdout, r.stderr)
    assert f"is a symbolic link to {secret}; not followed" in r.stdout
    assert secret.read_text() == "precious\n"


@pytest.mark.parametrize("holder_user,waiter_user", [("self", "nobody"), ("nobody", "self")])
def test_two_users_still_share_one_lock(holder_user, waiter_user, shared_dir):
    """The checks above refuse other users' files, but not the lock files that mlprof makes
    for everyone (mode 0666): a second user still waits for the first and says for whom."""
    holder = _popen(HOLD, holder_user, shared_dir)
    waiter = None
    try:
        assert holder.stdout.readline().strip() == "LOCKED", holder.stderr.read()
        lock = shared_dir / LOCK_NAME
        assert lock.stat().st_mode & 0o777 == 0o666
        waiter = _popen(WAIT, waiter_user, shared_dir)
        msg = waiter.stdout.readline()
        assert msg.startswith("MSG waiter: waiting for the measurement lock held by pid "
                              f"{holder.pid}"), (msg, waiter.stderr.read())
        holder.stdin.write("\n")
        holder.stdin.flush()
        released = float(holder.stdout.readline().split()[1])
        out, err = waiter.communicate(timeout=60)
        got = float(out.split("GOT", 1)[1].split()[0])
        assert got >= released, (got, released)  # never both at once
    finally:
        for p in (holder, waiter):
            if p is not None:
                p.kill()
                p.wait()


@pytest.mark.parametrize("user", USERS)
def test_a_lock_file_deleted_while_held_does_not_let_two_measure(user, shared_dir):
    """A /tmp cleaner removes the held lock file: a newcomer creates a new file, but it still
    waits (the lock is on the directory) until the holder lets go."""
    holder = _popen(HOLD, "self", shared_dir)
    waiter = None
    try:
        assert holder.stdout.readline().strip() == "LOCKED", holder.stderr.read()
        (shared_dir / LOCK_NAME).unlink()
        waiter = _popen(WAIT, user, shared_dir)
        msg = waiter.stdout.readline()
        assert msg.startswith("MSG waiter: waiting for the measurement lock held by "), \
            (msg, waiter.stderr.read())
        holder.stdin.write("\n")
        holder.stdin.flush()
        released = float(holder.stdout.readline().split()[1])
        out, err = waiter.communicate(timeout=60)
        assert "GOT" in out, err
        assert float(out.split("GOT", 1)[1].split()[0]) >= released
    finally:
        for p in (holder, waiter):
            if p is not None:
                p.kill()
                p.wait()


# ---- the variables ---------------------------------------------------------------------------


def test_relative_lock_dir_is_one_line(monkeypatch):
    monkeypatch.setenv("MLP_LOCK_DIR", "locks")
    with pytest.raises(MLProfError) as e:
        lock_path()
    assert str(e.value) == ("MLP_LOCK_DIR: 'locks' is a relative path: every working directory "
                            "would have a lock of its own; give an absolute directory that every "
                            "mlprof process on this machine shares")


@pytest.mark.parametrize("value,off", [("", False), ("0", False), ("false", False),
                                       ("No", False), ("off", False), ("1", True),
                                       ("true", True), ("YES", True), ("on", True)])
def test_mlp_no_lock_takes_only_documented_values(value, off, monkeypatch, tmp_path):
    monkeypatch.setenv("MLP_NO_LOCK", value)
    monkeypatch.setenv("MLP_LOCK_DIR", str(tmp_path / "locks"))
    assert lock_disabled() is off
    with measurement_lock("x") as h:
        assert (h.path is None) is off  # MLP_NO_LOCK=false keeps the lock
    assert (tmp_path / "locks" / LOCK_NAME).exists() is not off


def test_unknown_mlp_no_lock_is_one_line(monkeypatch):
    monkeypatch.setenv("MLP_NO_LOCK", "disable")
    with pytest.raises(MLProfError) as e:
        with measurement_lock("x"):
            pass
    assert str(e.value) == ("MLP_NO_LOCK: 'disable' is not a value it takes: 1, true, yes, on "
                            "turn the measurement lock off; 0, false, no, off or empty keep it")


def test_lock_dir_writable_by_others_without_sticky_bit_is_refused(tmp_path):
    if not IS_ROOT:
        pytest.skip("the directory must belong to another user: needs root (root in CI)")
    d = tmp_path / "open"
    d.mkdir()
    os.chown(d, NOBODY, NOBODY)
    d.chmod(0o777)
    tmp_path.chmod(0o755)
    r = _run(TAKE, "self", d)
    assert r.returncode == 40
    assert r.stdout.strip() == (
        f"ERROR MLP_LOCK_DIR: {d} belongs to user nobody, and others may write in it without "
        "the sticky bit (mode 0777): anyone could replace the measurement lock in it; use a "
        "directory like /tmp (mode 1777) or your own")


# ---- law run: once, up front, exit 40 -------------------------------------------------------


def _law_lines(r: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in (r.stdout + r.stderr).splitlines() if "mlprof error" in ln]


@pytest.mark.parametrize("env,expected", [
    ({"MLP_NO_LOCK": "maybe"}, "MLP_NO_LOCK: 'maybe' is not a value it takes"),
    ({"MLP_LOCK_DIR": "rel/locks"}, "MLP_LOCK_DIR: 'rel/locks' is a relative path"),
    ({"MLP_LOCK_DIR": "<dangling>"}, "(dangling); not followed"),
])
def test_law_run_refuses_an_unusable_lock_before_measuring(env, expected, tmp_path):
    store = tmp_path / "store"
    if env.get("MLP_LOCK_DIR") == "<dangling>":
        (tmp_path / "locks").mkdir()
        (tmp_path / "locks" / LOCK_NAME).symlink_to(tmp_path / "nowhere")
        env = {"MLP_LOCK_DIR": str(tmp_path / "locks")}
    r = law_run("MeasureRuntime", "--version", "lk", "--batch-sizes", "1", *FAST, store=store,
                env=env, timeout=300)
    assert r.returncode == 40, r.stderr[-2000:]
    lines = _law_lines(r)
    assert len(lines) == 1 and expected in lines[0], lines
    assert "Traceback" not in r.stdout + r.stderr
    assert not files_in(store / "MeasureRuntime")  # nothing measured


@contextlib.contextmanager
def _tmpfs(path: Path, options: str) -> Iterator[Path]:
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], capture_output=True, timeout=60)


def test_law_run_on_a_read_only_store_fails_once_before_measuring(tmp_path):
    """The issue: it measured first, then failed with exit 30 and a 50-line traceback."""
    if not IS_ROOT:
        store = tmp_path / "store"
        store.mkdir()
        store.chmod(0o555)
        expected = f"mlprof error: {store}: MLP_STORE: is not writable by "
        ctx: contextlib.AbstractContextManager = contextlib.nullcontext(store)
    else:  # root writes through permissions: a read-only file system
        store = tmp_path / "store"
        expected = (f"mlprof error: {store}: MLP_STORE: is on a read-only file system; results "
                    "cannot be saved")
        ctx = _tmpfs(store, "ro,size=1m")
    with ctx:
        r = law_run("MeasureRuntime", "--version", "ro", "--batch-sizes", "1,2", *FAST,
                    store=store, env={"MLP_LOCK_DIR": str(tmp_path / "locks")}, timeout=300)
        assert r.returncode == 40, r.stderr[-2000:]
        lines = _law_lines(r)
        assert len(lines) == 1 and lines[0].endswith(expected) or expected in lines[0], lines
        assert "Traceback" not in r.stdout + r.stderr
        assert not (tmp_path / "locks").exists()  # the store is checked first: never measured
        # looking at a read-only store is still allowed
        r = law_run("MeasureRuntime", "--version", "ro", "--batch-sizes", "1,2", *FAST,
                    "--print-status", "0", store=store, timeout=300)
        assert r.returncode == 0 and "absent (0/2)" in r.stdout + r.stderr, r.stderr[-2000:]


def test_a_read_only_store_as_a_second_user(tmp_path):
    """chmod 0555 stops a user who is not root (root passes every permission check)."""
    store = Path(tempfile.mkdtemp(prefix="mlprof-ro-store-", dir="/tmp"))
    try:
        store.chmod(0o555)
        code = ("from mlprof.results.writable import check_store_writable as c\n"
                "from mlprof.errors import MLProfError\n"
                f"try: c({str(store)!r})\n"
                "except MLProfError as e: print(e)\n")
        r = subprocess.run(_cmd(code, "nobody"), env=_env(tmp_path), capture_output=True,
                           text=True, timeout=60)
        assert r.stdout.strip() == (f"{store}: MLP_STORE: is not writable by nobody "
                                    "(Permission denied); results cannot be saved"), r.stderr
        assert not [p for p in store.iterdir()]  # the probe left nothing
    finally:
        store.chmod(0o755)
        shutil.rmtree(store, ignore_errors=True)


def test_law_run_on_a_full_store_fails_once_before_measuring(tmp_path):
    if not IS_ROOT:
        pytest.skip("a full file system needs a tmpfs mount (root); "
                    "test_full_store_by_statvfs covers the check")
    store = tmp_path / "store"
    with _tmpfs(store, "size=1m"):
        r = law_run("MeasureRuntime", "--version", "full", "--batch-sizes", "1", *FAST,
                    store=store, env={"MLP_LOCK_DIR": str(tmp_path / "locks")}, timeout=300)
        assert r.returncode == 40, r.stderr[-2000:]
        lines = _law_lines(r)
        assert len(lines) == 1 and lines[0].endswith(
            f"mlprof error: {store}: MLP_STORE: is full: 1.0 MiB free, mlprof needs at least "
            "16 MiB to save results"), lines
        assert not (tmp_path / "locks").exists()


def test_a_store_that_fills_up_answers_the_probe_write(tmp_path):
    """Enough free space by statvfs's count is not enough: the probe write is what answers
    (here a tmpfs filled to the last block, with the free-space minimum set to 0)."""
    if not IS_ROOT:
        pytest.skip("a full file system needs a tmpfs mount (root)")
    store = tmp_path / "store"
    with _tmpfs(store, "size=256k"):
        fd = os.open(store / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0" * 4096)
        os.close(fd)
        with pytest.raises(MLProfError) as e:
            check_store_writable(str(store), min_free=0)
        assert str(e.value) == (f"{store}: MLP_STORE: is full (No space left on device); "
                                "results cannot be saved")
        assert sorted(p.name for p in store.iterdir()) == ["filler"]


def test_full_store_by_statvfs(tmp_path):
    """Any user: the check with a statvfs result injected (a file system with 3 MiB free)."""
    real = os.statvfs(tmp_path)

    def full(path: str) -> os.statvfs_result:
        values = list(real)
        values[4] = (3 << 20) // real.f_frsize  # f_bavail
        return os.statvfs_result(values)

    with pytest.raises(MLProfError) as e:
        check_store_writable(str(tmp_path / "store"), statvfs=full)
    assert str(e.value) == (f"{tmp_path / 'store'}: MLP_STORE: is full: 3.0 MiB free, mlprof "
                            "needs at least 16 MiB to save results")
    assert check_store_writable(str(tmp_path / "store")) == str(tmp_path / "store")
    assert not (tmp_path / "store").exists()  # checking creates nothing


def test_record_of_a_holder_is_still_read(shared_dir):
    """The record a holder writes is read back through the one way in (no link followed)."""
    from mlprof.measure.lock import read_holder

    holder = _popen(HOLD, "self", shared_dir)
    try:
        assert holder.stdout.readline().strip() == "LOCKED", holder.stderr.read()
        info = read_holder(str(shared_dir / LOCK_NAME))
        assert info is not None and info["pid"] == holder.pid and info["label"] == "holder"
        json.dumps(info)
    finally:
        holder.kill()
        holder.wait()
