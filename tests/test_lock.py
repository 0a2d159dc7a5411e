"""The machine-wide measurement lock: one measurement at a time across all mlprof processes."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mlprof.measure import MeasureSettings, measure_isolated
from mlprof.measure.lock import LOCK_NAME, lock_path, measurement_lock, read_holder
from tests.helpers import DNN, REPO, files_in

#: holds the lock until its stdin closes (or it is killed); says "locked" once it holds it
HOLDER = """
import sys, time
from mlprof.measure.lock import measurement_lock
with measurement_lock("holder model at batch size 7"):
    print("locked", flush=True)
    sys.stdin.read()
"""

#: waits for the lock, printing the messages; then prints how long it waited
WAITER = """
import json, sys, time
import mlprof.measure.lock as lk
lk.REPEAT_S = 0.5
with lk.measurement_lock("waiter", wait_message=lambda m: print("MSG", m, flush=True)) as h:
    print("GOT", json.dumps({"wait_s": h.wait_s, "at": time.time()}), flush=True)
"""


@pytest.fixture
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private lock directory: these tests contend only with themselves."""
    path = tmp_path / "locks"
    monkeypatch.setenv("MLP_LOCK_DIR", str(path))
    monkeypatch.delenv("MLP_NO_LOCK", raising=False)
    return path


def _python(code: str, *args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)


def _start_holder(marker: str) -> subprocess.Popen:
    holder = _python(HOLDER, marker)
    assert holder.stdout.readline().strip() == "locked", holder.stderr.read()
    return holder


def _locked_elsewhere(path: Path) -> bool:
    """Whether someone holds the lock (a new open file description conflicts even in this
    process)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_a_process_announces_each_holder_once(lock_dir):
    """A sweep whose 11 points each wait for the same other run says so once, not 11 times;
    a new holder is announced again."""
    import mlprof.measure.lock as lk

    lk._ANNOUNCED.clear()
    said: list[str] = []

    def wait_once() -> None:  # one point of the sweep: it waits, then gives up (close)
        ann = lk._Announcer(str(lock_dir / LOCK_NAME), "waiter", said.append)
        time.sleep(lk.RECORD_GRACE_S + 0.5)  # the first message comes within the grace time
        ann.close()

    first = _start_holder("--first-holder")
    wait_once()
    wait_once()
    first.stdin.close()
    first.wait(10)
    second = _start_holder("--second-holder")
    wait_once()
    second.stdin.close()
    second.wait(10)
    waiting = [m for m in said if "waiting for the measurement lock held by" in m]
    assert len(waiting) == 2, said
    assert "--first-holder" in waiting[0] and "--second-holder" in waiting[1], said


@pytest.mark.parametrize("end", ["exit", "sigkill"])
def test_second_process_waits_names_the_holder_and_gets_the_lock(lock_dir, end):
    holder = _start_holder("--marker-of-the-holder")
    info = read_holder()
    assert info["pid"] == holder.pid and "--marker-of-the-holder" in info["command"]
    assert info["label"] == "holder model at batch size 7"
    waiter = _python(WAITER)
    try:
        first = waiter.stdout.readline()
        assert first.startswith("MSG waiter: waiting for the measurement lock held by pid "
                                f"{holder.pid} (python -c --marker-of-the-holder), measuring "
                                "holder model at batch size 7 since "), first
        assert str(lock_dir / LOCK_NAME) in first
        second = waiter.stdout.readline()  # repeated while it waits (every 0.5 s here)
        assert re.match(r"MSG waiter: still waiting \(\d+ s\) for the measurement lock "
                        f"held by pid {holder.pid} ", second), second
        assert waiter.poll() is None  # still waiting
        released = time.time()
        if end == "exit":
            holder.stdin.close()
        else:  # killed: the kernel releases the lock, nothing stale is left behind
            holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        out, err = waiter.communicate(timeout=30)
    finally:
        for p in (holder, waiter):
            p.kill()
            p.wait()
    assert waiter.returncode == 0, err
    got = json.loads(next(ln for ln in out.splitlines() if ln.startswith("GOT"))[4:])
    assert got["wait_s"] >= 0.5
    assert 0 <= got["at"] - released < 5
    assert read_holder() is None  # the waiter emptied the record when it was done
    assert not _locked_elsewhere(lock_dir / LOCK_NAME)


def test_uncontended_lock_writes_a_record_and_removes_it(lock_dir):
    assert lock_path() == str(lock_dir / LOCK_NAME)
    with measurement_lock("mine") as hold:
        assert hold.path == lock_path() and hold.wait_s < 0.5
        rec = read_holder()
        assert rec["pid"] == os.getpid() and rec["label"] == "mine"
        assert _locked_elsewhere(lock_dir / LOCK_NAME)
    assert read_holder() is None
    assert not _locked_elsewhere(lock_dir / LOCK_NAME)
    assert (lock_dir / LOCK_NAME).stat().st_mode & 0o777 == 0o666  # any user can open it


def test_nested_use_does_not_deadlock(lock_dir):
    with measurement_lock("outer") as outer:
        with measurement_lock("inner") as inner:
            assert inner.wait_s == 0.0 and inner.path == outer.path
            assert _locked_elsewhere(lock_dir / LOCK_NAME)
        assert _locked_elsewhere(lock_dir / LOCK_NAME)  # still the outer's
        assert read_holder()["label"] == "outer"
    assert not _locked_elsewhere(lock_dir / LOCK_NAME)


def test_other_threads_of_the_process_wait(lock_dir):
    messages, events = [], []

    def second():
        with measurement_lock("thread", wait_message=messages.append) as h:
            events.append(("second", time.monotonic(), h.wait_s))

    with measurement_lock("main"):
        t = threading.Thread(target=second)
        t.start()
        time.sleep(0.8)
        events.append(("main released", time.monotonic(), None))
    t.join(10)
    assert [e[0] for e in events] == ["main released", "second"]
    assert events[1][2] >= 0.7
    assert len(messages) == 1 and f"held by pid {os.getpid()}" in messages[0]


def test_a_forked_child_does_not_hold_the_parents_lock(lock_dir):
    import multiprocessing

    def child(q):
        with measurement_lock("child") as h:
            q.put(h.wait_s)

    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    with measurement_lock("parent"):
        proc = ctx.Process(target=child, args=(q,))
        proc.start()
        time.sleep(0.6)
        assert proc.is_alive()  # waits for the parent, does not think it holds the lock
    assert q.get(timeout=10) >= 0.5
    proc.join(10)


def test_the_file_removed_while_waiting_is_made_again(lock_dir):
    """A /tmp cleaner removing the lock file while someone holds it must not let two
    processes measure: a newcomer waits like the waiter (the lock is on the directory; see
    tests/test_hostile_lock.py), and after the release the waiter locks a new file at the
    path."""
    holder = _start_holder("x")
    waiter = _python(WAITER)
    try:
        assert waiter.stdout.readline().startswith("MSG")
        (lock_dir / LOCK_NAME).unlink()
        holder.stdin.close()
        holder.wait(10)
        out, err = waiter.communicate(timeout=30)
    finally:
        for p in (holder, waiter):
            p.kill()
            p.wait()
    assert "GOT" in out, err
    assert (lock_dir / LOCK_NAME).is_file()  # made again, and emptied on release
    assert (lock_dir / LOCK_NAME).read_text() == ""


def test_disabled_with_mlp_no_lock(lock_dir, monkeypatch):
    monkeypatch.setenv("MLP_NO_LOCK", "1")
    with measurement_lock("x") as h:
        assert h.path is None and h.wait_s is None
    assert not lock_dir.exists()


def test_unusable_lock_dir_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("MLP_LOCK_DIR", str(tmp_path / "file" / "sub"))
    from mlprof.errors import MLProfError

    with pytest.raises(MLProfError, match="MLP_LOCK_DIR: cannot open the measurement lock"):
        with measurement_lock("x"):
            pass


def _measure_while_held(measure) -> None:
    """``measure()`` while another process holds the lock for 1 s: it waits, records the
    wait, and starts measuring only after the release."""
    holder = _start_holder("x")
    released = []

    def release():
        released.append(time.time())
        holder.stdin.close()

    threading.Timer(1.0, release).start()
    try:
        r = measure()
    finally:
        holder.kill()
        holder.wait()
    assert r.provenance["lock_wait_s"] >= 0.8
    assert r.provenance["started_unix"] >= released[0]


def test_measure_isolated_waits_and_records_the_wait(lock_dir):
    _measure_while_held(lambda: measure_isolated(str(DNN), MeasureSettings(
        batch_size=2, n_calls=5, warmup=1, min_duration=0), timeout=120))


def test_measure_in_venv_waits_and_records_the_wait(lock_dir):
    """The other path that measures: a runtime version in its own environment (here our own
    Python stands in for the venv's)."""
    from mlprof.measure.venvs import measure_in_venv

    _measure_while_held(lambda: measure_in_venv(sys.executable, str(DNN), MeasureSettings(
        batch_size=2, n_calls=5, warmup=1, min_duration=0), timeout=120))


# ---------------------------------------------------------------------------------------------
# acceptance: two `law run` at once, separate stores, never two measurements at the same time


def _law_popen(store: Path, version: str, lock_dir: Path) -> subprocess.Popen:
    env = dict(os.environ, MLP_STORE=str(store), MLP_LOCK_DIR=str(lock_dir))
    env.setdefault("MLP_BASE", str(REPO))
    env.setdefault("LAW_HOME", str(REPO / ".law"))
    env.setdefault("LAW_CONFIG_FILE", str(REPO / "law.cfg"))
    env.pop("MLP_NO_LOCK", None)
    return subprocess.Popen(["law", "run", "PlotRuntimes", "--version", version,
                             "--batch-sizes", "1,2,4", "--n-calls", "10", "--warmup", "1",
                             "--min-duration", "0.3"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


@pytest.mark.slow
def test_two_law_runs_never_measure_at_the_same_time(tmp_path):
    lock_dir = tmp_path / "locks"
    stores = {"a": tmp_path / "a", "b": tmp_path / "b"}
    procs = {v: _law_popen(s, v, lock_dir) for v, s in stores.items()}
    outs = {}
    for v, p in procs.items():
        outs[v], _ = p.communicate(timeout=600)
        assert p.returncode == 0, outs[v][-3000:]
    spans = []
    for v, store in stores.items():
        provs = [json.loads(p.read_text()) for p in files_in(store / "MeasureRuntime")
                 if p.name.startswith("runtime_bs_") and p.suffix == ".json"]
        assert len(provs) == 3
        spans += [(d["started_unix"], d["finished_unix"], v, d["lock_wait_s"]) for d in provs]
    spans.sort()
    assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:], strict=False)), spans
    # they really contended: someone waited, and said for whom, in law's log
    assert max(s[3] for s in spans) > 0.1, spans
    waited = [v for v, out in outs.items() if "waiting for the measurement lock held by" in out]
    assert waited, outs
    other = {"a": "b", "b": "a"}
    for v in waited:
        line = next(ln for ln in outs[v].splitlines() if "waiting for the measurement lock" in ln)
        assert f"held by pid {procs[other[v]].pid} (law run PlotRuntimes --version " \
               f"{other[v]} " in line, line
